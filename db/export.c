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
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/strbuf.h"
#include "db/db_int.h"

struct col {
	const char *key;
	const char *expr;
};

/* Columns holding a JSON array of text: as such in JSON, joined by "; "
 * in CSV. */
static int is_array(const struct col *c)
{
	return strcmp(c->key, "keywords") == 0 || strcmp(c->key, "hierarchical_keywords") == 0;
}

/* scans.roots, a JSON array of paths: an array in JSON too, not a string
 * holding one; in CSV the array's text as stored, since a path may hold
 * "; " itself. */
static int is_roots(int format, const struct col *c)
{
	return (format & DB_SCANS) && strcmp(c->key, "roots") == 0;
}

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
	{"tz_offset", "tz_offset"},
	{"subsec", "subsec"},
	{"duration", "duration"},
	{"content_id", "content_id"},
	{"rating", DB_SIDECAR_OVER("rating")},
	{"label", DB_SIDECAR_OVER("label")},
	{"keywords", DB_SIDECAR_OVER("keywords")},
	{"hierarchical_keywords", DB_SIDECAR_OVER("hierarchical_keywords")},
	{"title", DB_SIDECAR_OVER("title")},
	{"description", DB_SIDECAR_OVER("description")},
	{"creator", DB_SIDECAR_OVER("creator")},
	{"copyright", DB_SIDECAR_OVER("copyright")},
	{"sidecar", "(SELECT sc.path FROM files AS sc WHERE sc.id = files.sidecar_id)"},
	{"embedded_video", "embedded_video"},
};
/* With DB_EXTENDED, after the contract's keys. */
static const struct col extra[] = {
	{"phash", "CASE WHEN phash IS NULL THEN NULL ELSE printf('%016llx', phash) END"},
	{"phash_src", "phash_src"},
	{"warnings", "warnings"},
	{"placement", "placement"},
	{"meta_version", "meta_version"},
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
	{"rechecked", "rechecked"},
	{"upgraded", "upgraded"},
	{"retried", "retried"},
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
static void query_where(const struct db_query *q, struct strbuf *sql);

/* The FROM clause.  With --camera, the few distinct cameras are matched
 * first (an index-only scan of files_camera) and their files joined in
 * through the same index, instead of testing the text of every record. */
static const char *query_from(const struct db_query *q)
{
	if (!q || !q->camera)
		return " FROM files";
	return " FROM (SELECT coalesce(make,'') AS cam_make, coalesce(model,'') AS cam_model"
	       " FROM files WHERE deleted_at IS NULL GROUP BY 1, 2"
	       " HAVING instr(lower(trim(cam_make || ' ' || cam_model)), lower(?1)) > 0)"
	       " JOIN files ON coalesce(make,'') = cam_make AND coalesce(model,'') = cam_model";
}

/* A whole export walks the path index in order.  A query sorts its
 * matches instead ("+path" keeps the planner off that index): read in path
 * order, a filter no index serves costs a random row lookup per record,
 * several times a sequential scan of the table. */
static const char *order_by(const struct db_query *q)
{
	return q ? " ORDER BY +path" : " ORDER BY path";
}

static int build_sql(int format, size_t ncols, const struct db_query *q, struct strbuf *sql)
{
	int csv = (format & DB_CSV) != 0, files = !(format & DB_SCANS);
	size_t i;

	if (format & DB_PATHS) {
		sb_adds(sql, "SELECT path");
		sb_adds(sql, query_from(q));
		sb_adds(sql, " WHERE deleted_at IS NULL");
		query_where(q, sql);
		sb_adds(sql, order_by(q));
		return sql->oom ? -1 : 0;
	}
	sb_adds(sql, csv ? "SELECT " : files ? "SELECT json_patch(json_object(" : "SELECT json_object(");
	for (i = 0; i < ncols; i++) {
		const struct col *c = col_at(format, i);
		if (i)
			sb_addc(sql, ',');
		if (csv && is_array(c))
			sb_addf(sql, "(SELECT group_concat(value, '; ') FROM json_each(%s))", c->expr);
		else if (csv)
			sb_adds(sql, c->expr);
		else if (is_array(c)) /* the writer made it: valid JSON, valid UTF-8 */
			sb_addf(sql, "'%s',json(%s)", c->key, c->expr);
		else if (is_roots(format, c)) /* sb_add_json made each name valid UTF-8 */
			sb_addf(sql, "'%s',CASE WHEN json_valid(%s) THEN json(%s) END", c->key, c->expr,
				c->expr);
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
	else {
		sb_adds(sql, query_from(q));
		sb_adds(sql, " WHERE deleted_at IS NULL");
		query_where(q, sql);
		sb_adds(sql, order_by(q));
	}
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

/* ---- queries: only constant SQL fragments, every value bound ---- */

/* Kilometres between two points (haversine, mean Earth radius). */
static void fn_km(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	const double r = 6371.0088, d = 3.14159265358979323846 / 180.0;
	double la1, lo1, la2, lo2, a;

	(void)argc;
	if (sqlite3_value_type(argv[0]) == SQLITE_NULL || sqlite3_value_type(argv[1]) == SQLITE_NULL) {
		sqlite3_result_null(ctx);
		return;
	}
	la1 = sqlite3_value_double(argv[0]) * d;
	lo1 = sqlite3_value_double(argv[1]) * d;
	la2 = sqlite3_value_double(argv[2]) * d;
	lo2 = sqlite3_value_double(argv[3]) * d;
	a = sin((la2 - la1) / 2) * sin((la2 - la1) / 2) +
	    cos(la1) * cos(la2) * sin((lo2 - lo1) / 2) * sin((lo2 - lo1) / 2);
	sqlite3_result_double(ctx, 2 * r * atan2(sqrt(a), sqrt(1 - a)));
}

/* The bounding box of a circle, for the index on gps_lat; no longitude
 * bound near the poles or across the antimeridian. */
static void near_box(const struct db_query *q, double box[4], int *lon_box)
{
	const double d = 3.14159265358979323846 / 180.0;
	double dlat = q->km / 111.32, c = cos(q->lat * d);

	box[0] = q->lat - dlat;
	box[1] = q->lat + dlat;
	*lon_box = c > 0.01 && q->lon - q->km / (111.32 * c) > -180 &&
		   q->lon + q->km / (111.32 * c) < 180;
	box[2] = *lon_box ? q->lon - q->km / (111.32 * c) : -180;
	box[3] = *lon_box ? q->lon + q->km / (111.32 * c) : 180;
}

static void query_where(const struct db_query *q, struct strbuf *sql)
{
	size_t i;

	if (!q)
		return;
	/* numbered parameters, bound by query_bind in the same order */
	if (q->lens)
		sb_adds(sql, " AND instr(lower(lens_model), lower(?2)) > 0");
	if (q->from)
		sb_adds(sql, " AND datetime_original >= ?3");
	if (q->to)
		sb_adds(sql, " AND datetime_original < ?4 || char(127)");
	if (q->format)
		sb_adds(sql, " AND format = lower(?5)");
	if (q->errors)
		sb_adds(sql, " AND error IS NOT NULL");
	if (q->near)
		sb_adds(sql, " AND gps_lat BETWEEN ?6 AND ?7 AND gps_lon BETWEEN ?8 AND ?9"
			     " AND sl_km(gps_lat, gps_lon, ?10, ?11) <= ?12");
	if (q->rating)
		sb_adds(sql, " AND " DB_SIDECAR_OVER("rating") " BETWEEN ?13 AND ?14");
	if (q->label)
		sb_adds(sql, " AND lower(" DB_SIDECAR_OVER("label") ") = lower(?15)");
	for (i = 0; i < q->nkeywords && i < DB_QUERY_KEYWORDS; i++)
		sb_addf(sql,
			" AND (EXISTS (SELECT 1 FROM json_each(%s) WHERE lower(value) = lower(?%zu))"
			" OR EXISTS (SELECT 1 FROM json_each(%s) WHERE lower(value) = lower(?%zu)"
			" OR lower(substr(value, -length(?%zu) - 1)) = '|' || lower(?%zu)))",
			DB_SIDECAR_OVER("keywords"), 16 + i, DB_SIDECAR_OVER("hierarchical_keywords"),
			16 + i, 16 + i, 16 + i);
	/* a sidecar that speaks for an image is found through it, not twice */
	if (q->rating || q->label || q->nkeywords)
		sb_adds(sql, " AND " DB_NOT_LINKED_SIDECAR);
	if (q->video)
		sb_adds(sql, " AND format IN (" DB_VIDEO_FORMATS ")");
}

static void query_bind(sqlite3_stmt *st, const struct db_query *q)
{
	double box[4];
	int lon_box;
	size_t i;

	if (!q)
		return;
	if (q->camera)
		sqlite3_bind_text(st, 1, q->camera, -1, SQLITE_STATIC);
	if (q->lens)
		sqlite3_bind_text(st, 2, q->lens, -1, SQLITE_STATIC);
	if (q->from)
		sqlite3_bind_text(st, 3, q->from, -1, SQLITE_STATIC);
	if (q->to)
		sqlite3_bind_text(st, 4, q->to, -1, SQLITE_STATIC);
	if (q->format)
		sqlite3_bind_text(st, 5, q->format, -1, SQLITE_STATIC);
	if (q->near) {
		near_box(q, box, &lon_box);
		sqlite3_bind_double(st, 6, box[0]);
		sqlite3_bind_double(st, 7, box[1]);
		sqlite3_bind_double(st, 8, box[2]);
		sqlite3_bind_double(st, 9, box[3]);
		sqlite3_bind_double(st, 10, q->lat);
		sqlite3_bind_double(st, 11, q->lon);
		sqlite3_bind_double(st, 12, q->km);
	}
	if (q->rating) {
		sqlite3_bind_int(st, 13, q->rating_lo);
		sqlite3_bind_int(st, 14, q->rating_hi);
	}
	if (q->label)
		sqlite3_bind_text(st, 15, q->label, -1, SQLITE_STATIC);
	for (i = 0; i < q->nkeywords && i < DB_QUERY_KEYWORDS; i++)
		sqlite3_bind_text(st, 16 + (int)i, q->keywords[i], -1, SQLITE_STATIC);
}

/* YYYY, YYYY-MM or YYYY-MM-DD naming a day that exists.  The digits alone
 * are not enough: the bounds are compared as text with the stored
 * "YYYY-MM-DDTHH:MM:SS", where 2023-13 sorts as the first of 2024 and
 * 2023-02-30 as March, so a mistyped date would quietly move the bound. */
static int date_ok(const char *s)
{
	static const int mdays[12] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
	size_t n = strlen(s), i;
	int y, mo, d;

	if (n != 4 && n != 7 && n != 10)
		return 0;
	for (i = 0; i < n; i++)
		if ((i == 4 || i == 7) ? s[i] != '-' : (s[i] < '0' || s[i] > '9'))
			return 0;
	if (n == 4)
		return 1;
	y = (s[0] - '0') * 1000 + (s[1] - '0') * 100 + (s[2] - '0') * 10 + (s[3] - '0');
	mo = (s[5] - '0') * 10 + (s[6] - '0');
	if (mo < 1 || mo > 12)
		return 0;
	if (n == 7)
		return 1;
	d = (s[8] - '0') * 10 + (s[9] - '0');
	if (d < 1 || d > mdays[mo - 1])
		return 0;
	return !(mo == 2 && d == 29 && !(y % 4 == 0 && (y % 100 != 0 || y % 400 == 0)));
}

int db_query_check(const struct db_query *q, struct sl_err *err)
{
	if (q->from && !date_ok(q->from))
		return SL_FAIL(err, SL_E_USAGE, 0,
			       "--from %s: not a date (YYYY, YYYY-MM or YYYY-MM-DD)", q->from);
	if (q->to && !date_ok(q->to))
		return SL_FAIL(err, SL_E_USAGE, 0,
			       "--to %s: not a date (YYYY, YYYY-MM or YYYY-MM-DD)", q->to);
	if (q->rating && !(q->rating_lo >= -1 && q->rating_lo <= q->rating_hi && q->rating_hi <= 5))
		return SL_FAIL(err, SL_E_USAGE, 0,
			       "--rating wants N or N..M with -1 <= N <= M <= 5 (-1: rejected)");
	if (q->nkeywords > DB_QUERY_KEYWORDS)
		return SL_FAIL(err, SL_E_USAGE, 0, "at most %d --keyword", DB_QUERY_KEYWORDS);
	if (q->near && (!(q->lat >= -90 && q->lat <= 90) || !(q->lon >= -180 && q->lon <= 180) ||
			!(q->km > 0 && q->km <= 20040)))
		return SL_FAIL(err, SL_E_USAGE, 0,
			       "--near wants LAT,LON,KM with -90..90, -180..180 and 0 < KM");
	return SL_OK;
}

static int run_export(struct db *db, FILE *out, int format, const struct db_query *q,
		      struct sl_err *err);

int db_export(struct db *db, FILE *out, int format, struct sl_err *err)
{
	return run_export(db, out, format & ~(DB_PATHS | DB_NUL), NULL, err);
}

int db_query(struct db *db, const struct db_query *q, FILE *out, int format,
	     struct sl_err *err)
{
	int rc = db_query_check(q, err);
	if (rc != SL_OK)
		return rc;
	if (sqlite3_create_function(db->h, "sl_km", 4, SQLITE_UTF8 | SQLITE_DETERMINISTIC, NULL,
				    fn_km, NULL, NULL) != SQLITE_OK)
		return DB_FAIL(db->h, err, "query functions");
	return run_export(db, out, format & ~DB_SCANS, q, err);
}

static int run_export(struct db *db, FILE *out, int format, const struct db_query *q,
		      struct sl_err *err)
{
	struct strbuf sql = STRBUF_INIT;
	sqlite3_stmt *st = NULL;
	int csv = (format & DB_CSV) != 0, paths = (format & DB_PATHS) != 0;
	size_t i, ncols = (format & DB_SCANS) ? NSCAN
				: NCOLS + ((format & DB_EXTENDED) ? NEXTRA : 0);
	int rc;

	if (build_sql(format, ncols, q, &sql) != 0) {
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
	query_bind(st, q);
	if (csv && !paths) {
		for (i = 0; i < ncols; i++)
			fprintf(out, "%s%s", i ? "," : "", col_at(format, i)->key);
		fputc('\n', out);
	}
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (paths) {
			/* the bytes as stored: what other tools need to open it */
			fwrite(sqlite3_column_blob(st, 0), 1, (size_t)sqlite3_column_bytes(st, 0), out);
			fputc(format & DB_NUL ? '\0' : '\n', out);
			continue;
		}
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

int db_scans(struct db *db, int n, void (*row)(void *ctx, const struct db_scan_row *r),
	     void *ctx, struct sl_err *err)
{
	sqlite3_stmt *st = NULL;
	int rc;

	if (sqlite3_prepare_v2(db->h,
			       "SELECT id, started_at, command, status, coalesce(unchanged,0),"
			       " coalesce(changed,0), coalesce(added,0), coalesce(moved,0),"
			       " coalesce(deleted,0), coalesce(files,0), coalesce(errors,0),"
			       " coalesce(wall_s,0), coalesce(yield_s,0)"
			       " FROM scans WHERE command <> 'bench' ORDER BY id DESC LIMIT ?1",
			       -1, &st, NULL) != SQLITE_OK)
		return DB_FAIL(db->h, err, "prepare scan history");
	sqlite3_bind_int(st, 1, n);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct db_scan_row r;
		r.id = sqlite3_column_int64(st, 0);
		r.started_at = (const char *)sqlite3_column_text(st, 1);
		r.command = (const char *)sqlite3_column_text(st, 2);
		r.status = (const char *)sqlite3_column_text(st, 3);
		r.unchanged = sqlite3_column_int64(st, 4);
		r.changed = sqlite3_column_int64(st, 5);
		r.added = sqlite3_column_int64(st, 6);
		r.moved = sqlite3_column_int64(st, 7);
		r.deleted = sqlite3_column_int64(st, 8);
		r.files = sqlite3_column_int64(st, 9);
		r.errors = sqlite3_column_int64(st, 10);
		r.wall_s = sqlite3_column_double(st, 11);
		r.yield_s = sqlite3_column_double(st, 12);
		row(ctx, &r);
	}
	rc = rc == SQLITE_DONE ? SL_OK : DB_FAIL(db->h, err, "scan history");
	sqlite3_finalize(st);
	return rc;
}
