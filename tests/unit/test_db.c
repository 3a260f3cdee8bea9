/* The index on real SQLite files: creation mode, schema version and
 * migrations, upserts, missing-file marking, both export formats. */

#include "common/sys.h"
#include "db/benchruns.h"
#include "db/db_int.h"
#include "scanner/device.h"
#include "indexer/formats/desc.h"
#include "indexer/formats/phash.h"
#include "scanner/ftab.h"
#include "tests/unit/test.h"

#define XSTR_(x) #x
#define XSTR(x) XSTR_(x)

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
		strcpy(r->meta.tz_offset, "+02:00");
		strcpy(r->meta.subsec, "07");
		r->meta.duration = 12.5;
		r->meta.have |= XM_DURATION;
		strcpy(r->meta.content_id, "AB-CD");
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
	/* the descriptive fields: lists as JSON arrays (escaped), the best
	 * source only, creators joined, a duplicate keyword once */
	CHECK_INT(desc_rating(&r.meta, DS_XMP, 4), SL_OK);
	CHECK_INT(desc_add(&r.meta, DF_LABEL, DS_XMP, "Red", 3), SL_OK);
	CHECK_INT(desc_add(&r.meta, DF_KEYWORD, DS_XMP, "sea \"blue\"", 10), SL_OK);
	CHECK_INT(desc_add(&r.meta, DF_KEYWORD, DS_XMP, "beach", 5), SL_OK);
	CHECK_INT(desc_add(&r.meta, DF_KEYWORD, DS_IPTC, "beach", 5), SL_OK);
	CHECK_INT(desc_add(&r.meta, DF_HIER, DS_XMP, "Places|Sea", 10), SL_OK);
	CHECK_INT(desc_add(&r.meta, DF_TITLE, DS_IPTC, "Old title", 9), SL_OK);
	CHECK_INT(desc_add(&r.meta, DF_TITLE, DS_XMP, "Bay", 3), SL_OK);
	CHECK_INT(desc_add(&r.meta, DF_DESCRIPTION, DS_EXIF, "  Caption\t ", 11), SL_OK);
	CHECK_INT(desc_add(&r.meta, DF_CREATOR, DS_XMP, "Ann", 3), SL_OK);
	CHECK_INT(desc_add(&r.meta, DF_CREATOR, DS_XMP, "Bob", 3), SL_OK);
	CHECK_INT(desc_add(&r.meta, DF_COPYRIGHT, DS_EXIF, "(c) Ann", 7), SL_OK);
	CHECK_INT(db_put(db, &r, &e), SL_OK);
	x_meta_release(&r.meta);
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
			  "\"phys_offset\":40960,\"fragments\":2,\"error\":null,"
			  "\"tz_offset\":\"+02:00\",\"subsec\":\"07\",\"duration\":12.5,"
			  "\"content_id\":\"AB-CD\",\"rating\":4,\"label\":\"Red\","
			  "\"keywords\":[\"sea \\\"blue\\\"\",\"beach\"],"
			  "\"hierarchical_keywords\":[\"Places|Sea\"],\"title\":\"Bay\","
			  "\"description\":\"Caption\",\"creator\":\"Ann; Bob\","
			  "\"copyright\":\"(c) Ann\",\"sidecar\":null,\"embedded_video\":null}\n") == out);
	CHECK(strstr(out, "\"path\":\"/photos/bad.jpg\"") != NULL);
	CHECK(strstr(out, "\"content_hash\":null,\"phys_offset\":40960,\"fragments\":2,"
			  "\"error\":\"open: Permission denied\",\"tz_offset\":null,\"subsec\":null,"
			  "\"duration\":null,\"content_id\":null,\"rating\":null,\"label\":null,"
			  "\"keywords\":null,\"hierarchical_keywords\":null,\"title\":null,"
			  "\"description\":null,\"creator\":null,\"copyright\":null,\"sidecar\":null,\"embedded_video\":null}") != NULL);
	free(out);

	out = slurp_export(db, DB_JSONL | DB_EXTENDED);
	CHECK(strstr(out, ",\"error\":null,\"tz_offset\":\"+02:00\",\"subsec\":\"07\","
			  "\"duration\":12.5,\"content_id\":\"AB-CD\",\"rating\":4,"
			  "\"label\":\"Red\",\"keywords\":[\"sea \\\"blue\\\"\",\"beach\"],"
			  "\"hierarchical_keywords\":[\"Places|Sea\"],\"title\":\"Bay\","
			  "\"description\":\"Caption\",\"creator\":\"Ann; Bob\","
			  "\"copyright\":\"(c) Ann\",\"sidecar\":null,\"embedded_video\":null,"
			  "\"phash\":\"fedcba9876543210\",\"phash_src\":null,"
			  "\"warnings\":null,\"placement\":\"physical\",\"meta_version\":" XSTR(X_META_VERSION) "}") != NULL);
	free(out);

	out = slurp_export(db, DB_CSV);
	CHECK(strncmp(out, "path,size,mtime,format,width,height,make,model,datetime_original,"
			   "orientation,gps_lat,gps_lon,exposure_time,f_number,iso,focal_length,"
			   "lens_model,content_hash,phys_offset,fragments,error,tz_offset,subsec,"
			   "duration,content_id,rating,label,keywords,hierarchical_keywords,title,"
			   "description,creator,copyright,sidecar,embedded_video\n"
			   "\"/photos/a,\"\"b\"\".jpg\",1234,",
		      strlen("path,size,mtime,format,width,height,make,model,datetime_original,"
			     "orientation,gps_lat,gps_lon,exposure_time,f_number,iso,focal_length,"
			     "lens_model,content_hash,phys_offset,fragments,error,tz_offset,subsec,"
			   "duration,content_id,rating,label,keywords,hierarchical_keywords,title,"
			   "description,creator,copyright,sidecar,embedded_video\n"
			     "\"/photos/a,\"\"b\"\".jpg\",1234,")) == 0);
	CHECK(strstr(out, ",Canon,,2020-01-02T03:04:05,6,-33.5,151.25,,,400,,,") != NULL);
	CHECK(strstr(out, ",AB-CD,4,Red,\"sea \"\"blue\"\"; beach\",Places|Sea,Bay,Caption,"
			  "Ann; Bob,(c) Ann,,\n") != NULL);
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
	r.stat_wall_ns = 1700000000000000000ll; /* read long after its last change */
	r.devi = 0;
	snprintf(r.hash, sizeof(r.hash), "%s", hash);
	if (error) {
		r.err_code = SL_E_IO;
		strcpy(r.error, "read at offset 0: Input/output error");
	}
	CHECK_INT(db_put(db, &r, &e), SL_OK);
}

static int64_t count_sql(struct db *db, const char *table, const char *where)
{
	char sql[512];
	sqlite3_stmt *st;
	int64_t n = -1;
	snprintf(sql, sizeof(sql), "SELECT count(*) FROM %s WHERE %s", table, where);
	sqlite3_prepare_v2(db->h, sql, -1, &st, NULL);
	if (sqlite3_step(st) == SQLITE_ROW)
		n = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return n;
}

static int64_t count_where_fs(struct db *db, const char *where)
{
	return count_sql(db, "filesystems", where);
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

/* A fresh index dir/name, and the one ext4 file system its synthetic walks
 * are on (device st_dev, known by fs_id). */
static struct db *diff_db(const char *name, uint64_t st_dev, const char *fs_id,
			  struct dev_info *dev)
{
	char path[4096];
	struct db *db = NULL;
	struct sl_err e;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	CHECK_INT(db_open(path, 1, &db, &e), SL_OK);
	memset(dev, 0, sizeof(*dev));
	dev->st_dev = st_dev;
	snprintf(dev->fs_id, sizeof(dev->fs_id), "%s", fs_id);
	strcpy(dev->fstype, "ext4");
	return db;
}

static void test_diff(void)
{
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

	db = diff_db("diff.db", 2049, "uuid:test-fs", &dev);
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
	CHECK_INT(db_diff(db, &ft, roots, 1, 0, &d, &e), SL_OK);

	CHECK(ft.files[same].flags & FT_SKIP);
	CHECK(!(ft.files[changed].flags & (FT_SKIP | FT_NEW)));
	CHECK(ft.files[renamed].flags & FT_SKIP);
	CHECK(ft.files[link].flags & FT_NEW);          /* a second path, read */
	CHECK(ft.files[fresh].flags & FT_NEW);
	CHECK(!(ft.files[failed].flags & FT_SKIP));   /* an earlier error: retried */
	/* ... on its own: a file it is joined with may be what failed it */
	CHECK(ft.files[failed].links & FT_LINK_ALONE);
	CHECK(!(ft.files[changed].links & FT_LINK_ALONE));
	CHECK(!(ft.files[renamed].links & FT_LINK_ALONE));
	CHECK(!(ft.files[fresh].links & FT_LINK_ALONE));
	/* swapped names: each record follows its file, nothing is read */
	CHECK(ft.files[swap_a].flags & FT_SKIP);
	CHECK(ft.files[swap_b].flags & FT_SKIP);
	CHECK(ft.files[far].flags & FT_NEW);
	CHECK_INT(d.unchanged, 2); /* same.jpg, linked.jpg */
	CHECK_INT(d.changed, 1);   /* changed */
	CHECK_INT(d.retried, 1);   /* failed: nothing changed, its error is why */
	CHECK_INT(d.moved, 3);     /* old-name, a, b */
	CHECK_INT(d.added, 3);     /* hardlink, fresh, new */
	CHECK_INT(d.nmissing, 2);  /* gone.jpg, elsewhere.jpg; not /q/outside.jpg */

	/* the rename keeps its record; the new file takes over elsewhere.jpg's */
	CHECK_INT(db_apply_moves(db, &ft, &d, &e), SL_OK);
	CHECK_INT(count_where(db, "path='/p/new-name.jpg' AND first_scan=1"), 1);
	CHECK_INT(count_where(db, "path='/p/old-name.jpg'"), 0);
	CHECK_INT(count_where(db, "path='/p/a.jpg' AND ino=18 AND size=900"), 1);
	CHECK_INT(count_where(db, "path='/p/b.jpg' AND ino=17 AND size=800"), 1);
	CHECK_INT(db_relink_candidates(db, &d, roots, 1, &e), SL_OK);
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
	CHECK_INT(db_diff(db, &ft, roots, 1, 0, &d, &e), SL_OK);
	CHECK(ft.files[same].flags & FT_SKIP);
	CHECK(d.nmoves >= 1);
	CHECK_INT(db_apply_moves(db, &ft, &d, &e), SL_OK);
	CHECK_INT(count_where(db, "path='/p/same.jpg' AND dev=4242"), 1);
	db_diff_free(&d);
	ftab_free(&ft);
	db_close(db);
}

/* One scan of the synthetic walk in ft against db: diff, moves, the
 * records of the files read (as the pipeline would store them), deletions. */
static void rescan(struct db *db, struct ftab *ft, struct dev_info *dev, char **roots, int flags,
		   struct db_diff *d, uint64_t *deleted)
{
	struct sl_err e;
	size_t i;
	CHECK_INT(db_scan_begin(db, "scan", "auto", (const char *const *)roots, 1, 1, &e), SL_OK);
	CHECK_INT(db_map_fs(db, dev, 1, &e), SL_OK);
	for (i = 0; i < ft->nfiles; i++)
		ft->files[i].flags &= (uint16_t)~(FT_SKIP | FT_NEW | FT_CTIME | FT_REPLACED);
	ft->stat_begin_ns = 1700000000000000000ll; /* long after these ctimes */
	CHECK_INT(db_diff(db, ft, roots, 1, flags, d, &e), SL_OK);
	CHECK_INT(db_apply_moves(db, ft, d, &e), SL_OK);
	CHECK_INT(db_relink_candidates(db, d, roots, 1, &e), SL_OK);
	for (i = 0; i < ft->nfiles; i++) {
		struct strbuf path = STRBUF_INIT;
		struct px_record r;
		const struct ft_file *f = &ft->files[i];
		if (f->flags & FT_SKIP)
			continue;
		ftab_path(ft, (uint32_t)i, &path);
		record(&r, path.p, 1);
		r.ino = f->ino;
		r.dev = dev->st_dev;
		r.size = f->size;
		r.mtime_ns = f->mtime_ns;
		r.ctime_ns = f->ctime_ns;
		r.btime_ns = f->btime_ns;
		r.stat_wall_ns = 1700000000000000000ll; /* long after these ctimes */
		r.ext_flags = f->flags;
		r.devi = 0;
		snprintf(r.hash, sizeof(r.hash), "%032llx", (unsigned long long)f->ino);
		CHECK_INT(db_put(db, &r, &e), SL_OK);
		sb_free(&path);
	}
	CHECK_INT(db_commit(db, &e), SL_OK);
	CHECK_INT(db_mark_deleted(db, d, deleted, &e), SL_OK);
}

static int64_t id_of(struct db *db, const char *path)
{
	sqlite3_stmt *st;
	int64_t id = -1;
	sqlite3_prepare_v2(db->h, "SELECT id FROM files WHERE path = ?1 AND deleted_at IS NULL", -1,
			   &st, NULL);
	sqlite3_bind_text(st, 1, path, -1, SQLITE_STATIC);
	if (sqlite3_step(st) == SQLITE_ROW)
		id = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return id;
}

/* Two names swapped, then one of them broken before it could be stat'ed
 * (made a directory): the walk saw the other file's inode there.  The
 * record of the file that moved follows it to the other name; the broken
 * name's error does not keep that record at the old name (the model
 * test's seed 989478705). */
static void test_diff_failed_swap(void)
{
	struct db *db = NULL;
	struct sl_err e;
	struct ftab ft;
	struct dev_info dev;
	struct db_diff d;
	char *roots[] = {(char *)"/t"};
	uint32_t root, a, b;
	uint16_t dv;
	uint64_t deleted = 0;
	int64_t ida, idb;

	db = diff_db("failedswap.db", 2050, "uuid:failedswap-fs", &dev);

	ftab_init(&ft);
	ftab_dev(&ft, 2050, &dv, NULL);
	ftab_add_dir(&ft, FT_NONE, "/t", 2, &root, NULL);
	a = walk_file(&ft, root, "A.jpg", 1, 10, 100);
	b = walk_file(&ft, root, "B.jpg", 2, 20, 200);
	rescan(db, &ft, &dev, roots, 0, &d, &deleted);
	db_diff_free(&d);
	ftab_free(&ft);
	ida = id_of(db, "/t/A.jpg");
	idb = id_of(db, "/t/B.jpg");
	CHECK(ida > 0 && idb > 0 && ida != idb);

	/* swapped; A.jpg then made a directory: its stat failed, its inode
	 * is the walk's, file 2's */
	ftab_init(&ft);
	ftab_dev(&ft, 2050, &dv, NULL);
	ftab_add_dir(&ft, FT_NONE, "/t", 2, &root, NULL);
	a = walk_file(&ft, root, "A.jpg", 2, 20, 200);
	b = walk_file(&ft, root, "B.jpg", 1, 10, 100);
	CHECK_INT(ftab_fail(&ft, a, "open: no longer a regular file", &e), SL_OK);
	rescan(db, &ft, &dev, roots, 0, &d, &deleted);
	CHECK_INT(d.moved, 1);
	CHECK(ft.files[b].flags & FT_SKIP); /* moved, same ctime: not read */
	db_diff_free(&d);
	ftab_free(&ft);
	CHECK_INT(id_of(db, "/t/B.jpg"), ida);
	CHECK(id_of(db, "/t/A.jpg") != ida);
	db_close(db);
}

/* An inode number is reused as soon as it is freed: a file replaced, then
 * another moved in from a different file system with the same size and
 * times, gets the old one's number. Its birth time tells it apart, so the
 * replaced file's record is not handed to it as a rename; where either side
 * has no birth time (0: not known), the inode number alone decides. */
static void test_diff_reused_ino(void)
{
	struct db *db = NULL;
	struct sl_err e;
	struct ftab ft;
	struct dev_info dev;
	struct db_diff d;
	char *roots[] = {(char *)"/p"};
	uint32_t root, w, v, z;
	uint16_t dv;
	uint64_t deleted = 0;
	const char *h1 = "11111111111111111111111111111111", *h2 = "22222222222222222222222222222222";

	db = diff_db("reused.db", 2049, "uuid:reused-fs", &dev);
	CHECK_INT(db_scan_begin(db, "scan", "auto", (const char *const *)roots, 1, 1, &e), SL_OK);
	CHECK_INT(db_map_fs(db, &dev, 1, &e), SL_OK);
	store(db, "/p/X.jpg", 5, 10, 100, h1, 0);
	store(db, "/p/Y.jpg", 6, 20, 200, h2, 0);
	store(db, "/p/Z.jpg", 7, 30, 300, h2, 0);
	CHECK_INT(db_commit(db, &e), SL_OK);
	CHECK_INT(sqlite3_exec(db->h,
			       "UPDATE files SET btime_ns = 111 WHERE path = '/p/X.jpg';"
			       "UPDATE files SET btime_ns = 222 WHERE path = '/p/Y.jpg';"
			       "UPDATE files SET btime_ns = 0 WHERE path = '/p/Z.jpg';",
			       NULL, NULL, NULL),
		  SQLITE_OK);

	ftab_init(&ft);
	ftab_dev(&ft, 2049, &dv, NULL);
	ftab_add_dir(&ft, FT_NONE, "/p", 2, &root, NULL);
	w = walk_file(&ft, root, "W.jpg", 5, 10, 100); /* X's number, another file */
	v = walk_file(&ft, root, "V.jpg", 6, 20, 200); /* Y renamed */
	z = walk_file(&ft, root, "Z2.jpg", 7, 30, 300); /* Z renamed; its record has no btime */
	ft.files[w].btime_ns = 333;
	ft.files[v].btime_ns = 222;
	ft.files[z].btime_ns = 444;
	ft.stat_begin_ns = 1700000000000000000ll;
	CHECK_INT(db_scan_begin(db, "scan", "auto", (const char *const *)roots, 1, 1, &e), SL_OK);
	CHECK_INT(db_map_fs(db, &dev, 1, &e), SL_OK);
	CHECK_INT(db_diff(db, &ft, roots, 1, 0, &d, &e), SL_OK);
	CHECK(ft.files[w].flags & FT_NEW);
	CHECK(!(ft.files[w].flags & FT_SKIP));
	CHECK(ft.files[v].flags & FT_SKIP);
	CHECK(ft.files[z].flags & FT_SKIP);
	CHECK_INT(d.moved, 2);
	CHECK_INT(d.added, 1);
	CHECK_INT(d.nmissing, 1); /* X.jpg */
	CHECK_INT(db_apply_moves(db, &ft, &d, &e), SL_OK);
	CHECK_INT(count_where(db, "path='/p/V.jpg' AND btime_ns=222 AND deleted_at IS NULL"), 1);
	/* the record learns the birth time it lacked */
	CHECK_INT(count_where(db, "path='/p/Z2.jpg' AND btime_ns=444 AND deleted_at IS NULL"), 1);
	CHECK_INT(count_where(db, "path='/p/X.jpg' AND btime_ns=111"), 1);
	CHECK_INT(count_where(db, "path='/p/W.jpg'"), 0);
	CHECK_INT(db_commit(db, &e), SL_OK);
	db_diff_free(&d);
	ftab_free(&ft);

	/* a run that cannot learn birth times (statx refused): V unchanged and
	 * not refreshed, Z2 moved; both keep the birth times they have */
	ftab_init(&ft);
	ftab_dev(&ft, 2049, &dv, NULL);
	ftab_add_dir(&ft, FT_NONE, "/p", 2, &root, NULL);
	v = walk_file(&ft, root, "V.jpg", 6, 20, 200);
	z = walk_file(&ft, root, "Z3.jpg", 7, 30, 300);
	ft.files[v].ctime_ns = ft.files[z].ctime_ns = 0;
	CHECK_INT(sqlite3_exec(db->h, "UPDATE files SET ctime_ns = NULL", NULL, NULL, NULL),
		  SQLITE_OK);
	rescan(db, &ft, &dev, roots, 0, &d, &deleted);
	CHECK(ft.files[v].flags & FT_SKIP);
	CHECK(ft.files[z].flags & FT_SKIP);
	CHECK_INT(d.nmoves, 1); /* Z3; nothing to refresh on V */
	CHECK_INT(count_where(db, "path='/p/V.jpg' AND btime_ns=222 AND deleted_at IS NULL"), 1);
	CHECK_INT(count_where(db, "path='/p/Z3.jpg' AND btime_ns=444 AND deleted_at IS NULL"), 1);
	db_diff_free(&d);
	ftab_free(&ft);
	db_close(db);
}

/* A rename onto a path whose record was marked deleted, a rename over a
 * live file, a ctime that moved alone, --full and --trust-mtime. */
static void test_diff_paths(void)
{
	struct db *db = NULL;
	struct sl_err e;
	struct ftab ft;
	struct dev_info dev;
	struct db_diff d;
	char *roots[] = {(char *)"/t"};
	uint32_t root, a, b, c;
	uint16_t dv;
	uint64_t deleted = 0;

	db = diff_db("paths.db", 2050, "uuid:paths-fs", &dev);

	/* scan 1: A.jpg and B.jpg */
	ftab_init(&ft);
	ftab_dev(&ft, 2050, &dv, NULL);
	ftab_add_dir(&ft, FT_NONE, "/t", 2, &root, NULL);
	a = walk_file(&ft, root, "A.jpg", 1, 10, 100);
	b = walk_file(&ft, root, "B.jpg", 2, 20, 200);
	ft.files[a].ctime_ns = 1000;
	ft.files[b].ctime_ns = 2000;
	rescan(db, &ft, &dev, roots, 0, &d, &deleted);
	CHECK_INT(d.added, 2);
	db_diff_free(&d);
	ftab_free(&ft);

	/* scan 2: rm B.jpg */
	ftab_init(&ft);
	ftab_dev(&ft, 2050, &dv, NULL);
	ftab_add_dir(&ft, FT_NONE, "/t", 2, &root, NULL);
	a = walk_file(&ft, root, "A.jpg", 1, 10, 100);
	ft.files[a].ctime_ns = 1000;
	rescan(db, &ft, &dev, roots, 0, &d, &deleted);
	CHECK_INT(deleted, 1);
	db_diff_free(&d);
	ftab_free(&ft);

	/* scan 3: mv A.jpg B.jpg, onto the deleted record's path (the rename
	 * moves the ctime): the record follows, read again; the deleted one
	 * stays as history */
	ftab_init(&ft);
	ftab_dev(&ft, 2050, &dv, NULL);
	ftab_add_dir(&ft, FT_NONE, "/t", 2, &root, NULL);
	b = walk_file(&ft, root, "B.jpg", 1, 10, 100);
	ft.files[b].ctime_ns = 3000;
	rescan(db, &ft, &dev, roots, 0, &d, &deleted);
	CHECK_INT(d.moved, 1);
	CHECK_INT(d.rechecked, 1);
	CHECK(ft.files[b].flags & FT_CTIME);
	CHECK_INT(db->ctime_same, 1);
	CHECK_INT(deleted, 0); /* A.jpg's record went with its file */
	CHECK_INT(count_where(db, "path='/t/B.jpg' AND deleted_at IS NULL AND ino=1 AND first_scan=1"
				  " AND ctime_ns=3000"), 1);
	CHECK_INT(count_where(db, "path='/t/B.jpg' AND deleted_at IS NOT NULL AND ino=2"), 1);
	CHECK_INT(count_where(db, "path='/t/A.jpg'"), 0);
	db_diff_free(&d);

	/* scan 4: nothing changed: nothing read */
	rescan(db, &ft, &dev, roots, 0, &d, &deleted);
	CHECK(ft.files[b].flags & FT_SKIP);
	CHECK_INT(d.unchanged, 1);
	db_diff_free(&d);
	ftab_free(&ft);

	/* scan 5: C.jpg appears; scan 6: mv C.jpg B.jpg over the live B.jpg:
	 * C's record takes the path, B's is marked deleted by this scan */
	ftab_init(&ft);
	ftab_dev(&ft, 2050, &dv, NULL);
	ftab_add_dir(&ft, FT_NONE, "/t", 2, &root, NULL);
	b = walk_file(&ft, root, "B.jpg", 1, 10, 100);
	c = walk_file(&ft, root, "C.jpg", 3, 30, 300);
	ft.files[b].ctime_ns = 3000;
	ft.files[c].ctime_ns = 5000;
	rescan(db, &ft, &dev, roots, 0, &d, &deleted);
	CHECK_INT(d.added, 1);
	db_diff_free(&d);
	ftab_free(&ft);
	ftab_init(&ft);
	ftab_dev(&ft, 2050, &dv, NULL);
	ftab_add_dir(&ft, FT_NONE, "/t", 2, &root, NULL);
	b = walk_file(&ft, root, "B.jpg", 3, 30, 300);
	ft.files[b].ctime_ns = 5000; /* a file system whose rename keeps ctime */
	rescan(db, &ft, &dev, roots, 0, &d, &deleted);
	CHECK_INT(d.moved, 1);
	CHECK(ft.files[b].flags & FT_SKIP);
	CHECK_INT(deleted, 1);
	CHECK_INT(count_where(db, "path='/t/B.jpg' AND deleted_at IS NULL AND ino=3 AND first_scan=5"),
		  1);
	CHECK_INT(count_where(db, "path='/t/B.jpg' AND deleted_at IS NOT NULL AND ino=1"
				  " AND deleted_scan IS NOT NULL"), 1);
	CHECK_INT(count_where(db, "deleted_at IS NULL"), 1);
	db_diff_free(&d);

	/* a same-size rewrite with its mtime put back: only ctime says so */
	ft.files[b].ctime_ns = 6000;
	rescan(db, &ft, &dev, roots, DB_DIFF_TRUST_MTIME, &d, &deleted);
	CHECK(ft.files[b].flags & FT_SKIP); /* --trust-mtime: not read */
	db_diff_free(&d);
	ft.files[b].ctime_ns = 7000;
	rescan(db, &ft, &dev, roots, 0, &d, &deleted);
	CHECK(ft.files[b].flags & FT_CTIME);
	CHECK_INT(d.rechecked, 1);
	db_diff_free(&d);
	/* a record with no ctime (schema before 7): not a reason to read; the
	 * ctime is recorded without reading */
	CHECK_INT(sqlite3_exec(db->h, "UPDATE files SET ctime_ns=NULL", NULL, NULL, NULL), SQLITE_OK);
	rescan(db, &ft, &dev, roots, 0, &d, &deleted);
	CHECK(ft.files[b].flags & FT_SKIP);
	CHECK_INT(count_where(db, "path='/t/B.jpg' AND deleted_at IS NULL AND ctime_ns=7000"), 1);
	db_diff_free(&d);
	/* a file read within a timestamp tick of its last change: the next
	 * scan reads it again, whatever its times say (and --trust-mtime too) */
	{
		struct px_record r;
		record(&r, "/t/B.jpg", 1);
		r.ino = 3;
		r.dev = 2050;
		r.size = 30;
		r.mtime_ns = 300;
		r.ctime_ns = 7000;
		r.stat_wall_ns = 7000 + 5000000; /* 5 ms later */
		r.devi = 0;
		CHECK_INT(db_put(db, &r, &e), SL_OK);
		CHECK_INT(db_commit(db, &e), SL_OK);
		CHECK_INT(count_where(db, "path='/t/B.jpg' AND deleted_at IS NULL AND ctime_ns=-1"), 1);
	}
	rescan(db, &ft, &dev, roots, DB_DIFF_TRUST_MTIME, &d, &deleted);
	CHECK(ft.files[b].flags & FT_CTIME);
	CHECK_INT(count_where(db, "path='/t/B.jpg' AND deleted_at IS NULL AND ctime_ns=7000"), 1);
	db_diff_free(&d);
	/* --full reads it all the same, and still applies deletions */
	rescan(db, &ft, &dev, roots, DB_DIFF_FULL, &d, &deleted);
	CHECK(!(ft.files[b].flags & FT_SKIP));
	CHECK_INT(d.unchanged, 1);
	db_diff_free(&d);
	ftab_free(&ft);
	ftab_init(&ft);
	ftab_dev(&ft, 2050, &dv, NULL);
	ftab_add_dir(&ft, FT_NONE, "/t", 2, &root, NULL);
	rescan(db, &ft, &dev, roots, DB_DIFF_FULL, &d, &deleted);
	CHECK_INT(deleted, 1);
	CHECK_INT(count_where(db, "deleted_at IS NULL"), 0);
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
	CHECK(strstr(e.msg, "is using the index") != NULL);
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
 * key, replaced on update; each knows when its root was last walked: a
 * scan that only read the journal keeps the walk's date, a walk renews
 * it, and a forgotten position is gone. */
static void test_journals(void)
{
	const char *roots[] = {"D:/Photos"};
	const char *a = "serial:1234-ABCD|D:/Photos", *b = "serial:0000-0001|E:/";
	char path[4096];
	struct db *db = NULL;
	struct sl_err e;
	uint64_t id = 0;
	int64_t usn = 0;
	double days = 0;
	int found = -1;

	snprintf(path, sizeof(path), "%s/journals.db", dir);
	CHECK_INT(db_open(path, 1, &db, &e), SL_OK);
	CHECK_INT(db_journal_get(db, a, &id, &usn, &days, &found, &e), SL_OK);
	CHECK_INT(found, 0);
	CHECK_INT(db_scan_begin(db, "scan", "auto", roots, 1, 1, &e), SL_OK);
	CHECK_INT(db_journal_put(db, a, 0x01d9f00dcafe0001ull, 4096, 1, &e), SL_OK);
	CHECK_INT(db_journal_put(db, b, 7, 8, 1, &e), SL_OK);
	CHECK_INT(db_journal_put(db, a, 0x01d9f00dcafe0001ull, 8192, 0, &e), SL_OK);
	/* that walk, ten days ago */
	CHECK_INT(sqlite3_exec(db->h, "UPDATE scans SET started_at = strftime('%Y-%m-%dT%H:%M:%SZ',"
				      " 'now', '-10 days')", NULL, NULL, NULL), SQLITE_OK);
	db_close(db);
	CHECK_INT(db_open(path, 0, &db, &e), SL_OK);
	CHECK_INT(db_journal_get(db, a, &id, &usn, &days, &found, &e), SL_OK);
	CHECK_INT(found, 1);
	CHECK(id == 0x01d9f00dcafe0001ull);
	CHECK_INT(usn, 8192);
	CHECK(days > 9.99 && days < 10.01);
	/* a scan that read only the journal: the walk's date stays */
	CHECK_INT(db_scan_begin(db, "scan", "auto", roots, 1, 1, &e), SL_OK);
	CHECK_INT(db_journal_put(db, a, 0x01d9f00dcafe0001ull, 9000, 0, &e), SL_OK);
	CHECK_INT(db_journal_get(db, a, &id, &usn, &days, &found, &e), SL_OK);
	CHECK(usn == 9000 && days > 9.99);
	/* a walk: today */
	CHECK_INT(db_journal_put(db, a, 0x01d9f00dcafe0001ull, 9100, 1, &e), SL_OK);
	CHECK_INT(db_journal_get(db, a, &id, &usn, &days, &found, &e), SL_OK);
	CHECK(usn == 9100 && days >= 0 && days < 0.01);
	CHECK_INT(db_journal_get(db, b, &id, &usn, &days, &found, &e), SL_OK);
	CHECK(found == 1 && id == 7 && usn == 8);
	/* the walk's scan row gone: its age is not known */
	CHECK_INT(sqlite3_exec(db->h, "UPDATE journals SET scan = 999", NULL, NULL, NULL),
		  SQLITE_OK);
	CHECK_INT(db_journal_get(db, b, &id, &usn, &days, &found, &e), SL_OK);
	CHECK(found == 1 && days == -1);
	CHECK_INT(db_journal_forget(db, b, &e), SL_OK);
	CHECK_INT(db_journal_get(db, b, &id, &usn, &days, &found, &e), SL_OK);
	CHECK_INT(found, 0);
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

/* Storing records never moves a statement journal to a file (each upsert
 * touches the row and every index: more than SQLite's default 64 KiB, so
 * a batch once wrote ~18 pages a record to /var/tmp); a bulk statement
 * bigger than DB_STMT_SPILL still does, so memory stays bounded, and it
 * succeeds (a threshold above 128 KiB made it fail as "disk full").  The
 * count comes from fault.c's VFS, which sees every file SQLite opens. */
static void test_statement_journal(void)
{
	enum { N = 20000 };
	char path[4096], name[64];
	struct db *db = NULL;
	struct px_record r;
	struct sl_err e;
	const char *roots[] = {"/s"};
	sqlite3_stmt *st;
	long before;
	int64_t bytes = 0;
	int i;

	db_inject(DB_FAULT_NONE, 0); /* the counting VFS, nothing armed */
	snprintf(path, sizeof(path), "%s/stmt.db", dir);
	CHECK_INT(db_open(path, 1, &db, &e), SL_OK);
	before = db_fault_subjournals();
	CHECK_INT(db_scan_begin(db, "scan", "auto", roots, 1, 1, &e), SL_OK);
	for (i = 0; i < N; i++) {
		snprintf(name, sizeof(name), "/s/d%02d/IMG_%05d.JPG", i % 50, i);
		record(&r, name, 1);
		r.ino = (uint64_t)i + 1000;
		CHECK_INT(db_put(db, &r, &e), SL_OK);
	}
	CHECK_INT(db_commit(db, &e), SL_OK);
	CHECK_INT((int)(db_fault_subjournals() - before), 0);

	CHECK(sqlite3_prepare_v2(db->h, "SELECT page_count * page_size FROM pragma_page_count, pragma_page_size",
				 -1, &st, NULL) == SQLITE_OK);
	if (sqlite3_step(st) == SQLITE_ROW)
		bytes = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	CHECK(bytes > 2 * DB_STMT_SPILL);
	if (sqlite3_exec(db->h, "BEGIN; UPDATE files SET path = path || '~'; COMMIT", NULL, NULL, NULL) !=
	    SQLITE_OK) {
		fprintf(stderr, "bulk update: %s\n", sqlite3_errmsg(db->h));
		CHECK(0);
	}
	CHECK(db_fault_subjournals() - before >= 1);
	db_close(db);
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
	static unsigned char emb[N];
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
	for (i = 0; i < 200; i++) /* turned or mirrored copies, a bit or two off */
		h[1000 + i] = ph_variant(h[500 + i], (int)(i % 7) + 1) ^ (i % 3 ? 1ull << (i % 63 + 1) : 0);
	for (i = 0; i < N; i++) /* some from an embedded thumbnail */
		emb[i] = (unsigned char)(i % 3 == 0);
	for (i = 0; i < 100; i++) /* a thumbnail 5-6 bits off its image */
		h[2000 + i] = h[2200 + i] ^ (0x1full << (i % 50 + 1)) ^ (i % 2 ? 1ull << 63 : 0);
	for (bits = 0; bits <= 12; bits += 4) {
		/* bits 12: the same, with embedded hashes allowed 3 more */
		int extra = bits == 12 ? 3 : 0;
		int base = bits == 12 ? 4 : bits;
		CHECK_INT(db_near_groups(h, extra ? emb : NULL, N, base, extra, got), 0);
		for (i = 0; i < N; i++)
			want[i] = (uint32_t)i;
		for (i = 0; i < N; i++)
			for (j = i + 1; j < N; j++) {
				b = ph_distance(h[i], h[j]); /* the brute force: all eight variants */
				if (b <= base || (extra && emb[i] != emb[j] && b <= base + extra)) {
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
	CHECK_INT(db_near_groups(h, NULL, N, 17, 0, got), -1);
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

/* Deletions of a scan that could not see everything stay findable; a
 * record with an error is still its file's when the file moves. */
static void test_diff_provisional(void)
{
	struct db *db = NULL;
	struct sl_err e;
	struct ftab ft;
	struct dev_info dev;
	struct db_diff d;
	struct db_scan_end end;
	char *roots[] = {(char *)"/v"};
	uint32_t root, a, b;
	uint16_t dv;
	uint64_t deleted = 0;

	db = diff_db("prov.db", 2052, "uuid:prov-fs", &dev);
	memset(&end, 0, sizeof(end));
	end.status = "ok";

	/* scan 1 (complete): X at /v/x.jpg (ino 1), Y at /v/y.jpg (ino 2) */
	ftab_init(&ft);
	ftab_dev(&ft, 2052, &dv, NULL);
	ftab_add_dir(&ft, FT_NONE, "/v", 2, &root, NULL);
	walk_file(&ft, root, "x.jpg", 1, 10, 100);
	walk_file(&ft, root, "y.jpg", 2, 20, 200);
	rescan(db, &ft, &dev, roots, 0, &d, &deleted);
	end.complete = 1;
	CHECK_INT(db_scan_end(db, &end, &e), SL_OK);
	db_diff_free(&d);
	ftab_free(&ft);

	/* scan 2 (incomplete): Y renamed over x.jpg, X moved where the scan
	 * cannot look: X's record is displaced, provisionally */
	ftab_init(&ft);
	ftab_dev(&ft, 2052, &dv, NULL);
	ftab_add_dir(&ft, FT_NONE, "/v", 2, &root, NULL);
	walk_file(&ft, root, "x.jpg", 2, 20, 200);
	rescan(db, &ft, &dev, roots, 0, &d, &deleted);
	end.complete = 0;
	CHECK_INT(db_scan_end(db, &end, &e), SL_OK);
	CHECK_INT(count_where(db, "path='/v/x.jpg' AND deleted_at IS NOT NULL AND ino=1"), 1);
	db_diff_free(&d);
	ftab_free(&ft);

	/* scan 3: X found again in a folder that can be listed now: its
	 * record comes back, by identity */
	ftab_init(&ft);
	ftab_dev(&ft, 2052, &dv, NULL);
	ftab_add_dir(&ft, FT_NONE, "/v", 2, &root, NULL);
	walk_file(&ft, root, "x.jpg", 2, 20, 200);
	a = walk_file(&ft, root, "sub-x.jpg", 1, 10, 100);
	rescan(db, &ft, &dev, roots, 0, &d, &deleted);
	CHECK(ft.files[a].flags & FT_SKIP);
	CHECK_INT(d.moved, 1);
	CHECK_INT(count_where(db, "path='/v/sub-x.jpg' AND deleted_at IS NULL AND ino=1"
				  " AND first_scan=1 AND deleted_scan IS NULL"), 1);
	end.complete = 1;
	CHECK_INT(db_scan_end(db, &end, &e), SL_OK);
	db_diff_free(&d);

	/* scan 4: the file renamed while a scan read it got "No such file" on
	 * its record; found under its new name, it keeps the record and is
	 * read again */
	CHECK_INT(sqlite3_exec(db->h, "UPDATE files SET error='open: No such file or directory'"
				      " WHERE path='/v/sub-x.jpg'", NULL, NULL, NULL), SQLITE_OK);
	ftab_free(&ft);
	ftab_init(&ft);
	ftab_dev(&ft, 2052, &dv, NULL);
	ftab_add_dir(&ft, FT_NONE, "/v", 2, &root, NULL);
	walk_file(&ft, root, "x.jpg", 2, 20, 200);
	b = walk_file(&ft, root, "renamed-x.jpg", 1, 10, 100);
	rescan(db, &ft, &dev, roots, 0, &d, &deleted);
	CHECK(!(ft.files[b].flags & FT_SKIP));
	CHECK(ft.files[b].flags & FT_CHANGED);
	CHECK(ft.files[b].links & FT_LINK_ALONE);
	CHECK_INT(d.moved, 1);
	CHECK_INT(count_where(db, "path='/v/renamed-x.jpg' AND deleted_at IS NULL AND first_scan=1"
				  " AND error IS NULL"), 1);
	end.complete = 1;
	CHECK_INT(db_scan_end(db, &end, &e), SL_OK);
	db_diff_free(&d);
	ftab_free(&ft);

	/* scan 5 (incomplete) deletes Y's record provisionally; scan 6 finds
	 * its content under a new identity (another file system's copy):
	 * relinked by content.  Scan 7, complete, confirms what stays gone. */
	ftab_init(&ft);
	ftab_dev(&ft, 2052, &dv, NULL);
	ftab_add_dir(&ft, FT_NONE, "/v", 2, &root, NULL);
	walk_file(&ft, root, "renamed-x.jpg", 1, 10, 100);
	walk_file(&ft, root, "z.jpg", 5, 50, 500);
	rescan(db, &ft, &dev, roots, 0, &d, &deleted);
	end.complete = 0;
	CHECK_INT(db_scan_end(db, &end, &e), SL_OK);
	CHECK_INT(count_where(db, "path='/v/x.jpg' AND deleted_at IS NOT NULL AND ino=2"
				  " AND deleted_scan=5"), 1);
	db_diff_free(&d);
	ftab_free(&ft);
	ftab_init(&ft);
	ftab_dev(&ft, 2052, &dv, NULL);
	ftab_add_dir(&ft, FT_NONE, "/v", 2, &root, NULL);
	walk_file(&ft, root, "renamed-x.jpg", 1, 10, 100);
	walk_file(&ft, root, "copy-of-y.jpg", 2000, 20, 999); /* hash from ino 2000 */
	CHECK_INT(sqlite3_exec(db->h, "UPDATE files SET content_hash="
				      "'000000000000000000000000000007d0' WHERE ino=2", NULL, NULL, NULL),
		  SQLITE_OK);
	/* and z.jpg, as if scan 5 had found it gone: a provisional deletion
	 * no file claims, which this complete scan confirms */
	CHECK_INT(sqlite3_exec(db->h, "UPDATE files SET deleted_at='2026-01-01T00:00:00Z',"
				      " deleted_scan=5 WHERE path='/v/z.jpg'", NULL, NULL, NULL),
		  SQLITE_OK);
	rescan(db, &ft, &dev, roots, 0, &d, &deleted);
	CHECK_INT(d.nconfirm, 2); /* z, and y (relinked while stored: left alone) */
	CHECK_INT(deleted, 0); /* scan 5 reported it */
	CHECK_INT(count_where(db, "path='/v/z.jpg' AND deleted_scan=6"), 1);
	CHECK_INT(db->relinked, 1);
	CHECK_INT(count_where(db, "path='/v/copy-of-y.jpg' AND deleted_at IS NULL AND first_scan=1"),
		  1);
	end.complete = 1;
	CHECK_INT(db_scan_end(db, &end, &e), SL_OK);
	db_diff_free(&d);
	ftab_free(&ft);
	CHECK_INT(count_sql(db, "files", DB_PROVISIONAL_SQL), 0);
	db_close(db);
}

/* Pictures whose perceptual hash was never tried (--no-phash, or an index
 * from before schema 7 changed the hash) are read for one when the hash is
 * on, once. */
static void test_diff_rehash(void)
{
	struct db *db = NULL;
	struct ftab ft;
	struct dev_info dev;
	struct db_diff d;
	char *roots[] = {(char *)"/r"};
	uint32_t root, a;
	uint16_t dv;
	uint64_t deleted;

	db = diff_db("rehash.db", 2053, "uuid:rehash-fs", &dev);
	ftab_init(&ft);
	ftab_dev(&ft, 2053, &dv, NULL);
	ftab_add_dir(&ft, FT_NONE, "/r", 2, &root, NULL);
	a = walk_file(&ft, root, "a.jpg", 1, 10, 100);
	rescan(db, &ft, &dev, roots, 0, &d, &deleted); /* stored as by --no-phash */
	db_diff_free(&d);
	CHECK_INT(count_where(db, "path='/r/a.jpg' AND format='jpeg' AND phash_src IS NULL"), 1);
	rescan(db, &ft, &dev, roots, 0, &d, &deleted);
	CHECK(ft.files[a].flags & FT_SKIP); /* still --no-phash: left alone */
	db_diff_free(&d);
	rescan(db, &ft, &dev, roots, DB_DIFF_PHASH, &d, &deleted);
	CHECK(ft.files[a].flags & FT_REHASH);
	CHECK(!(ft.files[a].flags & FT_SKIP));
	CHECK_INT(d.rehash, 1);
	db_diff_free(&d);
	/* read with the hash on: it has a source now (here "none", as when the
	 * decode fails), and is not read again for it */
	CHECK_INT(sqlite3_exec(db->h, "UPDATE files SET phash_src='none'", NULL, NULL, NULL),
		  SQLITE_OK);
	rescan(db, &ft, &dev, roots, DB_DIFF_PHASH, &d, &deleted);
	CHECK(ft.files[a].flags & FT_SKIP);
	db_diff_free(&d);
	ftab_free(&ft);
	db_close(db);
}

/* One file system under two names: the statfs id an unprivileged scan
 * finds, and the UUID a root scan reads from the superblock.  Both scans,
 * in either order, must file its records under one row. */
static int64_t map_one(struct db *db, const char *id, const char *alt)
{
	struct dev_info dev;
	struct sl_err e;
	memset(&dev, 0, sizeof(dev));
	dev.st_dev = 2051;
	strcpy(dev.fstype, "ext4");
	strcpy(dev.mount, "/m");
	snprintf(dev.fs_id, sizeof(dev.fs_id), "%s", id);
	snprintf(dev.fs_alt, sizeof(dev.fs_alt), "%s", alt);
	CHECK_INT(db_map_fs(db, &dev, 1, &e), SL_OK);
	return db->fs_ids[0];
}

static void test_fs_names(void)
{
	char path[4096];
	struct db *db = NULL;
	struct sl_err e;
	int64_t a, b;

	snprintf(path, sizeof(path), "%s/fsnames.db", dir);
	CHECK_INT(db_open(path, 1, &db, &e), SL_OK);
	/* unprivileged first, then root */
	a = map_one(db, "fsid:00000001", "");
	b = map_one(db, "uuid:u1", "fsid:00000001");
	CHECK(a > 0 && a == b);
	CHECK_INT(map_one(db, "fsid:00000001", ""), a);
	CHECK_INT(count_where_fs(db, "ident='uuid:u1' AND alt='fsid:00000001'"), 1);
	/* root first, then unprivileged */
	a = map_one(db, "uuid:u2", "fsid:00000002");
	CHECK_INT(map_one(db, "fsid:00000002", ""), a);
	CHECK_INT(map_one(db, "uuid:u2", "fsid:00000002"), a);
	/* two rows made before the names were tied: merged, records kept */
	CHECK_INT(sqlite3_exec(db->h, "INSERT INTO filesystems(ident) VALUES('fsid:00000003');"
				      "INSERT INTO filesystems(ident) VALUES('uuid:u3')",
			       NULL, NULL, NULL), SQLITE_OK);
	CHECK_INT(sqlite3_exec(db->h, "INSERT INTO files(path, first_scan, last_scan, indexed_at, fs_id)"
				      " SELECT '/m/x', 1, 1, 'now', id FROM filesystems"
				      " WHERE ident='fsid:00000003'", NULL, NULL, NULL), SQLITE_OK);
	a = map_one(db, "uuid:u3", "fsid:00000003");
	CHECK_INT(count_where_fs(db, "ident='fsid:00000003'"), 0);
	CHECK_INT(count_where(db, "path='/m/x' AND fs_id=(SELECT id FROM filesystems"
				  " WHERE ident='uuid:u3')"), 1);
	/* another file system whose statfs id happens to be another's
	 * alternative name is a different one when its UUID differs */
	b = map_one(db, "uuid:u4", "fsid:00000002");
	CHECK(b != map_one(db, "uuid:u2", "fsid:00000002"));
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

/* Query bounds are days that exist: month 1-12, the day within its month,
 * 29 February only in leap years (Gregorian: 1900 not, 2000 yes). */
static void test_query_dates(void)
{
	static const struct {
		const char *date;
		int ok;
	} cases[] = {
		{"2023", 1},        {"0000", 1},        {"2023-01", 1},     {"2023-12", 1},
		{"2024-02-29", 1},  {"2000-02-29", 1},  {"2023-12-31", 1},  {"2023-04-30", 1},
		{"2023-01-01", 1},  {"2023-13", 0},     {"2023-00", 0},     {"2023-02-30", 0},
		{"2023-12-32", 0},  {"2023-02-29", 0},  {"1900-02-29", 0},  {"2023-04-31", 0},
		{"2023-06-00", 0},  {"2023-1", 0},      {"23", 0},          {"", 0},
		{"2023-01-01T10", 0}, {"2023/01/01", 0}, {"2023-1-01", 0}, {"+2023", 0},
	};
	struct db_query q;
	struct sl_err e;
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int want = cases[i].ok ? SL_OK : SL_E_USAGE, rc;
		memset(&q, 0, sizeof(q));
		q.from = cases[i].date;
		rc = db_query_check(&q, &e);
		if (rc != want)
			fprintf(stderr, "  --from '%s'\n", cases[i].date);
		CHECK_INT(rc, want);
		memset(&q, 0, sizeof(q));
		q.to = cases[i].date;
		CHECK_INT(db_query_check(&q, &e), want);
	}
	memset(&q, 0, sizeof(q));
	q.to = "2023-13";
	CHECK_INT(db_query_check(&q, &e), SL_E_USAGE);
	CHECK_STR(e.msg, "--to 2023-13: not a date (YYYY, YYYY-MM or YYYY-MM-DD)");
}

/* No SQL keyword in a message users read. */
static int no_sql(const char *msg)
{
	return !strstr(msg, "UPDATE") && !strstr(msg, "INSERT") && !strstr(msg, "SELECT") &&
	       !strstr(msg, "PRAGMA");
}

/* What db_open says of a path that holds no index, for a scan (create), a
 * writer and a reader alike: the path as it is (a directory, not a SQLite
 * database, another program's database), never SQL; and what is there is
 * left as it was. */
static void test_open_refusals(void)
{
	static const int modes[] = {0, DB_CREATE, DB_READER};
	char path[4096], side[4200];
	struct db *db = NULL;
	struct sl_err e;
	sqlite3 *h;
	sqlite3_stmt *st;
	unsigned char *bytes;
	size_t i, len = 0;

	snprintf(path, sizeof(path), "%s/a-dir.db", dir);
	CHECK_INT(t_mkdir(path), 0);
	for (i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
		CHECK_INT(db_open(path, modes[i], &db, &e), SL_E_DB);
		CHECK(db == NULL);
		CHECK(strstr(e.msg, "is a directory") != NULL);
	}

	snprintf(path, sizeof(path), "%s/notes.txt", dir);
	t_write(path, "not a database at all\n", 22);
	for (i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
		CHECK_INT(db_open(path, modes[i], &db, &e), SL_E_DB);
		CHECK(strstr(e.msg, "not a SQLite database") != NULL);
		CHECK(no_sql(e.msg));
	}
	bytes = t_read(path, &len);
	CHECK(len == 22 && bytes && memcmp(bytes, "not a database at all\n", 22) == 0);
	free(bytes);

	snprintf(path, sizeof(path), "%s/other.db", dir);
	CHECK(sqlite3_open(path, &h) == SQLITE_OK);
	CHECK(sqlite3_exec(h, "CREATE TABLE notes(x); INSERT INTO notes VALUES('keep')", NULL, NULL,
			   NULL) == SQLITE_OK);
	sqlite3_close(h);
	for (i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
		CHECK_INT(db_open(path, modes[i], &db, &e), SL_E_DB);
		CHECK(strstr(e.msg, "not a seekless index") != NULL);
		CHECK(no_sql(e.msg));
	}
	/* not migrated, not made WAL, no journal files made beside it */
	CHECK(sqlite3_open(path, &h) == SQLITE_OK);
	sqlite3_prepare_v2(h, "SELECT (SELECT group_concat(name) FROM sqlite_master),"
			      " (SELECT user_version FROM pragma_user_version),"
			      " (SELECT journal_mode FROM pragma_journal_mode)", -1, &st, NULL);
	CHECK(sqlite3_step(st) == SQLITE_ROW);
	CHECK_STR((const char *)sqlite3_column_text(st, 0), "notes");
	CHECK_INT(sqlite3_column_int(st, 1), 0);
	CHECK_STR((const char *)sqlite3_column_text(st, 2), "delete");
	sqlite3_finalize(st);
	sqlite3_close(h);
	snprintf(side, sizeof(side), "%s-wal", path);
	CHECK_INT(sys_can_write(side), ENOENT);
	snprintf(side, sizeof(side), "%s-shm", path);
	CHECK_INT(sys_can_write(side), ENOENT);
}

/* A fixed statement that fails says what was being done; its SQL is kept
 * for SEEKLESS_DEBUG=1 (sl_err.detail), not put in the message. */
static void test_error_without_sql(void)
{
	char path[4096];
	struct db *db = NULL;
	struct sl_err e;

	snprintf(path, sizeof(path), "%s/nosql.db", dir);
	CHECK_INT(db_open(path, DB_CREATE, &db, &e), SL_OK);
	CHECK(sqlite3_exec(db->h, "PRAGMA query_only=1", NULL, NULL, NULL) == SQLITE_OK);
	CHECK_INT(db_lock(db, &e), SL_E_DB);
	CHECK(strstr(e.msg, "mark the scans") != NULL);
	CHECK(strstr(e.msg, "cannot be written") != NULL);
	CHECK(no_sql(e.msg));
	CHECK(e.detail && strstr(e.detail, "UPDATE scans") != NULL);
	db_close(db);
}

/* Schema 14: an index of 13 with a bench's runs gets the bench tables, and
 * a bench stored comes back as it went in, its head path bit for bit. */
struct bench_seen {
	int n;
	double wall, speedup, t2;
	uint64_t phys2;
	size_t dots;
	char order[16];
	int64_t first, last;
};

static int on_bench(void *ctx, const struct db_bench *b)
{
	struct bench_seen *s = ctx;

	s->n++;
	CHECK_INT(b->norders, 2);
	snprintf(s->order, sizeof(s->order), "%s", b->orders[0].order);
	s->wall = b->orders[0].wall_s;
	s->speedup = b->orders[1].speedup;
	s->dots = b->orders[0].n;
	if (b->orders[0].n > 2) {
		s->t2 = b->orders[0].t[2];
		s->phys2 = b->orders[0].phys[2];
	}
	s->first = b->first_scan;
	s->last = b->last_scan;
	return 0;
}

static void test_bench_runs(void)
{
	char path[4096];
	struct db *db;
	struct sl_err e;
	sqlite3 *h;
	double t[3] = {0.25, 0.5, 1.0 / 3};
	uint64_t phys[3] = {4096, 1ull << 40, 0xfedcba9876543210ull};
	struct db_bench_order o[2];
	struct db_bench b;
	struct bench_seen seen;
	int64_t total = -1;
	int v = 0;

	snprintf(path, sizeof(path), "%s/v13.db", dir);
	CHECK(sqlite3_open(path, &h) == SQLITE_OK);
	CHECK_INT(db_migrate_to(h, 13, &e), SL_OK);
	CHECK(sqlite3_exec(h, "INSERT INTO scans(started_at, status, command, order_requested, roots,"
			      " version) VALUES('then', 'ok', 'bench', 'physical', '[]', 'x')",
			   NULL, NULL, NULL) == SQLITE_OK);
	sqlite3_close(h);
	CHECK_INT(db_open(path, 0, &db, &e), SL_OK);
	CHECK_INT(db_user_version(db, &v, &e), SL_OK);
	CHECK_INT(v, DB_SCHEMA_VERSION);
	memset(&seen, 0, sizeof(seen));
	CHECK_INT(db_bench_list(db, 5, on_bench, &seen, &total, &e), SL_OK);
	CHECK_INT(total, 0);
	CHECK_INT(seen.n, 0);
	memset(o, 0, sizeof(o));
	memset(&b, 0, sizeof(b));
	o[0].order = "physical";
	o[0].wall_s = 1.5;
	o[0].t = t;
	o[0].phys = phys;
	o[0].n = 3;
	o[1].order = "path";
	o[1].wall_s = 3;
	o[1].speedup = 0; /* no fs order: NULL, read back as none */
	b.roots = "[\"/p\"]";
	b.files = 10;
	b.bytes = 1000;
	b.runs = 1;
	b.first_scan = 1;
	b.last_scan = 2;
	b.orders = o;
	b.norders = 2;
	CHECK_INT(db_bench_put(db, &b, &e), SL_OK);
	CHECK_INT(db_bench_list(db, 5, on_bench, &seen, &total, &e), SL_OK);
	CHECK_INT(total, 1);
	CHECK_INT(seen.n, 1);
	CHECK_STR(seen.order, "physical");
	CHECK(seen.wall == 1.5);
	CHECK(seen.speedup == 0);
	CHECK_INT(seen.dots, 3);
	CHECK(seen.t2 == 1.0 / 3);
	CHECK(seen.phys2 == 0xfedcba9876543210ull);
	CHECK_INT(seen.first, 1);
	CHECK_INT(seen.last, 2);
	db_close(db);
}

int main(void)
{
	dir = t_tmpdir("db");
	RUN(test_create_and_export);
	RUN(test_upsert);
	RUN(test_diff);
	RUN(test_diff_paths);
	RUN(test_diff_reused_ino);
	RUN(test_diff_failed_swap);
	RUN(test_diff_provisional);
	RUN(test_diff_rehash);
	RUN(test_fs_names);
	RUN(test_lock);
	RUN(test_scan_rows);
	RUN(test_journals);
	RUN(test_write_faults);
	RUN(test_statement_journal);
	RUN(test_near_groups);
	RUN(test_upgrade_from_v1);
	RUN(test_bench_runs);
	RUN(test_versions);
	RUN(test_query_dates);
	RUN(test_open_refusals);
	RUN(test_error_without_sql);
	t_rmtree(dir);
	free(dir);
	return t_done();
}
