#include "scanner/locate.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/sys.h"
#include "scanner/chunkmap.h"
#include "scanner/extents.h"

struct key {
	uint64_t dev;
	uint64_t ino;
	uint32_t idx;
};

static int cmp_key(const void *a, const void *b)
{
	const struct key *x = a, *y = b;
	if (x->dev != y->dev)
		return x->dev < y->dev ? -1 : 1;
	if (x->ino != y->ino)
		return x->ino < y->ino ? -1 : 1;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/* The files to visit, in (device, inode) order; skip: flags that leave a
 * file out.  *keys is freed by the caller. */
static int inode_order(const struct ftab *ft, unsigned skip, struct key **keys, size_t *n,
		       struct sl_err *err)
{
	size_t i;

	*n = 0;
	*keys = malloc((ft->nfiles ? ft->nfiles : 1) * sizeof(**keys));
	if (!*keys)
		return SL_FAIL(err, SL_E_NOMEM, 0, "locate: out of memory");
	for (i = 0; i < ft->nfiles; i++) {
		const struct ft_file *f = &ft->files[i];
		if (f->flags & skip)
			continue;
		(*keys)[*n].dev = ft->devs[f->dev].st_dev;
		(*keys)[*n].ino = ext_inode_rank(f->ino);
		(*keys)[*n].idx = (uint32_t)i;
		(*n)++;
	}
	qsort(*keys, *n, sizeof(**keys), cmp_key);
	return SL_OK;
}

/* Something on each device, for dev_probe: grown as devices appear. */
struct hints {
	struct hint {
		const struct anchor *a;
		char *rel;
	} *v;
	size_t cap;
};

static int note_hint(struct hints *h, size_t dev, const struct anchor *a, const char *rel)
{
	size_t old = h->cap;
	if (dev >= h->cap) {
		if (sl_grow(&h->v, &h->cap, dev + 1, sizeof(*h->v)) != 0)
			return -1;
		memset(h->v + old, 0, (h->cap - old) * sizeof(*h->v));
	}
	if (!h->v[dev].a) {
		if (!(h->v[dev].rel = strdup(rel)))
			return -1;
		h->v[dev].a = a;
	}
	return 0;
}

/* Record a per-file failure, or turn a resource failure into the run's. */
static int failed(struct ftab *ft, uint32_t i, int rc, const struct sl_err *fe, const char *path,
		  struct locate_stats *st, struct sl_err *err)
{
	if (sl_code_is_fatal(rc)) {
		SL_FAIL(err, rc, 0, "locate '%s': %s", path, fe->msg);
		err->sys = fe->sys;
		return rc;
	}
	st->failed++;
	return ftab_fail(ft, i, fe->msg, err);
}

/* Move file i to the device it really is on (a file bind-mounted over
 * another lives elsewhere than its directory). */
static int set_dev(struct ftab *ft, uint32_t i, uint64_t st_dev, struct sl_err *err)
{
	uint16_t idx;
	int rc;
	if (ft->devs[ft->files[i].dev].st_dev == st_dev)
		return SL_OK;
	rc = ftab_dev(ft, st_dev, &idx, err);
	if (rc == SL_OK)
		ft->files[i].dev = idx;
	return rc;
}

/* Where file k is opened (ftab_at: its root's anchor and its names below
 * it, into rel; with read, ftab_read_at: on its pool's branch if it has
 * one), and its path for messages.  Stops when cancelled.  *a is NULL when
 * no anchor holds its root: nothing is then opened (fail closed). */
static int where(const struct ftab *ft, uint32_t k, int read, atomic_int *cancel,
		 const struct anchor **a, struct strbuf *rel, struct strbuf *path,
		 struct sl_err *err)
{
	*a = NULL;
	if (cancel && atomic_load(cancel))
		return SL_FAIL(err, SL_E_CANCELLED, 0, "locate: cancelled");
	sb_reset(rel);
	sb_reset(path);
	*a = read ? ftab_read_at(ft, k, rel) : ftab_at(ft, k, rel);
	if (rel->oom || ftab_path(ft, k, path) != 0)
		return SL_FAIL(err, SL_E_NOMEM, 0, "locate: out of memory");
	return SL_OK;
}

static int no_anchor(struct sl_err *fe)
{
	return SL_FAIL(fe, SL_E_IO, 0, "open: its root is not held open (not walked)");
}

/* A file of a pool (mergerfs) is stat'ed, located and read on its branch,
 * so its identity, device and position are the real file's and its reader
 * the branch disk's (plan.h).  Whether a file system is such a pool is
 * asked of the mount table when its first file comes (extents.h says which
 * pools are believed); a file whose branch the pool does not tell is read
 * through the pool.  On success *a and *rel say the branch's. */
static int pool_branch(struct ftab *ft, uint32_t k, struct ext_pool **pools,
		       const struct anchor **a, struct strbuf *rel, struct sl_err *err)
{
	struct ft_dev *d = &ft->devs[ft->files[k].dev];
	struct strbuf below = STRBUF_INIT;
	struct anchor *branch;
	struct sl_err fe;
	int rc;

	if (d->pool == -1) {
		rc = ext_pool_open(d->st_dev, &pools[ft->files[k].dev], err);
		if (rc != SL_OK)
			return rc;
		d->pool = pools[ft->files[k].dev] != NULL;
	}
	if (d->pool != 1 || !*a)
		return SL_OK;
	rc = ext_pool_branch(pools[ft->files[k].dev], *a, rel->p, &branch, &below, &fe);
	if (rc == SL_E_NOMEM) {
		sb_free(&below);
		*err = fe;
		return rc;
	}
	if (rc == SL_OK)
		rc = ftab_set_via(ft, k, branch, below.p, err);
	else
		rc = SL_OK; /* read through the pool: slower, not wrong */
	sb_free(&below);
	if (rc == SL_OK && ftab_via(ft, k)) {
		sb_reset(rel);
		*a = ftab_read_at(ft, k, rel);
		if (rel->oom)
			rc = SL_FAIL(err, SL_E_NOMEM, 0, "locate: out of memory");
	}
	return rc;
}

int locate_stat(struct ftab *ft, struct dev_info **devs, struct locate_stats *st,
		atomic_int *cancel, struct sl_err *err)
{
	struct strbuf path = STRBUF_INIT, rel = STRBUF_INIT;
	struct hints hints = {NULL, 0};
	struct dev_info *info = NULL;
	struct ext_pool **pools = NULL;
	struct key *keys = NULL;
	size_t i, n = 0, npools = ft->ndevs;
	int rc;

	memset(st, 0, sizeof(*st));
	*devs = NULL;
	ft->stat_begin_ns = sys_wall_ns();
	rc = inode_order(ft, FT_FAILED, &keys, &n, err);
	/* the walk's devices; a file found elsewhere (set_dev) is no pool's */
	if (rc == SL_OK && npools && !(pools = calloc(npools, sizeof(*pools))))
		rc = SL_FAIL(err, SL_E_NOMEM, 0, "locate: out of memory");
	for (i = 0; i < n && rc == SL_OK; i++) {
		uint32_t k = keys[i].idx;
		const struct anchor *a;
		struct ext_result r;
		struct sl_err fe;
		int frc;

		if ((rc = where(ft, k, 0, cancel, &a, &rel, &path, err)) != SL_OK)
			break;
		if (ft->files[k].dev < npools &&
		    (rc = pool_branch(ft, k, pools, &a, &rel, err)) != SL_OK)
			break;
		frc = a ? ext_stat(a, rel.p, &r, &fe) : no_anchor(&fe);
		if (frc != SL_OK) {
			rc = failed(ft, k, frc, &fe, path.p, st, err);
			continue;
		}
		rc = set_dev(ft, k, r.dev, err);
		if (rc == SL_OK && note_hint(&hints, ft->files[k].dev, a, rel.p) != 0)
			rc = SL_FAIL(err, SL_E_NOMEM, 0, "locate: out of memory");
		if (rc != SL_OK)
			break;
		ft->files[k].ino = r.ino;
		ft->files[k].size = r.size;
		ft->files[k].mtime_ns = r.mtime_ns;
		ft->files[k].ctime_ns = r.ctime_ns;
		ft->files[k].btime_ns = r.btime_ns;
		/* the extent pass asks again where it opens the file; where it
		 * does not (no extent map: NFS, SMB, FUSE) this is what joins
		 * hard links */
		ft->files[k].links = r.linked ? FT_LINK_MANY : 0;
		ft->files[k].flags |= FT_STATED;
		st->files++;
		st->bytes += r.size;
	}
	/* a device none of whose files was stat'ed (all gone, or none): a
	 * directory on it stands in */
	for (i = 0; rc == SL_OK && i < ft->ndevs; i++) {
		const struct anchor *a;
		if ((i < hints.cap && hints.v[i].a) || ft->devs[i].dir == FT_NONE)
			continue;
		sb_reset(&rel);
		a = ftab_dir_at(ft, ft->devs[i].dir, &rel);
		if (rel.oom || (a && note_hint(&hints, i, a, rel.p) != 0))
			rc = SL_FAIL(err, SL_E_NOMEM, 0, "locate: out of memory");
	}
	if (rc == SL_OK && ft->ndevs) {
		info = calloc(ft->ndevs, sizeof(*info));
		if (!info)
			rc = SL_FAIL(err, SL_E_NOMEM, 0, "locate: out of memory");
		for (i = 0; rc == SL_OK && i < ft->ndevs; i++) {
			const struct hint *h = i < hints.cap ? &hints.v[i] : NULL;
			rc = dev_probe(ft->devs[i].st_dev, h ? h->a : NULL, h && h->a ? h->rel : "",
				       &info[i], err);
		}
	}
	if (rc == SL_OK)
		*devs = info;
	else
		free(info);
	for (i = 0; i < hints.cap; i++)
		free(hints.v[i].rel);
	free(hints.v);
	for (i = 0; pools && i < npools; i++)
		ext_pool_free(pools[i]);
	free(pools);
	free(keys);
	sb_free(&path);
	sb_free(&rel);
	return rc;
}

/* How to ask a file of device d, from what its first answer decided. */
static enum ext_mode ask_mode(const struct ft_dev *d)
{
	if (d->extents == -1)
		return EXT_ASK;
	if (d->extents == 0)
		return EXT_NONE;
	return d->by == FT_BY_BMAP ? EXT_BMAP : EXT_MAP;
}

/* Files of one file system written back one by one before the rest of it
 * is written back at once (extents.h, ext_writeback): one photo saved a
 * moment ago does not make the scan wait for everything else the file
 * system owes its disk; a folder copied a moment ago does, which is
 * quicker than file by file. */
#define WB_FILES_ALONE 8

/* What the extent pass says of where a file lies; it replaces them whole. */
#define WHERE_FLAGS (FT_LOCATED | FT_INLINE | FT_UNKNOWN | FT_ENCODED | FT_EMPTY | FT_NOEXT)

/* Whether file i's first position and its runs map through m (CM_MAPPED,
 * else why not); with apply, replace them by what they map to.  A run
 * lies within one chunk (btrfs extents never cross one), so its start
 * says where all of it is. */
static int map_file(struct ftab *ft, const struct chunkmap *m, uint32_t i, int apply)
{
	struct ft_file *f = &ft->files[i];
	struct ft_run *runs;
	uint64_t off;
	size_t k, n;
	int why = chunkmap_map(m, f->phys, &off);

	if (why != CM_MAPPED)
		return why;
	if (apply)
		f->phys = off;
	runs = ftab_runs_mut(ft, i, &n);
	for (k = 0; k < n; k++) {
		uint64_t roff;
		why = chunkmap_map(m, runs[k].phys, &roff);
		if (why != CM_MAPPED)
			return why;
		if (apply)
			runs[k].phys = roff;
	}
	return CM_MAPPED;
}

/* btrfs answers logical addresses: make the positions of device d's files
 * offsets on its device through the chunk map, all of them or (when one
 * cannot be) none, so that one order holds for the device (chunkmap.h). */
static int map_logical(struct ftab *ft, uint16_t d, struct strbuf *rel, struct sl_err *err)
{
	const struct anchor *a;
	struct chunkmap m;
	struct sl_err ce;
	size_t i, first = FT_NONE;
	int rc, why = CM_MAPPED;

	for (i = 0; i < ft->nfiles && first == FT_NONE; i++)
		if (ft->files[i].dev == d && (ft->files[i].flags & FT_LOCATED))
			first = i;
	if (first == FT_NONE)
		return SL_OK;
	sb_reset(rel);
	a = ftab_read_at(ft, (uint32_t)first, rel);
	if (rel->oom)
		return SL_FAIL(err, SL_E_NOMEM, 0, "locate: out of memory");
	rc = a ? chunkmap_read(a, rel->p, &m, &ce) : SL_FAIL(&ce, SL_E_IO, 0, "no anchor");
	if (rc == SL_E_UNSUPPORTED)
		return SL_OK; /* not btrfs: positions are the device's already */
	if (rc == SL_E_NOMEM)
		return SL_FAIL(err, rc, 0, "%s", ce.msg);
	if (rc != SL_OK)
		why = ce.sys == EPERM ? CM_NOROOT : CM_FAILED;
	else if (m.devices > 1)
		why = CM_MULTIDEV;
	for (i = first; i < ft->nfiles && why == CM_MAPPED; i++) {
		const struct ft_file *f = &ft->files[i];
		if (f->dev == d && (f->flags & FT_LOCATED))
			why = map_file(ft, &m, (uint32_t)i, 0);
	}
	for (i = first; i < ft->nfiles && why == CM_MAPPED; i++) {
		const struct ft_file *f = &ft->files[i];
		if (f->dev == d && (f->flags & FT_LOCATED))
			map_file(ft, &m, (uint32_t)i, 1);
	}
	ft->devs[d].logical = why;
	chunkmap_free(&m);
	return SL_OK;
}

/* Whether what the extent pass opened is the file the stat pass saw. */
static int same_file(const struct ftab *ft, const struct ft_file *f, const struct ext_result *r)
{
	return r->ino == f->ino && r->dev == ft->devs[f->dev].st_dev &&
	       !(r->btime_ns && f->btime_ns && r->btime_ns != f->btime_ns);
}

int locate_extents(struct ftab *ft, struct locate_stats *st, atomic_int *cancel,
		   struct sl_err *err)
{
	struct strbuf path = STRBUF_INIT, rel = STRBUF_INIT;
	struct ext_runs runs = {NULL, 0, 0};
	struct key *keys = NULL;
	size_t i, n = 0;
	int rc;

	st->located = 0;
	rc = inode_order(ft, FT_FAILED | FT_SKIP, &keys, &n, err);
	for (i = 0; i < n && rc == SL_OK; i++) {
		uint32_t k = keys[i].idx;
		struct ft_file *f = &ft->files[k];
		const struct anchor *a;
		struct ft_dev *d;
		struct ext_result r;
		struct sl_err fe;
		int frc;

		if ((f->flags & FT_STATED) && ft->devs[f->dev].extents == 0) {
			/* no extent map here: opening it would only repeat the stat
			 * of the first pass (3 system calls a file) */
			f->flags = (uint16_t)((f->flags & ~WHERE_FLAGS) | FT_NOEXT);
			continue;
		}
		if ((rc = where(ft, k, 1, cancel, &a, &rel, &path, err)) != SL_OK)
			break;
		d = &ft->devs[f->dev];
		/* a few files without blocks yet are written back one by one; more
		 * (a copy just made) with all of their file system at once */
		frc = a ? ext_locate(a, rel.p, ask_mode(d),
				     d->written_back >= WB_FILES_ALONE && !d->synced ? EXT_WB_FS
										  : EXT_WB_FILE,
				     &r, &runs, &fe)
			: no_anchor(&fe);
		/* another file than the stat pass saw (and the diff judged):
		 * an error now, a fresh look next scan (docs/security.md) */
		if (frc == SL_OK && (f->flags & FT_STATED) && !same_file(ft, f, &r))
			frc = SL_FAIL(&fe, SL_E_IO, 0, "open: replaced since the walk");
		if (frc != SL_OK) {
			/* vanished between the passes: not counted twice */
			if (f->flags & FT_STATED) {
				st->files--;
				st->bytes -= f->size;
			}
			rc = failed(ft, k, frc, &fe, path.p, st, err);
			continue;
		}
		rc = set_dev(ft, k, r.dev, err);
		if (rc != SL_OK)
			break;
		f = &ft->files[k];
		d = &ft->devs[f->dev];
		if (d->extents == -1 && !r.undecided) {
			if (r.flags & FT_NOEXT) {
				d->extents = 0;
				d->extents_errno = r.noext_errno;
				d->bmap_errno = r.bmap_errno;
			} else {
				d->extents = 1;
				d->by = r.by;
			}
		}
		if (f->flags & FT_STATED)
			st->bytes += r.size - f->size;
		else {
			st->files++;
			st->bytes += r.size;
		}
		f->ino = r.ino;
		f->size = r.size;
		f->mtime_ns = r.mtime_ns;
		f->ctime_ns = r.ctime_ns;
		f->btime_ns = r.btime_ns;
		f->phys = r.phys;
		f->fragments = r.fragments;
		f->by = r.by;
		f->frag_min = r.frag_min;
		f->links = (uint8_t)((f->links & FT_LINK_ALONE) | (r.linked ? FT_LINK_MANY : 0) |
				     (r.shared ? FT_LINK_SHARED : 0));
		f->flags = (uint16_t)((f->flags & ~WHERE_FLAGS) | r.flags);
		if (r.flags & FT_LOCATED)
			st->located++;
		d->writeback_s += r.writeback_s;
		st->writeback_s += r.writeback_s;
		if (r.written_back == 1) {
			d->written_back++;
			st->written_back++;
		}
		if (r.written_back == 2)
			d->synced = st->synced_fs = 1;
		if ((runs.n || ft->run_at) && (rc = ftab_set_runs(ft, k, runs.v, runs.n, err)) != SL_OK)
			break;
	}
	for (i = 0; i < ft->ndevs && rc == SL_OK; i++)
		if (ft->devs[i].extents == 1 && ft->devs[i].by == FT_BY_MAP)
			rc = map_logical(ft, (uint16_t)i, &rel, err);
	free(runs.v);
	free(keys);
	sb_free(&path);
	sb_free(&rel);
	return rc;
}

int locate_all(struct ftab *ft, struct dev_info **devs, struct locate_stats *st,
	       atomic_int *cancel, struct sl_err *err)
{
	int rc = locate_stat(ft, devs, st, cancel, err);
	if (rc == SL_OK)
		rc = locate_extents(ft, st, cancel, err);
	if (rc != SL_OK) {
		free(*devs);
		*devs = NULL;
	}
	return rc;
}

void locate_release(struct ftab *ft)
{
	size_t i;
	for (i = 0; i < ft->nanchors; i++)
		anchor_release(ft->anchors[i]);
}

int locate_retake(struct ftab *ft, struct sl_err *err)
{
	struct strbuf rel = STRBUF_INIT;
	size_t i, k;
	int rc = SL_OK;

	for (i = 0; rc == SL_OK && i < ft->nanchors; i++)
		rc = anchor_retake(ft->anchors[i], err);
	for (i = 0; rc == SL_OK && i < ft->ndevs; i++) {
		for (k = 0; k < ft->nfiles; k++) {
			const struct ft_file *f = &ft->files[k];
			const struct anchor *a;
			struct ext_result r;
			struct sl_err fe;

			if (f->dev != i || !(f->flags & FT_STATED) || (f->flags & FT_FAILED))
				continue;
			sb_reset(&rel);
			a = ftab_read_at(ft, (uint32_t)k, &rel);
			if (rel.oom) {
				rc = SL_FAIL(err, SL_E_NOMEM, 0, "locate: out of memory");
				break;
			}
			if (a && ext_stat(a, rel.p, &r, &fe) == SL_OK && r.ino == f->ino) {
				ft->devs[i].st_dev = r.dev;
				break;
			}
		}
	}
	sb_free(&rel);
	return rc;
}
