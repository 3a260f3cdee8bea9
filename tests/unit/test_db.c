/* The index on real SQLite files: creation mode, schema version and
 * migrations, upserts, missing-file marking, both export formats. */

#include "common/sys.h"
#include "db/db.h"
#include "scanner/device.h"
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
	FILE *f = tmpfile();
	struct sl_err e;
	long len;
	char *buf;

	CHECK_INT(db_export(db, f, format, &e), SL_OK);
	len = ftell(f);
	buf = calloc(1, (size_t)(len > 0 ? len : 0) + 1);
	rewind(f);
	if (len > 0 && fread(buf, 1, (size_t)len, f) != (size_t)len)
		buf[0] = '\0';
	fclose(f);
	return buf;
}

static void test_create_and_export(void)
{
	char path[4096], wal[4200];
	struct db *db = NULL;
	struct px_record r;
	struct sl_err e;
	char *out;
	int v;

	snprintf(path, sizeof(path), "%s/sub/dir/index.db", dir);
	CHECK_INT(db_open(path, 1, &db, &e), SL_OK);
	CHECK_INT(t_private(path), 1);
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
	CHECK_INT(t_private(wal), 1);

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

static void test_upsert(void)
{
	char path[4096];
	struct db *db = NULL;
	struct px_record r;
	struct sl_err e;
	const char *roots[] = {"/r/a"};
	char *out;

	snprintf(path, sizeof(path), "%s/upsert.db", dir);
	CHECK_INT(db_open(path, 1, &db, &e), SL_OK);
	CHECK_INT(db_scan_begin(db, "scan", "auto", roots, 1, 1, &e), SL_OK);
	record(&r, "/r/a/x.jpg", 1);
	CHECK_INT(db_put(db, &r, &e), SL_OK);
	CHECK_INT(db_commit(db, &e), SL_OK);
	CHECK_INT(db_scan_begin(db, "scan", "auto", roots, 1, 1, &e), SL_OK);
	record(&r, "/r/a/x.jpg", 1);
	r.size = 999;
	CHECK_INT(db_put(db, &r, &e), SL_OK);
	CHECK_INT(db_commit(db, &e), SL_OK);
	out = slurp_export(db, DB_JSONL);
	CHECK(strstr(out, "\"path\":\"/r/a/x.jpg\",\"size\":999,") != NULL);
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
	db_close(db);
}

/* ---- the incremental diff, on a synthetic walk ---------------------------- */

static uint32_t walk_file(struct ftab *ft, uint32_t parent, const char *name, uint64_t ino,
			  uint64_t size, int64_t mtime)
{
	uint32_t id;
	ftab_add_file(ft, parent, name, strlen(name), ino, 0, &id, NULL);
	ft->files[id].size = size;
	ft->files[id].mtime_ns = mtime;
	ft->files[id].flags = FT_STATED;
	return id;
}

static void store(struct db *db, const char *path, uint64_t ino, uint64_t size, int64_t mtime,
		  const char *hash, int error)
{
	struct px_record r;
	struct sl_err e;
	record(&r, path, 1);
	r.ino = ino;
	r.dev = 2049;
	r.size = size;
	r.mtime_ns = mtime;
	r.devi = 0;
	snprintf(r.hash, sizeof(r.hash), "%s", hash);
	if (error) {
		r.err_code = SL_E_IO;
		strcpy(r.error, "read at offset 0: Input/output error");
	}
	CHECK_INT(db_put(db, &r, &e), SL_OK);
}

static int64_t count_where(struct db *db, const char *where)
{
	char sql[512];
	sqlite3_stmt *st;
	int64_t n = -1;
	snprintf(sql, sizeof(sql), "SELECT count(*) FROM files WHERE %s", where);
	sqlite3_prepare_v2(db->h, sql, -1, &st, NULL);
	if (sqlite3_step(st) == SQLITE_ROW)
		n = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return n;
}

static void test_diff(void)
{
	char path[4096];
	struct db *db = NULL;
	struct sl_err e;
	struct ftab ft;
	struct dev_info dev;
	struct db_diff d;
	char *roots[] = {(char *)"/p"};
	uint32_t root, same, changed, renamed, link, fresh, failed, swap_a, swap_b, far;
	uint16_t dv;
	uint64_t deleted = 0;
	const char *h1 = "11111111111111111111111111111111", *h2 = "22222222222222222222222222222222";

	snprintf(path, sizeof(path), "%s/diff.db", dir);
	CHECK_INT(db_open(path, 1, &db, &e), SL_OK);
	memset(&dev, 0, sizeof(dev));
	dev.st_dev = 2049;
	strcpy(dev.fs_id, "uuid:test-fs");
	strcpy(dev.fstype, "ext4");
	/* scan 1: what the index knew */
	CHECK_INT(db_scan_begin(db, "scan", "auto", (const char *const *)roots, 1, 1, &e), SL_OK);
	CHECK_INT(db_map_fs(db, &dev, 1, &e), SL_OK);
	store(db, "/p/same.jpg", 10, 100, 1000, h1, 0);
	store(db, "/p/changed.jpg", 11, 100, 1000, h1, 0);
	store(db, "/p/old-name.jpg", 12, 300, 3000, h1, 0);
	store(db, "/p/linked.jpg", 13, 400, 4000, h1, 0);
	store(db, "/p/gone.jpg", 14, 500, 5000, h1, 0);
	store(db, "/p/elsewhere.jpg", 15, 600, 6000, h2, 0);
	store(db, "/p/failed.jpg", 16, 700, 7000, "", 1);
	store(db, "/p/a.jpg", 17, 800, 8000, h1, 0);
	store(db, "/p/b.jpg", 18, 900, 9000, h1, 0);
	store(db, "/q/outside.jpg", 19, 1, 1, h1, 0); /* not under the root */
	CHECK_INT(db_commit(db, &e), SL_OK);

	/* scan 2: what the walk finds now */
	ftab_init(&ft);
	ftab_dev(&ft, 2049, &dv, NULL);
	ftab_add_dir(&ft, FT_NONE, "/p", 2, &root, NULL);
	same = walk_file(&ft, root, "same.jpg", 10, 100, 1000);
	changed = walk_file(&ft, root, "changed.jpg", 11, 101, 1001);
	renamed = walk_file(&ft, root, "new-name.jpg", 12, 300, 3000);
	link = walk_file(&ft, root, "hardlink.jpg", 13, 400, 4000); /* linked.jpg still there */
	walk_file(&ft, root, "linked.jpg", 13, 400, 4000);
	fresh = walk_file(&ft, root, "fresh.jpg", 30, 600, 7777); /* elsewhere.jpg's content */
	failed = walk_file(&ft, root, "failed.jpg", 16, 700, 7000);
	swap_a = walk_file(&ft, root, "a.jpg", 18, 900, 9000); /* a and b swapped names */
	swap_b = walk_file(&ft, root, "b.jpg", 17, 800, 8000);
	far = walk_file(&ft, root, "new.jpg", 40, 50, 50);
	CHECK_INT(db_scan_begin(db, "scan", "auto", (const char *const *)roots, 1, 1, &e), SL_OK);
	CHECK_INT(db_map_fs(db, &dev, 1, &e), SL_OK);
	CHECK_INT(db_diff(db, &ft, roots, 1, &d, &e), SL_OK);

	CHECK(ft.files[same].flags & FT_SKIP);
	CHECK(!(ft.files[changed].flags & (FT_SKIP | FT_NEW)));
	CHECK(ft.files[renamed].flags & FT_SKIP);
	CHECK(ft.files[link].flags & FT_NEW);          /* a second path, read */
	CHECK(ft.files[fresh].flags & FT_NEW);
	CHECK(!(ft.files[failed].flags & FT_SKIP));   /* an earlier error: retried */
	CHECK(!(ft.files[swap_a].flags & FT_SKIP));   /* same path, other inode: changed */
	CHECK(!(ft.files[swap_b].flags & FT_SKIP));
	CHECK(ft.files[far].flags & FT_NEW);
	CHECK_INT(d.unchanged, 2); /* same.jpg, linked.jpg */
	CHECK_INT(d.changed, 4);   /* changed, failed, a, b */
	CHECK_INT(d.moved, 1);
	CHECK_INT(d.added, 3);     /* hardlink, fresh, new */
	CHECK_INT(d.nmissing, 2);  /* gone.jpg, elsewhere.jpg; not /q/outside.jpg */

	/* the rename keeps its record; the new file takes over elsewhere.jpg's */
	CHECK_INT(db_apply_moves(db, &ft, &d, &e), SL_OK);
	CHECK_INT(count_where(db, "path='/p/new-name.jpg' AND first_scan=1"), 1);
	CHECK_INT(count_where(db, "path='/p/old-name.jpg'"), 0);
	CHECK_INT(db_relink_candidates(db, &d, &e), SL_OK);
	{
		struct px_record r;
		record(&r, "/p/fresh.jpg", 1);
		r.size = 600;
		r.ext_flags |= FT_NEW;
		strcpy(r.hash, h2);
		CHECK_INT(db_put(db, &r, &e), SL_OK);
		CHECK_INT(db_commit(db, &e), SL_OK);
	}
	CHECK_INT(db->relinked, 1);
	CHECK_INT(count_where(db, "path='/p/fresh.jpg' AND first_scan=1"), 1);
	CHECK_INT(db_mark_deleted(db, &d, &deleted, &e), SL_OK);
	CHECK_INT(deleted, 1); /* gone.jpg only */
	CHECK_INT(count_where(db, "path='/p/gone.jpg' AND deleted_at IS NOT NULL"), 1);
	CHECK_INT(count_where(db, "path='/q/outside.jpg' AND deleted_at IS NULL"), 1);
	CHECK_INT(count_where(db, "1"), 10);

	/* a file system seen again under another device number: unchanged,
	 * only its device number is refreshed */
	db_diff_free(&d);
	dev.st_dev = 4242;
	ft.devs[0].st_dev = 4242;
	CHECK_INT(db_scan_begin(db, "scan", "auto", (const char *const *)roots, 1, 1, &e), SL_OK);
	CHECK_INT(db_map_fs(db, &dev, 1, &e), SL_OK);
	{
		size_t i;
		for (i = 0; i < ft.nfiles; i++)
			ft.files[i].flags &= (uint16_t)~(FT_SKIP | FT_NEW);
	}
	CHECK_INT(db_diff(db, &ft, roots, 1, &d, &e), SL_OK);
	CHECK(ft.files[same].flags & FT_SKIP);
	CHECK(d.nmoves >= 1);
	CHECK_INT(db_apply_moves(db, &ft, &d, &e), SL_OK);
	CHECK_INT(count_where(db, "path='/p/same.jpg' AND dev=4242"), 1);
	db_diff_free(&d);
	ftab_free(&ft);
	db_close(db);
}

static void test_lock(void)
{
	char path[4096];
	struct db *a = NULL, *b = NULL;
	struct sl_err e;
	sqlite3_stmt *st;

	snprintf(path, sizeof(path), "%s/lock.db", dir);
	CHECK_INT(db_open(path, 1, &a, &e), SL_OK);
	CHECK_INT(db_lock(a, &e), SL_OK);
	CHECK_INT(db_scan_begin(a, "scan", "auto", NULL, 0, 1, &e), SL_OK);
	CHECK_INT(db_open(path, 1, &b, &e), SL_OK);
	CHECK_INT(db_lock(b, &e), SL_E_RESOURCE);
	CHECK(strstr(e.msg, "another seekless (pid ") != NULL);
	CHECK(strstr(e.msg, "is scanning the index") != NULL);
	db_close(a); /* as if killed: the scan row stays 'running' */
	CHECK_INT(db_lock(b, &e), SL_OK);
	sqlite3_prepare_v2(b->h, "SELECT status, message FROM scans", -1, &st, NULL);
	CHECK(sqlite3_step(st) == SQLITE_ROW);
	CHECK_STR((const char *)sqlite3_column_text(st, 0), "interrupted");
	CHECK(strstr((const char *)sqlite3_column_text(st, 1), "killed") != NULL);
	sqlite3_finalize(st);
	db_close(b);
}

/* The change-journal positions survive closing and reopening, one per
 * volume, replaced on update. */
static void test_journals(void)
{
	char path[4096];
	struct db *db = NULL;
	struct sl_err e;
	uint64_t id = 0;
	int64_t usn = 0;
	int found = -1;

	snprintf(path, sizeof(path), "%s/journals.db", dir);
	CHECK_INT(db_open(path, 1, &db, &e), SL_OK);
	CHECK_INT(db_journal_get(db, "serial:1234-ABCD", &id, &usn, &found, &e), SL_OK);
	CHECK_INT(found, 0);
	CHECK_INT(db_journal_put(db, "serial:1234-ABCD", 0x01d9f00dcafe0001ull, 4096, &e), SL_OK);
	CHECK_INT(db_journal_put(db, "serial:0000-0001", 7, 8, &e), SL_OK);
	CHECK_INT(db_journal_put(db, "serial:1234-ABCD", 0x01d9f00dcafe0001ull, 8192, &e), SL_OK);
	db_close(db);
	CHECK_INT(db_open(path, 0, &db, &e), SL_OK);
	CHECK_INT(db_journal_get(db, "serial:1234-ABCD", &id, &usn, &found, &e), SL_OK);
	CHECK_INT(found, 1);
	CHECK(id == 0x01d9f00dcafe0001ull);
	CHECK_INT(usn, 8192);
	CHECK_INT(db_journal_get(db, "serial:0000-0001", &id, &usn, &found, &e), SL_OK);
	CHECK(found == 1 && id == 7 && usn == 8);
	db_close(db);
}

/* A disk that fails (EIO) or fills up (ENOSPC) under the index: the
 * failing commit says so (the full disk with what to do), committed rows
 * survive, the file passes its integrity check, and once the disk is good
 * again the same scan can go on. */
static void write_fault(enum db_fault kind, const char *name, const char *want)
{
	char path[4096], p[64];
	const char *roots[] = {"/f"};
	struct db *db = NULL;
	struct px_record r;
	struct sl_err e;
	sqlite3 *h;
	sqlite3_stmt *st;
	int i, rc = SL_OK, count = -1, ok = 0;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	db_inject(DB_FAULT_NONE, 0);
	CHECK_INT(db_open(path, 1, &db, &e), SL_OK);
	CHECK_INT(db_scan_begin(db, "scan", "auto", roots, 1, 1, &e), SL_OK);
	for (i = 0; i < 50; i++) {
		snprintf(p, sizeof(p), "/f/%03d.jpg", i);
		record(&r, p, 1);
		CHECK_INT(db_put(db, &r, &e), SL_OK);
	}
	CHECK_INT(db_commit(db, &e), SL_OK);
	db_inject(kind, 3); /* a few more pages, then the disk fails */
	for (i = 50; i < 5000 && rc == SL_OK; i++) {
		snprintf(p, sizeof(p), "/f/%03d.jpg", i);
		record(&r, p, 1);
		rc = db_put(db, &r, &e);
	}
	if (rc == SL_OK)
		rc = db_commit(db, &e);
	CHECK_INT(rc, SL_E_DB);
	CHECK(strstr(e.msg, want) != NULL);
	if (!strstr(e.msg, want))
		fprintf(stderr, "  message: %s\n", e.msg);
	db_close(db);
	db_inject(DB_FAULT_NONE, 0);

	CHECK(sqlite3_open(path, &h) == SQLITE_OK);
	if (sqlite3_prepare_v2(h, "PRAGMA integrity_check", -1, &st, NULL) == SQLITE_OK) {
		ok = sqlite3_step(st) == SQLITE_ROW &&
		     strcmp((const char *)sqlite3_column_text(st, 0), "ok") == 0;
		sqlite3_finalize(st);
	}
	if (sqlite3_prepare_v2(h, "SELECT count(*) FROM files", -1, &st, NULL) == SQLITE_OK) {
		if (sqlite3_step(st) == SQLITE_ROW)
			count = sqlite3_column_int(st, 0);
		sqlite3_finalize(st);
	}
	sqlite3_close(h);
	CHECK(ok);
	CHECK(count >= 50 && count < 5000);

	/* the disk is fine again: the next run writes */
	CHECK_INT(db_open(path, 1, &db, &e), SL_OK);
	CHECK_INT(db_scan_begin(db, "scan", "auto", roots, 1, 1, &e), SL_OK);
	record(&r, "/f/after.jpg", 1);
	CHECK_INT(db_put(db, &r, &e), SL_OK);
	CHECK_INT(db_commit(db, &e), SL_OK);
	db_close(db);
}

static void test_write_faults(void)
{
	write_fault(DB_FAULT_IOERR, "eio.db", "disk I/O error");
	write_fault(DB_FAULT_FULL, "full.db", "free space on the database's disk");
}

/* Near groups equal the connected components of "within bits" found by
 * comparing every pair, on random hashes with planted clusters: copies a
 * few bits away, a chain whose ends are further apart than bits, and many
 * equal hashes. */
static uint32_t uf_find(uint32_t *up, uint32_t i)
{
	while (up[i] != i)
		i = up[i] = up[up[i]];
	return i;
}

static void test_near_groups(void)
{
	enum { N = 3000 };
	static uint64_t h[N];
	static uint32_t got[N], want[N];
	uint64_t seed = 42;
	size_t i, j;
	int bits, b, ok;

	for (i = 0; i < N; i++) {
		seed = seed * 6364136223846793005ull + 1442695040888963407ull;
		h[i] = seed ^ (seed >> 29) * 0x9e3779b97f4a7c15ull;
	}
	for (i = 0; i < 300; i++) /* copies 1-4 bits away */
		h[N - 1 - i] = h[i] ^ (1ull << (i % 64)) ^ (i % 4 ? 1ull << ((i * 7) % 64) : 0);
	for (i = 300; i < 310; i++) /* a chain: each 3 bits from the last */
		h[i + 1] = h[i] ^ (7ull << (i % 60));
	for (i = 400; i < 500; i++) /* one picture many times */
		h[i] = h[400];
	for (bits = 0; bits <= 8; bits += 4) {
		CHECK_INT(db_near_groups(h, N, bits, got), 0);
		for (i = 0; i < N; i++)
			want[i] = (uint32_t)i;
		for (i = 0; i < N; i++)
			for (j = i + 1; j < N; j++) {
				uint64_t x = h[i] ^ h[j];
				for (b = 0; x; x &= x - 1)
					b++;
				if (b <= bits) {
					uint32_t ri = uf_find(want, (uint32_t)i);
					uint32_t rj = uf_find(want, (uint32_t)j);
					if (ri != rj)
						want[ri > rj ? ri : rj] = ri < rj ? ri : rj;
				}
			}
		ok = 1;
		for (i = 0; i < N; i++)
			if (got[i] != uf_find(want, (uint32_t)i))
				ok = 0;
		CHECK(ok);
	}
	CHECK(got[0] == got[N - 1]);   /* planted copies, at bits 8 */
	CHECK(got[300] == got[310]);   /* the chain's ends, through its links */
	CHECK_INT(db_near_groups(h, N, 17, got), -1);
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
	CHECK(sys_fopen(path, "rb") == NULL);
	/* somewhere it cannot be created: below a regular file */
	snprintf(path, sizeof(path), "%s/a-file", dir);
	t_write(path, "x", 1);
	snprintf(path, sizeof(path), "%s/a-file/sub/x.db", dir);
	CHECK_INT(db_open(path, 1, &db, &e), SL_E_DB);
	CHECK(strstr(e.msg, "cannot create") != NULL);
}

int main(void)
{
	dir = t_tmpdir("db");
	RUN(test_create_and_export);
	RUN(test_upsert);
	RUN(test_diff);
	RUN(test_lock);
	RUN(test_scan_rows);
	RUN(test_journals);
	RUN(test_write_faults);
	RUN(test_near_groups);
	RUN(test_upgrade_from_v1);
	RUN(test_versions);
	t_rmtree(dir);
	free(dir);
	return t_done();
}
