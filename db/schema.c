/* schema.c - the schema as a list of migrations.
 *
 * Migration i takes a database from user_version i to i+1, inside one
 * transaction with the version bump, so an interrupted upgrade leaves the
 * old schema intact.  Never edit a released migration: add the next one
 * (and document it in docs/schema.md). */
#include <stdio.h>

#include "db/db_int.h"

static const char *const migrations[] = {
	/* 0 -> 1: the initial schema */
	"CREATE TABLE scans("
	"  id INTEGER PRIMARY KEY,"
	"  started_at TEXT NOT NULL,"
	"  finished_at TEXT,"
	"  status TEXT NOT NULL,"
	"  command TEXT NOT NULL,"
	"  order_requested TEXT NOT NULL,"
	"  roots TEXT NOT NULL,"
	"  jobs INTEGER,"
	"  files INTEGER, bytes INTEGER, errors INTEGER,"
	"  walk_s REAL, locate_s REAL, read_s REAL, extract_s REAL, store_s REAL, wall_s REAL,"
	"  version TEXT NOT NULL,"
	"  message TEXT);"
	"CREATE TABLE scan_devices("
	"  scan_id INTEGER NOT NULL REFERENCES scans(id) ON DELETE CASCADE,"
	"  device TEXT NOT NULL,"
	"  fstype TEXT,"
	"  rotational INTEGER,"
	"  extents INTEGER NOT NULL,"
	"  order_used TEXT NOT NULL,"
	"  reason TEXT NOT NULL,"
	"  files INTEGER NOT NULL, bytes INTEGER NOT NULL, read_s REAL,"
	"  PRIMARY KEY(scan_id, device));"
	"CREATE TABLE files("
	"  id INTEGER PRIMARY KEY,"
	"  path TEXT NOT NULL UNIQUE,"
	"  dev INTEGER, ino INTEGER, size INTEGER, mtime_ns INTEGER,"
	"  format TEXT, width INTEGER, height INTEGER,"
	"  make TEXT, model TEXT, datetime_original TEXT, orientation INTEGER,"
	"  gps_lat REAL, gps_lon REAL, exposure_time REAL, f_number REAL, iso INTEGER,"
	"  focal_length REAL, lens_model TEXT,"
	"  content_hash TEXT,"
	"  phys_offset INTEGER, fragments INTEGER, placement TEXT,"
	"  error TEXT, warnings TEXT,"
	"  first_scan INTEGER NOT NULL, last_scan INTEGER NOT NULL,"
	"  indexed_at TEXT NOT NULL, deleted_at TEXT);"
	"CREATE INDEX files_hash ON files(content_hash);"
	"CREATE INDEX files_devino ON files(dev, ino);"
	"CREATE INDEX files_last_scan ON files(last_scan);",
	/* 1 -> 2: perceptual hash of JPEGs (64 bits, stored as a signed integer) */
	"ALTER TABLE files ADD COLUMN phash INTEGER;"
	"CREATE INDEX files_phash ON files(phash) WHERE phash IS NOT NULL;",
	/* 2 -> 3: file systems by a stable identity (device numbers change
	 * between boots), for incremental scans; the scanning process */
	"CREATE TABLE filesystems("
	"  id INTEGER PRIMARY KEY,"
	"  ident TEXT NOT NULL UNIQUE,"
	"  fstype TEXT,"
	"  mount TEXT,"
	"  last_scan INTEGER);"
	"ALTER TABLE files ADD COLUMN fs_id INTEGER REFERENCES filesystems(id);"
	"CREATE INDEX files_fs_ino ON files(fs_id, ino);"
	"ALTER TABLE scans ADD COLUMN pid INTEGER;"
	"ALTER TABLE scans ADD COLUMN unchanged INTEGER;"
	"ALTER TABLE scans ADD COLUMN changed INTEGER;"
	"ALTER TABLE scans ADD COLUMN added INTEGER;"
	"ALTER TABLE scans ADD COLUMN moved INTEGER;"
	"ALTER TABLE scans ADD COLUMN deleted INTEGER;",
	/* 3 -> 4: background runs (--background) and how long they waited for
	 * other I/O; files kept because their file system was absent */
	"ALTER TABLE scans ADD COLUMN background INTEGER;"
	"ALTER TABLE scans ADD COLUMN yield_s REAL;"
	"ALTER TABLE scans ADD COLUMN unavailable INTEGER;",
	/* 4 -> 5: where each volume's change journal stood when the last
	 * complete scan began (Windows, NTFS): a quiet volume is not walked */
	"CREATE TABLE journals("
	"  volume TEXT PRIMARY KEY,"
	"  journal_id INTEGER NOT NULL,"
	"  next_usn INTEGER NOT NULL,"
	"  scan INTEGER NOT NULL);",
	/* 5 -> 6: what `seekless query` filters on, over live records only */
	"CREATE INDEX files_taken ON files(datetime_original)"
	"  WHERE deleted_at IS NULL AND datetime_original IS NOT NULL;"
	"CREATE INDEX files_gps ON files(gps_lat, gps_lon)"
	"  WHERE deleted_at IS NULL AND gps_lat IS NOT NULL;"
	"CREATE INDEX files_format ON files(format) WHERE deleted_at IS NULL;"
	"CREATE INDEX files_errors ON files(path) WHERE deleted_at IS NULL AND error IS NOT NULL;"
	"CREATE INDEX files_camera ON files(coalesce(make,''), coalesce(model,''))"
	"  WHERE deleted_at IS NULL;",
	/* 6 -> 7: a path is unique among live records only, so a record marked
	 * deleted no longer holds its path against a file moved or renamed
	 * onto it (which wedged every later scan); the inode change time, so a
	 * rewrite that put its mtime back is seen; which scan found a record
	 * gone; where each perceptual hash came from.  The hash itself changed
	 * (signs of DCT terms instead of "above the median", so that the eight
	 * orientations compare): old ones are dropped, and the next scan reads
	 * the pictures again to make new ones (phash_src NULL: never tried).
	 * SQLite cannot drop a column constraint: the table is rebuilt (the
	 * documented 12-step way; nothing references files). */
	"CREATE TABLE files_v7("
	"  id INTEGER PRIMARY KEY,"
	"  path TEXT NOT NULL,"
	"  dev INTEGER, ino INTEGER, size INTEGER, mtime_ns INTEGER,"
	"  format TEXT, width INTEGER, height INTEGER,"
	"  make TEXT, model TEXT, datetime_original TEXT, orientation INTEGER,"
	"  gps_lat REAL, gps_lon REAL, exposure_time REAL, f_number REAL, iso INTEGER,"
	"  focal_length REAL, lens_model TEXT,"
	"  content_hash TEXT,"
	"  phys_offset INTEGER, fragments INTEGER, placement TEXT,"
	"  error TEXT, warnings TEXT,"
	"  first_scan INTEGER NOT NULL, last_scan INTEGER NOT NULL,"
	"  indexed_at TEXT NOT NULL, deleted_at TEXT,"
	"  phash INTEGER,"
	"  fs_id INTEGER REFERENCES filesystems(id),"
	"  ctime_ns INTEGER,"
	"  deleted_scan INTEGER,"
	"  phash_src TEXT);"
	"INSERT INTO files_v7(id, path, dev, ino, size, mtime_ns, format, width, height, make, model,"
	"  datetime_original, orientation, gps_lat, gps_lon, exposure_time, f_number, iso,"
	"  focal_length, lens_model, content_hash, phys_offset, fragments, placement, error,"
	"  warnings, first_scan, last_scan, indexed_at, deleted_at, fs_id)"
	" SELECT id, path, dev, ino, size, mtime_ns, format, width, height, make, model,"
	"  datetime_original, orientation, gps_lat, gps_lon, exposure_time, f_number, iso,"
	"  focal_length, lens_model, content_hash, phys_offset, fragments, placement, error,"
	"  warnings, first_scan, last_scan, indexed_at, deleted_at, fs_id FROM files;"
	"DROP TABLE files;"
	"ALTER TABLE files_v7 RENAME TO files;"
	"CREATE UNIQUE INDEX files_path ON files(path) WHERE deleted_at IS NULL;"
	"CREATE INDEX files_deleted_scan ON files(deleted_scan) WHERE deleted_scan IS NOT NULL;"
	"CREATE INDEX files_hash ON files(content_hash);"
	"CREATE INDEX files_devino ON files(dev, ino);"
	"CREATE INDEX files_last_scan ON files(last_scan);"
	"CREATE INDEX files_phash ON files(phash) WHERE phash IS NOT NULL;"
	"CREATE INDEX files_fs_ino ON files(fs_id, ino);"
	"CREATE INDEX files_taken ON files(datetime_original)"
	"  WHERE deleted_at IS NULL AND datetime_original IS NOT NULL;"
	"CREATE INDEX files_gps ON files(gps_lat, gps_lon)"
	"  WHERE deleted_at IS NULL AND gps_lat IS NOT NULL;"
	"CREATE INDEX files_format ON files(format) WHERE deleted_at IS NULL;"
	"CREATE INDEX files_errors ON files(path) WHERE deleted_at IS NULL AND error IS NOT NULL;"
	"CREATE INDEX files_camera ON files(coalesce(make,''), coalesce(model,''))"
	"  WHERE deleted_at IS NULL;"
	"ALTER TABLE scans ADD COLUMN rechecked INTEGER;"
	"ALTER TABLE scans ADD COLUMN complete INTEGER;"
	"ALTER TABLE filesystems ADD COLUMN alt TEXT;"
	"CREATE INDEX filesystems_alt ON filesystems(alt) WHERE alt IS NOT NULL;"
	"UPDATE scans SET complete = 1 WHERE status IN ('ok', 'errors');",
	/* 7 -> 8: the time zone and fraction of a second of the capture time
	 * (issue 16's first fields); the extractor version that made each
	 * record (X_META_VERSION), so that records older than what a new
	 * version reads from their format are read again.  Every existing
	 * record is older (NULL).  scans.upgraded counts such re-reads. */
	"ALTER TABLE files ADD COLUMN tz_offset TEXT;"
	"ALTER TABLE files ADD COLUMN subsec TEXT;"
	"ALTER TABLE files ADD COLUMN meta_version INTEGER;"
	"ALTER TABLE scans ADD COLUMN upgraded INTEGER;",
	/* 8 -> 9: movies (QuickTime, MP4, 3GP): the duration, and Apple's
	 * content identifier, which pairs a Live Photo's still and movie.
	 * Movies' records are older than X_META_VERSION 2 and read again. */
	"ALTER TABLE files ADD COLUMN duration REAL;"
	"ALTER TABLE files ADD COLUMN content_id TEXT;",
	/* 9 -> 10: what people wrote about a picture (XMP, IPTC, EXIF text;
	 * indexer/formats/desc.h): rating, label, title, description, creator,
	 * copyright as text; keywords and hierarchical_keywords as JSON
	 * arrays of text.  Records of formats that can carry them are older
	 * than X_META_VERSION 3 and read again. */
	"ALTER TABLE files ADD COLUMN rating INTEGER;"
	"ALTER TABLE files ADD COLUMN label TEXT;"
	"ALTER TABLE files ADD COLUMN keywords TEXT;"
	"ALTER TABLE files ADD COLUMN hierarchical_keywords TEXT;"
	"ALTER TABLE files ADD COLUMN title TEXT;"
	"ALTER TABLE files ADD COLUMN description TEXT;"
	"ALTER TABLE files ADD COLUMN creator TEXT;"
	"ALTER TABLE files ADD COLUMN copyright TEXT;",
	/* 10 -> 11: the XMP sidecar whose values an image's record carries
	 * (links.c keeps it; export and query read the values through it).
	 * db_open makes the links of an index upgraded to here.  The length
	 * of a motion photo's appended movie: records of the formats that
	 * carry one are older than X_META_VERSION 4 and read again. */
	"ALTER TABLE files ADD COLUMN sidecar_id INTEGER;"
	"ALTER TABLE files ADD COLUMN embedded_video INTEGER;"
	"CREATE INDEX files_sidecar ON files(sidecar_id) WHERE sidecar_id IS NOT NULL;",
	/* 11 -> 12: the birth time, part of a file's identity with its inode
	 * number (diff.c): ext4 and xfs give a freed number to the next file
	 * at once.  NULL until the file is stat'ed by a scan that can tell. */
	"ALTER TABLE files ADD COLUMN btime_ns INTEGER;",
	/* 12 -> 13: files read again only because their record held an error
	 * (a file that could not be read or parsed is tried at every scan):
	 * counted apart, since nothing changed in them. */
	"ALTER TABLE scans ADD COLUMN retried INTEGER;",
	/* 13 -> 14: what `seekless bench` measured, for the report
	 * (benchruns.h): a row per bench with the scans rows of its runs, and
	 * per order its medians and the first run's head path (a blob of
	 * 16-byte dots: time as IEEE double bits, offset; little-endian). */
	"CREATE TABLE benches("
	"  id INTEGER PRIMARY KEY,"
	"  started_at TEXT NOT NULL,"
	"  roots TEXT NOT NULL,"
	"  files INTEGER NOT NULL, bytes INTEGER NOT NULL,"
	"  runs INTEGER NOT NULL,"
	"  caches_dropped INTEGER NOT NULL,"
	"  first_scan INTEGER, last_scan INTEGER);"
	"CREATE TABLE bench_orders("
	"  bench_id INTEGER NOT NULL REFERENCES benches(id) ON DELETE CASCADE,"
	"  pos INTEGER NOT NULL,"
	"  order_name TEXT NOT NULL,"
	"  wall_s REAL, metadata_s REAL, mb_per_s REAL, files_per_s REAL,"
	"  speedup REAL,"
	"  pieces INTEGER NOT NULL,"
	"  path BLOB,"
	"  PRIMARY KEY(bench_id, pos));",
	/* 14 -> 15: scan --quick (docs/design.md, "Quick scans").  A record
	 * read in part has a partial hash and no content hash yet: quick_hash
	 * is XXH3-128 over the size and the first and last QUICK_HASH_SPAN
	 * bytes (extract.h, x_quick_hash), made for every file read since,
	 * in part or whole, so that files of one size can be told apart
	 * before any is read whole; files_size finds a file's equals in size
	 * (seekless dupes).  scans.quick: the scan read in part. */
	"ALTER TABLE files ADD COLUMN quick_hash TEXT;"
	"CREATE INDEX files_size ON files(size, quick_hash) WHERE deleted_at IS NULL;"
	"ALTER TABLE scans ADD COLUMN quick INTEGER;",
};

_Static_assert(sizeof(migrations) / sizeof(migrations[0]) == DB_SCHEMA_VERSION,
	       "DB_SCHEMA_VERSION is the number of migrations");

int db_migrate(sqlite3 *h, struct sl_err *err)
{
	return db_migrate_to(h, (int)(sizeof(migrations) / sizeof(migrations[0])), err);
}

int db_migrate_to(sqlite3 *h, int target, struct sl_err *err)
{
	const int latest = (int)(sizeof(migrations) / sizeof(migrations[0]));
	sqlite3_stmt *st = NULL;
	int version = 0;

	if (sqlite3_prepare_v2(h, "PRAGMA user_version", -1, &st, NULL) != SQLITE_OK)
		return DB_FAIL(h, err, "read schema version");
	if (sqlite3_step(st) == SQLITE_ROW)
		version = sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	if (version > latest)
		return SL_FAIL(err, SL_E_DB, 0,
			       "database schema version %d is newer than this seekless "
			       "understands (%d); upgrade seekless",
			       version, latest);
	if (target > latest)
		target = latest;
	while (version < target) {
		char bump[64];
		if (sqlite3_exec(h, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK)
			return DB_FAIL(h, err, "begin migration");
		snprintf(bump, sizeof(bump), "PRAGMA user_version=%d", version + 1);
		if (sqlite3_exec(h, migrations[version], NULL, NULL, NULL) != SQLITE_OK ||
		    sqlite3_exec(h, bump, NULL, NULL, NULL) != SQLITE_OK) {
			int rc = DB_FAIL(h, err, "migrate schema");
			sqlite3_exec(h, "ROLLBACK", NULL, NULL, NULL);
			return rc;
		}
		if (sqlite3_exec(h, "COMMIT", NULL, NULL, NULL) != SQLITE_OK) {
			int rc = DB_FAIL(h, err, "commit migration");
			sqlite3_exec(h, "ROLLBACK", NULL, NULL, NULL);
			return rc;
		}
		version++;
	}
	return SL_OK;
}
