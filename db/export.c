/* export.c - one record per live file, as JSON lines or CSV.
 *
 * JSON objects are built by SQLite's json_object, so quoting and number
 * formatting follow one implementation; CSV follows RFC 4180.
 *
 * Paths are stored as the bytes the file system gave, which need not be
 * UTF-8 (Linux names are bytes).  JSON must be UTF-8, so in JSON every text
 * goes through sl_text() (bad bytes become U+FFFD), and a record whose path
 * is not valid UTF-8 also carries "path_hex": its exact bytes, so nothing is
 * lost.  CSV has no encoding of its own: it carries the bytes as they are
 * (quoted when they hold separators or newlines). */
#include <stdlib.h>
#include <string.h>

#include "common/strbuf.h"
#include "db/db.h"

struct col {
	const char *key;
	const char *expr;
};

/* The export contract: these keys, in this order, null where unknown. */
static const struct col cols[] = {
	{"path", "path"},
	{"size", "size"},
	{"mtime", "mtime_ns / 1e9"},
	{"format", "format"},
	{"width", "width"},
	{"height", "height"},
	{"make", "make"},
	{"model", "model"},
	{"datetime_original", "datetime_original"},
	{"orientation", "orientation"},
	{"gps_lat", "gps_lat"},
	{"gps_lon", "gps_lon"},
	{"exposure_time", "exposure_time"},
	{"f_number", "f_number"},
	{"iso", "iso"},
	{"focal_length", "focal_length"},
	{"lens_model", "lens_model"},
	{"content_hash", "content_hash"},
	{"phys_offset", "phys_offset"},
	{"fragments", "fragments"},
	{"error", "error"},
};
/* With DB_EXTENDED, after the contract's keys. */
static const struct col extra[] = {
	{"phash", "CASE WHEN phash IS NULL THEN NULL ELSE printf('%016llx', phash) END"},
	{"warnings", "warnings"},
	{"placement", "placement"},
};
/* DB_SCANS: one row per run, for trends (docs/schema.md). */
static const struct col scan_cols[] = {
	{"id", "id"},
	{"started_at", "started_at"},
	{"finished_at", "finished_at"},
	{"status", "status"},
	{"command", "command"},
	{"order", "order_requested"},
	{"roots", "roots"},
	{"files_read", "files"},
	{"bytes_read", "bytes"},
	{"errors", "errors"},
	{"unchanged", "unchanged"},
	{"changed", "changed"},
	{"added", "added"},
	{"moved", "moved"},
	{"deleted", "deleted"},
	{"unavailable", "unavailable"},
	{"background", "background"},
	{"yield_s", "yield_s"},
	{"walk_s", "walk_s"},
	{"locate_s", "locate_s"},
	{"read_s", "read_s"},
	{"extract_s", "extract_s"},
	{"store_s", "store_s"},
	{"wall_s", "wall_s"},
	{"jobs", "jobs"},
	{"pid", "pid"},
	{"version", "version"},
	{"message", "message"},
};
#define NCOLS (sizeof(cols) / sizeof(cols[0]))
#define NEXTRA (sizeof(extra) / sizeof(extra[0]))
#define NSCAN (sizeof(scan_cols) / sizeof(scan_cols[0]))

static const struct col *col_at(int format, size_t i)
{
	if (format & DB_SCANS)
		return &scan_cols[i];
	return i < NCOLS ? &cols[i] : &extra[i - NCOLS];
}

static void csv_field(FILE *out, const unsigned char *s, int n)
{
	int i, quote = 0;
	for (i = 0; i < n; i++)
		if (s[i] == ',' || s[i] == '"' || s[i] == '\n' || s[i] == '\r')
			quote = 1;
	if (!quote) {
		fwrite(s, 1, (size_t)n, out);
		return;
	}
	fputc('"', out);
	for (i = 0; i < n; i++) {
		if (s[i] == '"')
			fputc('"', out);
		fputc(s[i], out);
	}
	fputc('"', out);
}

/* The statement text, from the tables above only (no caller input). */
static int build_sql(int format, size_t ncols, struct strbuf *sql)
{
	int csv = (format & DB_CSV) != 0, files = !(format & DB_SCANS);
	size_t i;

	sb_adds(sql, csv ? "SELECT " : files ? "SELECT json_patch(json_object(" : "SELECT json_object(");
	for (i = 0; i < ncols; i++) {
		const struct col *c = col_at(format, i);
		if (i)
			sb_addc(sql, ',');
		if (csv)
			sb_adds(sql, c->expr);
		else /* sl_text: numbers pass through, text becomes valid UTF-8 */
			sb_addf(sql, "'%s',sl_text(%s)", c->key, c->expr);
	}
	if (!csv && files)
		sb_adds(sql, "), CASE WHEN sl_utf8(path) THEN '{}'"
			     " ELSE json_object('path_hex', lower(hex(path))) END)");
	else if (!csv)
		sb_adds(sql, ")");
	if (format & DB_SCANS)
		sb_adds(sql, " FROM scans ORDER BY id");
	else
		sb_adds(sql, " FROM files WHERE deleted_at IS NULL ORDER BY path");
	return sql->oom ? -1 : 0;
}

/* sl_text(x): text made valid UTF-8; anything else unchanged. */
static void fn_text(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	const char *s;
	int n;

	(void)argc;
	if (sqlite3_value_type(argv[0]) != SQLITE_TEXT) {
		sqlite3_result_value(ctx, argv[0]);
		return;
	}
	s = (const char *)sqlite3_value_text(argv[0]);
	n = sqlite3_value_bytes(argv[0]);
	if (!s || sl_utf8_valid(s, (size_t)n)) {
		sqlite3_result_value(ctx, argv[0]);
	} else {
		struct strbuf sb = STRBUF_INIT;
		if (sb_add_utf8_lossy(&sb, s, (size_t)n) != 0) {
			sb_free(&sb);
			sqlite3_result_error_nomem(ctx);
			return;
		}
		sqlite3_result_text(ctx, sb.p, (int)sb.len, free);
	}
}

/* sl_utf8(x): 1 when x is NULL or valid UTF-8 text. */
static void fn_utf8(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	const char *s = (const char *)sqlite3_value_text(argv[0]);
	(void)argc;
	sqlite3_result_int(ctx, !s || sl_utf8_valid(s, (size_t)sqlite3_value_bytes(argv[0])));
}

int db_export(struct db *db, FILE *out, int format, struct sl_err *err)
{
	struct strbuf sql = STRBUF_INIT;
	sqlite3_stmt *st = NULL;
	int csv = (format & DB_CSV) != 0;
	size_t i, ncols = (format & DB_SCANS) ? NSCAN
				: NCOLS + ((format & DB_EXTENDED) ? NEXTRA : 0);
	int rc;

	if (build_sql(format, ncols, &sql) != 0) {
		sb_free(&sql);
		return SL_FAIL(err, SL_E_NOMEM, 0, "export: out of memory");
	}
	if (sqlite3_create_function(db->h, "sl_text", 1, SQLITE_UTF8 | SQLITE_DETERMINISTIC, NULL,
				    fn_text, NULL, NULL) != SQLITE_OK ||
	    sqlite3_create_function(db->h, "sl_utf8", 1, SQLITE_UTF8 | SQLITE_DETERMINISTIC, NULL,
				    fn_utf8, NULL, NULL) != SQLITE_OK) {
		sb_free(&sql);
		return DB_FAIL(db->h, err, "export functions");
	}
	rc = sqlite3_prepare_v2(db->h, sql.p, -1, &st, NULL);
	sb_free(&sql);
	if (rc != SQLITE_OK)
		return DB_FAIL(db->h, err, "prepare export");
	if (csv) {
		for (i = 0; i < ncols; i++)
			fprintf(out, "%s%s", i ? "," : "", col_at(format, i)->key);
		fputc('\n', out);
	}
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (csv) {
			for (i = 0; i < ncols; i++) {
				if (i)
					fputc(',', out);
				if (sqlite3_column_type(st, (int)i) != SQLITE_NULL)
					csv_field(out, sqlite3_column_text(st, (int)i),
						  sqlite3_column_bytes(st, (int)i));
			}
		} else {
			fwrite(sqlite3_column_text(st, 0), 1, (size_t)sqlite3_column_bytes(st, 0), out);
		}
		fputc('\n', out);
	}
	if (rc != SQLITE_DONE) {
		rc = DB_FAIL(db->h, err, "export");
		sqlite3_finalize(st);
		return rc;
	}
	sqlite3_finalize(st);
	if (fflush(out) != 0 || ferror(out))
		return SL_FAIL(err, SL_E_IO, 0, "export: write error");
	return SL_OK;
}

int db_scan_history(struct db *db, int n, FILE *out, struct sl_err *err)
{
	sqlite3_stmt *st = NULL;
	int rc;

	if (sqlite3_prepare_v2(db->h,
			       "SELECT id, started_at, command, status, coalesce(unchanged,0),"
			       " coalesce(changed,0), coalesce(added,0), coalesce(moved,0),"
			       " coalesce(deleted,0), coalesce(files,0), coalesce(errors,0),"
			       " coalesce(wall_s,0), coalesce(yield_s,0)"
			       " FROM scans ORDER BY id DESC LIMIT ?1",
			       -1, &st, NULL) != SQLITE_OK)
		return DB_FAIL(db->h, err, "prepare scan history");
	sqlite3_bind_int(st, 1, n);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		fprintf(out,
			"  #%lld %s %-9s %-11s %lld unchanged, %lld changed, %lld new, %lld moved,"
			" %lld deleted; read %lld files (%lld errors) in %.1f s",
			sqlite3_column_int64(st, 0), (const char *)sqlite3_column_text(st, 1),
			(const char *)sqlite3_column_text(st, 2),
			(const char *)sqlite3_column_text(st, 3), sqlite3_column_int64(st, 4),
			sqlite3_column_int64(st, 5), sqlite3_column_int64(st, 6),
			sqlite3_column_int64(st, 7), sqlite3_column_int64(st, 8),
			sqlite3_column_int64(st, 9), sqlite3_column_int64(st, 10),
			sqlite3_column_double(st, 11));
		if (sqlite3_column_double(st, 12) > 0)
			fprintf(out, ", %.1f s waiting for other I/O", sqlite3_column_double(st, 12));
		fputc('\n', out);
	}
	rc = rc == SQLITE_DONE ? SL_OK : DB_FAIL(db->h, err, "scan history");
	sqlite3_finalize(st);
	return rc;
}
