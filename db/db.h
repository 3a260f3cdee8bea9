/* db.h - the index: one SQLite file, one writer.
 *
 * WAL journal, prepared statements only, records written in batched
 * transactions (a killed process loses at most the open batch; the file is
 * never corrupt).  The schema is versioned with PRAGMA user_version and
 * upgraded by migrations on open (schema.c; docs/schema.md).  A struct db is
 * used by one thread at a time.  It is opaque: db/'s own files share its
 * insides and their helpers through db/db_int.h, which nothing outside db/
 * includes but the white-box unit test.
 */
#ifndef SL_DB_H
#define SL_DB_H

#include <stdint.h>
#include <stdio.h>

#include "common/err.h"
#include "indexer/record.h"

#define DB_SCHEMA_VERSION 15

struct db;

/* db_open flags */
enum {
	DB_CREATE = 1, /* a missing index is made */
	DB_READER = 2  /* the caller only reads: an index it cannot write is
			  opened read-only, as it is, instead of refused */
};

/* Open and migrate the index at path.  With DB_CREATE a missing file is
 * created with mode 0600 (and missing parent directories 0700).  An index
 * this process cannot write (a read-only file or file system; a folder
 * that cannot take the -wal, -shm and lock files) is refused, unless
 * DB_READER: then it is opened read-only and read as it is; nothing is
 * written, not even an upgrade of its schema (an older one is refused).
 * Returns SL_OK or SL_E_DB, err saying
 * what is wrong with the path as it is, never with SQL: no index there,
 * a directory, not a SQLite database or another program's, read-only
 * (and why), a schema newer than this program or, read-only, older; the
 * index's own files' checks (sys_create_private). */
int db_open(const char *path, int flags, struct db **out, struct sl_err *err);
void db_close(struct db *db);

/* The scan db_scan_begin began (0 before). */
int64_t db_scan_id(const struct db *db);

/* What this connection's scan found on the way: records taken over by a
 * file that moved across file systems (relinked), and files read because
 * only their ctime moved whose content had changed. */
void db_scan_counts(const struct db *db, uint64_t *relinked, uint64_t *ctime_changed);

/* Take the index's lock (PATH.lock, flock): one scan per index at a time.
 * Scans a killed process left 'running' are then marked interrupted.
 * Returns SL_OK, or SL_E_RESOURCE naming the process that holds it. */
int db_lock(struct db *db, struct sl_err *err);

/* The filesystems.id of each ftab device, by identity (dev_info.fs_id),
 * registering new ones; remembered for db_put.  Returns SL_OK or SL_E_DB. */
struct dev_info;
int db_map_fs(struct db *db, const struct dev_info *devs, size_t n, struct sl_err *err);


/* Start a scan row (status 'running'); later records belong to it. */
int db_scan_begin(struct db *db, const char *command, const char *order,
		  const char *const *roots, size_t nroots, int jobs, struct sl_err *err);

/* Store one file record in the open batch (upsert by path). */
int db_put(struct db *db, const struct px_record *r, struct sl_err *err);
/* px_sink_fn adapter for db_put; ctx is the struct db. */
int db_sink(void *ctx, const struct px_record *r, struct sl_err *err);
/* Commit the open batch, if any. */
int db_commit(struct db *db, struct sl_err *err);

struct db_device_row {
	const char *device;
	const char *fstype;
	int rotational;  /* -1 unknown */
	int extents;
	const char *order;
	const char *reason;
	uint64_t files;
	uint64_t bytes;
	double read_s;
};
int db_scan_device(struct db *db, const struct db_device_row *d, struct sl_err *err);

struct db_scan_end {
	const char *status;   /* ok | errors | interrupted | failed */
	uint64_t files, bytes, errors;
	uint64_t unchanged, changed, added, moved, deleted; /* incremental */
	uint64_t unavailable;
	uint64_t rechecked;   /* read again only because their ctime moved */
	uint64_t upgraded;    /* unchanged, read again: made by an older extractor */
	uint64_t retried;     /* unchanged, read again: their record has an error */
	int complete;         /* walked everything and applied deletions */
	int quick;            /* scan --quick: large files read in part */
	int background;
	double yield_s;
	double walk_s, locate_s, read_s, extract_s, store_s, wall_s;
	const char *message;
};
int db_scan_end(struct db *db, const struct db_scan_end *e, struct sl_err *err);

/* ---- incremental scans (diff.c) ---- */

struct ftab;

struct db_diff {
	uint64_t unchanged, changed, added, moved;
	uint64_t retried;        /* unchanged, read again because their record has an
				    error (not in changed: nothing changed) */
	uint64_t rechecked;      /* read again only because their ctime moved (FT_CTIME) */
	uint64_t rehash;         /* unchanged, read for a perceptual hash (FT_REHASH) */
	uint64_t completed;      /* unchanged, read whole: a quick scan read it in
				    part (DB_DIFF_COMPLETE, FT_UPGRADE) */
	uint64_t upgraded;       /* unchanged, read again: its record is older than
				    what this version reads from its format (FT_UPGRADE) */
	uint64_t unavailable;    /* missing, on a file system this scan did not see */
	struct {
		uint32_t file;   /* ftab index */
		int64_t id;      /* its record */
		int moved;       /* path changed; else only its identity */
	} *moves;
	size_t nmoves, cap_moves;
	int64_t *missing;        /* live records under the roots no file took */
	size_t nmissing, cap_missing;
	int64_t *confirm;        /* provisional deletions no file took */
	size_t nconfirm, cap_confirm;
	void *recs;              /* working set */
	size_t nrecs;
};

/* A record marked deleted by a scan that did not see the whole tree (it
 * could not list a directory, worked from a list, was killed or failed)
 * may have been marked only because a moved file took its path while its
 * own file sat where that scan could not look.  Such provisional deletions
 * stay findable: by identity (diff pass 2) and by content (relinking),
 * until a complete scan confirms them.  SQL over files' columns. */
#define DB_PROVISIONAL_SQL                                                              \
	"deleted_at IS NOT NULL AND deleted_scan IN (SELECT id FROM scans WHERE"         \
	" coalesce(complete, 0) = 0)"

/* A record a quick scan made from part of its file: no content hash yet
 * (docs/design.md, "Quick scans").  SQL over files' columns. */
#define DB_PENDING_SQL_OF(t)                                                             \
	"(" t ".content_hash IS NULL AND " t ".quick_hash IS NOT NULL AND " t ".error IS NULL)"
#define DB_PENDING_SQL DB_PENDING_SQL_OF("files")

/* files.ctime_ns of a file whose times were too close to its read to
 * trust (px_racy): the next scan reads it again, whatever its times. */
#define DB_CTIME_RACY (-1)

/* db_diff flags */
enum {
	DB_DIFF_FULL = 1,        /* read every file (FT_SKIP on none); moves and
				    deletions as usual */
	DB_DIFF_TRUST_MTIME = 2, /* a ctime that moved alone is no reason to read */
	DB_DIFF_PHASH = 4,       /* perceptual hashes are made: read pictures that
				    never had one tried (FT_REHASH) */
	DB_DIFF_COMPLETE = 8     /* read whole the unchanged files a quick scan
				    read in part (FT_UPGRADE; DB_PENDING_SQL) */
};

/* Compare the walked and stat'ed files of ft (locate_stat) with the
 * index's live records under the roots (diff.c says how a file finds its
 * record): set FT_SKIP on files not to read (unchanged, or only moved),
 * FT_CTIME on those read only because their ctime moved, FT_UPGRADE on
 * unchanged files whose record an older extractor made (X_META_STALE_SQL), FT_NEW on files
 * the index does not know, FT_REPLACED on files that replaced their path's
 * file, and fill *d.  db_map_fs first.  Returns SL_OK, SL_E_DB or
 * SL_E_NOMEM. */
int db_diff(struct db *db, struct ftab *ft, char *const *roots, size_t nroots, int flags,
	    struct db_diff *d, struct sl_err *err);
void db_diff_free(struct db_diff *d);

/* Move records to their files' new paths and refresh identities, in one
 * transaction; a missing record at a path a record moves to is marked
 * deleted.  Before the new records are stored. */
int db_apply_moves(struct db *db, const struct ftab *ft, const struct db_diff *d,
		   struct sl_err *err);

/* Load the records a new file could take over (db_put does, for records
 * with FT_NEW or FT_REPLACED, when size and content hash match): the
 * missing ones, and those under the roots that a scan which did not finish
 * marked deleted.  Empty files are never taken over. */
int db_relink_candidates(struct db *db, const struct db_diff *d, char *const *roots,
			 size_t nroots, struct sl_err *err);

/* After a complete scan: mark the missing records no new file took as
 * deleted, and confirm the provisional deletions no file claimed; *count
 * says how many records this scan marked deleted in all (db_deleted_count,
 * not counting the confirmations). */
int db_mark_deleted(struct db *db, const struct db_diff *d, uint64_t *count, struct sl_err *err);
/* How many records this scan marked deleted (a move or relink onto the
 * path of a missing record marks it, even when the scan is incomplete). */
int db_deleted_count(struct db *db, uint64_t *count, struct sl_err *err);

/* The change-journal position stored under key (app/scanjn.h: a volume and
 * a root on it): returns SL_OK with *found 0 or 1 and *walked_days, the
 * days since the scan that last walked the root began (-1 when that scan's
 * row is gone); or SL_E_DB. */
int db_journal_get(struct db *db, const char *key, uint64_t *journal_id, int64_t *next_usn,
		   double *walked_days, int *found, struct sl_err *err);
/* Store it, for the scan in progress; walked: this scan walked the root
 * (else the scan that last did stays the one walked_days counts from). */
int db_journal_put(struct db *db, const char *key, uint64_t journal_id, int64_t next_usn,
		   int walked, struct sl_err *err);
/* Forget it: the next scan walks the root.  Returns SL_OK or SL_E_DB. */
int db_journal_forget(struct db *db, const char *key, struct sl_err *err);

/* Delete the records marked deleted more than `days` days ago (0: all);
 * with dry_run, only count them.  *count gets how many (would) go. */
int db_purge(struct db *db, long days, int dry_run, uint64_t *count, struct sl_err *err);

/* A file system the index knows, as db_fs_find found it. */
struct db_fs {
	int64_t id;          /* filesystems.id */
	char ident[128];     /* filesystems.ident: what stats lists, purge takes */
	char alt[128];       /* its other name, "" when none */
	char fstype[64];     /* as last seen, "" when never known */
	char mount[1024];    /* the mount point it was last seen at, "" when never known */
	uint64_t live;       /* records not marked deleted */
	uint64_t deleted;    /* records marked deleted */
};

/* The file system whose identity or other name is `what` (filesystems
 * ident, alt), else the only one last mounted at `what` (trailing slashes
 * ignored), with its record counts, into *fs.  Returns SL_OK; SL_E_USAGE
 * when no file system, or several (drives mounted there in turn, each
 * named in the message), match; or SL_E_DB. */
int db_fs_find(struct db *db, const char *what, struct db_fs *fs, struct sl_err *err);

/* Forget a file system gone for good (a reformatted or retired drive),
 * whose records otherwise stay live as "unavailable": fs as db_fs_find
 * found it, under the same db_lock, so that no scan adds to it between.
 * Its records, live and deleted, and its row go in one transaction, with
 * the sidecar links of what is left; so do the stored change-journal
 * positions, so that a volume forgotten while still there is walked again,
 * not trusted to be quiet.  Whether it may go (it is mounted now: purge
 * asks for --force) is the caller's to decide.  *count gets the records
 * removed.  Returns SL_OK or SL_E_DB. */
int db_forget_fs(struct db *db, const struct db_fs *fs, uint64_t *count, struct sl_err *err);

/* Flags: DB_CSV (else JSON lines); DB_EXTENDED (after the contract's keys:
 * phash as 16 hex digits, warnings, placement); DB_SCANS (the scans table
 * instead, one row per run, by id). */
enum db_format { DB_JSONL = 0, DB_CSV = 1, DB_EXTENDED = 2, DB_SCANS = 4, DB_PATHS = 8,
		 DB_NUL = 16 };
/* Write one record per live file, ordered by path (or per scan). */
int db_export(struct db *db, FILE *out, int format, struct sl_err *err);

/* SQL over a row of files (the outer table named files): a descriptive
 * column as export gives it, the XMP sidecar's value when the record has a
 * sidecar (links.c) and it holds one, else the record's own.  A subquery
 * by rowid, not a join, so that the statement's other columns stay
 * unqualified. */
#define DB_SIDECAR_OVER(c)                                                              \
	"coalesce((SELECT sc." c " FROM files AS sc WHERE sc.id = files.sidecar_id), " c ")"
/* SQL: the row is not a sidecar that speaks for a live image (whose
 * values the image's row gives already: counted once). */
#define DB_NOT_LINKED_SIDECAR                                                           \
	"NOT (format IS 'xmp' AND EXISTS (SELECT 1 FROM files AS im"                     \
	" WHERE im.sidecar_id = files.id AND im.deleted_at IS NULL))"

#define DB_QUERY_KEYWORDS 8
/* The formats `query --video` means, as an SQL list. */
#define DB_VIDEO_FORMATS "'mov','mp4','m4v','3gp','3g2','avi'"

/* What `seekless query` selects; unset fields (NULL, 0) do not filter.
 * Text matches are case-insensitive substrings; dates are "YYYY",
 * "YYYY-MM" or "YYYY-MM-DD" naming a day that exists, and both bounds are
 * inclusive (--to 2020 is through the end of 2020).  The descriptive
 * fields (rating, label, keywords) are matched as export gives them: an
 * XMP sidecar's over the file's own. */
struct db_query {
	const char *camera;   /* in "make model" */
	const char *lens;
	const char *from, *to;
	const char *format;   /* the stored name ("jpeg", not "jpg") */
	int errors;           /* only files with an error */
	int near;             /* within km of (lat, lon) */
	double lat, lon, km;
	int rating;           /* rating_lo <= rating <= rating_hi (-1..5) */
	int rating_lo, rating_hi;
	const char *label;    /* the label, any case */
	/* every one of these as a keyword, a hierarchical keyword or its leaf
	 * (any case): "Sea" finds "Places|Coast|Sea" */
	const char *keywords[DB_QUERY_KEYWORDS];
	size_t nkeywords;
	int video;            /* movies only (DB_VIDEO_FORMATS) */
};

/* Check a query's values (dates, ratings, coordinates).  Returns SL_OK or
 * SL_E_USAGE with the reason in err: "--from 2023-13: not a date (...)". */
int db_query_check(const struct db_query *q, struct sl_err *err);

/* The live files matching q, ordered by path: with DB_PATHS their paths
 * as stored (one per line, or NUL-terminated with DB_NUL), else records
 * as db_export writes them (DB_JSONL, DB_CSV, DB_EXTENDED). */
int db_query(struct db *db, const struct db_query *q, FILE *out, int format,
	     struct sl_err *err);

/* Files that belong together, each group handed to fn with its kind and
 * paths (valid during the call): "raw+jpeg", a RAW file and the JPEG or
 * HEIF of the same folder, stem and capture time; "live", the stills and
 * movies sharing an Apple content identifier (a Live Photo); "motion", a
 * motion photo, with the bytes of its movie in embedded (else -1).  *count
 * gets how many groups.  Returns SL_OK, SL_E_DB or SL_E_NOMEM. */
int db_pairs(struct db *db,
	     void (*fn)(void *ctx, const char *kind, const char *const *paths, size_t n,
			int64_t embedded),
	     void *ctx, uint64_t *count, struct sl_err *err);

/* One scan of db_stats (strings valid during the call, may be NULL). */
struct db_stats_scan {
	int64_t id;
	const char *started_at, *command, *status, *order;
	int64_t files, bytes;
	double wall_s, read_s;
};

/* One file system of db_stats, as the index knows it (strings valid
 * during the call; ident is never NULL, the others are NULL where never
 * known). */
struct db_stats_fs {
	const char *ident;       /* filesystems.ident: what purge --file-system takes */
	const char *alt;         /* its other name */
	const char *fstype;      /* as last seen */
	const char *mount;       /* where it was last seen */
	const char *last_walked; /* when the scan that last walked it began (UTC, ISO 8601) */
	int64_t last_scan;       /* that scan's id; 0 when none did */
	int64_t files, bytes;    /* its live records */
	int64_t deleted;         /* its records marked deleted */
};

/* What db_stats hands out, in this order: totals once; then for each
 * grouped count section(key, title), a group per row, section(NULL,
 * NULL); then section("file_systems", title), fs per file system (most
 * live records first), section(NULL, NULL); then section("scans", NULL),
 * for each scan scan(s), a device per disk, scan(NULL), and
 * section(NULL, NULL).  Labels are as stored (len bytes; not always
 * UTF-8). */
struct db_stats_out {
	/* phash_pending: pictures without a perceptual hash, never tried
	 * (db_phash_pending); content_pending, pending_bytes: files a quick
	 * scan read in part (db_content_pending) */
	void (*totals)(void *ctx, int64_t files, int64_t bytes, int64_t errors, int64_t deleted,
		       int64_t phash_pending, int64_t content_pending, int64_t pending_bytes);
	void (*section)(void *ctx, const char *key, const char *title);
	void (*group)(void *ctx, const char *label, size_t len, int64_t files, int64_t bytes);
	void (*fs)(void *ctx, const struct db_stats_fs *f);
	void (*scan)(void *ctx, const struct db_stats_scan *s);
	void (*device)(void *ctx, const char *device, const char *order, int64_t files,
		       int64_t bytes, double read_s);
	void *ctx;
};

/* How many live records are pictures whose perceptual hash was never
 * tried: the next scan with hashes on reads them for it (a scan whose disk
 * was faster than hashing leaves some, px_opts.phash_defer; a --no-phash
 * scan leaves all).  Returns SL_OK or SL_E_DB. */
int db_phash_pending(struct db *db, uint64_t *count, struct sl_err *err);

/* How many live records a quick scan made from part of their file (no
 * content hash yet, DB_PENDING_SQL), and their bytes: the next scan
 * without --quick reads them whole.  Returns SL_OK or SL_E_DB. */
int db_content_pending(struct db *db, uint64_t *count, uint64_t *bytes, struct sl_err *err);

/* What the index holds (counts and sizes by format, camera, year, rating,
 * keyword; errors, deleted; the file systems) and the last nscans scans
 * with their disks' orders and speeds, handed to out.  Returns SL_OK or
 * SL_E_DB. */
int db_stats(struct db *db, int nscans, const struct db_stats_out *out, struct sl_err *err);

/* One group of duplicates (valid during the call): "identical", with its
 * content hash and size, or "near", with the bits its hashes may differ
 * by; its paths as stored (lens: their bytes; they need not be UTF-8). */
struct db_dupe_group {
	const char *kind;
	const char *content_hash; /* identical */
	int64_t size;             /* identical */
	int max_bits;             /* near; -1 for identical */
	const char *const *paths;
	const size_t *lens;
	size_t n;
};

/* The files a quick scan read in part (DB_PENDING_SQL) that may be
 * identical to another live file: one of the same size whose partial hash
 * is theirs (complete, or pending too), or unknown with a content hash (a
 * record made before schema 15); an error with no content hash is no one's
 * duplicate.  Only their
 * content hashes can settle it; every other pending file is unlike all
 * others.  *list gets their paths, NUL-terminated one after another
 * (*len bytes; free it), *count how many, *bytes their sizes.  The staged
 * method of fclones and rmlint: size, then ends, then whole.  Returns
 * SL_OK, SL_E_DB or SL_E_NOMEM. */
int db_dupe_candidates(struct db *db, char **list, size_t *len, uint64_t *count,
		       uint64_t *bytes, struct sl_err *err);

/* Groups of duplicates, each handed to fn (which returns 0, or -1 when it
 * cannot write: the run stops with SL_E_IO): with near_bits < 0 files with
 * the same content hash (empty files left out); else images whose
 * perceptual hashes are within near_bits bits of one another (rotated
 * copies included: the hash is of the picture as shown).  *ngroups gets
 * how many.  Returns SL_OK, SL_E_DB, SL_E_NOMEM, SL_E_IO. */
int db_dupes(struct db *db, int near_bits, int (*fn)(void *ctx, const struct db_dupe_group *g),
	     void *ctx, uint64_t *ngroups, struct sl_err *err);

/* A hash from a picture embedded in the file (an EXIF thumbnail, a RAW's
 * preview) may see it framed a little otherwise than the image itself
 * (the camera's own resize and crop): against a hash of an image it may
 * be this many bits further off (docs/extraction.md has the measurement). */
#define DB_EMBEDDED_EXTRA_BITS 3

/* The grouping behind db_dupes's near groups, on n hashes (bits 0..16):
 * two are near when within bits of each other in any of their eight
 * orientations (ph_distance), or bits + extra when exactly one of them is
 * embedded[] (may be NULL: none is).  group[i] becomes the smallest index
 * in i's group.  Returns 0 or -1 (no memory, bad bits). */
int db_near_groups(const uint64_t *h, const unsigned char *embedded, size_t n, int bits, int extra,
		   uint32_t *group);

/* One scan's row, for `service status` (strings valid during the call). */
struct db_scan_row {
	int64_t id;
	const char *started_at, *command, *status;
	int64_t unchanged, changed, added, moved, deleted, files, errors;
	double wall_s, yield_s;
};

/* The last n scans, newest first, each handed to row (the caller prints:
 * db/ formats only the records of export and query).  bench's runs are not
 * among them: one bench writes a row per order and run, which would push
 * the nightly history out of view (export --scans has every row). */
int db_scans(struct db *db, int n, void (*row)(void *ctx, const struct db_scan_row *r),
	     void *ctx, struct sl_err *err);

#endif
