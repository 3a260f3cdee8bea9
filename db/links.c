/* links.c - which XMP sidecar speaks for which image (files.sidecar_id).
 *
 * The rule (docs/extraction.md, "Sidecars"), within one folder, names split
 * as Python's os.path.splitext does (the last dot not leading the name):
 *   - a sidecar is a live record of format xmp whose name's extension is
 *     .xmp in any case; it speaks for the name it has without that
 *     extension (its target);
 *   - an image is any other record of a file not named *.xmp; an image
 *     D/N.EXT takes the sidecar whose target is N.EXT
 *     (darktable's and digiKam's IMG_0001.CR2.xmp); failing that, when the
 *     image is of a format seekless reads (not xmp, not exv), the one whose
 *     target is N (Lightroom's and exiftool's IMG_0001.xmp);
 *   - two sidecars with the same target (IMG.xmp and IMG.XMP on a file
 *     system that tells case) are ordered by path, bytewise: the first wins.
 *
 * The link is kept by the writer, not computed by readers: temporary
 * triggers note every path that a record gains or loses, or whose format
 * or liveness changes (an insert, a move, a deletion, a revival), and
 * before each transaction that changed records commits, db_links_update
 * recomputes the links of the images those paths could affect, in the same
 * transaction.  A committed index therefore always has the links its live
 * records imply, whatever killed the process before, and a sidecar edited
 * in place (same record, new values) needs no link work at all: export
 * reads the values through the link.
 *
 * Every image lies in exactly one group, (its folder, its stem); a group is
 * one range of the path index: [D/N, D/N/) holds D/N, every D/N.* and,
 * filtered out here, names that merely begin with N and a byte below '/'. */
#include <stdlib.h>
#include <string.h>

#include "common/strbuf.h"
#include "db/db_int.h"

/* The stem's length: up to the last dot that does not lead the name. */
size_t db_stem_len(const char *name, size_t n)
{
	size_t lead = 0, i;

	while (lead < n && name[lead] == '.')
		lead++;
	for (i = n; i > lead; i--)
		if (name[i - 1] == '.')
			return i - 1;
	return n;
}

static int ascii_ieq(const char *a, const char *b, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		char x = a[i], y = b[i];
		if (x >= 'A' && x <= 'Z')
			x = (char)(x - 'A' + 'a');
		if (y >= 'A' && y <= 'Z')
			y = (char)(y - 'A' + 'a');
		if (x != y)
			return 0;
	}
	return 1;
}

/* The target's length when name is a sidecar's, else 0 (no sidecar has an
 * empty target). */
static size_t target_len(const char *name, size_t n)
{
	size_t s = db_stem_len(name, n);
	return s < n && n - s == 4 && ascii_ieq(name + s, ".xmp", 4) ? s : 0;
}

/* One row of a group. */
struct row {
	int64_t id, sidecar_id;
	const char *name; /* after the folder's '/' */
	size_t len;
	int xmp_name;     /* named *.xmp: never an image, whatever it holds */
	int sidecar;      /* and of format xmp */
	int file;         /* not an unlistable directory's record */
	int known;        /* a format seekless reads, sidecars' own aside */
	char *path;
};

static int prepare(struct db *db, sqlite3_stmt **st, const char *sql, struct sl_err *err)
{
	if (!*st && sqlite3_prepare_v3(db->h, sql, -1, SQLITE_PREPARE_PERSISTENT, st, NULL) !=
			    SQLITE_OK)
		return DB_FAIL(db->h, err, "prepare sidecar links");
	return SL_OK;
}

/* The sidecar whose target is t[0..n), first by path; -1 if none. */
static long find_sidecar(const struct row *r, size_t nr, const char *t, size_t n)
{
	long best = -1;
	size_t i;

	for (i = 0; i < nr; i++)
		if (r[i].sidecar && target_len(r[i].name, r[i].len) == n &&
		    memcmp(r[i].name, t, n) == 0 &&
		    (best < 0 || strcmp(r[i].path, r[best].path) < 0))
			best = (long)i;
	return best;
}

/* Recompute the links of group (dir, stem): dir ends with '/'. */
static int link_group(struct db *db, const char *dir, size_t dlen, const char *stem, size_t slen,
		      struct sl_err *err)
{
	struct strbuf lo = STRBUF_INIT, hi = STRBUF_INIT;
	struct row *r = NULL;
	size_t nr = 0, cap = 0, i;
	int rc = SL_OK, step;

	if ((rc = prepare(db, &db->links_group_st,
			  "SELECT id, path, format, ino IS NOT NULL, sidecar_id FROM files"
			  " WHERE deleted_at IS NULL AND path >= ?1 AND path < ?2",
			  err)) != SL_OK ||
	    (rc = prepare(db, &db->links_set_st, "UPDATE files SET sidecar_id=?2 WHERE id=?1",
			  err)) != SL_OK)
		return rc;
	sb_add(&lo, dir, dlen);
	sb_add(&lo, stem, slen);
	sb_add(&hi, lo.p, lo.len);
	sb_addc(&hi, '/');
	if (lo.oom || hi.oom) {
		rc = SL_FAIL(err, SL_E_NOMEM, 0, "sidecar links: out of memory");
		goto out;
	}
	sqlite3_reset(db->links_group_st);
	sqlite3_bind_text(db->links_group_st, 1, lo.p, (int)lo.len, SQLITE_STATIC);
	sqlite3_bind_text(db->links_group_st, 2, hi.p, (int)hi.len, SQLITE_STATIC);
	while ((step = sqlite3_step(db->links_group_st)) == SQLITE_ROW) {
		const char *path = (const char *)sqlite3_column_text(db->links_group_st, 1);
		const char *fmt = (const char *)sqlite3_column_text(db->links_group_st, 2);
		size_t plen = (size_t)sqlite3_column_bytes(db->links_group_st, 1);
		const char *name;
		struct row *x;

		if (!path || plen < dlen + slen)
			continue;
		name = path + dlen;
		/* the stem itself, or it and a dot; nothing in a subfolder */
		if ((plen > dlen + slen && name[slen] != '.') ||
		    memchr(name, '/', plen - dlen) != NULL)
			continue;
		if (nr == cap) {
			size_t nc = cap ? cap * 2 : 8;
			struct row *nx = realloc(r, nc * sizeof(*r));
			if (!nx) {
				rc = SL_FAIL(err, SL_E_NOMEM, 0, "sidecar links: out of memory");
				goto out;
			}
			r = nx, cap = nc;
		}
		x = &r[nr];
		memset(x, 0, sizeof(*x));
		x->path = malloc(plen + 1);
		if (!x->path) {
			rc = SL_FAIL(err, SL_E_NOMEM, 0, "sidecar links: out of memory");
			goto out;
		}
		memcpy(x->path, path, plen + 1);
		nr++;
		x->name = x->path + dlen;
		x->len = plen - dlen;
		x->id = sqlite3_column_int64(db->links_group_st, 0);
		x->sidecar_id = sqlite3_column_type(db->links_group_st, 4) == SQLITE_NULL
					? 0
					: sqlite3_column_int64(db->links_group_st, 4);
		x->file = sqlite3_column_int(db->links_group_st, 3);
		x->xmp_name = target_len(x->name, x->len) > 0;
		x->sidecar = x->xmp_name && fmt && strcmp(fmt, "xmp") == 0;
		x->known = fmt && fmt[0] && strcmp(fmt, "xmp") != 0 && strcmp(fmt, "exv") != 0;
	}
	sqlite3_reset(db->links_group_st);
	if (step != SQLITE_DONE) {
		rc = DB_FAIL(db->h, err, "read a folder for sidecar links");
		goto out;
	}
	for (i = 0; i < nr; i++) {
		int64_t want = 0;
		long s = -1;

		if (db_stem_len(r[i].name, r[i].len) != slen)
			continue; /* another group's */
		if (r[i].file && !r[i].xmp_name) {
			s = find_sidecar(r, nr, r[i].name, r[i].len);
			if (s < 0 && r[i].known)
				s = find_sidecar(r, nr, r[i].name, slen);
		}
		if (s >= 0)
			want = r[s].id;
		if (want == r[i].sidecar_id)
			continue;
		sqlite3_reset(db->links_set_st);
		sqlite3_bind_int64(db->links_set_st, 1, r[i].id);
		if (want)
			sqlite3_bind_int64(db->links_set_st, 2, want);
		else
			sqlite3_bind_null(db->links_set_st, 2);
		if (sqlite3_step(db->links_set_st) != SQLITE_DONE) {
			rc = DB_FAIL(db->h, err, "store a sidecar link");
			sqlite3_reset(db->links_set_st);
			goto out;
		}
		sqlite3_reset(db->links_set_st);
	}
out:
	for (i = 0; i < nr; i++)
		free(r[i].path);
	free(r);
	sb_free(&lo);
	sb_free(&hi);
	return rc;
}

/* The groups a path that changed could affect: its own (it may be an
 * image, or a sidecar N.xmp for the images N.*), and, for a sidecar
 * N.EXT.xmp, the group of the image N.EXT. */
static int touch_groups(struct db *db, const char *path, size_t plen, struct sl_err *err)
{
	const char *slash = NULL, *name;
	size_t i, dlen, n, t;
	int rc;

	for (i = plen; i > 0; i--)
		if (path[i - 1] == '/') {
			slash = path + i - 1;
			break;
		}
	if (!slash)
		return SL_OK; /* a move's stand-in name (diff.c), not a path */
	dlen = (size_t)(slash - path) + 1;
	name = path + dlen;
	n = plen - dlen;
	if ((rc = link_group(db, path, dlen, name, db_stem_len(name, n), err)) != SL_OK)
		return rc;
	t = target_len(name, n);
	if (t && db_stem_len(name, t) != db_stem_len(name, n))
		rc = link_group(db, path, dlen, name, db_stem_len(name, t), err);
	return rc;
}

int db_links_update(struct db *db, struct sl_err *err)
{
	int rc = SL_OK, step;

	if ((rc = prepare(db, &db->links_touched_st, "SELECT DISTINCT path FROM temp.sl_touched", err)) !=
	    SL_OK)
		return rc;
	/* a plain table, not a unique one: a trigger's OR IGNORE would give
	 * way to the conflict policy of the statement that fired it (the
	 * upsert's).  A group reached from two paths is recomputed twice:
	 * idempotent, and batches touch few groups. */
	sqlite3_reset(db->links_touched_st);
	while ((step = sqlite3_step(db->links_touched_st)) == SQLITE_ROW) {
		const char *p = (const char *)sqlite3_column_text(db->links_touched_st, 0);
		size_t n = (size_t)sqlite3_column_bytes(db->links_touched_st, 0);
		if (p && (rc = touch_groups(db, p, n, err)) != SL_OK)
			break;
	}
	sqlite3_reset(db->links_touched_st);
	if (rc != SL_OK)
		return rc;
	if (step != SQLITE_DONE)
		return DB_FAIL(db->h, err, "read the paths to link");
	if (sqlite3_exec(db->h, "DELETE FROM temp.sl_touched", NULL, NULL, NULL) != SQLITE_OK)
		return DB_FAIL(db->h, err, "clear the paths to link");
	return SL_OK;
}

int db_links_init(struct db *db, int from_version, struct sl_err *err)
{
	int rc;

	if (sqlite3_exec(
		    db->h,
		    "CREATE TEMP TABLE IF NOT EXISTS sl_touched(path TEXT);"
		    "CREATE TEMP TRIGGER IF NOT EXISTS sl_touch_insert AFTER INSERT ON main.files"
		    " BEGIN INSERT INTO sl_touched VALUES(NEW.path); END;"
		    "CREATE TEMP TRIGGER IF NOT EXISTS sl_touch_update"
		    " AFTER UPDATE OF path, deleted_at, format, ino ON main.files"
		    " WHEN OLD.path IS NOT NEW.path OR (OLD.deleted_at IS NULL) <> (NEW.deleted_at IS NULL)"
		    "  OR OLD.format IS NOT NEW.format OR (OLD.ino IS NULL) <> (NEW.ino IS NULL)"
		    " BEGIN INSERT INTO sl_touched VALUES(OLD.path);"
		    "  INSERT INTO sl_touched VALUES(NEW.path); END;",
		    NULL, NULL, NULL) != SQLITE_OK)
		return DB_FAIL(db->h, err, "set up sidecar links");
	if (from_version <= 0 || from_version >= 11)
		return SL_OK;
	/* An index from before the links: its sidecars are linked now, once,
	 * without reading any file. */
	if (sqlite3_exec(db->h, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK)
		return DB_FAIL(db->h, err, "begin sidecar links");
	if (sqlite3_exec(db->h,
			 "INSERT INTO sl_touched SELECT path FROM files"
			 " WHERE deleted_at IS NULL AND format = 'xmp'",
			 NULL, NULL, NULL) != SQLITE_OK)
		rc = DB_FAIL(db->h, err, "find the sidecars to link");
	else
		rc = db_links_update(db, err);
	if (rc == SL_OK && sqlite3_exec(db->h, "COMMIT", NULL, NULL, NULL) != SQLITE_OK)
		rc = DB_FAIL(db->h, err, "commit sidecar links");
	if (rc != SL_OK)
		sqlite3_exec(db->h, "ROLLBACK", NULL, NULL, NULL);
	return rc;
}
