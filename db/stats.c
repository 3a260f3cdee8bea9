/* stats.c - what the index holds, and how the last scans went (db.h
 * db_stats), as text or one JSON document.  Every query is a constant
 * statement; only the scan count is bound. */
#include <inttypes.h>
#include <string.h>

#include "common/strbuf.h"
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

static void text_bytes(struct strbuf *o, uint64_t b)
{
	if (b >= 10ull << 30)
		sb_addf(o, "%.1f GB", (double)b / 1e9);
	else
		sb_addf(o, "%.1f MB", (double)b / 1e6);
}

static int totals(struct db *db, struct strbuf *o, int json, struct sl_err *err)
{
	sqlite3_stmt *st = NULL;
	int rc = SL_OK;

	if (sqlite3_prepare_v2(db->h,
			       "SELECT count(*) FILTER (WHERE deleted_at IS NULL),"
			       " coalesce(sum(size) FILTER (WHERE deleted_at IS NULL), 0),"
			       " count(*) FILTER (WHERE deleted_at IS NULL AND error IS NOT NULL),"
			       " count(*) FILTER (WHERE deleted_at IS NOT NULL) FROM files",
			       -1, &st, NULL) != SQLITE_OK)
		return DB_FAIL(db->h, err, "prepare stats");
	if (sqlite3_step(st) == SQLITE_ROW) {
		int64_t n = sqlite3_column_int64(st, 0), b = sqlite3_column_int64(st, 1);
		int64_t bad = sqlite3_column_int64(st, 2), gone = sqlite3_column_int64(st, 3);
		if (json) {
			sb_addf(o, "\"files\":%" PRId64 ",\"bytes\":%" PRId64 ",\"errors\":%" PRId64
				",\"deleted\":%" PRId64, n, b, bad, gone);
		} else {
			sb_addf(o, "files: %" PRId64 " (", n);
			text_bytes(o, (uint64_t)b);
			sb_addf(o, "), %" PRId64 " with errors, %" PRId64
				" marked deleted (seekless purge removes them)\n", bad, gone);
		}
	} else {
		rc = DB_FAIL(db->h, err, "stats");
	}
	sqlite3_finalize(st);
	return rc;
}

static int grouped(struct db *db, const struct section *s, struct strbuf *o, int json,
		   struct sl_err *err)
{
	sqlite3_stmt *st = NULL;
	int r, first = 1;

	if (sqlite3_prepare_v2(db->h, s->sql, -1, &st, NULL) != SQLITE_OK)
		return DB_FAIL(db->h, err, "prepare stats");
	if (json)
		sb_addf(o, ",\"%s\":[", s->key);
	else
		sb_addf(o, "\n%s:\n", s->title);
	while ((r = sqlite3_step(st)) == SQLITE_ROW) {
		const char *label = (const char *)sqlite3_column_text(st, 0);
		int n = sqlite3_column_bytes(st, 0);
		int64_t count = sqlite3_column_int64(st, 1), bytes = sqlite3_column_int64(st, 2);
		if (json) {
			sb_adds(o, first ? "{\"name\":" : ",{\"name\":");
			sb_add_json(o, label ? label : "", label ? (size_t)n : 0);
			sb_addf(o, ",\"files\":%" PRId64 ",\"bytes\":%" PRId64 "}", count, bytes);
		} else {
			sb_addf(o, "  %10" PRId64 "  %10.1f MB  ", count, (double)bytes / 1e6);
			sb_add_utf8_lossy(o, label ? label : "", label ? (size_t)n : 0);
			sb_addc(o, '\n');
		}
		first = 0;
	}
	sqlite3_finalize(st);
	if (r != SQLITE_DONE)
		return DB_FAIL(db->h, err, "stats");
	if (json)
		sb_addc(o, ']');
	return SL_OK;
}

/* The last scans, each with its disks: the order each got and how fast it
 * read, so sorted and unsorted runs compare at a glance. */
static int scans(struct db *db, int n, struct strbuf *o, int json, struct sl_err *err)
{
	sqlite3_stmt *st = NULL, *dv = NULL;
	int r, first = 1, rc = SL_OK;

	if (sqlite3_prepare_v2(db->h,
			       "SELECT id, started_at, command, status, order_requested,"
			       " coalesce(files, 0), coalesce(bytes, 0), coalesce(wall_s, 0),"
			       " coalesce(read_s, 0) FROM scans ORDER BY id DESC LIMIT ?1",
			       -1, &st, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(db->h,
			       "SELECT device, order_used, files, bytes, coalesce(read_s, 0)"
			       " FROM scan_devices WHERE scan_id = ?1 ORDER BY device",
			       -1, &dv, NULL) != SQLITE_OK) {
		rc = DB_FAIL(db->h, err, "prepare stats");
		goto out;
	}
	sqlite3_bind_int(st, 1, n);
	sb_adds(o, json ? ",\"scans\":[" : "\nlast scans (MB/s: bytes read / reading time):\n");
	while ((r = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t id = sqlite3_column_int64(st, 0), files = sqlite3_column_int64(st, 5);
		int64_t bytes = sqlite3_column_int64(st, 6);
		double wall = sqlite3_column_double(st, 7), rd = sqlite3_column_double(st, 8);
		const char *when = (const char *)sqlite3_column_text(st, 1);
		const char *cmd = (const char *)sqlite3_column_text(st, 2);
		const char *status = (const char *)sqlite3_column_text(st, 3);
		const char *order = (const char *)sqlite3_column_text(st, 4);
		int dfirst = 1, d;

		if (json) {
			sb_addf(o, "%s{\"id\":%" PRId64 ",\"started_at\":\"%s\",\"command\":\"%s\","
				"\"status\":\"%s\",\"order\":\"%s\",\"files_read\":%" PRId64
				",\"bytes_read\":%" PRId64 ",\"wall_s\":%.3f,\"mb_per_s\":%.1f,"
				"\"devices\":[",
				first ? "" : ",", id, when, cmd, status, order, files, bytes, wall,
				rd > 0 ? (double)bytes / 1e6 / rd : 0.0);
		} else {
			sb_addf(o, "  #%-4" PRId64 " %s %-9s %-11s order %-8s %7" PRId64
				" files read in %7.1f s", id, when, cmd, status, order, files, wall);
			if (rd > 0)
				sb_addf(o, ", %.1f MB/s", (double)bytes / 1e6 / rd);
			sb_addc(o, '\n');
		}
		sqlite3_reset(dv);
		sqlite3_bind_int64(dv, 1, id);
		while ((d = sqlite3_step(dv)) == SQLITE_ROW) {
			const char *dev = (const char *)sqlite3_column_text(dv, 0);
			const char *used = (const char *)sqlite3_column_text(dv, 1);
			int64_t df = sqlite3_column_int64(dv, 2), db_ = sqlite3_column_int64(dv, 3);
			double ds = sqlite3_column_double(dv, 4);
			double mbs = ds > 0 ? (double)db_ / 1e6 / ds : 0.0;
			if (json) {
				sb_adds(o, dfirst ? "{\"device\":" : ",{\"device\":");
				sb_add_json(o, dev, strlen(dev));
				sb_addf(o, ",\"order\":\"%s\",\"files\":%" PRId64 ",\"bytes\":%" PRId64
					",\"read_s\":%.3f,\"mb_per_s\":%.1f}", used, df, db_, ds, mbs);
			} else {
				sb_addf(o, "         %-12s %-8s %7" PRId64 " files %9.1f MB in %7.2f s"
					" = %7.1f MB/s\n", dev, used, df, (double)db_ / 1e6, ds, mbs);
			}
			dfirst = 0;
		}
		if (json)
			sb_adds(o, "]}");
		first = 0;
	}
	if (r != SQLITE_DONE)
		rc = DB_FAIL(db->h, err, "stats");
	else if (json)
		sb_addc(o, ']');
out:
	sqlite3_finalize(st);
	sqlite3_finalize(dv);
	return rc;
}

int db_stats(struct db *db, FILE *out, int json, int nscans, struct sl_err *err)
{
	struct strbuf o = STRBUF_INIT;
	size_t i;
	int rc;

	if (json)
		sb_addc(&o, '{');
	rc = totals(db, &o, json, err);
	for (i = 0; rc == SL_OK && i < sizeof(sections) / sizeof(sections[0]); i++)
		rc = grouped(db, &sections[i], &o, json, err);
	if (rc == SL_OK)
		rc = scans(db, nscans, &o, json, err);
	if (json)
		sb_adds(&o, "}\n");
	if (rc == SL_OK && o.oom)
		rc = SL_FAIL(err, SL_E_NOMEM, 0, "stats: out of memory");
	if (rc == SL_OK && (fwrite(o.p, 1, o.len, out) != o.len || fflush(out) != 0))
		rc = SL_FAIL(err, SL_E_IO, 0, "stats: write error");
	sb_free(&o);
	return rc;
}
