/* extents_linux.c - FS_IOC_FIEMAP.
 *
 * No FIEMAP_FLAG_SYNC: syncing would force writeback of every dirty file we
 * look at; a file still in delayed allocation reports FIEMAP_EXTENT_UNKNOWN
 * and is placed by inode instead. */
#include "scanner/extents.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/fiemap.h>
#include <linux/fs.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "scanner/ftab.h"

#define BATCH 64

/* Errors meaning "this file system has no extent map", not "this file". */
static int is_unsupported(int e)
{
	return e == EOPNOTSUPP || e == ENOTTY || e == EINVAL || e == ENOSYS || e == EBADR;
}

static void map_extents(int fd, struct ext_result *r)
{
	union {
		struct fiemap fm;
		unsigned char raw[sizeof(struct fiemap) + BATCH * sizeof(struct fiemap_extent)];
	} u;
	uint64_t start = 0, prev_end = 0;
	int first = 1, have_prev = 0;

	for (;;) {
		struct fiemap *fm = &u.fm;
		uint32_t i, n;

		memset(fm, 0, sizeof(*fm));
		fm->fm_start = start;
		fm->fm_length = FIEMAP_MAX_OFFSET - start;
		fm->fm_extent_count = BATCH;
		if (ioctl(fd, FS_IOC_FIEMAP, fm) != 0) {
			int e = errno;
			if (first && is_unsupported(e)) {
				r->flags |= FT_NOEXT;
				r->noext_errno = e;
			} else {
				/* a later batch failed: what we have is partial */
				r->flags |= FT_UNKNOWN;
			}
			return;
		}
		n = fm->fm_mapped_extents;
		if (n == 0) {
			if (first)
				r->flags |= FT_EMPTY;
			return;
		}
		for (i = 0; i < n; i++) {
			const struct fiemap_extent *x = &fm->fm_extents[i];
			uint32_t fl = x->fe_flags;
			if (first) {
				first = 0;
				if (fl & (FIEMAP_EXTENT_UNKNOWN | FIEMAP_EXTENT_DELALLOC))
					r->flags |= FT_UNKNOWN;
				else if (fl & (FIEMAP_EXTENT_DATA_INLINE | FIEMAP_EXTENT_DATA_TAIL |
					       FIEMAP_EXTENT_NOT_ALIGNED))
					r->flags |= FT_INLINE;
				else if (fl & FIEMAP_EXTENT_ENCODED)
					r->flags |= FT_ENCODED;
				else {
					r->flags |= FT_LOCATED;
					r->phys = x->fe_physical;
				}
			}
			if (!have_prev || x->fe_physical != prev_end)
				r->fragments++;
			have_prev = 1;
			prev_end = x->fe_physical + x->fe_length;
			if (fl & FIEMAP_EXTENT_LAST)
				return;
		}
		start = fm->fm_extents[n - 1].fe_logical + fm->fm_extents[n - 1].fe_length;
		if (n < BATCH && start >= r->size)
			return; /* some file systems omit the LAST flag */
	}
}

static void fill_stat(const struct stat *st, struct ext_result *r)
{
	r->dev = (uint64_t)st->st_dev;
	r->ino = (uint64_t)st->st_ino;
	r->size = (uint64_t)st->st_size;
	r->mtime_ns = (int64_t)st->st_mtim.tv_sec * 1000000000 + st->st_mtim.tv_nsec;
	r->ctime_ns = (int64_t)st->st_ctim.tv_sec * 1000000000 + st->st_ctim.tv_nsec;
	r->flags = FT_STATED;
}

int ext_stat(const char *path, struct ext_result *r, struct sl_err *err)
{
	struct stat st;
	int e;

	memset(r, 0, sizeof(*r));
	if (fstatat(AT_FDCWD, path, &st, AT_SYMLINK_NOFOLLOW) != 0) {
		e = errno;
		return SL_FAIL(err, sl_errno_class(e), e, "stat");
	}
	if (S_ISLNK(st.st_mode))
		return SL_FAIL(err, SL_E_IO, 0, "open: replaced by a symbolic link");
	if (!S_ISREG(st.st_mode))
		return SL_FAIL(err, SL_E_IO, 0, "open: no longer a regular file");
	fill_stat(&st, r);
	return SL_OK;
}

int ext_locate(const char *path, int query, struct ext_result *r, struct sl_err *err)
{
	struct stat st;
	int fd, e;

	memset(r, 0, sizeof(*r));
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0) {
		e = errno;
		if (e == ELOOP)
			return SL_FAIL(err, SL_E_IO, 0, "open: replaced by a symbolic link");
		return SL_FAIL(err, sl_errno_class(e), e, "open");
	}
	if (fstat(fd, &st) != 0) {
		e = errno;
		close(fd);
		return SL_FAIL(err, sl_errno_class(e), e, "stat");
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		return SL_FAIL(err, SL_E_IO, 0, "open: no longer a regular file");
	}
	fill_stat(&st, r);
	if (query)
		map_extents(fd, r);
	else
		r->flags |= FT_NOEXT;
	close(fd);
	return SL_OK;
}

uint64_t ext_inode_rank(uint64_t ino)
{
	return ino;
}
