/* report.c - the index as `seekless report` reads it (report.h). */
#include <string.h>

#include "db/db_int.h"
#include "db/report.h"

static int count(struct db *db, const char *sql, int64_t *n, struct sl_err *err)
{
	sqlite3_stmt *st = NULL;
	int rc = SL_OK;

	*n = 0;
	if (sqlite3_prepare_v2(db->h, sql, -1, &st, NULL) != SQLITE_OK)
		return DB_FAIL(db->h, err, "prepare report");
	if (sqlite3_step(st) == SQLITE_ROW)
		*n = sqlite3_column_int64(st, 0);
	else
		rc = DB_FAIL(db->h, err, "report");
	sqlite3_finalize(st);
	return rc;
}

static int64_t int_or(sqlite3_stmt *st, int col, int64_t none)
{
	return sqlite3_column_type(st, col) == SQLITE_NULL ? none : sqlite3_column_int64(st, col);
}

int db_report_scans(struct db *db, int limit, int (*scan)(void *ctx, const struct db_report_scan *s),
		    int (*dev)(void *ctx, const struct db_report_dev *d), void *ctx, int64_t *total,
		    struct sl_err *err)
{
	sqlite3_stmt *st = NULL, *dv = NULL;
	int r, rc;

	rc = count(db, "SELECT count(*) FROM scans WHERE command <> 'bench'", total, err);
	if (rc != SL_OK)
		return rc;
	/* the newest `limit`, handed out oldest first: the chart's order */
	if (sqlite3_prepare_v2(db->h,
			       "SELECT * FROM (SELECT id, started_at, status, command, order_requested,"
			       " coalesce(files, 0), coalesce(bytes, 0), coalesce(errors, 0),"
			       " added, changed, moved, deleted, unchanged, coalesce(wall_s, 0),"
			       " coalesce(read_s, 0), coalesce(background, 0)"
			       " FROM scans WHERE command <> 'bench' ORDER BY id DESC LIMIT ?1)"
			       " ORDER BY id",
			       -1, &st, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(db->h,
			       "SELECT device, fstype, coalesce(rotational, -1), order_used, reason,"
			       " files, bytes, coalesce(read_s, 0) FROM scan_devices"
			       " WHERE scan_id = ?1 ORDER BY device",
			       -1, &dv, NULL) != SQLITE_OK) {
		rc = DB_FAIL(db->h, err, "prepare report");
		goto out;
	}
	sqlite3_bind_int(st, 1, limit);
	while ((r = sqlite3_step(st)) == SQLITE_ROW) {
		struct db_report_scan s;
		int d;

		s.id = sqlite3_column_int64(st, 0);
		s.started_at = (const char *)sqlite3_column_text(st, 1);
		s.status = (const char *)sqlite3_column_text(st, 2);
		s.command = (const char *)sqlite3_column_text(st, 3);
		s.order = (const char *)sqlite3_column_text(st, 4);
		s.files = sqlite3_column_int64(st, 5);
		s.bytes = sqlite3_column_int64(st, 6);
		s.errors = sqlite3_column_int64(st, 7);
		s.added = int_or(st, 8, -1);
		s.changed = int_or(st, 9, -1);
		s.moved = int_or(st, 10, -1);
		s.deleted = int_or(st, 11, -1);
		s.unchanged = int_or(st, 12, -1);
		s.wall_s = sqlite3_column_double(st, 13);
		s.read_s = sqlite3_column_double(st, 14);
		s.background = sqlite3_column_int(st, 15);
		if (scan(ctx, &s) != 0) {
			rc = SL_FAIL(err, SL_E_IO, 0, "report: write error");
			goto out;
		}
		if (!dev)
			continue;
		sqlite3_reset(dv);
		sqlite3_bind_int64(dv, 1, s.id);
		while ((d = sqlite3_step(dv)) == SQLITE_ROW) {
			struct db_report_dev v;
			v.scan_id = s.id;
			v.device = (const char *)sqlite3_column_text(dv, 0);
			v.fstype = (const char *)sqlite3_column_text(dv, 1);
			v.rotational = sqlite3_column_int(dv, 2);
			v.order = (const char *)sqlite3_column_text(dv, 3);
			v.reason = (const char *)sqlite3_column_text(dv, 4);
			v.files = sqlite3_column_int64(dv, 5);
			v.bytes = sqlite3_column_int64(dv, 6);
			v.read_s = sqlite3_column_double(dv, 7);
			if (dev(ctx, &v) != 0) {
				rc = SL_FAIL(err, SL_E_IO, 0, "report: write error");
				goto out;
			}
		}
		if (d != SQLITE_DONE) {
			rc = DB_FAIL(db->h, err, "report: scan devices");
			goto out;
		}
	}
	if (r != SQLITE_DONE)
		rc = DB_FAIL(db->h, err, "report: scans");
out:
	sqlite3_finalize(st);
	sqlite3_finalize(dv);
	return rc;
}

int db_report_errors(struct db *db, int limit,
		     int (*fn)(void *ctx, const struct db_report_error *e), void *ctx,
		     int64_t *total, struct sl_err *err)
{
	sqlite3_stmt *st = NULL;
	int r, rc;

	/* both statements walk the files_errors index, not the table */
	rc = count(db, "SELECT count(*) FROM files WHERE deleted_at IS NULL AND error IS NOT NULL",
		   total, err);
	if (rc != SL_OK)
		return rc;
	if (sqlite3_prepare_v2(db->h,
			       "SELECT f.path, f.error, f.format, coalesce(fs.mount, fs.ident),"
			       " coalesce(f.size, 0), f.last_scan FROM files f"
			       " LEFT JOIN filesystems fs ON fs.id = f.fs_id"
			       " WHERE f.deleted_at IS NULL AND f.error IS NOT NULL"
			       " ORDER BY f.path LIMIT ?1",
			       -1, &st, NULL) != SQLITE_OK)
		return DB_FAIL(db->h, err, "prepare report");
	sqlite3_bind_int(st, 1, limit);
	while ((r = sqlite3_step(st)) == SQLITE_ROW) {
		struct db_report_error e;
		e.path = (const char *)sqlite3_column_text(st, 0);
		e.path_len = (size_t)sqlite3_column_bytes(st, 0);
		e.error = (const char *)sqlite3_column_text(st, 1);
		e.error_len = (size_t)sqlite3_column_bytes(st, 1);
		e.format = (const char *)sqlite3_column_text(st, 2);
		e.fs = (const char *)sqlite3_column_text(st, 3);
		e.size = sqlite3_column_int64(st, 4);
		e.last_scan = sqlite3_column_int64(st, 5);
		if (!e.path)
			e.path = "";
		if (!e.error)
			e.error = "";
		if (fn(ctx, &e) != 0) {
			sqlite3_finalize(st);
			return SL_FAIL(err, SL_E_IO, 0, "report: write error");
		}
	}
	sqlite3_finalize(st);
	if (r != SQLITE_DONE)
		return DB_FAIL(db->h, err, "report: errors");
	return SL_OK;
}

int db_report_file(struct db *db, const char *path, size_t len, struct db_report_file *f,
		   int *found, struct sl_err *err)
{
	sqlite3_stmt *st = NULL;
	int r;

	memset(f, 0, sizeof(*f));
	*found = 0;
	if (sqlite3_prepare_v2(db->h,
			       "SELECT coalesce(size, -1), coalesce(mtime_ns, 0), coalesce(orientation, 0),"
			       " coalesce(format, ''), coalesce(phash_src, '') FROM files"
			       " WHERE path = ?1 AND deleted_at IS NULL",
			       -1, &st, NULL) != SQLITE_OK)
		return DB_FAIL(db->h, err, "prepare report");
	sqlite3_bind_text(st, 1, path, (int)len, SQLITE_STATIC);
	r = sqlite3_step(st);
	if (r == SQLITE_ROW) {
		const char *fmt = (const char *)sqlite3_column_text(st, 3);
		const char *src = (const char *)sqlite3_column_text(st, 4);
		f->size = sqlite3_column_int64(st, 0);
		f->mtime_ns = sqlite3_column_int64(st, 1);
		f->orientation = sqlite3_column_int(st, 2);
		snprintf(f->format, sizeof(f->format), "%s", fmt ? fmt : "");
		snprintf(f->phash_src, sizeof(f->phash_src), "%s", src ? src : "");
		*found = 1;
	}
	sqlite3_finalize(st);
	if (r != SQLITE_ROW && r != SQLITE_DONE)
		return DB_FAIL(db->h, err, "report: file");
	return SL_OK;
}
