/* diff.c - what changed since the index last saw the roots.
 *
 * The index's live records under the roots are loaded with their identity
 * (file system, inode), size and mtime; each path is kept only as a
 * 128-bit hash (XXH3), so a million records cost tens of megabytes.  Then,
 * for each walked file:
 *   same path, same identity, size and mtime, no earlier error: unchanged,
 *     not read (ctime is not compared: chmod is not a content change);
 *   same path, anything else different: changed, read again;
 *   new path whose (file system, inode) belongs to a record whose path is
 *     gone, same size and mtime: moved or renamed, not read, its record
 *     follows it;
 *   otherwise new: read, and after reading, a missing record with the same
 *     size and content hash is taken over (a move across file systems).
 * Records no walked file took are missing: deleted after a complete scan,
 * unless their file system was not walked at all (unavailable: kept).
 */
#include <stdlib.h>
#include <string.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "db/db.h"
#include "scanner/ftab.h"

struct rec {
	XXH128_hash_t h; /* of the path */
	int64_t id;
	int64_t fs_id;   /* 0: unknown (recorded before schema 3) */
	int64_t dev;
	uint64_t ino;
	uint64_t size;
	int64_t mtime_ns;
	int has_error;
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

/* A record on (fs_id, ino) that no path has taken yet. */
static int by_inode(const struct db_diff *d, const struct index *ix, int64_t fs_id, uint64_t ino)
{
	size_t i = (size_t)(mix(inode_key(fs_id, ino)) & (ix->cap - 1));
	while (ix->slot[i]) {
		const struct rec *r = &((const struct rec *)d->recs)[ix->slot[i] - 1];
		if (r->fs_id == fs_id && r->ino == ino && !r->taken)
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

static int load(struct db *db, char *const *roots, size_t nroots, struct db_diff *d,
		struct sl_err *err)
{
	struct strbuf lo = STRBUF_INIT, hi = STRBUF_INIT;
	sqlite3_stmt *st = NULL;
	size_t cap = 0, r;
	int rc = SL_OK;

	if (sqlite3_prepare_v2(db->h,
			       "SELECT id, path, fs_id, dev, ino, size, mtime_ns, error IS NOT NULL"
			       " FROM files WHERE deleted_at IS NULL"
			       " AND (path = ?1 OR (path >= ?2 AND path < ?3))",
			       -1, &st, NULL) != SQLITE_OK)
		return DB_FAIL(db->h, err, "prepare diff");
	for (r = 0; r < nroots && rc == SL_OK; r++) {
		size_t n;
		int step;
		root_range(roots[r], &lo, &hi, &n);
		sqlite3_reset(st);
		sqlite3_bind_text(st, 1, roots[r], (int)n, SQLITE_STATIC);
		sqlite3_bind_text(st, 2, lo.p, (int)lo.len, SQLITE_STATIC);
		sqlite3_bind_text(st, 3, hi.p, (int)hi.len, SQLITE_STATIC);
		while ((step = sqlite3_step(st)) == SQLITE_ROW) {
			struct rec *rec;
			if (sl_grow(&d->recs, &cap, d->nrecs + 1, sizeof(struct rec)) != 0) {
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
		}
		if (rc == SL_OK && step != SQLITE_DONE)
			rc = DB_FAIL(db->h, err, "read the index for the diff");
	}
	sqlite3_finalize(st);
	sb_free(&lo);
	sb_free(&hi);
	return rc;
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

int db_diff(struct db *db, struct ftab *ft, char *const *roots, size_t nroots,
	    struct db_diff *d, struct sl_err *err)
{
	struct strbuf path = STRBUF_INIT;
	struct index paths = {NULL, 0}, inodes = {NULL, 0};
	struct rec *recs;
	int *match = NULL; /* per file: record taken by path, or -1 */
	size_t i;
	int rc;

	memset(d, 0, sizeof(*d));
	rc = load(db, roots, nroots, d, err);
	if (rc != SL_OK)
		return rc;
	recs = d->recs;
	if (index_init(&paths, d->nrecs) || index_init(&inodes, d->nrecs) ||
	    !(match = malloc((ft->nfiles ? ft->nfiles : 1) * sizeof(*match)))) {
		rc = SL_FAIL(err, SL_E_NOMEM, 0, "diff: out of memory");
		goto out;
	}
	for (i = 0; i < d->nrecs; i++) {
		index_put(&paths, path_key(&recs[i]), (uint32_t)i);
		if (recs[i].fs_id)
			index_put(&inodes, inode_key(recs[i].fs_id, recs[i].ino), (uint32_t)i);
	}
	/* first by path */
	for (i = 0; i < ft->nfiles; i++) {
		struct ft_file *f = &ft->files[i];
		int64_t fs_id = f->dev < db->nfs ? db->fs_ids[f->dev] : 0;
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
		recs[k].taken = 1;
		if (f->flags & FT_FAILED)
			continue; /* its error is stored again */
		if (recs[k].ino == f->ino && recs[k].size == f->size &&
		    recs[k].mtime_ns == f->mtime_ns && !recs[k].has_error &&
		    (recs[k].fs_id == 0 || recs[k].fs_id == fs_id)) {
			f->flags |= FT_SKIP;
			d->unchanged++;
			/* an identity recorded before, or a device number that
			 * changed since: refresh it, nothing else */
			if ((recs[k].fs_id != fs_id ||
			     recs[k].dev != (int64_t)ft->devs[f->dev].st_dev) &&
			    add_move(d, (uint32_t)i, recs[k].id, 0) != 0) {
				rc = SL_FAIL(err, SL_E_NOMEM, 0, "diff: out of memory");
				goto out;
			}
		} else {
			d->changed++;
		}
	}
	/* then new paths by identity: renamed or moved within a file system */
	for (i = 0; i < ft->nfiles; i++) {
		struct ft_file *f = &ft->files[i];
		int64_t fs_id = f->dev < db->nfs ? db->fs_ids[f->dev] : 0;
		int k;
		if (match[i] >= 0 || (f->flags & FT_FAILED))
			continue;
		k = fs_id ? by_inode(d, &inodes, fs_id, f->ino) : -1;
		if (k >= 0 && recs[k].size == f->size && recs[k].mtime_ns == f->mtime_ns &&
		    !recs[k].has_error) {
			recs[k].taken = 1;
			f->flags |= FT_SKIP;
			d->moved++;
			if (add_move(d, (uint32_t)i, recs[k].id, 1) != 0) {
				rc = SL_FAIL(err, SL_E_NOMEM, 0, "diff: out of memory");
				goto out;
			}
		} else {
			f->flags |= FT_NEW;
			d->added++;
		}
	}
	for (i = 0; i < d->nrecs; i++) {
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
	memset(d, 0, sizeof(*d));
}

int db_apply_moves(struct db *db, const struct ftab *ft, const struct db_diff *d,
		   struct sl_err *err)
{
	struct strbuf path = STRBUF_INIT;
	sqlite3_stmt *park = NULL, *set = NULL;
	size_t i;
	int rc;

	if (d->nmoves == 0)
		return SL_OK;
	if ((rc = db_commit(db, err)) != SL_OK)
		return rc;
	if (sqlite3_exec(db->h, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK)
		return DB_FAIL(db->h, err, "begin moves");
	/* Paths are unique: two files that swapped names would collide, so
	 * every moved record first steps aside. */
	if (sqlite3_prepare_v2(db->h, "UPDATE files SET path = char(1) || 'moving ' || id WHERE id=?1",
			       -1, &park, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(db->h,
			       "UPDATE files SET path=?2, fs_id=?3, dev=?4, ino=?5 WHERE id=?1", -1,
			       &set, NULL) != SQLITE_OK) {
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
		sqlite3_reset(set);
		sqlite3_bind_int64(set, 1, d->moves[i].id);
		sqlite3_bind_text(set, 2, path.p, (int)path.len, SQLITE_STATIC);
		sqlite3_bind_int64(set, 3, f->dev < db->nfs ? db->fs_ids[f->dev] : 0);
		sqlite3_bind_int64(set, 4, (sqlite3_int64)ft->devs[f->dev].st_dev);
		sqlite3_bind_int64(set, 5, (sqlite3_int64)f->ino);
		if (sqlite3_step(set) != SQLITE_DONE) {
			rc = DB_FAIL(db->h, err, "move a record");
			goto out;
		}
	}
	if (sqlite3_exec(db->h, "COMMIT", NULL, NULL, NULL) != SQLITE_OK)
		rc = DB_FAIL(db->h, err, "commit moves");
out:
	if (rc != SL_OK)
		sqlite3_exec(db->h, "ROLLBACK", NULL, NULL, NULL);
	sqlite3_finalize(park);
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

int db_relink_candidates(struct db *db, const struct db_diff *d, struct sl_err *err)
{
	sqlite3_stmt *st = NULL;
	size_t i;
	int rc = SL_OK;

	db->nrelink = 0;
	if (d->nmissing == 0)
		return SL_OK;
	if (sqlite3_prepare_v2(db->h,
			       "SELECT size, content_hash FROM files WHERE id=?1 AND content_hash IS NOT NULL",
			       -1, &st, NULL) != SQLITE_OK)
		return DB_FAIL(db->h, err, "prepare relink");
	for (i = 0; i < d->nmissing; i++) {
		sqlite3_reset(st);
		sqlite3_bind_int64(st, 1, d->missing[i]);
		if (sqlite3_step(st) != SQLITE_ROW)
			continue;
		if (sl_grow(&db->relink, &db->cap_relink, db->nrelink + 1, sizeof(*db->relink)) != 0) {
			rc = SL_FAIL(err, SL_E_NOMEM, 0, "relink: out of memory");
			break;
		}
		db->relink[db->nrelink].id = d->missing[i];
		db->relink[db->nrelink].missing = i;
		db->relink[db->nrelink].size = (uint64_t)sqlite3_column_int64(st, 0);
		snprintf(db->relink[db->nrelink].hash, sizeof(db->relink[0].hash), "%s",
			 (const char *)sqlite3_column_text(st, 1));
		db->relink[db->nrelink].used = 0;
		db->nrelink++;
	}
	sqlite3_finalize(st);
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
	sqlite3_stmt *st = NULL;
	unsigned char *relinked = NULL;
	size_t i;
	int rc;

	*count = 0;
	if (d->nmissing == 0)
		return SL_OK;
	relinked = calloc(d->nmissing, 1);
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
			       "UPDATE files SET deleted_at=strftime('%Y-%m-%dT%H:%M:%SZ','now')"
			       " WHERE id=?1 AND deleted_at IS NULL",
			       -1, &st, NULL) != SQLITE_OK) {
		rc = DB_FAIL(db->h, err, "prepare deletions");
		goto out;
	}
	for (i = 0; i < d->nmissing; i++) {
		if (relinked[i])
			continue;
		sqlite3_reset(st);
		sqlite3_bind_int64(st, 1, d->missing[i]);
		if (sqlite3_step(st) != SQLITE_DONE) {
			rc = DB_FAIL(db->h, err, "mark deleted");
			goto out;
		}
		*count += (uint64_t)sqlite3_changes(db->h);
	}
	if (sqlite3_exec(db->h, "COMMIT", NULL, NULL, NULL) != SQLITE_OK)
		rc = DB_FAIL(db->h, err, "commit deletions");
out:
	if (rc != SL_OK)
		sqlite3_exec(db->h, "ROLLBACK", NULL, NULL, NULL);
	sqlite3_finalize(st);
	free(relinked);
	return rc;
}
