/* export.c - one record per live file, as JSON lines or CSV.
 *
 * JSON objects are built by SQLite's json_object, so quoting and number
 * formatting follow one implementation; CSV follows RFC 4180. */
#include <string.h>

#include "common/strbuf.h"
#include "db/db.h"

/* The export contract: these keys, in this order, null where unknown. */
static const struct {
	const char *key;
	const char *expr;
} cols[] = {
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
static const struct {
	const char *key;
	const char *expr;
} extra[] = {
	{"phash", "CASE WHEN phash IS NULL THEN NULL ELSE printf('%016llx', phash) END"},
	{"warnings", "warnings"},
	{"placement", "placement"},
};
#define NCOLS (sizeof(cols) / sizeof(cols[0]))
#define NEXTRA (sizeof(extra) / sizeof(extra[0]))

static const char *col_key(size_t i)
{
	return i < NCOLS ? cols[i].key : extra[i - NCOLS].key;
}

static const char *col_expr(size_t i)
{
	return i < NCOLS ? cols[i].expr : extra[i - NCOLS].expr;
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
static int build_sql(int csv, size_t ncols, struct strbuf *sql)
{
	size_t i;

	sb_adds(sql, csv ? "SELECT " : "SELECT json_object(");
	for (i = 0; i < ncols; i++) {
		if (i)
			sb_addc(sql, ',');
		if (csv)
			sb_adds(sql, col_expr(i));
		else
			sb_addf(sql, "'%s',%s", col_key(i), col_expr(i));
	}
	sb_adds(sql, csv ? "" : ")");
	sb_adds(sql, " FROM files WHERE deleted_at IS NULL ORDER BY path");
	return sql->oom ? -1 : 0;
}

int db_export(struct db *db, FILE *out, int format, struct sl_err *err)
{
	struct strbuf sql = STRBUF_INIT;
	sqlite3_stmt *st = NULL;
	int csv = (format & DB_CSV) != 0;
	size_t i, ncols = NCOLS + ((format & DB_EXTENDED) ? NEXTRA : 0);
	int rc;

	if (build_sql(csv, ncols, &sql) != 0) {
		sb_free(&sql);
		return SL_FAIL(err, SL_E_NOMEM, 0, "export: out of memory");
	}
	rc = sqlite3_prepare_v2(db->h, sql.p, -1, &st, NULL);
	sb_free(&sql);
	if (rc != SQLITE_OK)
		return DB_FAIL(db->h, err, "prepare export");
	if (csv) {
		for (i = 0; i < ncols; i++)
			fprintf(out, "%s%s", i ? "," : "", col_key(i));
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
