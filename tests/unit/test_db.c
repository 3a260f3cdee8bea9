/* The index on real SQLite files: creation mode, schema version and
 * migrations, upserts, missing-file marking, both export formats. */
#include <sys/stat.h>

#include "db/db.h"
#include "scanner/ftab.h"
#include "tests/unit/test.h"

static char *dir;

static void record(struct px_record *r, const char *path, int read)
{
	memset(r, 0, sizeof(*r));
	r->path = path;
	r->dev = 2049;
	r->ino = 77;
	r->size = 1234;
	r->mtime_ns = 1500000000123456789LL;
	r->phys = 4096 * 10;
	r->fragments = 2;
	r->ext_flags = FT_STATED | FT_LOCATED;
	r->read = read;
	if (read) {
		strcpy(r->hash, "0123456789abcdef0123456789abcdef");
		strcpy(r->meta.format, "jpeg");
		r->meta.have = XM_DIMS | XM_ORIENTATION | XM_GPS | XM_ISO;
		r->meta.width = 4000;
		r->meta.height = 3000;
		r->meta.orientation = 6;
		r->meta.gps_lat = -33.5;
		r->meta.gps_lon = 151.25;
		r->meta.iso = 400;
		strcpy(r->meta.make, "Canon");
		strcpy(r->meta.datetime_original, "2020-01-02T03:04:05");
		r->have_phash = 1;
		r->phash = 0xfedcba9876543210ull; /* above INT64_MAX: stored as its bits */
	}
}

static char *slurp_export(struct db *db, int format)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct sl_err e;
	CHECK_INT(db_export(db, f, format, &e), SL_OK);
	fclose(f);
	return buf;
}

static void test_create_and_export(void)
{
	char path[4096], wal[4200];
	struct db *db = NULL;
	struct px_record r;
	struct sl_err e;
	struct stat st;
	char *out;
	int v;

	snprintf(path, sizeof(path), "%s/sub/dir/index.db", dir);
	CHECK_INT(db_open(path, 1, &db, &e), SL_OK);
	CHECK(stat(path, &st) == 0 && (st.st_mode & 0777) == 0600);
	CHECK_INT(db_user_version(db, &v, &e), SL_OK);
	CHECK_INT(v, DB_SCHEMA_VERSION);
	{
		const char *roots[] = {"/photos"};
		CHECK_INT(db_scan_begin(db, "scan", "auto", roots, 1, 2, &e), SL_OK);
	}
	record(&r, "/photos/a,\"b\".jpg", 1);
	CHECK_INT(db_put(db, &r, &e), SL_OK);
	record(&r, "/photos/bad.jpg", 0);
	r.err_code = SL_E_IO;
	strcpy(r.error, "open: Permission denied");
	CHECK_INT(db_put(db, &r, &e), SL_OK);
	CHECK_INT(db_commit(db, &e), SL_OK);
	snprintf(wal, sizeof(wal), "%s-wal", path);
	CHECK(stat(wal, &st) == 0 && (st.st_mode & 0777) == 0600);

	out = slurp_export(db, DB_JSONL);
	CHECK(strstr(out, "{\"path\":\"/photos/a,\\\"b\\\".jpg\",\"size\":1234,"
			  "\"mtime\":1500000000.12346,\"format\":\"jpeg\",\"width\":4000,"
			  "\"height\":3000,\"make\":\"Canon\",\"model\":null,"
			  "\"datetime_original\":\"2020-01-02T03:04:05\",\"orientation\":6,"
			  "\"gps_lat\":-33.5,\"gps_lon\":151.25,\"exposure_time\":null,"
			  "\"f_number\":null,\"iso\":400,\"focal_length\":null,\"lens_model\":null,"
			  "\"content_hash\":\"0123456789abcdef0123456789abcdef\","
			  "\"phys_offset\":40960,\"fragments\":2,\"error\":null}\n") == out);
	CHECK(strstr(out, "\"path\":\"/photos/bad.jpg\"") != NULL);
	CHECK(strstr(out, "\"content_hash\":null,\"phys_offset\":40960,\"fragments\":2,"
			  "\"error\":\"open: Permission denied\"}") != NULL);
	free(out);

	out = slurp_export(db, DB_JSONL | DB_EXTENDED);
	CHECK(strstr(out, ",\"error\":null,\"phash\":\"fedcba9876543210\",\"warnings\":null,"
			  "\"placement\":\"physical\"}") != NULL);
	free(out);

	out = slurp_export(db, DB_CSV);
	CHECK(strncmp(out, "path,size,mtime,format,width,height,make,model,datetime_original,"
			   "orientation,gps_lat,gps_lon,exposure_time,f_number,iso,focal_length,"
			   "lens_model,content_hash,phys_offset,fragments,error\n"
			   "\"/photos/a,\"\"b\"\".jpg\",1234,",
		      strlen("path,size,mtime,format,width,height,make,model,datetime_original,"
			     "orientation,gps_lat,gps_lon,exposure_time,f_number,iso,focal_length,"
			     "lens_model,content_hash,phys_offset,fragments,error\n"
			     "\"/photos/a,\"\"b\"\".jpg\",1234,")) == 0);
	CHECK(strstr(out, ",Canon,,2020-01-02T03:04:05,6,-33.5,151.25,,,400,,,") != NULL);
	free(out);
	db_close(db);
	db_close(NULL);
}

static void test_upsert_and_missing(void)
{
	char path[4096];
	struct db *db = NULL;
	struct px_record r;
	struct sl_err e;
	const char *roots[] = {"/r/a"};
	uint64_t n = 0;
	char *out;
	int i;

	snprintf(path, sizeof(path), "%s/upsert.db", dir);
	CHECK_INT(db_open(path, 1, &db, &e), SL_OK);
	CHECK_INT(db_scan_begin(db, "scan", "auto", roots, 1, 1, &e), SL_OK);
	{
		const char *paths[] = {"/r/a", "/r/a/x.jpg", "/r/a/sub/y.jpg", "/r/ab/z.jpg",
				       "/r/a.jpg"};
		for (i = 0; i < 5; i++) {
			record(&r, paths[i], 1);
			CHECK_INT(db_put(db, &r, &e), SL_OK);
		}
	}
	CHECK_INT(db_commit(db, &e), SL_OK);
	/* second scan sees only x.jpg again, with new content */
	CHECK_INT(db_scan_begin(db, "scan", "auto", roots, 1, 1, &e), SL_OK);
	record(&r, "/r/a/x.jpg", 1);
	r.size = 999;
	CHECK_INT(db_put(db, &r, &e), SL_OK);
	CHECK_INT(db_mark_missing(db, "/r/a", &n, &e), SL_OK);
	CHECK_INT(n, 2); /* "/r/a" itself and /r/a/sub/y.jpg; not /r/ab or /r/a.jpg */
	out = slurp_export(db, DB_JSONL);
	CHECK(strstr(out, "\"path\":\"/r/a/x.jpg\",\"size\":999,") != NULL);
	CHECK(strstr(out, "/r/a/sub/y.jpg") == NULL);
	CHECK(strstr(out, "/r/ab/z.jpg") != NULL);
	CHECK(strstr(out, "/r/a.jpg") != NULL);
	free(out);
	{
		sqlite3_stmt *st;
		sqlite3_prepare_v2(db->h, "SELECT count(*), sum(first_scan=1), sum(last_scan=2)"
					  " FROM files WHERE path='/r/a/x.jpg'", -1, &st, NULL);
		CHECK(sqlite3_step(st) == SQLITE_ROW);
		CHECK_INT(sqlite3_column_int(st, 0), 1);
		CHECK_INT(sqlite3_column_int(st, 1), 1);
		CHECK_INT(sqlite3_column_int(st, 2), 1);
		sqlite3_finalize(st);
	}
	/* a file coming back is live again */
	CHECK_INT(db_scan_begin(db, "scan", "auto", roots, 1, 1, &e), SL_OK);
	record(&r, "/r/a/sub/y.jpg", 1);
	CHECK_INT(db_put(db, &r, &e), SL_OK);
	CHECK_INT(db_commit(db, &e), SL_OK);
	out = slurp_export(db, DB_JSONL);
	CHECK(strstr(out, "/r/a/sub/y.jpg") != NULL);
	free(out);
	/* the root "/" covers everything */
	CHECK_INT(db_mark_missing(db, "/", &n, &e), SL_OK);
	CHECK_INT(n, 3); /* x.jpg, z.jpg, a.jpg: not y.jpg, seen by this scan */
	db_close(db);
}

static void test_scan_rows(void)
{
	char path[4096];
	struct db *db = NULL;
	struct sl_err e;
	const char *roots[] = {"/a", "/b \"quoted\""};
	struct db_device_row d = {"sda", "ext4 on /a", 1, 1, "physical", "because", 10, 100, 1.5};
	struct db_scan_end end;
	sqlite3_stmt *st;

	snprintf(path, sizeof(path), "%s/scans.db", dir);
	CHECK_INT(db_open(path, 1, &db, &e), SL_OK);
	CHECK_INT(db_scan_begin(db, "scan", "physical", roots, 2, 4, &e), SL_OK);
	CHECK_INT(db_scan_device(db, &d, &e), SL_OK);
	memset(&end, 0, sizeof(end));
	end.status = "ok";
	end.files = 10;
	end.read_s = 1.5;
	CHECK_INT(db_scan_end(db, &end, &e), SL_OK);
	sqlite3_prepare_v2(db->h,
			   "SELECT s.status, s.order_requested, json_array_length(s.roots),"
			   " s.finished_at IS NOT NULL, d.order_used, d.read_s"
			   " FROM scans s JOIN scan_devices d ON d.scan_id = s.id",
			   -1, &st, NULL);
	CHECK(sqlite3_step(st) == SQLITE_ROW);
	CHECK_STR((const char *)sqlite3_column_text(st, 0), "ok");
	CHECK_STR((const char *)sqlite3_column_text(st, 1), "physical");
	CHECK_INT(sqlite3_column_int(st, 2), 2);
	CHECK_INT(sqlite3_column_int(st, 3), 1);
	CHECK_STR((const char *)sqlite3_column_text(st, 4), "physical");
	CHECK(sqlite3_column_double(st, 5) == 1.5);
	sqlite3_finalize(st);
	db_close(db);
}

static void test_upgrade_from_v1(void)
{
	char path[4096];
	struct db *db = NULL;
	struct sl_err e;
	sqlite3 *h;
	sqlite3_stmt *st;
	int v = 0;

	/* a database as version 1 left it, with a file in it */
	snprintf(path, sizeof(path), "%s/v1.db", dir);
	CHECK(sqlite3_open(path, &h) == SQLITE_OK);
	CHECK_INT(db_migrate_to(h, 1, &e), SL_OK);
	CHECK(sqlite3_exec(h, "INSERT INTO files(path, size, first_scan, last_scan, indexed_at)"
			      " VALUES('/old/a.jpg', 7, 1, 1, 'then')", NULL, NULL, NULL) == SQLITE_OK);
	sqlite3_close(h);
	/* opening it upgrades it and keeps what it held */
	CHECK_INT(db_open(path, 0, &db, &e), SL_OK);
	CHECK_INT(db_user_version(db, &v, &e), SL_OK);
	CHECK_INT(v, DB_SCHEMA_VERSION);
	CHECK(v >= 2);
	sqlite3_prepare_v2(db->h, "SELECT size, phash IS NULL FROM files WHERE path='/old/a.jpg'", -1,
			   &st, NULL);
	CHECK(sqlite3_step(st) == SQLITE_ROW);
	CHECK_INT(sqlite3_column_int(st, 0), 7);
	CHECK_INT(sqlite3_column_int(st, 1), 1);
	sqlite3_finalize(st);
	db_close(db);
}

static void test_versions(void)
{
	char path[4096];
	struct db *db = NULL;
	struct sl_err e;
	sqlite3 *h;

	/* an empty file is schema 0 and gets migrated */
	snprintf(path, sizeof(path), "%s/old.db", dir);
	t_write(path, "", 0);
	CHECK_INT(db_open(path, 0, &db, &e), SL_OK);
	db_close(db);
	/* a newer schema is refused, untouched */
	sqlite3_open(path, &h);
	sqlite3_exec(h, "PRAGMA user_version=99", NULL, NULL, NULL);
	sqlite3_close(h);
	db = NULL;
	CHECK_INT(db_open(path, 1, &db, &e), SL_E_DB);
	CHECK(db == NULL);
	CHECK(strstr(e.msg, "schema version 99 is newer") != NULL);
	/* no database and not asked to create one */
	snprintf(path, sizeof(path), "%s/none.db", dir);
	CHECK_INT(db_open(path, 0, &db, &e), SL_E_DB);
	CHECK(strstr(e.msg, "no index at") != NULL);
	CHECK(access(path, F_OK) != 0);
	/* somewhere it cannot be created */
	CHECK_INT(db_open("/proc/seekless/x.db", 1, &db, &e), SL_E_DB);
	CHECK(strstr(e.msg, "cannot create") != NULL);
}

int main(void)
{
	dir = t_tmpdir("db");
	RUN(test_create_and_export);
	RUN(test_upsert_and_missing);
	RUN(test_scan_rows);
	RUN(test_upgrade_from_v1);
	RUN(test_versions);
	t_rmtree(dir);
	free(dir);
	return t_done();
}
