/* db.h - the index: one SQLite file, one writer.
 *
 * WAL journal, prepared statements only, records written in batched
 * transactions (a killed process loses at most the open batch; the file is
 * never corrupt).  The schema is versioned with PRAGMA user_version and
 * upgraded by migrations on open (schema.c; docs/schema.md).  A struct db is
 * used by one thread at a time.
 */
#ifndef SL_DB_H
#define SL_DB_H

#include <stdint.h>
#include <stdio.h>

#include <sqlite3.h>

#include "common/err.h"
#include "indexer/pipeline.h"

#define DB_SCHEMA_VERSION 2

/* Rows per transaction, and the longest a batch stays open. */
#define DB_BATCH_ROWS 1000
#define DB_BATCH_SECONDS 1.0

struct db {
	sqlite3 *h;
	char *path;
	sqlite3_stmt *put;   /* upsert of one file record */
	int in_txn;
	int batch_rows;
	double batch_start;
	int64_t scan_id;     /* scan the records belong to */
};

/* Open and migrate the database at path; with create, a missing file is
 * created with mode 0600 (and missing parent directories 0700).  Returns
 * SL_OK or SL_E_DB (err says what, including "newer schema than this
 * program" and "no database here"). */
int db_open(const char *path, int create, struct db **out, struct sl_err *err);
void db_close(struct db *db);

/* Current PRAGMA user_version. */
int db_user_version(struct db *db, int *version, struct sl_err *err);

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
	double walk_s, locate_s, read_s, extract_s, store_s, wall_s;
	const char *message;
};
int db_scan_end(struct db *db, const struct db_scan_end *e, struct sl_err *err);

/* Mark live files under root (the root itself or below it) that this scan
 * did not store as deleted; *count says how many. */
int db_mark_missing(struct db *db, const char *root, uint64_t *count, struct sl_err *err);

/* Flags: DB_CSV (else JSON lines), DB_EXTENDED (after the contract's keys:
 * phash as 16 hex digits, warnings, placement). */
enum db_format { DB_JSONL = 0, DB_CSV = 1, DB_EXTENDED = 2 };
/* Write one record per live file, ordered by path. */
int db_export(struct db *db, FILE *out, int format, struct sl_err *err);

/* Within db/: apply migrations up to DB_SCHEMA_VERSION (schema.c);
 * db_migrate_to stops at version target (tests build old databases). */
int db_migrate(sqlite3 *h, struct sl_err *err);
int db_migrate_to(sqlite3 *h, int target, struct sl_err *err);
/* Within db/: SL_E_DB error from the handle's last failure. */
int db_fail(sqlite3 *h, struct sl_err *err, const char *file, int line, const char *what);
#define DB_FAIL(h, err, what) db_fail((h), (err), __FILE__, __LINE__, (what))

#endif
