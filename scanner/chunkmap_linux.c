#include "scanner/chunkmap.h"

#include "common/anchor_linux.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/btrfs.h>
#include <linux/btrfs_tree.h>
#include <linux/magic.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/vfs.h>
#include <unistd.h>

/* The whole chunk tree, a search at a time: each answers as many items as
 * fit in its 4 KiB buffer (about 50 chunks, 50 GiB of data). */
static int search_all(int fd, struct chunkmap *m, struct sl_err *err)
{
	struct btrfs_ioctl_search_args a;
	uint64_t last = 0;
	int rc;

	memset(&a, 0, sizeof(a));
	a.key.tree_id = BTRFS_CHUNK_TREE_OBJECTID;
	a.key.min_objectid = a.key.max_objectid = BTRFS_FIRST_CHUNK_TREE_OBJECTID;
	a.key.min_type = a.key.max_type = BTRFS_CHUNK_ITEM_KEY;
	a.key.max_offset = UINT64_MAX;
	a.key.max_transid = UINT64_MAX;
	for (;;) {
		a.key.nr_items = 4096;
		if (ioctl(fd, BTRFS_IOC_TREE_SEARCH, &a) != 0)
			return SL_FAIL(err, SL_E_IO, errno, "btrfs chunk tree");
		if (a.key.nr_items == 0)
			return SL_OK;
		rc = chunkmap_add_items(m, (const unsigned char *)a.buf, sizeof(a.buf),
					a.key.nr_items, &last, err);
		if (rc != SL_OK || last == UINT64_MAX)
			return rc;
		a.key.min_offset = last + 1;
	}
}

int chunkmap_read(const struct anchor *a, const char *rel, struct chunkmap *m,
		  struct sl_err *err)
{
	struct btrfs_ioctl_fs_info_args info;
	struct statfs sf;
	struct sl_err oe;
	struct stat st;
	int64_t bt;
	int fd, rc;

	memset(m, 0, sizeof(*m));
	rc = anchor_open_file(a, rel, O_RDONLY | O_NONBLOCK | O_NOCTTY, &fd, &st, &bt, &oe);
	if (rc != SL_OK) {
		SL_FAIL(err, SL_E_IO, 0, "btrfs chunk tree '%s': %s", rel, oe.msg);
		err->sys = oe.sys;
		return SL_E_IO;
	}
	if (fstatfs(fd, &sf) != 0 || (unsigned long)sf.f_type != BTRFS_SUPER_MAGIC) {
		close(fd);
		return SL_FAIL(err, SL_E_UNSUPPORTED, 0, "'%s' is not on btrfs", rel);
	}
	memset(&info, 0, sizeof(info));
	if (ioctl(fd, BTRFS_IOC_FS_INFO, &info) == 0)
		m->devices = info.num_devices;
	rc = search_all(fd, m, err);
	close(fd);
	if (rc != SL_OK)
		chunkmap_free(m);
	return rc;
}
