/* db_int.h - inside the index (db.h): the connection's state and the
 * helpers db/'s files share.  Nothing outside db/ includes this, but the
 * white-box unit test (tests/unit/test_db.c), which also uses the fault
 * injection declared here.
 *
 * Its files call one way, each down to the ones below it
 * (tools/dev/callgraph.py checks): writer.c (the records) takes diff.c's
 * relink candidates; both, and db.c (the connection), end their batches
 * in batch.c (the open transaction), which updates links.c's sidecar
 * links; everything is above core.c (db_fail, db_racy), which calls none
 * of them.  A helper two files share goes below both. */
#ifndef SL_DB_INT_H
#define SL_DB_INT_H

#include <stdint.h>

#include <sqlite3.h>

#include "db/db.h"

/* Rows per transaction, and the longest a batch stays open. */
/* A record of a picture whose perceptual hash was never tried: made by a
 * --no-phash scan, before schema 7 changed the hash, or left pending by a
 * scan whose disk was faster than hashing (px_opts.phash_defer).  The next
 * scan with hashes on reads it for one (FT_REHASH). */
#define DB_NEEDS_HASH_SQL                                                                \
	"(phash_src IS NULL AND error IS NULL AND format IN " X_PHASH_FORMATS_SQL ")"

#define DB_BATCH_ROWS 1000
#define DB_BATCH_SECONDS 1.0

/* Bytes of statement journal SQLite keeps in memory before it spills to a
 * file (db_configure).  At most 128 KiB: SQLite moves the journal to the
 * file in chunks of this size, and its Unix VFS masks a write's length to
 * 17 bits (os_unix.c seekAndWriteFd), so a bigger chunk is a short write
 * that fails the statement as SQLITE_FULL (3.40: a 1 MiB threshold did). */
#define DB_STMT_SPILL (120 << 10)

/* A missing record a new file may take over (same size and content). */
struct db_relink {
	int64_t id;
	size_t missing; /* its index in db_diff.missing; SIZE_MAX: already deleted */
	uint64_t size;
	char hash[33];
	int used;
};

struct db {
	sqlite3 *h;
	char *path;
	sqlite3_stmt *put;   /* upsert of one file record */
	int in_txn;
	int batch_rows;
	double batch_start;
	int64_t scan_id;     /* scan the records belong to */
	void *lock;          /* held by db_lock */
	int64_t *fs_ids;     /* filesystems.id by ftab device index (db_map_fs) */
	int64_t *tick_ns;    /* timestamp granularity by ftab device index, at most */
	size_t nfs;
	struct db_relink *relink; /* sorted by (size, hash); db_relink_candidates */
	size_t nrelink, cap_relink;
	sqlite3_stmt *relink_st, *displace_st;
	uint64_t relinked;
	sqlite3_stmt *recheck_st;
	uint64_t ctime_same, ctime_changed; /* FT_CTIME files read: content as before, or not */
	sqlite3_stmt *links_group_st, *links_set_st, *links_touched_st; /* links.c */
};

/* Current PRAGMA user_version. */
int db_user_version(struct db *db, int *version, struct sl_err *err);

/* The id of an unused candidate with this size and hash, now used; 0 if
 * none. */
int64_t db_relink_take(struct db *db, uint64_t size, const char *hash);

/* Fault injection for tests (fault.c): after `after` more successful
 * writes to database files, writes, truncates and syncs fail as a failing
 * disk (DB_FAULT_IOERR) or a full one (DB_FAULT_FULL) would make them,
 * until DB_FAULT_NONE.  Affects connections opened after the first call.
 * Not for production use. */
enum db_fault { DB_FAULT_NONE, DB_FAULT_IOERR, DB_FAULT_FULL };
void db_inject(enum db_fault kind, int after);
/* How many statement journals SQLite has written to a file (not kept in
 * memory) since the first db_inject. */
long db_fault_subjournals(void);

/* SQLite's process-wide settings (the statement-journal spill); db_open
 * and db_inject call it before SQLite initialises. */
void db_configure(void);

/* Apply migrations up to DB_SCHEMA_VERSION (schema.c);
 * db_migrate_to stops at version target (tests build old databases). */
int db_migrate(sqlite3 *h, struct sl_err *err);
int db_migrate_to(sqlite3 *h, int target, struct sl_err *err);
/* Whether a file of ftab device devi, stat'ed at some moment
 * between the wall-clock times from and to, had a change time (else mtime)
 * so close to that moment that another change in the same timestamp tick
 * could follow unseen ("racy", as git calls it): its record then gets
 * DB_CTIME_RACY, and the next scan reads it again. */
int db_racy(const struct db *db, uint16_t devi, int64_t ctime_ns, int64_t mtime_ns, int64_t from,
	    int64_t to);
/* Sidecar links (links.c).  db_links_init sets up, on the
 * connection, the notes of which paths changed; an index upgraded from a
 * schema before 11 (from_version) gets its links made, in a transaction of
 * its own.  db_links_update, inside the open transaction, just before it
 * commits, recomputes files.sidecar_id for every image the changed paths
 * could affect. */
int db_links_init(struct db *db, int from_version, struct sl_err *err);
int db_links_update(struct db *db, struct sl_err *err);
/* The length of a file name's stem, as Python's
 * os.path.splitext splits it (up to the last dot that does not lead it). */
size_t db_stem_len(const char *name, size_t n);
/* A batch that failed is rolled back whole; returns rc (batch.c, with
 * db.h's db_commit). */
int db_drop_batch(struct db *db, int rc);
/* SL_E_DB error from the handle's last failure (core.c, with db_racy). */
int db_fail(sqlite3 *h, struct sl_err *err, const char *file, int line, const char *what);
#define DB_FAIL(h, err, what) db_fail((h), (err), __FILE__, __LINE__, (what))

#endif
