/* FIEMAP on an ext4 the test makes (an extent map, known to be there: not
 * whatever $TMPDIR is on), on a tmpfs it makes, which has none, and the
 * btrfs chunk map on a btrfs it makes and on the other two.  The
 * integration tests cover ext4, xfs and btrfs further. */
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "scanner/chunkmap.h"
#include "scanner/extents.h"
#include "scanner/ftab.h"
#include "tests/unit/test.h"
#include "tests/unit/tfs.h"

static char *ext4, *tmpfs, *btrfs;

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
	const char *dir = ext4;
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
	CHECK(!(r.flags & FT_NOEXT));
	CHECK(r.flags & FT_LOCATED);
	CHECK_INT(r.by, FT_BY_MAP); /* ext4 has an extent map: FIBMAP not needed */
	CHECK(r.phys > 0);
	CHECK(r.fragments >= 1);
	{
		/* FIBMAP, asked alone, finds the first block where FIEMAP did */
		struct ext_result b;
		CHECK_INT(locate_path(p, EXT_BMAP, &b, &e), SL_OK);
		CHECK(b.flags & FT_LOCATED);
		CHECK_INT(b.by, FT_BY_BMAP);
		CHECK_INT(b.phys, r.phys);
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
}

static void test_tmpfs(void)
{
	char p[4096];
	struct ext_result r;
	struct sl_err e;

	snprintf(p, sizeof(p), "%s/f", tmpfs);
	t_write(p, "hello", 5);
	CHECK_INT(locate_path(p, EXT_ASK, &r, &e), SL_OK);
	CHECK(r.flags & FT_NOEXT);
	CHECK(r.noext_errno != 0);
	CHECK(!(r.flags & FT_LOCATED));
	CHECK_INT(r.size, 5);
}

/* chunkmap_read's answer for a file on each file system: the map on btrfs
 * (one device: every chunk linear, a file's address inside one), "not on
 * btrfs" elsewhere, and a file that is not there cannot be asked. */
static void test_chunkmap(void)
{
	const char *elsewhere[] = {ext4, tmpfs};
	struct chunkmap cm;
	struct ext_result r;
	struct anchor *a;
	const char *name;
	struct sl_err e;
	uint64_t off;
	char p[4096];
	size_t i;

	for (i = 0; i < 2; i++) {
		snprintf(p, sizeof(p), "%s/cm", elsewhere[i]);
		t_write(p, "x", 1);
		a = t_anchor(p, &name);
		CHECK_INT(chunkmap_read(a, name, &cm, &e), SL_E_UNSUPPORTED);
		CHECK(strstr(e.msg, "not on btrfs") != NULL);
		CHECK_INT(chunkmap_read(a, "seekless-no-such-file", &cm, &e), SL_E_IO);
		CHECK_INT(e.sys, ENOENT);
		anchor_free(a);
	}

	if (!btrfs)
		return;
	{
		unsigned char *data = t_bytes(200000, 11);
		int fd;
		snprintf(p, sizeof(p), "%s/cm", btrfs);
		t_write(p, data, 200000);
		free(data);
		fd = open(p, O_RDONLY);
		fsync(fd); /* allocated: an address in a data chunk */
		close(fd);
	}
	a = t_anchor(p, &name);
	CHECK_INT(chunkmap_read(a, "seekless-no-such-file", &cm, &e), SL_E_IO);
	CHECK_INT(e.sys, ENOENT);
	CHECK_INT(chunkmap_read(a, name, &cm, &e), SL_OK);
	CHECK(cm.n >= 1);
	CHECK_INT(cm.devices, 1);
	for (i = 0; i < cm.n; i++)
		CHECK(cm.c[i].linear);
	anchor_free(a);
	/* FIEMAP answers btrfs's logical address, which the map places */
	CHECK_INT(locate_path(p, EXT_ASK, &r, &e), SL_OK);
	CHECK(r.flags & FT_LOCATED);
	CHECK_INT(chunkmap_map(&cm, r.phys, &off), CM_MAPPED);
	chunkmap_free(&cm);
}

int main(void)
{
	/* made first: the namespace they live in wants a process without threads */
	ext4 = t_fs("ext4", 64);
	tmpfs = t_fs("tmpfs", 16);
	btrfs = t_fs("btrfs", 160);
	if (ext4)
		RUN(test_regular);
	if (tmpfs)
		RUN(test_tmpfs);
	if (ext4 && tmpfs)
		RUN(test_chunkmap);
	tfs_drop(btrfs);
	tfs_drop(tmpfs);
	tfs_drop(ext4);
	return t_done();
}
