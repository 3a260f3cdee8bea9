/* writer.c - batched upserts of file records.
 *
 * One transaction per DB_BATCH_ROWS rows or DB_BATCH_SECONDS, whichever
 * comes first: big enough that commits cost little, small enough that a
 * killed scan loses under a second of work. */
#include <string.h>

#include "common/sys.h"
#include "common/strbuf.h"
#include "db/db_int.h"
#include "indexer/formats/desc.h"
#include "scanner/ftab.h"

static const char put_sql[] =
	"INSERT INTO files(path, dev, ino, size, mtime_ns, format, width, height, make, model,"
	" datetime_original, orientation, gps_lat, gps_lon, exposure_time, f_number, iso,"
	" focal_length, lens_model, content_hash, phys_offset, fragments, placement, error,"
	" warnings, first_scan, last_scan, indexed_at, deleted_at, phash, fs_id, ctime_ns,"
	" phash_src, tz_offset, subsec, meta_version, duration, content_id, rating, label,"
	" keywords, hierarchical_keywords, title, description, creator, copyright,"
	" embedded_video, btime_ns, quick_hash)"
	" VALUES(?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,?13,?14,?15,?16,?17,?18,?19,?20,?21,?22,"
	" ?23,?24,?25,?26,?26,strftime('%Y-%m-%dT%H:%M:%SZ','now'),NULL,?27,?28,?29,?30,?31,?32,"
	" ?33,?34,?35,?36,?37,?38,?39,?40,?41,?42,?43,?44,?45,?46)"
	/* the path is unique among live records (files_path): a record marked
	 * deleted at the same path is history, and a new file there is a new
	 * record */
	" ON CONFLICT(path) WHERE deleted_at IS NULL DO UPDATE SET dev=excluded.dev,"
	" ino=excluded.ino, size=excluded.size, ctime_ns=excluded.ctime_ns,"
	" mtime_ns=excluded.mtime_ns, format=excluded.format, width=excluded.width,"
	" height=excluded.height, make=excluded.make, model=excluded.model,"
	" datetime_original=excluded.datetime_original, orientation=excluded.orientation,"
	" gps_lat=excluded.gps_lat, gps_lon=excluded.gps_lon, exposure_time=excluded.exposure_time,"
	" f_number=excluded.f_number, iso=excluded.iso, focal_length=excluded.focal_length,"
	" lens_model=excluded.lens_model, content_hash=excluded.content_hash,"
	" phys_offset=excluded.phys_offset, fragments=excluded.fragments,"
	" placement=excluded.placement, error=excluded.error, warnings=excluded.warnings,"
	" last_scan=excluded.last_scan, indexed_at=excluded.indexed_at, deleted_at=NULL,"
	" fs_id=excluded.fs_id, tz_offset=excluded.tz_offset, subsec=excluded.subsec,"
	" meta_version=excluded.meta_version, duration=excluded.duration,"
	" content_id=excluded.content_id, rating=excluded.rating, label=excluded.label,"
	" keywords=excluded.keywords, hierarchical_keywords=excluded.hierarchical_keywords,"
	" title=excluded.title, description=excluded.description, creator=excluded.creator,"
	" copyright=excluded.copyright, embedded_video=excluded.embedded_video,"
	" quick_hash=excluded.quick_hash,"
	/* a reread of the same file whose birth time this run could not
	 * learn keeps the one it had */
	" btime_ns=CASE WHEN excluded.btime_ns IS NULL AND excluded.ino IS ino"
	"  AND excluded.fs_id IS fs_id THEN btime_ns ELSE excluded.btime_ns END,"
	/* a read that did not try the perceptual hash (--no-phash) of the
	 * same bytes keeps the one the record has (the right-hand sides see
	 * the row as it was); "the same bytes" needs a content hash: two reads
	 * in part (scan --quick) say nothing of the bytes between the ends */
	" phash=CASE WHEN excluded.phash_src IS NULL AND excluded.content_hash IS content_hash"
	"  AND excluded.content_hash IS NOT NULL THEN phash ELSE excluded.phash END,"
	" phash_src=CASE WHEN excluded.phash_src IS NULL AND excluded.content_hash IS content_hash"
	"  AND excluded.content_hash IS NOT NULL THEN phash_src ELSE excluded.phash_src END";

/* Text is bound as a copy, and a copy can fail: every bind's result
 * counts, or an allocation failure would store NULL in place of a value
 * and the record would look complete. */
static int bind_text(sqlite3_stmt *st, int i, const char *s)
{
	if (s && s[0])
		return sqlite3_bind_text(st, i, s, -1, SQLITE_TRANSIENT);
	return sqlite3_bind_null(st, i);
}

/* The values of f, as desc.h gives them: a JSON array (json), or joined by
 * "; " (a list as one text, like creator); NULL when there are none. */
static int bind_desc(sqlite3_stmt *st, int i, const struct x_meta *m, enum desc_field f, int json)
{
	const char *v[DESC_MAX_VALUES];
	size_t n = desc_list(m, f, v, DESC_MAX_VALUES), k;
	struct strbuf sb = STRBUF_INIT;
	int rc;

	if (n == 0)
		return sqlite3_bind_null(st, i);
	if (n > DESC_MAX_VALUES)
		n = DESC_MAX_VALUES;
	if (json)
		sb_addc(&sb, '[');
	for (k = 0; k < n; k++) {
		if (k)
			sb_adds(&sb, json ? "," : "; ");
		if (json)
			sb_add_json(&sb, v[k], strlen(v[k]));
		else
			sb_adds(&sb, v[k]);
	}
	if (json)
		sb_addc(&sb, ']');
	if (sb.oom) {
		sb_free(&sb);
		return SQLITE_NOMEM;
	}
	rc = sqlite3_bind_text(st, i, sb.p, (int)sb.len, SQLITE_TRANSIENT);
	sb_free(&sb);
	return rc;
}

/* Nonzero when a bind failed. */
static int bind_record(const struct db *db, sqlite3_stmt *st, const struct px_record *r,
		       int64_t scan_id, int64_t fs_id)
{
	const struct x_meta *m = &r->meta;
	int stated = !r->is_dir && (r->read || (r->ext_flags & FT_STATED)), rating;
	int bad = bind_text(st, 1, r->path);
	if (!r->is_dir) {
		sqlite3_bind_int64(st, 2, (sqlite3_int64)r->dev);
		sqlite3_bind_int64(st, 3, (sqlite3_int64)r->ino);
	}
	if (stated) {
		sqlite3_bind_int64(st, 4, (sqlite3_int64)r->size);
		sqlite3_bind_int64(st, 5, r->mtime_ns);
		if (r->read && db_racy(db, r->devi, r->ctime_ns, r->mtime_ns, r->stat_wall_ns,
				       r->stat_wall_ns))
			sqlite3_bind_int64(st, 29, DB_CTIME_RACY);
		else if (r->ctime_ns)
			sqlite3_bind_int64(st, 29, r->ctime_ns);
		if (r->btime_ns)
			sqlite3_bind_int64(st, 45, r->btime_ns);
	}
	if (r->read) {
		bad |= bind_text(st, 6, m->format);
		if (m->have & XM_DIMS) {
			sqlite3_bind_int64(st, 7, m->width);
			sqlite3_bind_int64(st, 8, m->height);
		}
		bad |= bind_text(st, 9, m->make);
		bad |= bind_text(st, 10, m->model);
		bad |= bind_text(st, 11, m->datetime_original);
		if (m->have & XM_ORIENTATION)
			sqlite3_bind_int(st, 12, m->orientation);
		if (m->have & XM_GPS) {
			sqlite3_bind_double(st, 13, m->gps_lat);
			sqlite3_bind_double(st, 14, m->gps_lon);
		}
		if (m->have & XM_EXPOSURE)
			sqlite3_bind_double(st, 15, m->exposure_time);
		if (m->have & XM_FNUMBER)
			sqlite3_bind_double(st, 16, m->f_number);
		if (m->have & XM_ISO)
			sqlite3_bind_int64(st, 17, m->iso);
		if (m->have & XM_FOCAL)
			sqlite3_bind_double(st, 18, m->focal_length);
		bad |= bind_text(st, 19, m->lens_model);
		bad |= bind_text(st, 20, r->hash);
		bad |= bind_text(st, 46, r->quick_hash);
		bad |= bind_text(st, 25, m->warnings);
		if (r->have_phash)
			sqlite3_bind_int64(st, 27, (sqlite3_int64)r->phash);
		/* "none" when a hash was tried and not made: not tried again
		 * until the file changes; NULL when it was not tried
		 * (--no-phash): a later scan with the hash on makes one */
		bad |= bind_text(st, 30, r->phash_src);
		bad |= bind_text(st, 31, m->tz_offset);
		bad |= bind_text(st, 32, m->subsec);
		sqlite3_bind_int(st, 33, X_META_VERSION);
		if (m->have & XM_DURATION)
			sqlite3_bind_double(st, 34, m->duration);
		bad |= bind_text(st, 35, m->content_id);
		if (desc_get_rating(m, &rating))
			sqlite3_bind_int(st, 36, rating);
		bad |= bind_desc(st, 37, m, DF_LABEL, 0);
		bad |= bind_desc(st, 38, m, DF_KEYWORD, 1);
		bad |= bind_desc(st, 39, m, DF_HIER, 1);
		bad |= bind_desc(st, 40, m, DF_TITLE, 0);
		bad |= bind_desc(st, 41, m, DF_DESCRIPTION, 0);
		bad |= bind_desc(st, 42, m, DF_CREATOR, 0);
		bad |= bind_desc(st, 43, m, DF_COPYRIGHT, 0);
		if (m->have & XM_EMBEDDED)
			sqlite3_bind_int64(st, 44, (sqlite3_int64)m->embedded_video);
	}
	if (r->ext_flags & FT_LOCATED)
		sqlite3_bind_int64(st, 21, (sqlite3_int64)r->phys);
	if (stated && !(r->ext_flags & FT_NOEXT))
		sqlite3_bind_int64(st, 22, r->fragments);
	bad |= bind_text(st, 23, r->is_dir || !(r->ext_flags & FT_STATED)
					 ? NULL
					 : ftab_placement(r->ext_flags));
	bad |= bind_text(st, 24, r->err_code ? r->error : NULL);
	sqlite3_bind_int64(st, 26, scan_id);
	if (fs_id && !r->is_dir)
		sqlite3_bind_int64(st, 28, fs_id);
	return bad;
}

/* The content hash of the live record at path, into old ("" when there
 * is none or it has no hash).  Returns SL_OK or SL_E_DB. */
static int old_hash(struct db *db, const char *path, char old[33], struct sl_err *err)
{
	const unsigned char *h;
	int step;

	old[0] = 0;
	if (!db->recheck_st &&
	    sqlite3_prepare_v3(db->h,
			       "SELECT content_hash FROM files WHERE path=?1 AND deleted_at IS NULL",
			       -1, SQLITE_PREPARE_PERSISTENT, &db->recheck_st, NULL) != SQLITE_OK)
		return DB_FAIL(db->h, err, "prepare recheck");
	sqlite3_reset(db->recheck_st);
	sqlite3_bind_text(db->recheck_st, 1, path, -1, SQLITE_STATIC);
	step = sqlite3_step(db->recheck_st);
	if (step != SQLITE_ROW && step != SQLITE_DONE)
		return DB_FAIL(db->h, err, "recheck");
	h = step == SQLITE_ROW ? sqlite3_column_text(db->recheck_st, 0) : NULL;
	if (h)
		snprintf(old, 33, "%s", (const char *)h);
	sqlite3_reset(db->recheck_st);
	return SL_OK;
}

/* A file read again only because its ctime moved: did its content change?
 * Counted, so that the summary can say what the re-reads found. */
static void recheck(struct db *db, const struct px_record *r, const char *old)
{
	if (!(r->ext_flags & FT_CTIME) || !r->read)
		return;
	if (old[0] && strcmp(old, r->hash) == 0)
		db->ctime_same++;
	else
		db->ctime_changed++;
}

/* A read file whose content a missing record had, and its own record (if
 * any) had not: that record's file was moved here (from another file
 * system, or copied over this one and removed: `mv` across file systems
 * onto an existing file truncates it in place), so it takes the path over.
 * The record the path had, if any, is gone from there; a missing record
 * that a move already marked deleted comes back to life here.  The path's
 * own content unchanged (a touch, an editor's save without changes) is no
 * move, even when a deleted duplicate matches. */
static int relink(struct db *db, const struct px_record *r, const char *old, struct sl_err *err)
{
	int64_t id;
	if (!db->nrelink || !r->read || r->err_code || !r->hash[0] ||
	    !(r->ext_flags & (FT_NEW | FT_REPLACED | FT_CHANGED | FT_CTIME)) ||
	    strcmp(old, r->hash) == 0)
		return SL_OK;
	id = db_relink_take(db, r->size, r->hash);
	if (!id)
		return SL_OK;
	if ((!db->displace_st &&
	     sqlite3_prepare_v3(db->h,
				"UPDATE files SET deleted_at=strftime('%Y-%m-%dT%H:%M:%SZ','now'),"
				" deleted_scan=?3 WHERE path=?2 AND deleted_at IS NULL AND id<>?1",
				-1, SQLITE_PREPARE_PERSISTENT, &db->displace_st, NULL) != SQLITE_OK) ||
	    (!db->relink_st &&
	     sqlite3_prepare_v3(db->h,
				"UPDATE files SET path=?2, deleted_at=NULL, deleted_scan=NULL"
				" WHERE id=?1",
				-1, SQLITE_PREPARE_PERSISTENT, &db->relink_st, NULL) != SQLITE_OK))
		return DB_FAIL(db->h, err, "prepare relink");
	sqlite3_reset(db->displace_st);
	sqlite3_bind_int64(db->displace_st, 1, id);
	sqlite3_bind_text(db->displace_st, 2, r->path, -1, SQLITE_STATIC);
	sqlite3_bind_int64(db->displace_st, 3, db->scan_id);
	if (sqlite3_step(db->displace_st) != SQLITE_DONE)
		return DB_FAIL(db->h, err, "relink a moved file: mark the one it replaces");
	sqlite3_reset(db->relink_st);
	sqlite3_bind_int64(db->relink_st, 1, id);
	sqlite3_bind_text(db->relink_st, 2, r->path, -1, SQLITE_STATIC);
	if (sqlite3_step(db->relink_st) != SQLITE_DONE)
		return DB_FAIL(db->h, err, "relink a moved file");
	db->relinked++;
	return SL_OK;
}

int db_put(struct db *db, const struct px_record *r, struct sl_err *err)
{
	char old[33];
	int rc;

	if (!db->put && sqlite3_prepare_v3(db->h, put_sql, -1, SQLITE_PREPARE_PERSISTENT, &db->put,
					   NULL) != SQLITE_OK)
		return DB_FAIL(db->h, err, "prepare file upsert");
	if (!db->in_txn) {
		if (sqlite3_exec(db->h, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK)
			return DB_FAIL(db->h, err, "begin batch");
		db->in_txn = 1;
		db->batch_start = sys_now();
	}
	if (r->read && (r->ext_flags & (FT_REPLACED | FT_CHANGED | FT_CTIME)) &&
	    (db->nrelink || (r->ext_flags & FT_CTIME))) {
		if ((rc = old_hash(db, r->path, old, err)) != SL_OK)
			return db_drop_batch(db, rc);
	} else {
		old[0] = 0;
	}
	recheck(db, r, old);
	if ((rc = relink(db, r, old, err)) != SL_OK)
		return db_drop_batch(db, rc);
	sqlite3_reset(db->put);
	sqlite3_clear_bindings(db->put);
	if (bind_record(db, db->put, r, db->scan_id, r->devi < db->nfs ? db->fs_ids[r->devi] : 0))
		return db_drop_batch(db, SL_FAIL(err, SL_E_NOMEM, 0,
					      "database: store file record: out of memory"));
	if (sqlite3_step(db->put) != SQLITE_DONE)
		return db_drop_batch(db, DB_FAIL(db->h, err, "store file record"));
	if (++db->batch_rows >= DB_BATCH_ROWS || sys_now() - db->batch_start >= DB_BATCH_SECONDS)
		return db_commit(db, err);
	return SL_OK;
}

int db_sink(void *ctx, const struct px_record *r, struct sl_err *err)
{
	return db_put((struct db *)ctx, r, err);
}
