/* stats.c - what the index holds, and how the last scans went (db.h
 * db_stats), handed to the command's functions, which print it.  Every
 * query is a constant statement; only the scan count is bound. */
#include <string.h>

#include "db/db_int.h"

/* One grouped count: label, files, bytes. */
struct section {
	const char *key;   /* JSON key */
	const char *title; /* text heading */
	const char *sql;   /* SELECT label, count, bytes ... */
};

static const struct section sections[] = {
	{"formats", "by format",
	 "SELECT coalesce(format, '(unknown)'), count(*), coalesce(sum(size), 0) FROM files"
	 " WHERE deleted_at IS NULL GROUP BY 1 ORDER BY 2 DESC, 1"},
	{"cameras", "by camera (top 20)",
	 "SELECT trim(coalesce(make, '') || ' ' || coalesce(model, '')), count(*),"
	 " coalesce(sum(size), 0) FROM files WHERE deleted_at IS NULL"
	 " AND (make IS NOT NULL OR model IS NOT NULL) GROUP BY 1 ORDER BY 2 DESC, 1 LIMIT 20"},
	{"years", "by year taken",
	 "SELECT coalesce(substr(datetime_original, 1, 4), '(no date)'), count(*),"
	 " coalesce(sum(size), 0) FROM files WHERE deleted_at IS NULL GROUP BY 1 ORDER BY 1"},
	/* what people gave their pictures, as export gives it (a sidecar's
	 * over the file's own), each picture once */
	{"ratings", "by rating (-1 rejected, 0 unrated)",
	 "SELECT CAST(r AS TEXT), count(*), coalesce(sum(size), 0) FROM (SELECT "
	 DB_SIDECAR_OVER("rating") " AS r, size FROM files WHERE deleted_at IS NULL AND "
	 DB_NOT_LINKED_SIDECAR ") WHERE r IS NOT NULL GROUP BY r ORDER BY r DESC"},
	{"keywords", "by keyword (top 20)",
	 "SELECT value, count(*), coalesce(sum(size), 0) FROM (SELECT "
	 DB_SIDECAR_OVER("keywords") " AS kw, size FROM files WHERE deleted_at IS NULL AND "
	 DB_NOT_LINKED_SIDECAR "), json_each(kw) WHERE kw IS NOT NULL"
	 " GROUP BY value ORDER BY 2 DESC, 1 LIMIT 20"},
};

static int totals(struct db *db, const struct db_stats_out *o, struct sl_err *err)
{
	sqlite3_stmt *st = NULL;
	int rc = SL_OK;

	if (sqlite3_prepare_v2(db->h,
			       "SELECT count(*) FILTER (WHERE deleted_at IS NULL),"
			       " coalesce(sum(size) FILTER (WHERE deleted_at IS NULL), 0),"
			       " count(*) FILTER (WHERE deleted_at IS NULL AND error IS NOT NULL),"
			       " count(*) FILTER (WHERE deleted_at IS NOT NULL),"
			       " count(*) FILTER (WHERE deleted_at IS NULL AND " DB_NEEDS_HASH_SQL "),"
			       " count(*) FILTER (WHERE deleted_at IS NULL AND " DB_PENDING_SQL "),"
			       " coalesce(sum(size) FILTER (WHERE deleted_at IS NULL AND "
			       DB_PENDING_SQL "), 0)"
			       " FROM files",
			       -1, &st, NULL) != SQLITE_OK)
		return DB_FAIL(db->h, err, "prepare stats");
	if (sqlite3_step(st) == SQLITE_ROW)
		o->totals(o->ctx, sqlite3_column_int64(st, 0), sqlite3_column_int64(st, 1),
			  sqlite3_column_int64(st, 2), sqlite3_column_int64(st, 3),
			  sqlite3_column_int64(st, 4), sqlite3_column_int64(st, 5),
			  sqlite3_column_int64(st, 6));
	else
		rc = DB_FAIL(db->h, err, "stats");
	sqlite3_finalize(st);
	return rc;
}

int db_content_pending(struct db *db, uint64_t *count, uint64_t *bytes, struct sl_err *err)
{
	sqlite3_stmt *st = NULL;
	int rc = SL_OK;

	*count = *bytes = 0;
	if (sqlite3_prepare_v2(db->h,
			       "SELECT count(*), coalesce(sum(size), 0) FROM files WHERE"
			       " deleted_at IS NULL AND " DB_PENDING_SQL, -1, &st, NULL) != SQLITE_OK)
		return DB_FAIL(db->h, err, "count files read in part");
	if (sqlite3_step(st) == SQLITE_ROW) {
		*count = (uint64_t)sqlite3_column_int64(st, 0);
		*bytes = (uint64_t)sqlite3_column_int64(st, 1);
	} else {
		rc = DB_FAIL(db->h, err, "count files read in part");
	}
	sqlite3_finalize(st);
	return rc;
}

int db_phash_pending(struct db *db, uint64_t *count, struct sl_err *err)
{
	sqlite3_stmt *st = NULL;
	int rc = SL_OK;

	*count = 0;
	if (sqlite3_prepare_v2(db->h,
			       "SELECT count(*) FROM files WHERE deleted_at IS NULL AND "
			       DB_NEEDS_HASH_SQL, -1, &st, NULL) != SQLITE_OK)
		return DB_FAIL(db->h, err, "count pending perceptual hashes");
	if (sqlite3_step(st) == SQLITE_ROW)
		*count = (uint64_t)sqlite3_column_int64(st, 0);
	else
		rc = DB_FAIL(db->h, err, "count pending perceptual hashes");
	sqlite3_finalize(st);
	return rc;
}

static int grouped(struct db *db, const struct section *s, const struct db_stats_out *o,
		   struct sl_err *err)
{
	sqlite3_stmt *st = NULL;
	int r;

	if (sqlite3_prepare_v2(db->h, s->sql, -1, &st, NULL) != SQLITE_OK)
		return DB_FAIL(db->h, err, "prepare stats");
	o->section(o->ctx, s->key, s->title);
	while ((r = sqlite3_step(st)) == SQLITE_ROW) {
		const char *label = (const char *)sqlite3_column_text(st, 0);
		o->group(o->ctx, label ? label : "", label ? (size_t)sqlite3_column_bytes(st, 0) : 0,
			 sqlite3_column_int64(st, 1), sqlite3_column_int64(st, 2));
	}
	sqlite3_finalize(st);
	o->section(o->ctx, NULL, NULL);
	if (r != SQLITE_DONE)
		return DB_FAIL(db->h, err, "stats");
	return SL_OK;
}

/* The file systems the index knows, each with its live records (those
 * purge --file-system would take are these and the deleted ones). */
static int file_systems(struct db *db, const struct db_stats_out *o, struct sl_err *err)
{
	sqlite3_stmt *st = NULL;
	int r;

	if (sqlite3_prepare_v2(db->h,
			       "SELECT fs.ident, fs.alt, fs.fstype, fs.mount, s.started_at, s.id,"
			       " count(f.id) FILTER (WHERE f.deleted_at IS NULL),"
			       " coalesce(sum(f.size) FILTER (WHERE f.deleted_at IS NULL), 0),"
			       " count(f.id) FILTER (WHERE f.deleted_at IS NOT NULL)"
			       " FROM filesystems fs LEFT JOIN files f ON f.fs_id = fs.id"
			       " LEFT JOIN scans s ON s.id = fs.last_scan GROUP BY fs.id"
			       " ORDER BY 7 DESC, 1",
			       -1, &st, NULL) != SQLITE_OK)
		return DB_FAIL(db->h, err, "prepare stats");
	o->section(o->ctx, "file_systems", "by file system (identity, type, last mount point,"
					   " last walked)");
	while ((r = sqlite3_step(st)) == SQLITE_ROW) {
		struct db_stats_fs f;
		const char *ident = (const char *)sqlite3_column_text(st, 0);

		f.ident = ident ? ident : "";
		f.alt = (const char *)sqlite3_column_text(st, 1);
		f.fstype = (const char *)sqlite3_column_text(st, 2);
		f.mount = (const char *)sqlite3_column_text(st, 3);
		f.last_walked = (const char *)sqlite3_column_text(st, 4);
		f.last_scan = sqlite3_column_int64(st, 5);
		f.files = sqlite3_column_int64(st, 6);
		f.bytes = sqlite3_column_int64(st, 7);
		f.deleted = sqlite3_column_int64(st, 8);
		o->fs(o->ctx, &f);
	}
	sqlite3_finalize(st);
	o->section(o->ctx, NULL, NULL);
	if (r != SQLITE_DONE)
		return DB_FAIL(db->h, err, "stats");
	return SL_OK;
}

/* The last scans, each with its disks: the order each got and how fast it
 * read.  Not bench's runs (a row per order and run: one bench would push
 * the nightly history out of view; export --scans has them). */
static int scans(struct db *db, int n, const struct db_stats_out *o, struct sl_err *err)
{
	sqlite3_stmt *st = NULL, *dv = NULL;
	int r, rc = SL_OK;

	if (sqlite3_prepare_v2(db->h,
			       "SELECT id, started_at, command, status, order_requested,"
			       " coalesce(files, 0), coalesce(bytes, 0), coalesce(wall_s, 0),"
			       " coalesce(read_s, 0) FROM scans WHERE command <> 'bench'"
			       " ORDER BY id DESC LIMIT ?1",
			       -1, &st, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(db->h,
			       "SELECT device, order_used, files, bytes, coalesce(read_s, 0)"
			       " FROM scan_devices WHERE scan_id = ?1 ORDER BY device",
			       -1, &dv, NULL) != SQLITE_OK) {
		rc = DB_FAIL(db->h, err, "prepare stats");
		goto out;
	}
	sqlite3_bind_int(st, 1, n);
	o->section(o->ctx, "scans", NULL);
	while ((r = sqlite3_step(st)) == SQLITE_ROW) {
		struct db_stats_scan sc;
		int d;

		sc.id = sqlite3_column_int64(st, 0);
		sc.started_at = (const char *)sqlite3_column_text(st, 1);
		sc.command = (const char *)sqlite3_column_text(st, 2);
		sc.status = (const char *)sqlite3_column_text(st, 3);
		sc.order = (const char *)sqlite3_column_text(st, 4);
		sc.files = sqlite3_column_int64(st, 5);
		sc.bytes = sqlite3_column_int64(st, 6);
		sc.wall_s = sqlite3_column_double(st, 7);
		sc.read_s = sqlite3_column_double(st, 8);
		o->scan(o->ctx, &sc);
		sqlite3_reset(dv);
		sqlite3_bind_int64(dv, 1, sc.id);
		while ((d = sqlite3_step(dv)) == SQLITE_ROW)
			o->device(o->ctx, (const char *)sqlite3_column_text(dv, 0),
				  (const char *)sqlite3_column_text(dv, 1), sqlite3_column_int64(dv, 2),
				  sqlite3_column_int64(dv, 3), sqlite3_column_double(dv, 4));
		o->scan(o->ctx, NULL);
	}
	o->section(o->ctx, NULL, NULL);
	if (r != SQLITE_DONE)
		rc = DB_FAIL(db->h, err, "stats");
out:
	sqlite3_finalize(st);
	sqlite3_finalize(dv);
	return rc;
}

int db_stats(struct db *db, int nscans, const struct db_stats_out *o, struct sl_err *err)
{
	size_t i;
	int rc;

	rc = totals(db, o, err);
	for (i = 0; rc == SL_OK && i < sizeof(sections) / sizeof(sections[0]); i++)
		rc = grouped(db, &sections[i], o, err);
	if (rc == SL_OK)
		rc = file_systems(db, o, err);
	if (rc == SL_OK)
		rc = scans(db, nscans, o, err);
	return rc;
}
