/* The device probe against this machine's root file system, and a tmpfs
 * and an ext4 on a loop device the test makes (tfs.h). */
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "scanner/device.h"
#include "tests/unit/test.h"
#include "tests/unit/tfs.h"

static char *tmpfs, *ext4;

/* dev_probe with something at path (NULL: nothing) as its hint, found
 * below its folder held as a root is */
static int probe(uint64_t st_dev, const char *path, struct dev_info *d, struct sl_err *e)
{
	const char *name = "";
	struct anchor *a = path ? t_anchor(path, &name) : NULL;
	int rc = dev_probe(st_dev, a, name, d, e);
	anchor_free(a);
	return rc;
}

static void test_root_fs(void)
{
	struct stat st;
	struct dev_info d;
	struct sl_err e;
	char num[32];

	CHECK(stat("/", &st) == 0);
	CHECK_INT(probe((uint64_t)st.st_dev, "/", &d, &e), SL_OK);
	CHECK_INT(d.st_dev, st.st_dev);
	CHECK(strcmp(d.fstype, "?") != 0);
	CHECK_STR(d.mount, "/");
	fprintf(stderr, "  / is %s from %s, disk '%s', rotational %d (%s), partition at %llu\n",
		d.fstype, d.source, d.disk, d.rotational, d.how, (unsigned long long)d.part_start);
	if (d.disk[0]) {
		CHECK(d.rotational == 0 || d.rotational == 1);
		CHECK(strstr(d.how, "queue/rotational") != NULL);
	}
	dev_number((uint64_t)st.st_dev, num, sizeof(num));
	CHECK(strchr(num, ':') != NULL);
}

static void test_tmpfs(void)
{
	struct stat st;
	struct dev_info d;
	struct sl_err e;

	CHECK(stat(tmpfs, &st) == 0);
	CHECK_INT(probe((uint64_t)st.st_dev, tmpfs, &d, &e), SL_OK);
	CHECK_STR(d.fstype, "tmpfs");
	CHECK_STR(d.disk, "");
	CHECK_INT(d.rotational, -1);
	CHECK(strstr(d.how, "not backed by a block device") != NULL);
}

/* The identity must not hang on the hint: the file it names may be gone
 * by the time the device is probed (deleted between stat and probe).
 * Without a file, the mount point still answers statfs. */
static void test_vanished_hint(void)
{
	struct stat st;
	struct dev_info a, b;
	struct sl_err e;
	char gone[4200];

	snprintf(gone, sizeof(gone), "%s/seekless-no-such-file", tmpfs);
	CHECK(stat(tmpfs, &st) == 0);
	CHECK_INT(probe((uint64_t)st.st_dev, tmpfs, &a, &e), SL_OK);
	CHECK_INT(probe((uint64_t)st.st_dev, gone, &b, &e), SL_OK);
	CHECK_STR(b.fs_id, a.fs_id);
	CHECK(strncmp(b.fs_id, "dev:", 4) != 0);
	if (!ext4)
		return;
	/* a file system on a block device: as root, a better name (by UUID)
	 * keeps the statfs one beside it */
	snprintf(gone, sizeof(gone), "%s/seekless-no-such-file", ext4);
	CHECK(stat(ext4, &st) == 0);
	CHECK_INT(probe((uint64_t)st.st_dev, gone, &a, &e), SL_OK);
	CHECK(strncmp(a.fs_id, "uuid:", 5) == 0);
	CHECK(strncmp(a.fs_alt, "fsid:", 5) == 0);
	CHECK_STR(a.fstype, "ext4");
	CHECK(strncmp(a.disk, "loop", 4) == 0);
}

static void test_unknown(void)
{
	struct dev_info d;
	struct sl_err e;
	/* a device number nothing is mounted from, and no hint */
	CHECK_INT(probe(0xfffff, NULL, &d, &e), SL_OK);
	CHECK_INT(d.rotational, -1);
	CHECK_STR(d.fstype, "?");
}

/* A file system is found mounted by either of its names, wherever it is,
 * the place it was last seen at preferred; one nothing answers to is not. */
static void test_mounted(void)
{
	struct stat st;
	struct dev_info d;
	struct sl_err e;
	char at[4096];

	CHECK(stat(tmpfs, &st) == 0);
	CHECK_INT(probe((uint64_t)st.st_dev, tmpfs, &d, &e), SL_OK);
	CHECK_INT(dev_fs_mounted(d.fs_id, d.fs_alt, tmpfs, at, sizeof(at)), 1);
	CHECK_STR(at, tmpfs);
	CHECK_INT(dev_fs_mounted("uuid:seekless-no-such", d.fs_id, NULL, at, sizeof(at)), 1);
	CHECK_STR(at, tmpfs);
	CHECK_INT(dev_fs_mounted(d.fs_id, "", "/seekless-gone", at, sizeof(at)), 1);
	CHECK_STR(at, tmpfs);
	CHECK(stat("/", &st) == 0);
	CHECK_INT(probe((uint64_t)st.st_dev, "/", &d, &e), SL_OK);
	CHECK_INT(dev_fs_mounted(d.fs_id, d.fs_alt, "/", at, sizeof(at)), 1);
	CHECK_STR(at, "/");
	CHECK_INT(dev_fs_mounted("uuid:seekless-no-such", "", "/", at, sizeof(at)), 0);
	CHECK_STR(at, "");
}

int main(void)
{
	tmpfs = t_fs("tmpfs", 16);
	ext4 = t_fs("ext4", 64);
	RUN(test_root_fs);
	if (tmpfs) {
		RUN(test_tmpfs);
		RUN(test_vanished_hint);
		RUN(test_mounted);
	}
	RUN(test_unknown);
	tfs_drop(ext4);
	tfs_drop(tmpfs);
	return t_done();
}
