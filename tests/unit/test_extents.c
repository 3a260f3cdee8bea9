/* FIEMAP on the file system holding $TMPDIR, and on tmpfs (/dev/shm), which
 * has no extent map.  The integration tests cover ext4, xfs and btrfs. */
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <sys/stat.h>

#include "scanner/chunkmap.h"
#include "scanner/extents.h"
#include "scanner/ftab.h"
#include "tests/unit/test.h"

/* ext_locate of the file at path, below its folder held as a root is */
static int locate_path(const char *path, enum ext_mode mode, struct ext_result *r,
		       struct sl_err *e)
{
	const char *name;
	struct anchor *a = t_anchor(path, &name);
	int rc = ext_locate(a, name, mode, EXT_WB_FILE, r, NULL, e);
	anchor_free(a);
	return rc;
}

static void test_regular(void)
{
	char *dir = t_tmpdir("ext");
	char p[4096];
	unsigned char *data = t_bytes(300000, 7);
	struct ext_result r;
	struct sl_err e;
	struct stat st;
	int fd;

	snprintf(p, sizeof(p), "%s/f", dir);
	t_write(p, data, 300000);
	fd = open(p, O_RDONLY);
	fsync(fd); /* allocate, so the position is known */
	close(fd);
	stat(p, &st);
	CHECK_INT(locate_path(p, EXT_ASK, &r, &e), SL_OK);
	CHECK_INT(r.size, 300000);
	CHECK_INT(r.ino, st.st_ino);
	CHECK_INT(r.dev, st.st_dev);
	CHECK_INT(r.mtime_ns, (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec);
	CHECK(r.flags & FT_STATED);
	if (r.flags & FT_NOEXT) {
		fprintf(stderr, "skip: %s has no extent map\n", dir);
	} else {
		CHECK(r.flags & FT_LOCATED);
		CHECK(r.phys > 0);
		CHECK(r.fragments >= 1);
	}
	/* query 0: the device is known to have no map, do not ask */
	CHECK_INT(locate_path(p, EXT_NONE, &r, &e), SL_OK);
	CHECK(r.flags & FT_NOEXT);
	CHECK_INT(r.noext_errno, 0);

	snprintf(p, sizeof(p), "%s/empty", dir);
	t_write(p, "", 0);
	CHECK_INT(locate_path(p, EXT_ASK, &r, &e), SL_OK);
	CHECK_INT(r.size, 0);
	CHECK(r.flags & (FT_EMPTY | FT_NOEXT));
	CHECK(!(r.flags & FT_LOCATED));

	snprintf(p, sizeof(p), "%s/gone", dir);
	CHECK_INT(locate_path(p, EXT_ASK, &r, &e), SL_E_IO);
	CHECK(strstr(e.msg, "open: No such file") == e.msg);

	snprintf(p, sizeof(p), "%s/fifo", dir);
	mkfifo(p, 0644);
	CHECK_INT(locate_path(p, EXT_ASK, &r, &e), SL_E_IO); /* returns at once: O_NONBLOCK */
	CHECK(strstr(e.msg, "no longer a regular file") != NULL);

	snprintf(p, sizeof(p), "%s/link", dir);
	CHECK(symlink("f", p) == 0);
	CHECK_INT(locate_path(p, EXT_ASK, &r, &e), SL_E_IO);
	CHECK(strstr(e.msg, "symbolic link") != NULL);

	free(data);
	t_rmtree(dir);
	free(dir);
}

static void test_tmpfs(void)
{
	char p[] = "/dev/shm/seekless-ext-XXXXXX";
	struct ext_result r;
	struct sl_err e;
	int fd = mkstemp(p);

	if (fd < 0) {
		fprintf(stderr, "skip: no /dev/shm\n");
		return;
	}
	CHECK(write(fd, "hello", 5) == 5);
	close(fd);
	CHECK_INT(locate_path(p, EXT_ASK, &r, &e), SL_OK);
	CHECK(r.flags & FT_NOEXT);
	CHECK(r.noext_errno != 0);
	CHECK(!(r.flags & FT_LOCATED));
	CHECK_INT(r.size, 5);
	unlink(p);
}

static void test_chunkmap_not_btrfs(void)
{
	char p[] = "/dev/shm/seekless-cm-XXXXXX";
	struct chunkmap cm;
	struct anchor *a;
	const char *name;
	struct sl_err e;
	int fd = mkstemp(p);

	/* a file on tmpfs: no btrfs, and said so; a file that is not there
	 * cannot be asked */
	CHECK(fd >= 0);
	if (fd < 0)
		return;
	close(fd);
	a = t_anchor(p, &name);
	CHECK_INT(chunkmap_read(a, name, &cm, &e), SL_E_UNSUPPORTED);
	CHECK(strstr(e.msg, "not on btrfs") != NULL);
	CHECK_INT(chunkmap_read(a, "seekless-no-such-file", &cm, &e), SL_E_IO);
	CHECK_INT(e.sys, ENOENT);
	anchor_free(a);
	unlink(p);
}

int main(void)
{
	RUN(test_regular);
	RUN(test_tmpfs);
	RUN(test_chunkmap_not_btrfs);
	return t_done();
}
