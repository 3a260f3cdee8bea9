/* extents_linux.c - FS_IOC_FIEMAP, and FIBMAP where it is refused.
 *
 * No FIEMAP_FLAG_SYNC as a rule: it would write back every dirty page of
 * every file we ask about, blocks given or not.  A file whose data is
 * still in delayed allocation (FIEMAP_EXTENT_DELALLOC: copied a moment
 * ago, not yet given blocks, so it has no position) is written back and
 * asked again: the first scan after copying photos onto a drive is the
 * most common first use there is, and without this it would follow inode
 * order.  The kernel writes these pages within half a minute anyway, in
 * the middle of our sweep, where each write is a seek; written first, they
 * cost the sweep nothing (docs/design.md, "Data not yet on the disk").
 * Only files that say so pay: one at a time (sync_file_range: this file's
 * pages, no journal commit), or, after a few on the same file system, all
 * of it at once (syncfs, ext_writeback); what it took is counted and
 * shown.  The other exception is a
 * file found all shared and changed lately: it is to be joined with another
 * by its map alone (ftab_join_links), and xfs maps a reflink copy written a
 * moment ago to the shared extents until writeback gives it blocks of its
 * own, with no flag saying so, and btrfs until the write's ordered extent
 * completes.  Such a file is written back (fdatasync, which waits for
 * both) and asked again.  Only those changed
 * within SYNC_RECENT: on a btrfs snapshot or a deduplicated tree every file
 * is all shared, and a second map of each would double the extent pass. */
#include "scanner/extents.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <linux/fiemap.h>
#include <linux/fs.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "common/anchor_linux.h"
#include "common/sys.h"
#include "common/sys_posix.h"
#include "scanner/device.h"
#include "scanner/ftab.h"

#define BATCH 64
/* Dirty pages are written back within 30 s by default (dirty_expire); an
 * hour leaves room for laptop mode and a loaded disk. */
#define SYNC_RECENT (3600 * 1000000000ll)

/* Errors meaning "this file system has no extent map", not "this file". */
static int is_unsupported(int e)
{
	return e == EOPNOTSUPP || e == ENOTTY || e == EINVAL || e == ENOSYS || e == EBADR;
}

#define PLAIN_DATA_MASK                                                                        \
	(FIEMAP_EXTENT_UNKNOWN | FIEMAP_EXTENT_DELALLOC | FIEMAP_EXTENT_ENCODED |               \
	 FIEMAP_EXTENT_DATA_ENCRYPTED | FIEMAP_EXTENT_DATA_INLINE | FIEMAP_EXTENT_DATA_TAIL |   \
	 FIEMAP_EXTENT_NOT_ALIGNED)

/* Add one extent to runs, merged with the last where it continues it on
 * the disk and in the file; *drop is set (the file keeps no runs) when it
 * cannot be kept. */
static void add_run(struct ext_runs *runs, const struct fiemap_extent *x, int *drop)
{
	struct ft_run *last;

	if (*drop)
		return;
	last = runs->n ? &runs->v[runs->n - 1] : NULL;
	if (x->fe_flags & PLAIN_DATA_MASK) {
		*drop = 1;
		return;
	}
	if (last && last->logical + last->len == x->fe_logical &&
	    last->phys + last->len == x->fe_physical) {
		last->len += x->fe_length;
		return;
	}
	if (last && x->fe_logical < last->logical + last->len) {
		*drop = 1; /* overlapping: not a map to follow */
		return;
	}
	if (last ? x->fe_logical > last->logical + last->len : x->fe_logical > 0) {
		*drop = 1; /* a hole: read by the reader, which skips holes */
		return;
	}
	if (runs->n == runs->cap) {
		size_t cap = runs->cap ? runs->cap * 2 : 16;
		struct ft_run *v = realloc(runs->v, cap * sizeof(*v));
		if (!v) {
			*drop = 1;
			return;
		}
		runs->v = v;
		runs->cap = cap;
	}
	runs->v[runs->n].logical = x->fe_logical;
	runs->v[runs->n].phys = x->fe_physical;
	runs->v[runs->n].len = x->fe_length;
	runs->n++;
}

/* Sets *dirty when some of the data has no blocks yet (delayed
 * allocation). */
static void map_extents(int fd, struct ext_result *r, struct ext_runs *runs, int *dirty)
{
	union {
		struct fiemap fm;
		unsigned char raw[sizeof(struct fiemap) + BATCH * sizeof(struct fiemap_extent)];
	} u;
	uint64_t start = 0, prev_end = 0;
	int first = 1, have_prev = 0, drop = runs == NULL, all_shared = 1;

	r->flags &= FT_STATED; /* asked again: nothing of the first answer stays */
	r->phys = 0;
	r->fragments = 0;
	r->shared = 0;
	if (runs)
		runs->n = 0;
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
			drop = 1;
			goto done;
		}
		n = fm->fm_mapped_extents;
		if (n == 0) {
			if (first)
				r->flags |= FT_EMPTY;
			goto done;
		}
		for (i = 0; i < n; i++) {
			const struct fiemap_extent *x = &fm->fm_extents[i];
			uint32_t fl = x->fe_flags;
			if (fl & FIEMAP_EXTENT_DELALLOC)
				*dirty = 1;
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
			add_run(runs, x, &drop);
			if (!(fl & FIEMAP_EXTENT_SHARED) || (fl & FIEMAP_EXTENT_UNWRITTEN))
				all_shared = 0;
			if (fl & FIEMAP_EXTENT_LAST)
				goto done;
		}
		start = fm->fm_extents[n - 1].fe_logical + fm->fm_extents[n - 1].fe_length;
		if (n < BATCH && start >= r->size)
			goto done; /* some file systems omit the LAST flag */
	}
done:
	if (runs && runs->n && runs->v[runs->n - 1].logical + runs->v[runs->n - 1].len < r->size)
		drop = 1; /* a hole at the end */
	/* one run needs no schedule, unless it is to be compared with the
	 * runs of another file sharing it; a file not placed has none */
	r->shared = runs && !drop && all_shared && runs->n > 0 && (r->flags & FT_LOCATED) &&
		    !(r->flags & FT_UNKNOWN);
	if (runs && (drop || (r->fragments < 2 && !r->shared) || !(r->flags & FT_LOCATED) ||
		     (r->flags & FT_UNKNOWN)))
		runs->n = 0;
}

/* ---- FIBMAP ---- */

struct bmap {
	int fd;
	unsigned left; /* calls still allowed */
	int cut;       /* the count stopped short: it is a lower bound */
};

/* Physical block of logical block b: 0 for none (a hole, data resident in
 * the file's record, past the end); -1 with errno set on failure. */
static int64_t bmap_block(struct bmap *m, uint64_t b)
{
	int v;
	if (b > INT_MAX) {
		errno = ERANGE;
		return -1;
	}
	v = (int)b;
	m->left--;
	if (ioctl(m->fd, FIBMAP, &v) != 0)
		return -1;
	return (int64_t)(unsigned)v;
}

/* Runs that start in blocks (lo, hi], given their positions plo and phi:
 * none when the two ends lie as far apart on the disk as in the file (taken
 * as one run: a file that leaves and comes back to exactly that distance is
 * counted short, which only the fragment count would notice). */
static uint32_t bmap_starts(struct bmap *m, uint64_t lo, uint64_t hi, int64_t plo, int64_t phi)
{
	uint64_t mid;
	int64_t pmid;

	if (plo > 0 && phi > plo && (uint64_t)(phi - plo) == hi - lo)
		return 0;
	/* not one run: the one holding hi, if any, starts after lo */
	if (hi == lo + 1 || m->left == 0) {
		if (hi != lo + 1)
			m->cut = 1;
		return phi > 0;
	}
	mid = lo + (hi - lo) / 2;
	pmid = bmap_block(m, mid);
	if (pmid < 0) {
		m->cut = 1;
		return phi > 0;
	}
	return bmap_starts(m, lo, mid, plo, pmid) + bmap_starts(m, mid, hi, pmid, phi);
}

/* A file system whose size no int block number reaches past 2^31 blocks
 * answers ERANGE for its far files: those are unplaced, the others not. */
static void map_blocks(int fd, struct ext_result *r)
{
	struct bmap m = {fd, EXT_BMAP_BUDGET, 0};
	int bsz = 0;
	int64_t first, last;
	uint64_t nblocks;

	if (ioctl(fd, FIGETBSZ, &bsz) != 0) {
		r->flags |= FT_NOEXT;
		r->bmap_errno = errno;
		return;
	}
	if (bsz <= 0) {
		r->flags |= FT_NOEXT;
		r->bmap_errno = EINVAL;
		return;
	}
	if (r->size == 0) {
		r->flags |= FT_EMPTY;
		return;
	}
	first = bmap_block(&m, 0);
	if (first < 0) {
		int e = errno;
		if (e == ERANGE) {
			r->flags |= FT_UNKNOWN;
			r->undecided = 1;
			return;
		}
		r->flags |= FT_NOEXT;
		r->bmap_errno = e;
		return;
	}
	r->by = FT_BY_BMAP;
	if (first == 0) {
		/* NTFS keeps small files in their MFT record; a larger one
		 * begins with a hole, or the file system maps nothing: this
		 * file tells nothing of the others */
		r->flags |= r->size < (uint64_t)bsz ? FT_INLINE : FT_UNKNOWN;
		r->undecided = 1;
		return;
	}
	r->flags |= FT_LOCATED;
	r->phys = (uint64_t)first * (uint64_t)bsz;
	r->fragments = 1;
	nblocks = (r->size + (uint64_t)bsz - 1) / (uint64_t)bsz;
	if (nblocks < 2)
		return;
	last = bmap_block(&m, nblocks - 1);
	if (last < 0) {
		r->frag_min = 1;
		return;
	}
	r->fragments += bmap_starts(&m, 0, nblocks - 1, first, last);
	r->frag_min = (uint8_t)m.cut;
}

static void fill_stat(const struct stat *st, int64_t btime_ns, struct ext_result *r)
{
	r->dev = (uint64_t)st->st_dev;
	r->ino = (uint64_t)st->st_ino;
	r->size = (uint64_t)st->st_size;
	r->mtime_ns = (int64_t)st->st_mtim.tv_sec * 1000000000 + st->st_mtim.tv_nsec;
	r->ctime_ns = (int64_t)st->st_ctim.tv_sec * 1000000000 + st->st_ctim.tv_nsec;
	r->btime_ns = btime_ns;
	r->flags = FT_STATED;
	r->linked = st->st_nlink > 1;
}

int ext_stat(const struct anchor *a, const char *rel, struct ext_result *r,
	     struct sl_err *err)
{
	struct stat st;
	int64_t btime;
	int fd, rc;

	memset(r, 0, sizeof(*r));
	rc = anchor_open_file(a, rel, O_PATH, &fd, &st, &btime, err);
	if (rc != SL_OK)
		return rc;
	close(fd);
	fill_stat(&st, btime, r);
	return SL_OK;
}

/* Write the file's dirty pages back and wait until the file system has
 * put the blocks in its map.  sync_file_range waits for the pages only:
 * enough on ext4 and xfs, not on btrfs, which records a written range's
 * extent when the write's ordered extent completes, after the pages'
 * writeback; asked at once, a copied file still had no position now and
 * then (fs_btrfs: "147 of 148" placed, 3 runs in 20).  So sync_file_range
 * first (no journal commit), and fdatasync, which waits for both, only for
 * a file whose map still says so. */
static int write_back(int fd)
{
	return sync_file_range(fd, 0, 0,
			       SYNC_FILE_RANGE_WAIT_BEFORE | SYNC_FILE_RANGE_WRITE |
				       SYNC_FILE_RANGE_WAIT_AFTER);
}

/* As map_extents leaves a file not all shared. */
static void unshare(struct ext_result *r, struct ext_runs *runs)
{
	r->shared = 0;
	if (runs && r->fragments < 2)
		runs->n = 0;
}

int ext_locate(const struct anchor *a, const char *rel, enum ext_mode mode,
	       enum ext_writeback wb, struct ext_result *r, struct ext_runs *runs,
	       struct sl_err *err)
{
	struct stat st;
	int64_t btime;
	int fd, rc;

	memset(r, 0, sizeof(*r));
	if (runs)
		runs->n = 0;
	rc = anchor_open_file(a, rel, O_RDONLY | O_NONBLOCK | O_NOCTTY, &fd, &st, &btime, err);
	if (rc != SL_OK)
		return rc;
	fill_stat(&st, btime, r);
	if (mode == EXT_MAP || mode == EXT_ASK) {
		int dirty = 0;
		map_extents(fd, r, runs, &dirty);
		if (dirty) {
			double t0 = sys_now();
			int ok = wb == EXT_WB_FS ? syncfs(fd) == 0 : write_back(fd) == 0;
			if (ok) {
				dirty = 0;
				map_extents(fd, r, runs, &dirty);
				r->written_back = wb == EXT_WB_FS ? 2 : 1;
			}
			if (ok && (dirty || (r->flags & (FT_UNKNOWN | FT_EMPTY))) &&
			    fdatasync(fd) == 0) {
				dirty = 0;
				map_extents(fd, r, runs, &dirty);
			}
			r->writeback_s = sys_now() - t0;
		}
		if (r->shared && r->ctime_ns > sys_wall_ns() - SYNC_RECENT) {
			/* fdatasync, not write_back: btrfs puts a written range's
			 * new extent in its tree only when the write's ordered
			 * extent completes, after the pages' writeback, and only
			 * fsync waits for that; asked at once, the copy edited a
			 * moment ago still mapped to the shared extents, and was
			 * joined to the other copy (fs_btrfs failed 7 times in 12) */
			if (fdatasync(fd) == 0)
				map_extents(fd, r, runs, &dirty);
			else
				unshare(r, runs); /* not known to be whole: read on its own */
		}
		if (!(r->flags & FT_NOEXT))
			r->by = FT_BY_MAP;
	}
	/* only a file system on a block device can map blocks (btrfs's
	 * anonymous numbers have FIEMAP) */
	if (mode == EXT_BMAP || (mode == EXT_ASK && (r->flags & FT_NOEXT) && major(st.st_dev) != 0)) {
		r->flags &= (uint16_t)~FT_NOEXT;
		map_blocks(fd, r); /* keeps no runs (extents.h): runs->n is still 0 */
	}
	if (mode == EXT_NONE)
		r->flags |= FT_NOEXT;
	close(fd);
	return SL_OK;
}

/* ---- mergerfs pools ---- */

struct ext_pool {
	uint64_t st_dev;
	size_t n;
	struct {
		char *path;
		struct anchor *a;
	} br[EXT_POOL_MAX_BRANCHES];
};

void ext_pool_free(struct ext_pool *p)
{
	size_t i;

	if (!p)
		return;
	for (i = 0; i < p->n; i++) {
		free(p->br[i].path);
		anchor_free(p->br[i].a);
	}
	free(p);
}

/* An attribute of the file fd (O_PATH: through /proc, since mergerfs's
 * control file answers attributes but cannot be opened), NUL-terminated in
 * buf; its length, or -1 when there is none or it does not fit. */
static ssize_t attr(int fd, const char *name, char *buf, size_t cap)
{
	char proc[64];
	ssize_t n;

	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	n = getxattr(proc, name, buf, cap - 1);
	if (n < 0 || memchr(buf, '\0', (size_t)n))
		return -1;
	buf[n] = '\0';
	return n;
}

/* mergerfs's branches, "path=RW:path=NC,1G:...", each held as an anchor;
 * a branch that cannot be opened is left out (its files are then read
 * through the pool). */
static int add_branches(struct ext_pool *p, char *list, struct sl_err *err)
{
	char *save = NULL, *b;

	for (b = strtok_r(list, ":", &save); b && p->n < EXT_POOL_MAX_BRANCHES;
	     b = strtok_r(NULL, ":", &save)) {
		char *eq = strrchr(b, '=');
		struct anchor *a;
		struct sl_err e;
		int rc;

		if (eq)
			*eq = '\0';
		if (b[0] != '/')
			continue;
		rc = anchor_open(b, 0, &a, &e);
		if (rc == SL_E_NOMEM) {
			*err = e;
			return rc;
		}
		if (rc != SL_OK)
			continue;
		p->br[p->n].path = strdup(anchor_path(a));
		p->br[p->n].a = a;
		if (!p->br[p->n].path)
			return SL_FAIL(err, SL_E_NOMEM, 0, "out of memory");
		p->n++;
	}
	return SL_OK;
}

int ext_pool_open(uint64_t st_dev, struct ext_pool **out, struct sl_err *err)
{
	char mnt[4096], list[8192];
	struct ext_pool *p;
	struct anchor *top = NULL;
	struct sl_err e;
	int fd = -1, rc = SL_OK;

	*out = NULL;
	/* only a pool root (or this user) mounted: any FUSE server can call
	 * itself mergerfs, and answer any path */
	if (!dev_pool_mount(st_dev, mnt, sizeof(mnt)))
		return SL_OK;
	if (anchor_open(mnt, 0, &top, &e) != SL_OK || anchor_dev(top) != st_dev)
		goto out;
	fd = anchor_openat(top, ".mergerfs", O_PATH);
	if (fd < 0 || attr(fd, "user.mergerfs.branches", list, sizeof(list)) < 0)
		goto out;
	p = calloc(1, sizeof(*p));
	if (!p) {
		rc = SL_FAIL(err, SL_E_NOMEM, 0, "out of memory");
		goto out;
	}
	p->st_dev = st_dev;
	rc = add_branches(p, list, err);
	if (rc == SL_OK && p->n > 0)
		*out = p;
	else
		ext_pool_free(p);
out:
	if (fd >= 0)
		close(fd);
	anchor_free(top);
	return rc;
}

struct anchor *ext_pool_branch_at(const struct ext_pool *p, size_t i)
{
	return i < p->n ? p->br[i].a : NULL;
}

int ext_pool_branch(const struct ext_pool *p, const struct anchor *a, const char *rel,
		    struct anchor **branch, struct strbuf *below, struct sl_err *err)
{
	char base[4096], relpath[4096];
	struct stat st;
	int64_t bt;
	size_t i;
	int fd, rc;

	*branch = NULL;
	rc = anchor_open_file(a, rel, O_PATH, &fd, &st, &bt, err);
	if (rc != SL_OK)
		return rc;
	if (attr(fd, "user.mergerfs.basepath", base, sizeof(base)) < 0 ||
	    attr(fd, "user.mergerfs.relpath", relpath, sizeof(relpath)) < 2 || relpath[0] != '/') {
		close(fd);
		return SL_FAIL(err, SL_E_UNSUPPORTED, 0, "the pool does not say where it is");
	}
	close(fd);
	for (i = 0; i < p->n; i++) {
		if (strcmp(p->br[i].path, base) == 0) {
			sb_adds(below, relpath + 1);
			if (below->oom)
				return SL_FAIL(err, SL_E_NOMEM, 0, "out of memory");
			*branch = p->br[i].a;
			return SL_OK;
		}
	}
	return SL_FAIL(err, SL_E_UNSUPPORTED, 0, "the pool names a branch it does not have");
}

uint64_t ext_inode_rank(uint64_t ino)
{
	return ino;
}
