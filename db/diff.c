/* diff.c - what changed since the index last saw the roots.
 *
 * The index's live records under the roots are loaded with their identity
 * (file system, inode), size, mtime and ctime; each path is kept only as a
 * 128-bit hash (XXH3), so a million records cost tens of megabytes.  Each
 * walked file then finds its record in three passes, identity before path,
 * so that every rename, swap and replacement lands on the right record:
 *   1. its path's record, when that record has the file's identity:
 *      unchanged (not read) when size, mtime and ctime are the same and
 *      the record has no error; retried (read again, not counted as
 *      changed) when they are the same but the record has an error; read
 *      again when only the ctime moved (a rewrite that put its mtime back,
 *      or a chmod: only reading tells); else changed, read again;
 *   2. else a record with its identity, size and mtime that no file took by
 *      path (or with its identity and birth time, where both are known:
 *      then a changed size or mtime only means it is read again): the file
 *      was moved or renamed; the record follows it, and it is read again
 *      only when its ctime moved (a rename moves it) or the record has an
 *      error;
 *   3. else its path's record, if no file took it (the file there was
 *      replaced: an editor's save through a temporary file): changed, read;
 *      after reading, a missing record with the same size and content takes
 *      over instead (the file was moved here from another file system);
 *   otherwise new: read, and after reading, a missing record with the same
 *   size and content hash is taken over (a move across file systems).
 * A file that could not be stat'ed or read (FT_FAILED) takes its path's
 * record in pass 1 when the walk saw that record's inode there, else in
 * pass 3 when no file took it: after a swap the record of the file that
 * moved away follows that file, even if the name it left then broke.
 * Records no walked file took are missing: deleted after a complete scan,
 * unless their file system was not walked at all (unavailable: kept).  A
 * missing record at a path a moved record now takes is marked deleted at
 * once: its path holds another file, whatever else the scan finds.
 */
#include <stdlib.h>
#include <string.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "common/sys.h"
#include "common/strbuf.h"
#include "db/db_int.h"
#include "scanner/ftab.h"

struct rec {
	XXH128_hash_t h; /* of the path */
	int64_t id;
	int64_t fs_id;   /* 0: unknown (recorded before schema 3) */
	int64_t dev;
	uint64_t ino;
	uint64_t size;
	int64_t mtime_ns;
	int64_t ctime_ns; /* 0: not known (recorded before schema 7, or no such time) */
	int64_t btime_ns; /* 0: not known (before schema 12, or no such time) */
	int has_error;
	int tomb;         /* marked deleted by a scan that could not see everything */
	int needs_hash;   /* a picture without a perceptual hash, never tried */
	int pending;      /* read in part by a quick scan (DB_PENDING_SQL) */
	int stale;        /* made by an older extractor than this one (X_META_STALE_SQL) */
	int taken;
};

/* Open-addressing index over recs; slot value is rec index + 1. */
struct index {
	uint32_t *slot;
	size_t cap;
};

static uint64_t mix(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	return x;
}

static int index_init(struct index *ix, size_t n)
{
	ix->cap = 16;
	while (ix->cap < 2 * n + 16)
		ix->cap *= 2;
	ix->slot = calloc(ix->cap, sizeof(*ix->slot));
	return ix->slot ? 0 : -1;
}

static void index_put(struct index *ix, uint64_t key, uint32_t v)
{
	size_t i = (size_t)(mix(key) & (ix->cap - 1));
	while (ix->slot[i])
		i = (i + 1) & (ix->cap - 1);
	ix->slot[i] = v + 1;
}

static uint64_t path_key(const struct rec *r)
{
	return r->h.low64;
}

static uint64_t inode_key(int64_t fs_id, uint64_t ino)
{
	return mix((uint64_t)fs_id * 0x9E3779B97F4A7C15ull) ^ ino;
}

static int by_path(const struct db_diff *d, const struct index *ix, XXH128_hash_t h)
{
	size_t i = (size_t)(mix(h.low64) & (ix->cap - 1));
	while (ix->slot[i]) {
		const struct rec *r = &((const struct rec *)d->recs)[ix->slot[i] - 1];
		if (r->h.low64 == h.low64 && r->h.high64 == h.high64)
			return (int)ix->slot[i] - 1;
		i = (i + 1) & (ix->cap - 1);
	}
	return -1;
}

/* Whether two birth times may be of one file: equal, or one not known (a
 * record from before schema 12; a file system that keeps none).  An inode
 * number given again to a new file (ext4 and xfs do at once) with the same
 * size and mtime, a copy made with cp -p or a move across file systems,
 * is told apart by this alone. */
static int same_birth(int64_t rec_btime, int64_t file_btime)
{
	return !rec_btime || !file_btime || rec_btime == file_btime;
}

/* A record on (fs_id, ino) that no file has taken yet and that is of this
 * file (several records may share an inode: hard links, and a number the
 * file system gave again to a new file).  With both birth times known and
 * equal the inode is the same file whatever its size and mtime now: a file
 * renamed and rewritten in place between two scans keeps its record (and
 * a scan that cannot see the file whose path it took then displaces that
 * record, provisionally, rather than handing it to this one).  Without
 * them, size and mtime must be the same too: an inode number given again
 * is told apart by nothing else.  A record with an error counts: a file
 * renamed while a scan was reading it got "No such file" on its record,
 * and is still the same file. */
static int by_inode(const struct db_diff *d, const struct index *ix, int64_t fs_id, uint64_t ino,
		    uint64_t size, int64_t mtime_ns, int64_t btime_ns)
{
	size_t i = (size_t)(mix(inode_key(fs_id, ino)) & (ix->cap - 1));
	while (ix->slot[i]) {
		const struct rec *r = &((const struct rec *)d->recs)[ix->slot[i] - 1];
		if (r->fs_id == fs_id && r->ino == ino && !r->taken &&
		    ((r->btime_ns && btime_ns && r->btime_ns == btime_ns) ||
		     (r->size == size && r->mtime_ns == mtime_ns &&
		      same_birth(r->btime_ns, btime_ns))))
			return (int)ix->slot[i] - 1;
		i = (i + 1) & (ix->cap - 1);
	}
	return -1;
}

/* [lo, hi): the paths at or below root ('0' follows '/'). */
static void root_range(const char *root, struct strbuf *lo, struct strbuf *hi, size_t *n)
{
	*n = strlen(root);
	while (*n > 1 && root[*n - 1] == '/')
		(*n)--;
	sb_reset(lo);
	sb_reset(hi);
	if (*n == 1 && root[0] == '/') {
		sb_addc(lo, '/');
		sb_addc(hi, '0');
	} else {
		sb_add(lo, root, *n);
		sb_addc(lo, '/');
		sb_add(hi, root, *n);
		sb_addc(hi, '0');
	}
}

/* Append the rows of one of load()'s queries to d->recs. */
static int load_query(struct db *db, const char *sql, char *const *roots, size_t nroots,
		      struct db_diff *d, size_t *cap, struct sl_err *err)
{
	struct strbuf lo = STRBUF_INIT, hi = STRBUF_INIT;
	sqlite3_stmt *st = NULL;
	size_t r;
	int rc = SL_OK;

	if (sqlite3_prepare_v2(db->h, sql, -1, &st, NULL) != SQLITE_OK)
		return DB_FAIL(db->h, err, "prepare diff");
	for (r = 0; r < nroots && rc == SL_OK; r++) {
		size_t n;
		int step;
		root_range(roots[r], &lo, &hi, &n);
		sqlite3_reset(st);
		sqlite3_bind_text(st, 1, roots[r], (int)n, SQLITE_STATIC);
		sqlite3_bind_text(st, 2, lo.p, (int)lo.len, SQLITE_STATIC);
		sqlite3_bind_text(st, 3, hi.p, (int)hi.len, SQLITE_STATIC);
		sqlite3_bind_int64(st, 4, db->scan_id);
		while ((step = sqlite3_step(st)) == SQLITE_ROW) {
			struct rec *rec;
			if (sl_grow(&d->recs, cap, d->nrecs + 1, sizeof(struct rec)) != 0) {
				rc = SL_FAIL(err, SL_E_NOMEM, 0, "diff: out of memory");
				break;
			}
			rec = &((struct rec *)d->recs)[d->nrecs++];
			memset(rec, 0, sizeof(*rec));
			rec->id = sqlite3_column_int64(st, 0);
			rec->h = XXH3_128bits(sqlite3_column_text(st, 1),
					      (size_t)sqlite3_column_bytes(st, 1));
			rec->fs_id = sqlite3_column_int64(st, 2);
			rec->dev = sqlite3_column_int64(st, 3);
			rec->ino = (uint64_t)sqlite3_column_int64(st, 4);
			rec->size = (uint64_t)sqlite3_column_int64(st, 5);
			rec->mtime_ns = sqlite3_column_int64(st, 6);
			rec->has_error = sqlite3_column_int(st, 7);
			rec->ctime_ns = sqlite3_column_int64(st, 8);
			rec->tomb = sqlite3_column_int(st, 9);
			rec->needs_hash = sqlite3_column_int(st, 10);
			rec->stale = sqlite3_column_int(st, 11);
			rec->btime_ns = sqlite3_column_int64(st, 12);
			rec->pending = sqlite3_column_int(st, 13);
		}
		if (rc == SL_OK && step != SQLITE_DONE)
			rc = DB_FAIL(db->h, err, "read the index for the diff");
	}
	sqlite3_finalize(st);
	sb_free(&lo);
	sb_free(&hi);
	return rc;
}

/* The live records under the roots, and the provisional deletions there;
 * two queries, each on its index (files_path; files_deleted_scan).  The
 * root's range is written as one range with a filter: SQLite would not use
 * a partial index for "path = root OR path in (root/, root0)" and scanned
 * the whole table instead. */
static int load(struct db *db, char *const *roots, size_t nroots, struct db_diff *d,
		struct sl_err *err)
{
	static const char live[] =
		"SELECT id, path, fs_id, dev, ino, size, mtime_ns, error IS NOT NULL,"
		" coalesce(ctime_ns, 0), 0, " DB_NEEDS_HASH_SQL ", " X_META_STALE_SQL ","
		" coalesce(btime_ns, 0), " DB_PENDING_SQL " FROM files"
		" WHERE deleted_at IS NULL AND path >= ?1 AND path < ?3"
		" AND (path = ?1 OR path >= ?2) AND ?4 = ?4";
	static const char provisional[] =
		"SELECT id, path, fs_id, dev, ino, size, mtime_ns, error IS NOT NULL,"
		" coalesce(ctime_ns, 0), 1, " DB_NEEDS_HASH_SQL ", " X_META_STALE_SQL ","
		" coalesce(btime_ns, 0), " DB_PENDING_SQL " FROM files"
		" WHERE " DB_PROVISIONAL_SQL " AND deleted_scan <> ?4"
		" AND path >= ?1 AND path < ?3 AND (path = ?1 OR path >= ?2)";
	size_t cap = 0;
	int rc = load_query(db, live, roots, nroots, d, &cap, err);
	return rc == SL_OK ? load_query(db, provisional, roots, nroots, d, &cap, err) : rc;
}

static int add_move(struct db_diff *d, uint32_t file, int64_t id, int moved)
{
	if (sl_grow(&d->moves, &d->cap_moves, d->nmoves + 1, sizeof(*d->moves)) != 0)
		return -1;
	d->moves[d->nmoves].file = file;
	d->moves[d->nmoves].id = id;
	d->moves[d->nmoves].moved = moved;
	d->nmoves++;
	return 0;
}

/* Whether this scan walked the file system a record lives on.  Files on a
 * file system that is not there (a drive not plugged in, its empty mount
 * point walked instead) are unavailable, not deleted. */
static int walked_fs(const struct db *db, int64_t fs_id)
{
	size_t i;
	if (fs_id == 0)
		return 1; /* recorded before file systems were: cannot tell */
	for (i = 0; i < db->nfs; i++)
		if (db->fs_ids[i] == fs_id)
			return 1;
	return 0;
}

/* Whether the ctime says the file may have changed since its record:
 * both known and different, and the caller did not choose to trust mtime;
 * or the record was made too close to a change to tell (racy: read again
 * even with trust in mtime, which cannot tell either). */
static int ctime_moved(const struct rec *r, const struct ft_file *f, int flags)
{
	if (r->ctime_ns == DB_CTIME_RACY)
		return 1;
	return !(flags & DB_DIFF_TRUST_MTIME) && r->ctime_ns && f->ctime_ns &&
	       r->ctime_ns != f->ctime_ns;
}

static int same_identity(const struct rec *r, const struct ft_file *f, int64_t fs_id)
{
	return r->ino == f->ino && (r->fs_id == 0 || r->fs_id == fs_id) &&
	       same_birth(r->btime_ns, f->btime_ns);
}

/* Over 150 lines on purpose: the diff's numbered passes share the two indexes
 * (by path, by identity) and the marks of records already claimed, and
 * their order is the matching rule itself (docs/design.md, "Incremental
 * scans"), which reads best top to bottom in one place. */
int db_diff(struct db *db, struct ftab *ft, char *const *roots, size_t nroots, int flags,
	    struct db_diff *d, struct sl_err *err)
{
	struct strbuf path = STRBUF_INIT;
	struct index paths = {NULL, 0}, inodes = {NULL, 0};
	struct rec *recs;
	int *match = NULL; /* per file: its path's record, or -1 */
	unsigned char *done = NULL; /* per file: its record is found */
	size_t i;
	int rc;

	memset(d, 0, sizeof(*d));
	rc = load(db, roots, nroots, d, err);
	if (rc != SL_OK)
		return rc;
	recs = d->recs;
	if (index_init(&paths, d->nrecs) || index_init(&inodes, d->nrecs) ||
	    !(match = malloc((ft->nfiles ? ft->nfiles : 1) * sizeof(*match))) ||
	    !(done = calloc(ft->nfiles ? ft->nfiles : 1, 1))) {
		rc = SL_FAIL(err, SL_E_NOMEM, 0, "diff: out of memory");
		goto out;
	}
	for (i = 0; i < d->nrecs; i++) {
		/* a provisional deletion no longer holds its path: it can only
		 * be found again by identity (pass 2) */
		if (!recs[i].tomb)
			index_put(&paths, path_key(&recs[i]), (uint32_t)i);
		if (recs[i].fs_id)
			index_put(&inodes, inode_key(recs[i].fs_id, recs[i].ino), (uint32_t)i);
	}
	/* 1: the path's record, when it is the same file */
	for (i = 0; i < ft->nfiles; i++) {
		struct ft_file *f = &ft->files[i];
		int64_t fs_id = f->dev < db->nfs ? db->fs_ids[f->dev] : 0;
		struct rec *r;
		int k;
		sb_reset(&path);
		if (ftab_path(ft, (uint32_t)i, &path) != 0) {
			rc = SL_FAIL(err, SL_E_NOMEM, 0, "diff: out of memory");
			goto out;
		}
		k = by_path(d, &paths, XXH3_128bits(path.p, path.len));
		match[i] = k;
		if (k < 0)
			continue;
		r = &recs[k];
		/* a file that could not be stat'ed or read is known by what the
		 * walk saw: its error is stored on its path's record when that
		 * record was of this file; else only if no file claims the
		 * record by identity (pass 3): the file the record was of may
		 * have moved away just before the name broke (a swap, then the
		 * name made a directory), and the record follows it */
		if (!same_identity(r, f, fs_id))
			continue; /* another file now: passes 2 and 3 */
		if (f->flags & FT_FAILED) {
			r->taken = 1; /* its error is stored again */
			done[i] = 1;
			continue;
		}
		r->taken = 1;
		done[i] = 1;
		if (r->has_error)
			f->links |= FT_LINK_ALONE;
		if (r->size != f->size || r->mtime_ns != f->mtime_ns) {
			f->flags |= FT_CHANGED;
			d->changed++;
			continue;
		}
		if (r->has_error) { /* tried again, each scan: it may read now */
			f->flags |= FT_CHANGED;
			d->retried++;
			continue;
		}
		if (ctime_moved(r, f, flags)) {
			f->flags |= FT_CTIME;
			d->rechecked++;
			continue;
		}
		d->unchanged++;
		/* --full reads everything anyway: an upgrade is no reason there */
		if (r->stale && !(flags & DB_DIFF_FULL)) {
			f->flags |= FT_UPGRADE;
			d->upgraded++;
			continue;
		}
		if ((flags & DB_DIFF_COMPLETE) && r->pending && !(flags & DB_DIFF_FULL)) {
			f->flags |= FT_UPGRADE;
			d->completed++;
			continue;
		}
		if ((flags & DB_DIFF_PHASH) && r->needs_hash) {
			f->flags |= FT_REHASH;
			d->rehash++;
			continue;
		}
		if (!(flags & DB_DIFF_FULL))
			f->flags |= FT_SKIP;
		/* an identity or ctime recorded before, or a device number that
		 * changed since: refresh it, nothing else */
		if ((r->fs_id != fs_id || r->dev != (int64_t)ft->devs[f->dev].st_dev ||
		     r->ctime_ns != f->ctime_ns || (f->btime_ns && r->btime_ns != f->btime_ns)) &&
		    add_move(d, (uint32_t)i, r->id, 0) != 0) {
			rc = SL_FAIL(err, SL_E_NOMEM, 0, "diff: out of memory");
			goto out;
		}
	}
	/* 2: a record with the file's identity: moved or renamed within its
	 * file system (before 3, so that swapped names and a rename over
	 * another file follow the files, not the names) */
	for (i = 0; i < ft->nfiles; i++) {
		struct ft_file *f = &ft->files[i];
		int64_t fs_id = f->dev < db->nfs ? db->fs_ids[f->dev] : 0;
		int k;
		if (done[i] || (f->flags & FT_FAILED) || !fs_id)
			continue;
		k = by_inode(d, &inodes, fs_id, f->ino, f->size, f->mtime_ns, f->btime_ns);
		if (k < 0)
			continue;
		recs[k].taken = 1;
		done[i] = 1;
		d->moved++;
		if (recs[k].has_error) {
			f->flags |= FT_CHANGED; /* its error is no record of its content */
			f->links |= FT_LINK_ALONE;
		} else if (recs[k].size != f->size || recs[k].mtime_ns != f->mtime_ns) {
			/* renamed and rewritten, known by its birth time:
			 * counted once, as moved, and read */
			f->flags |= FT_CHANGED;
		} else if (ctime_moved(&recs[k], f, flags)) {
			f->flags |= FT_CTIME;
			d->rechecked++;
		} else if (recs[k].stale && !(flags & DB_DIFF_FULL)) {
			f->flags |= FT_UPGRADE;
			d->upgraded++;
		} else if ((flags & DB_DIFF_COMPLETE) && recs[k].pending && !(flags & DB_DIFF_FULL)) {
			f->flags |= FT_UPGRADE;
			d->completed++;
		} else if ((flags & DB_DIFF_PHASH) && recs[k].needs_hash) {
			f->flags |= FT_REHASH;
			d->rehash++;
		} else if (!(flags & DB_DIFF_FULL)) {
			f->flags |= FT_SKIP;
		}
		if (add_move(d, (uint32_t)i, recs[k].id, 1) != 0) {
			rc = SL_FAIL(err, SL_E_NOMEM, 0, "diff: out of memory");
			goto out;
		}
	}
	/* 3: the path's record if no file took it: the file there was
	 * replaced; else new */
	for (i = 0; i < ft->nfiles; i++) {
		struct ft_file *f = &ft->files[i];
		int k = match[i];
		if (done[i])
			continue;
		if (f->flags & FT_FAILED) {
			if (k >= 0 && !recs[k].taken)
				recs[k].taken = 1; /* its error is stored there */
			continue;
		}
		if (k >= 0 && !recs[k].taken) {
			recs[k].taken = 1;
			f->flags |= FT_REPLACED;
			d->changed++;
		} else {
			f->flags |= FT_NEW;
			d->added++;
		}
	}
	for (i = 0; i < d->nrecs; i++) {
		if (recs[i].tomb && !recs[i].taken) {
			/* a provisional deletion no file claimed: a complete scan
			 * confirms it (db_mark_deleted) */
			if (sl_grow(&d->confirm, &d->cap_confirm, d->nconfirm + 1,
				    sizeof(*d->confirm)) != 0) {
				rc = SL_FAIL(err, SL_E_NOMEM, 0, "diff: out of memory");
				goto out;
			}
			d->confirm[d->nconfirm++] = recs[i].id;
			continue;
		}
		if (recs[i].taken)
			continue;
		if (!walked_fs(db, recs[i].fs_id)) {
			d->unavailable++;
			continue;
		}
		if (sl_grow(&d->missing, &d->cap_missing, d->nmissing + 1, sizeof(*d->missing)) != 0) {
			rc = SL_FAIL(err, SL_E_NOMEM, 0, "diff: out of memory");
			goto out;
		}
		d->missing[d->nmissing++] = recs[i].id;
	}
out:
	free(match);
	free(done);
	free(paths.slot);
	free(inodes.slot);
	sb_free(&path);
	if (rc != SL_OK)
		db_diff_free(d);
	return rc;
}

void db_diff_free(struct db_diff *d)
{
	if (!d)
		return;
	free(d->recs);
	free(d->moves);
	free(d->missing);
	free(d->confirm);
	memset(d, 0, sizeof(*d));
}

int db_apply_moves(struct db *db, const struct ftab *ft, const struct db_diff *d,
		   struct sl_err *err)
{
	struct strbuf path = STRBUF_INIT;
	sqlite3_stmt *park = NULL, *displace = NULL, *set = NULL;
	int64_t now = sys_wall_ns(); /* the locate pass stat'ed since ft->stat_begin_ns */
	size_t i;
	int rc;

	if (d->nmoves == 0)
		return SL_OK;
	if ((rc = db_commit(db, err)) != SL_OK)
		return rc;
	if (sqlite3_exec(db->h, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK)
		return DB_FAIL(db->h, err, "begin moves");
	/* Live paths are unique: two files that swapped names would collide,
	 * so every moved record first steps aside.  A record still at the new
	 * path after that is one no file took (its file was renamed over, or
	 * deleted and the name reused): it is gone from there, and is marked
	 * so now, or the move could not take the path. */
	if (sqlite3_prepare_v2(db->h, "UPDATE files SET path = char(1) || 'moving ' || id WHERE id=?1",
			       -1, &park, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(db->h,
			       "UPDATE files SET deleted_at=strftime('%Y-%m-%dT%H:%M:%SZ','now'),"
			       " deleted_scan=?3 WHERE path=?2 AND deleted_at IS NULL AND id<>?1",
			       -1, &displace, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(db->h,
			       "UPDATE files SET path=?2, fs_id=?3, dev=?4, ino=?5,"
			       " ctime_ns=coalesce(?6, ctime_ns), btime_ns=coalesce(?7, btime_ns),"
			       " deleted_at=NULL,"
			       " deleted_scan=NULL"
			       " WHERE id=?1",
			       -1, &set, NULL) != SQLITE_OK) {
		rc = DB_FAIL(db->h, err, "prepare moves");
		goto out;
	}
	for (i = 0; i < d->nmoves; i++) {
		if (!d->moves[i].moved)
			continue;
		sqlite3_reset(park);
		sqlite3_bind_int64(park, 1, d->moves[i].id);
		if (sqlite3_step(park) != SQLITE_DONE) {
			rc = DB_FAIL(db->h, err, "move a record");
			goto out;
		}
	}
	for (i = 0; i < d->nmoves; i++) {
		const struct ft_file *f = &ft->files[d->moves[i].file];
		sb_reset(&path);
		if (ftab_path(ft, d->moves[i].file, &path) != 0) {
			rc = SL_FAIL(err, SL_E_NOMEM, 0, "moves: out of memory");
			goto out;
		}
		if (d->moves[i].moved) {
			sqlite3_reset(displace);
			sqlite3_bind_int64(displace, 1, d->moves[i].id);
			sqlite3_bind_text(displace, 2, path.p, (int)path.len, SQLITE_STATIC);
			sqlite3_bind_int64(displace, 3, db->scan_id);
			if (sqlite3_step(displace) != SQLITE_DONE) {
				rc = DB_FAIL(db->h, err, "move a record: mark the one it replaces");
				goto out;
			}
		}
		sqlite3_reset(set);
		sqlite3_bind_int64(set, 1, d->moves[i].id);
		sqlite3_bind_text(set, 2, path.p, (int)path.len, SQLITE_STATIC);
		sqlite3_bind_int64(set, 3, f->dev < db->nfs ? db->fs_ids[f->dev] : 0);
		sqlite3_bind_int64(set, 4, (sqlite3_int64)ft->devs[f->dev].st_dev);
		sqlite3_bind_int64(set, 5, (sqlite3_int64)f->ino);
		/* a file read again (its ctime moved) gets its ctime with its
		 * record, after the read: until then the old one says "check";
		 * one stat'ed too close to a change is marked racy */
		if (f->ctime_ns && !(f->flags & FT_CTIME))
			sqlite3_bind_int64(set, 6, db_racy(db, f->dev, f->ctime_ns, f->mtime_ns,
							   ft->stat_begin_ns, now)
							   ? DB_CTIME_RACY
							   : f->ctime_ns);
		else
			sqlite3_bind_null(set, 6);
		if (f->btime_ns)
			sqlite3_bind_int64(set, 7, f->btime_ns);
		else
			sqlite3_bind_null(set, 7);
		if (sqlite3_step(set) != SQLITE_DONE) {
			rc = DB_FAIL(db->h, err, "move a record");
			goto out;
		}
	}
	if ((rc = db_links_update(db, err)) != SL_OK)
		goto out;
	if (sqlite3_exec(db->h, "COMMIT", NULL, NULL, NULL) != SQLITE_OK)
		rc = DB_FAIL(db->h, err, "commit moves");
out:
	if (rc != SL_OK)
		sqlite3_exec(db->h, "ROLLBACK", NULL, NULL, NULL);
	sqlite3_finalize(park);
	sqlite3_finalize(displace);
	sqlite3_finalize(set);
	sb_free(&path);
	return rc;
}

static int cmp_relink(const void *a, const void *b)
{
	const struct db_relink *x = a, *y = b;
	if (x->size != y->size)
		return x->size < y->size ? -1 : 1;
	return strcmp(x->hash, y->hash);
}

static int add_candidate(struct db *db, int64_t id, size_t missing, sqlite3_stmt *row,
			 struct sl_err *err)
{
	struct db_relink *c;
	if (sl_grow(&db->relink, &db->cap_relink, db->nrelink + 1, sizeof(*db->relink)) != 0)
		return SL_FAIL(err, SL_E_NOMEM, 0, "relink: out of memory");
	c = &db->relink[db->nrelink++];
	c->id = id;
	c->missing = missing;
	c->size = (uint64_t)sqlite3_column_int64(row, 0);
	snprintf(c->hash, sizeof(c->hash), "%s", (const char *)sqlite3_column_text(row, 1));
	c->used = 0;
	return SL_OK;
}

int db_relink_candidates(struct db *db, const struct db_diff *d, char *const *roots,
			 size_t nroots, struct sl_err *err)
{
	struct strbuf lo = STRBUF_INIT, hi = STRBUF_INIT;
	sqlite3_stmt *st = NULL, *tomb = NULL;
	size_t i;
	int rc = SL_OK, step;

	db->nrelink = 0;
	/* Empty files all have the same hash: a new empty file is no evidence
	 * of a move. */
	if (sqlite3_prepare_v2(db->h,
			       "SELECT size, content_hash FROM files WHERE id=?1"
			       " AND content_hash IS NOT NULL AND size > 0",
			       -1, &st, NULL) != SQLITE_OK)
		return DB_FAIL(db->h, err, "prepare relink");
	for (i = 0; i < d->nmissing && rc == SL_OK; i++) {
		sqlite3_reset(st);
		sqlite3_bind_int64(st, 1, d->missing[i]);
		if (sqlite3_step(st) == SQLITE_ROW)
			rc = add_candidate(db, d->missing[i], i, st, err);
	}
	/* Records a scan that could not see everything marked deleted are
	 * candidates too (DB_PROVISIONAL_SQL). */
	if (rc == SL_OK &&
	    sqlite3_prepare_v2(db->h,
			       "SELECT size, content_hash, id FROM files WHERE deleted_at IS NOT NULL"
			       " AND content_hash IS NOT NULL AND size > 0"
			       " AND path >= ?1 AND path < ?3 AND (path = ?1 OR path >= ?2)"
			       " AND " DB_PROVISIONAL_SQL " AND deleted_scan <> ?4",
			       -1, &tomb, NULL) != SQLITE_OK)
		rc = DB_FAIL(db->h, err, "prepare relink");
	for (i = 0; i < nroots && rc == SL_OK; i++) {
		size_t n;
		root_range(roots[i], &lo, &hi, &n);
		sqlite3_reset(tomb);
		sqlite3_bind_text(tomb, 1, roots[i], (int)n, SQLITE_STATIC);
		sqlite3_bind_text(tomb, 2, lo.p, (int)lo.len, SQLITE_STATIC);
		sqlite3_bind_text(tomb, 3, hi.p, (int)hi.len, SQLITE_STATIC);
		sqlite3_bind_int64(tomb, 4, db->scan_id);
		while (rc == SL_OK && (step = sqlite3_step(tomb)) == SQLITE_ROW)
			rc = add_candidate(db, sqlite3_column_int64(tomb, 2), SIZE_MAX, tomb, err);
		if (rc == SL_OK && step != SQLITE_DONE)
			rc = DB_FAIL(db->h, err, "read deleted records for relinking");
	}
	sqlite3_finalize(st);
	sqlite3_finalize(tomb);
	sb_free(&lo);
	sb_free(&hi);
	if (db->nrelink > 1) /* none found leaves relink NULL, which qsort may not take */
		qsort(db->relink, db->nrelink, sizeof(*db->relink), cmp_relink);
	return rc;
}

int64_t db_relink_take(struct db *db, uint64_t size, const char *hash)
{
	size_t lo = 0, hi = db->nrelink;
	struct db_relink key;

	key.size = size;
	snprintf(key.hash, sizeof(key.hash), "%s", hash);
	while (lo < hi) { /* first entry >= key */
		size_t mid = (lo + hi) / 2;
		if (cmp_relink(&db->relink[mid], &key) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < db->nrelink && cmp_relink(&db->relink[lo], &key) == 0; lo++) {
		if (!db->relink[lo].used) {
			db->relink[lo].used = 1;
			return db->relink[lo].id;
		}
	}
	return 0;
}

int db_mark_deleted(struct db *db, const struct db_diff *d, uint64_t *count, struct sl_err *err)
{
	sqlite3_stmt *st = NULL, *confirm = NULL;
	unsigned char *relinked = NULL;
	size_t i;
	int rc;

	*count = 0;
	relinked = calloc(d->nmissing ? d->nmissing : 1, 1);
	if (!relinked)
		return SL_FAIL(err, SL_E_NOMEM, 0, "deletions: out of memory");
	for (i = 0; i < db->nrelink; i++)
		if (db->relink[i].used && db->relink[i].missing < d->nmissing)
			relinked[db->relink[i].missing] = 1;
	if ((rc = db_commit(db, err)) != SL_OK) {
		free(relinked);
		return rc;
	}
	if (sqlite3_exec(db->h, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK) {
		free(relinked);
		return DB_FAIL(db->h, err, "begin deletions");
	}
	if (sqlite3_prepare_v2(db->h,
			       "UPDATE files SET deleted_at=strftime('%Y-%m-%dT%H:%M:%SZ','now'),"
			       " deleted_scan=?2 WHERE id=?1 AND deleted_at IS NULL",
			       -1, &st, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(db->h,
			       "UPDATE files SET deleted_scan=?2 WHERE id=?1 AND deleted_at IS NOT NULL",
			       -1, &confirm, NULL) != SQLITE_OK) {
		rc = DB_FAIL(db->h, err, "prepare deletions");
		goto out;
	}
	for (i = 0; i < d->nmissing; i++) {
		if (relinked[i])
			continue;
		sqlite3_reset(st);
		sqlite3_bind_int64(st, 1, d->missing[i]);
		sqlite3_bind_int64(st, 2, db->scan_id);
		if (sqlite3_step(st) != SQLITE_DONE) {
			rc = DB_FAIL(db->h, err, "mark deleted");
			goto out;
		}
	}
	/* counted before the confirmations below, which are deletions an
	 * earlier scan already reported */
	if ((rc = db_deleted_count(db, count, err)) != SL_OK)
		goto out;
	for (i = 0; i < d->nconfirm; i++) {
		sqlite3_reset(confirm);
		sqlite3_bind_int64(confirm, 1, d->confirm[i]);
		sqlite3_bind_int64(confirm, 2, db->scan_id);
		if (sqlite3_step(confirm) != SQLITE_DONE) {
			rc = DB_FAIL(db->h, err, "confirm deletions");
			goto out;
		}
	}
	if ((rc = db_links_update(db, err)) != SL_OK)
		goto out;
	if (sqlite3_exec(db->h, "COMMIT", NULL, NULL, NULL) != SQLITE_OK)
		rc = DB_FAIL(db->h, err, "commit deletions");
out:
	if (rc != SL_OK)
		sqlite3_exec(db->h, "ROLLBACK", NULL, NULL, NULL);
	sqlite3_finalize(st);
	sqlite3_finalize(confirm);
	free(relinked);
	return rc;
}

int db_deleted_count(struct db *db, uint64_t *count, struct sl_err *err)
{
	sqlite3_stmt *st = NULL;
	int rc = SL_OK;

	*count = 0;
	if (sqlite3_prepare_v2(db->h, "SELECT count(*) FROM files WHERE deleted_scan=?1", -1, &st,
			       NULL) != SQLITE_OK)
		return DB_FAIL(db->h, err, "count deletions");
	sqlite3_bind_int64(st, 1, db->scan_id);
	if (sqlite3_step(st) == SQLITE_ROW)
		*count = (uint64_t)sqlite3_column_int64(st, 0);
	else
		rc = DB_FAIL(db->h, err, "count deletions");
	sqlite3_finalize(st);
	return rc;
}
