#include "db/db_int.h"

#include <stdlib.h>
#include <string.h>

#include <errno.h>

#include "common/strbuf.h"
#include "common/sys.h"
#include "scanner/device.h"

#define NOW_SQL "strftime('%Y-%m-%dT%H:%M:%SZ','now')"

/* A fixed statement; a failure says what was being done, and keeps the
 * statement for SEEKLESS_DEBUG=1 only (users read the message). */
static int exec(struct db *db, const char *sql, const char *what, struct sl_err *err)
{
	int rc;

	if (sqlite3_exec(db->h, sql, NULL, NULL, NULL) == SQLITE_OK)
		return SL_OK;
	rc = DB_FAIL(db->h, err, what);
	if (err)
		err->detail = sql;
	return rc;
}

void db_configure(void)
{
	static int done;

	/* SQLite keeps a statement journal in memory up to 64 KiB, then moves
	 * it to a file in the temporary directory (/var/tmp: a disk) for the
	 * rest of the transaction.  One upsert of a file record touches the
	 * row and every index, more than 64 KiB, so each batch wrote ~18 pages
	 * a record to that file: 35,000 pwrites for 2,000 files, more than
	 * all the scan's other system calls (keeping them in memory took 14%
	 * off a warm scan).  DB_STMT_SPILL holds a one-record
	 * statement; the diff's bulk statements over a big index still spill,
	 * so memory stays bounded (temp_store=MEMORY would not spill at all).
	 * Process-wide: it must come before SQLite initialises. */
	if (!done) {
		done = 1;
		sqlite3_config(SQLITE_CONFIG_STMTJRNL_SPILL, DB_STMT_SPILL);
	}
}

/* The index and its journal files, as sys_create_private checks (and with
 * create makes) them, each refusal said for what it is. */
static int private_files(const char *path, int create, struct sl_err *err)
{
	static const char *const suffixes[] = {"", "-wal", "-shm"};
	struct strbuf p = STRBUF_INIT;
	size_t i;
	int e = 0;

	for (i = 0; i < sizeof(suffixes) / sizeof(suffixes[0]); i++) {
		sb_reset(&p);
		sb_addf(&p, "%s%s", path, suffixes[i]);
		e = p.oom ? ENOMEM : sys_create_private(p.p, create);
		if (e)
			break;
	}
	if (e == EISDIR && i == 0)
		SL_FAIL(err, SL_E_DB, 0,
			"index '%s' is a directory: name the index file itself (such as %s%sindex.db)",
			p.p, p.p, p.len && (p.p[p.len - 1] == '/' || p.p[p.len - 1] == '\\') ? "" : "/");
	else if (e == ELOOP)
		SL_FAIL(err, SL_E_DB, 0, "database: '%s' is a symbolic link; not written", p.p);
	else if (e == EMLINK)
		SL_FAIL(err, SL_E_DB, 0,
			"database: '%s' has other names (hard links); not written", p.p);
	else if (e == EPERM)
		SL_FAIL(err, SL_E_DB, 0,
			"database: '%s' belongs neither to root nor to its folder's owner; "
			"not written as root", p.p);
	else if (e == EINVAL || e == EISDIR)
		SL_FAIL(err, SL_E_DB, 0, "database: '%s' is not a regular file", p.p);
	else if (e)
		SL_FAIL(err, SL_E_DB, e, "database: cannot %s '%s'", create ? "create" : "open",
			p.p);
	sb_free(&p);
	return e ? SL_E_DB : SL_OK;
}

/* Why an index cannot be written, as "index '...' is read-only (why)"
 * says it: e from sys_can_write, on the file or (folder) on its folder. */
static void why_readonly(int e, int folder, char *why, size_t cap)
{
	char os[128];

	if (e == EROFS)
		snprintf(why, cap, "its file system is read-only");
	else if (e == EACCES)
		snprintf(why, cap, folder ? "no permission to make files in its folder, where "
					    "SQLite keeps its journal"
					  : "no permission to write it");
	else if (e == EPERM)
		snprintf(why, cap, folder ? "its folder is immutable"
					  : "the file is immutable");
	else {
		sys_strerror(e, os, sizeof(os));
		snprintf(why, cap, "%s%s", folder ? "its folder: " : "", os);
	}
}

/* The folder path names its file in ("." for a bare name). */
static void folder_of(const char *path, struct strbuf *dir)
{
	const char *a = strrchr(path, '/'), *b = strrchr(path, '\\');
	const char *slash = a > b ? a : b;

	sb_reset(dir);
	if (slash)
		sb_add(dir, path, (size_t)(slash - path) + (slash == path));
	else
		sb_adds(dir, ".");
}

/* Whether this process can write the existing index at path (e: what
 * sys_can_write said of the file); if not, why.  SQLite makes its -wal
 * and -shm files next to the index, and db_lock its lock file: the
 * folder must take them unless all three are there to be written. */
static int index_writable(const char *path, int e, char *why, size_t cap)
{
	static const char *const beside[] = {"-wal", "-shm", ".lock"};
	struct strbuf p = STRBUF_INIT;
	size_t i;
	int all = 1;

	if (e) {
		why_readonly(e, 0, why, cap);
		return 0;
	}
	for (i = 0; all && i < sizeof(beside) / sizeof(beside[0]); i++) {
		sb_reset(&p);
		sb_addf(&p, "%s%s", path, beside[i]);
		all = !p.oom && sys_can_write(p.p) == 0;
	}
	if (!all) {
		folder_of(path, &p);
		e = p.oom ? ENOMEM : sys_can_write(p.p);
		if (e)
			why_readonly(e, 1, why, cap);
	}
	sb_free(&p);
	return e == 0;
}

/* Whether path+suffix exists; with data, whether it holds a byte. */
static int beside_exists(const char *path, const char *suffix, int data)
{
	struct strbuf p = STRBUF_INIT;
	FILE *f;
	int yes = 0;

	sb_addf(&p, "%s%s", path, suffix);
	if (!p.oom && !data)
		yes = sys_can_write(p.p) != ENOENT;
	else if (!p.oom && (f = sys_fopen(p.p, "rb")) != NULL) {
		yes = fgetc(f) != EOF;
		fclose(f);
	}
	sb_free(&p);
	return yes;
}

/* path as a file: URI that opens it immutable: every byte but the
 * unreserved ones escaped (SQLite decodes them); "file:///C:/..." on
 * Windows, whose SQLite drops the '/' before a drive. */
static void immutable_uri(const char *path, struct strbuf *u)
{
	const unsigned char *c;

	sb_adds(u, "file:");
	if (path[0] == '/')
		sb_adds(u, "//");
	else if (((path[0] | 0x20) >= 'a' && (path[0] | 0x20) <= 'z') && path[1] == ':')
		sb_adds(u, "///");
	for (c = (const unsigned char *)path; *c; c++) {
		if ((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
		    *c == '/' || *c == '-' || *c == '.' || *c == '_' || *c == '~' || *c == ':')
			sb_addc(u, (char)*c);
		else
			sb_addf(u, "%%%02X", *c);
	}
	sb_adds(u, "?immutable=1");
}

/* Open an index this process cannot write, to be read as it is.  WAL
 * needs its -shm file to read what the -wal holds: when the -wal holds
 * something, or a -shm is there (a writer may be at work), SQLite reads
 * them read-only, or makes the -shm where the folder lets it.  Otherwise
 * the file alone is the index, and immutable=1 reads it with no journal
 * files and no locks (which a read-only file system could not take);
 * nothing can be writing it then, as a writer would have made them. */
static int open_readonly(struct db *db, const char *path, const char *why, struct sl_err *err)
{
	const int flags = SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_NOFOLLOW;
	struct strbuf uri = STRBUF_INIT;
	int wal = beside_exists(path, "-wal", 1), shm = beside_exists(path, "-shm", 0), r;

	if (wal && !shm) {
		folder_of(path, &uri);
		r = uri.oom ? ENOMEM : sys_can_write(uri.p);
		sb_free(&uri);
		if (r)
			return SL_FAIL(err, SL_E_DB, 0,
				       "index '%s' is read-only (%s) and cannot be read as it is: its "
				       "journal (-wal) holds changes, which SQLite reads only with a "
				       "-shm file it cannot make there",
				       path, why);
	}
	if (wal || shm) {
		r = sqlite3_open_v2(path, &db->h, flags, NULL);
	} else {
		immutable_uri(path, &uri);
		if (uri.oom) {
			sb_free(&uri);
			return SL_FAIL(err, SL_E_NOMEM, 0, "database: out of memory");
		}
		r = sqlite3_open_v2(uri.p, &db->h, flags | SQLITE_OPEN_URI, NULL);
		sb_free(&uri);
	}
	if (r != SQLITE_OK)
		return SL_FAIL(err, SL_E_DB, 0, "index '%s' is read-only (%s) and cannot be read: %s",
			       path, why, db->h ? sqlite3_errmsg(db->h) : "out of memory");
	return SL_OK;
}

/* What the file holds, looked at before anything is written to it: a
 * SQLite database of another program is not made an index, and an index
 * is taken at a schema this program can read, or upgrade when it may
 * write (ro: it may not, why).  *from gets its schema version. */
static int check_index(struct db *db, const char *path, int ro, const char *why, int *from,
		       struct sl_err *err)
{
	sqlite3_stmt *st = NULL;
	int r, version = 0, tables = 0, ours = 0;

	*from = 0;
	r = sqlite3_prepare_v2(db->h,
			       "SELECT (SELECT user_version FROM pragma_user_version), count(*),"
			       " coalesce(sum(name IN ('files', 'scans')), 0)"
			       " FROM sqlite_master WHERE type = 'table'",
			       -1, &st, NULL);
	if (r == SQLITE_OK && (r = sqlite3_step(st)) == SQLITE_ROW) {
		version = sqlite3_column_int(st, 0);
		tables = sqlite3_column_int(st, 1);
		ours = sqlite3_column_int(st, 2);
		r = SQLITE_OK;
	}
	if (r != SQLITE_OK)
		r = sqlite3_extended_errcode(db->h);
	sqlite3_finalize(st);
	if ((r & 0xff) == SQLITE_NOTADB)
		return SL_FAIL(err, SL_E_DB, 0,
			       "'%s' is not a seekless index: it is not a SQLite database", path);
	if (r != SQLITE_OK)
		return SL_FAIL(err, SL_E_DB, 0, "index '%s' cannot be read: %s", path,
			       sqlite3_errmsg(db->h));
	if ((version == 0 && tables > 0) || (version > 0 && ours < 2))
		return SL_FAIL(err, SL_E_DB, 0,
			       "'%s' is not a seekless index: it is a SQLite database of something "
			       "else (left as it is)",
			       path);
	if (version > DB_SCHEMA_VERSION)
		return SL_FAIL(err, SL_E_DB, 0,
			       "index '%s': schema version %d is newer than this seekless "
			       "understands (%d); upgrade seekless",
			       path, version, DB_SCHEMA_VERSION);
	if (ro && version == 0)
		return SL_FAIL(err, SL_E_DB, 0,
			       "index '%s' is empty (no scan has stored anything) and read-only (%s)",
			       path, why);
	if (ro && version < DB_SCHEMA_VERSION)
		return SL_FAIL(err, SL_E_DB, 0,
			       "index '%s' was made by an older seekless (schema %d, this one reads "
			       "%d) and is read-only (%s): it cannot be upgraded here",
			       path, version, DB_SCHEMA_VERSION, why);
	*from = version;
	return SL_OK;
}

/* The existing index a scan will write, looked at on a connection of its
 * own, closed before the scan makes its journal files: nothing is made
 * beside another program's database, and no file SQLite holds is opened
 * and closed under it (that would drop its POSIX locks, which belong to
 * the process, not to a descriptor). */
static int first_look(struct db *db, const char *path, struct sl_err *err)
{
	int from, rc = SL_OK;

	if (sqlite3_open_v2(path, &db->h, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOFOLLOW, NULL) ==
	    SQLITE_OK)
		rc = check_index(db, path, 0, "", &from, err);
	sqlite3_close(db->h); /* a failed open is for the next one to report */
	db->h = NULL;
	return rc;
}

int db_open(const char *path, int flags, struct db **out, struct sl_err *err)
{
	const int create = flags & DB_CREATE;
	struct db *db;
	char why[192] = "";
	int e, rc, from = 0, ro = 0;

	*out = NULL;
	db = calloc(1, sizeof(*db));
	if (!db)
		return SL_FAIL(err, SL_E_NOMEM, 0, "database: out of memory");
	db->path = strdup(path);
	if (!db->path) {
		free(db);
		return SL_FAIL(err, SL_E_NOMEM, 0, "database: out of memory");
	}
	e = create ? sys_mkdir_parents(path) : 0;
	if (e != 0) {
		rc = SL_FAIL(err, SL_E_DB, e, "database: cannot create the folder of '%s'", path);
		goto fail;
	}
	/* Checked at every open, before anything is made: the journal
	 * files as well (POSIX SQLite would give them the main file's mode
	 * anyway, but on Windows they would take the folder's permissions;
	 * empty ones are valid), and none may be a way into another file. */
	rc = private_files(path, 0, err);
	if (rc != SL_OK)
		goto fail;
	e = sys_can_write(path);
	if (e == ENOENT && !create) {
		rc = SL_FAIL(err, SL_E_DB, 0, "no index at '%s' (run seekless scan first)", path);
		goto fail;
	}
	ro = e != ENOENT && !index_writable(path, e, why, sizeof(why));
	if (ro && !(flags & DB_READER)) {
		rc = SL_FAIL(err, SL_E_DB, 0, "index '%s' is read-only (%s)", path, why);
		goto fail;
	}
	db_configure();
	if (!ro && create && e != ENOENT && (rc = first_look(db, path, err)) != SL_OK)
		goto fail;
	if (!ro && create && (rc = private_files(path, 1, err)) != SL_OK)
		goto fail;
	/* SQLite gives the -wal and -shm files the main file's mode (0600). */
	if (!ro && sqlite3_open_v2(path, &db->h,
				   SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_NOFOLLOW,
				   NULL) != SQLITE_OK) {
		if (!create && (sqlite3_errcode(db->h) & 0xff) == SQLITE_CANTOPEN)
			rc = SL_FAIL(err, SL_E_DB, 0, "no index at '%s' (run seekless scan first)", path);
		else
			rc = DB_FAIL(db->h, err, path);
		goto fail;
	}
	/* what the checks above cannot see (an ACL, read-only media on
	 * Windows): SQLite then opens for reading only, and says so */
	if (!ro && sqlite3_db_readonly(db->h, "main") == 1) {
		sqlite3_close(db->h);
		db->h = NULL;
		ro = 1;
		snprintf(why, sizeof(why), "SQLite could not open it for writing");
		if (!(flags & DB_READER)) {
			rc = SL_FAIL(err, SL_E_DB, 0, "index '%s' is read-only (%s)", path, why);
			goto fail;
		}
	}
	if (ro && (rc = open_readonly(db, path, why, err)) != SL_OK)
		goto fail;
	sqlite3_extended_result_codes(db->h, 1);
	sqlite3_busy_timeout(db->h, 5000);
	if ((rc = check_index(db, path, ro, why, &from, err)) != SL_OK)
		goto fail;
	/* read-only, it is read as it is: no journal mode set, no upgrade */
	if (ro) {
		*out = db;
		return SL_OK;
	}
	if ((rc = exec(db, "PRAGMA journal_mode=WAL", "set the journal mode", err)) != SL_OK ||
	    (rc = exec(db, "PRAGMA synchronous=NORMAL", "set the sync mode", err)) != SL_OK ||
	    (rc = exec(db, "PRAGMA foreign_keys=ON", "enable foreign keys", err)) != SL_OK)
		goto fail;
	if ((rc = db_migrate(db->h, err)) != SL_OK || (rc = db_links_init(db, from, err)) != SL_OK)
		goto fail;
	*out = db;
	return SL_OK;
fail:
	db_close(db);
	return rc;
}

void db_close(struct db *db)
{
	if (!db)
		return;
	sys_unlock(db->lock);
	free(db->fs_ids);
	free(db->tick_ns);
	if (db->in_txn)
		sqlite3_exec(db->h, "ROLLBACK", NULL, NULL, NULL);
	sqlite3_finalize(db->put);
	sqlite3_finalize(db->relink_st);
	sqlite3_finalize(db->displace_st);
	sqlite3_finalize(db->recheck_st);
	sqlite3_finalize(db->links_group_st);
	sqlite3_finalize(db->links_set_st);
	sqlite3_finalize(db->links_touched_st);
	free(db->relink);
	sqlite3_close(db->h);
	free(db->path);
	free(db);
}

int db_lock(struct db *db, struct sl_err *err)
{
	struct strbuf lp = STRBUF_INIT;
	long holder = 0;
	int e;

	sb_addf(&lp, "%s.lock", db->path);
	if (lp.oom)
		return SL_FAIL(err, SL_E_NOMEM, 0, "database: out of memory");
	e = sys_lock(lp.p, &db->lock, &holder);
	/* scans and purges take it alike: the holder may be either */
	if (e == EWOULDBLOCK && holder > 0) {
		SL_FAIL(err, SL_E_RESOURCE, 0,
			"another seekless (pid %ld) is using the index %s (a scan or a purge); wait "
			"for it to finish or stop it",
			holder, db->path);
		sb_free(&lp);
		return SL_E_RESOURCE;
	}
	if (e == EWOULDBLOCK) {
		SL_FAIL(err, SL_E_RESOURCE, 0,
			"another seekless is using the index %s (a scan or a purge; which process, "
			"the system does not say); wait for it to finish or stop it",
			db->path);
		sb_free(&lp);
		return SL_E_RESOURCE;
	}
	if (e) {
		SL_FAIL(err, SL_E_DB, e, "database: cannot lock '%s'", lp.p);
		sb_free(&lp);
		return SL_E_DB;
	}
	sb_free(&lp);
	/* holding the lock, any scan still 'running' was killed */
	return exec(db,
		    "UPDATE scans SET status='interrupted', finished_at=" NOW_SQL ","
		    " message='the process ended without finishing (killed?)'"
		    " WHERE status='running'",
		    "mark the scans a killed process left running", err);
}

/* How coarse a file system's timestamps may be: FAT keeps mtime in 2 s
 * steps (exFAT in 10 ms ones, but not every writer fills them); the
 * others take the kernel's clock tick (1 to 10 ms, finer with multigrain
 * timestamps), or NTFS's 100 ns; 20 ms leaves room for a slow clock read.
 * Case-insensitive: Windows says "FAT32", Linux "vfat". */
static int64_t tick_of(const char *fstype)
{
	static const char *const coarse[] = {"vfat", "msdos", "fat", "fat12", "fat16", "fat32",
					     "exfat", "fuseblk", "fuse"};
	size_t i;
	for (i = 0; i < sizeof(coarse) / sizeof(coarse[0]); i++) {
		const char *a = fstype, *b = coarse[i];
		while (*a && *b && (*a | 0x20) == *b) {
			a++;
			b++;
		}
		if (!*a && !*b)
			return 2000000000LL;
	}
	return 20000000LL;
}

/* The filesystems row that knows ident as its alternative name (made by a
 * scan that could read the superblock), into *id; 0 when none. */
static int alias_of(struct db *db, const char *ident, int64_t *id, struct sl_err *err)
{
	sqlite3_stmt *st = NULL;
	int step;
	*id = 0;
	if (sqlite3_prepare_v2(db->h, "SELECT id FROM filesystems WHERE alt=?1 ORDER BY id LIMIT 1",
			       -1, &st, NULL) != SQLITE_OK)
		return DB_FAIL(db->h, err, "prepare file system alias");
	sqlite3_bind_text(st, 1, ident, -1, SQLITE_STATIC);
	step = sqlite3_step(st);
	if (step == SQLITE_ROW)
		*id = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return step == SQLITE_ROW || step == SQLITE_DONE ? SL_OK
							 : DB_FAIL(db->h, err, "file system alias");
}

static int exec_fs_seen(struct db *db, int64_t id, const struct dev_info *d, struct sl_err *err)
{
	sqlite3_stmt *st = NULL;
	int rc = SL_OK;
	if (sqlite3_prepare_v2(db->h,
			       "UPDATE filesystems SET fstype=?2, mount=?3, last_scan=?4 WHERE id=?1",
			       -1, &st, NULL) != SQLITE_OK)
		return DB_FAIL(db->h, err, "prepare file system row");
	sqlite3_bind_int64(st, 1, id);
	sqlite3_bind_text(st, 2, d->fstype, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 3, d->mount, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 4, db->scan_id);
	if (sqlite3_step(st) != SQLITE_DONE)
		rc = DB_FAIL(db->h, err, "store file system");
	sqlite3_finalize(st);
	return rc;
}

/* A file system known as ident and also as alt (its statfs id): a row an
 * unprivileged scan made under alt takes the better name, or, when a row
 * by ident exists too (both were made before this was understood), gives
 * it its records and goes.  Then db_map_fs's upsert by ident finds it. */
static int merge_alias(struct db *db, const char *ident, const char *alt, struct sl_err *err)
{
	static const char sql[] =
		"UPDATE files SET fs_id=(SELECT id FROM filesystems WHERE ident=?1)"
		" WHERE fs_id=(SELECT id FROM filesystems WHERE ident=?2)"
		" AND EXISTS (SELECT 1 FROM filesystems WHERE ident=?1);"
		"DELETE FROM filesystems WHERE ident=?2"
		" AND EXISTS (SELECT 1 FROM filesystems WHERE ident=?1);"
		"UPDATE filesystems SET ident=?1, alt=?2 WHERE ident=?2;";
	const char *tail = sql;
	int rc = SL_OK;
	while (rc == SL_OK && tail && *tail) {
		sqlite3_stmt *st = NULL;
		if (sqlite3_prepare_v2(db->h, tail, -1, &st, &tail) != SQLITE_OK)
			return DB_FAIL(db->h, err, "prepare file system merge");
		if (!st)
			break;
		sqlite3_bind_text(st, 1, ident, -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 2, alt, -1, SQLITE_STATIC);
		if (sqlite3_step(st) != SQLITE_DONE)
			rc = DB_FAIL(db->h, err, "merge file system names");
		sqlite3_finalize(st);
	}
	return rc;
}

int db_map_fs(struct db *db, const struct dev_info *devs, size_t n, struct sl_err *err)
{
	sqlite3_stmt *ins = NULL, *get = NULL;
	size_t i;
	int rc = SL_OK;

	free(db->fs_ids);
	free(db->tick_ns);
	db->fs_ids = calloc(n ? n : 1, sizeof(*db->fs_ids));
	db->tick_ns = calloc(n ? n : 1, sizeof(*db->tick_ns));
	db->nfs = n;
	if (!db->fs_ids || !db->tick_ns)
		return SL_FAIL(err, SL_E_NOMEM, 0, "database: out of memory");
	for (i = 0; i < n; i++)
		db->tick_ns[i] = tick_of(devs[i].fstype);
	if (sqlite3_prepare_v2(db->h,
			       "INSERT INTO filesystems(ident, fstype, mount, last_scan, alt)"
			       " VALUES(?1,?2,?3,?4,nullif(?5,''))"
			       " ON CONFLICT(ident) DO UPDATE SET fstype=excluded.fstype,"
			       " mount=excluded.mount, last_scan=excluded.last_scan,"
			       " alt=coalesce(excluded.alt, alt)",
			       -1, &ins, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(db->h, "SELECT id FROM filesystems WHERE ident=?1", -1, &get, NULL) !=
		    SQLITE_OK) {
		rc = DB_FAIL(db->h, err, "prepare file system rows");
		goto out;
	}
	for (i = 0; i < n && rc == SL_OK; i++) {
		const char *ident = devs[i].fs_id;
		int64_t known;
		/* one file system, two names (dev_info.fs_alt) */
		if (devs[i].fs_alt[0]) {
			rc = merge_alias(db, devs[i].fs_id, devs[i].fs_alt, err);
		} else if ((rc = alias_of(db, devs[i].fs_id, &known, err)) == SL_OK && known) {
			db->fs_ids[i] = known; /* a scan that could read the superblock named it */
			rc = exec_fs_seen(db, known, &devs[i], err);
			continue;
		}
		if (rc != SL_OK)
			break;
		sqlite3_reset(ins);
		sqlite3_bind_text(ins, 1, ident, -1, SQLITE_STATIC);
		sqlite3_bind_text(ins, 2, devs[i].fstype, -1, SQLITE_STATIC);
		sqlite3_bind_text(ins, 3, devs[i].mount, -1, SQLITE_STATIC);
		sqlite3_bind_int64(ins, 4, db->scan_id);
		sqlite3_bind_text(ins, 5, devs[i].fs_alt, -1, SQLITE_STATIC);
		if (sqlite3_step(ins) != SQLITE_DONE) {
			rc = DB_FAIL(db->h, err, "store file system");
			break;
		}
		sqlite3_reset(get);
		sqlite3_bind_text(get, 1, ident, -1, SQLITE_STATIC);
		if (sqlite3_step(get) == SQLITE_ROW)
			db->fs_ids[i] = sqlite3_column_int64(get, 0);
	}
out:
	sqlite3_finalize(ins);
	sqlite3_finalize(get);
	return rc;
}

int db_user_version(struct db *db, int *version, struct sl_err *err)
{
	sqlite3_stmt *st = NULL;

	*version = 0;
	if (sqlite3_prepare_v2(db->h, "PRAGMA user_version", -1, &st, NULL) != SQLITE_OK)
		return DB_FAIL(db->h, err, "read schema version");
	if (sqlite3_step(st) == SQLITE_ROW)
		*version = sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	return SL_OK;
}

/* Prepare, bind nothing, step once, finalize: for fixed statements. */
static int run(struct db *db, sqlite3_stmt *st, const char *what, struct sl_err *err)
{
	int rc = sqlite3_step(st);
	if (rc != SQLITE_DONE && rc != SQLITE_ROW) {
		rc = DB_FAIL(db->h, err, what);
		sqlite3_finalize(st);
		return rc;
	}
	sqlite3_finalize(st);
	return SL_OK;
}

int db_scan_begin(struct db *db, const char *command, const char *order,
		  const char *const *roots, size_t nroots, int jobs, struct sl_err *err)
{
	struct strbuf js = STRBUF_INIT;
	sqlite3_stmt *st = NULL;
	size_t i;
	int rc;

	sb_addc(&js, '[');
	for (i = 0; i < nroots; i++) {
		if (i)
			sb_addc(&js, ',');
		sb_add_json(&js, roots[i], strlen(roots[i]));
	}
	sb_addc(&js, ']');
	if (js.oom) {
		sb_free(&js);
		return SL_FAIL(err, SL_E_NOMEM, 0, "database: out of memory");
	}
	if (sqlite3_prepare_v2(db->h,
			       "INSERT INTO scans(started_at, status, command, order_requested, roots,"
			       " jobs, version, pid) VALUES(" NOW_SQL ", 'running', ?1, ?2, ?3, ?4, ?5, ?6)",
			       -1, &st, NULL) != SQLITE_OK) {
		sb_free(&js);
		return DB_FAIL(db->h, err, "prepare scan row");
	}
	sqlite3_bind_text(st, 1, command, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, order, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 3, js.p, (int)js.len, SQLITE_STATIC);
	sqlite3_bind_int(st, 4, jobs);
	sqlite3_bind_text(st, 5, SEEKLESS_VERSION, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 6, sys_pid());
	rc = run(db, st, "insert scan row", err);
	sb_free(&js);
	if (rc == SL_OK)
		db->scan_id = sqlite3_last_insert_rowid(db->h);
	return rc;
}

int db_scan_device(struct db *db, const struct db_device_row *d, struct sl_err *err)
{
	sqlite3_stmt *st = NULL;

	if (sqlite3_prepare_v2(db->h,
			       "INSERT OR REPLACE INTO scan_devices(scan_id, device, fstype, rotational,"
			       " extents, order_used, reason, files, bytes, read_s)"
			       " VALUES(?1,?2,?3,?4,?5,?6,?7,?8,?9,?10)",
			       -1, &st, NULL) != SQLITE_OK)
		return DB_FAIL(db->h, err, "prepare device row");
	sqlite3_bind_int64(st, 1, db->scan_id);
	sqlite3_bind_text(st, 2, d->device, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 3, d->fstype, -1, SQLITE_STATIC);
	if (d->rotational >= 0)
		sqlite3_bind_int(st, 4, d->rotational);
	sqlite3_bind_int(st, 5, d->extents);
	sqlite3_bind_text(st, 6, d->order, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 7, d->reason, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 8, (sqlite3_int64)d->files);
	sqlite3_bind_int64(st, 9, (sqlite3_int64)d->bytes);
	sqlite3_bind_double(st, 10, d->read_s);
	return run(db, st, "insert device row", err);
}

int db_scan_end(struct db *db, const struct db_scan_end *e, struct sl_err *err)
{
	sqlite3_stmt *st = NULL;
	int rc = db_commit(db, err);

	if (rc != SL_OK)
		return rc;
	if (sqlite3_prepare_v2(db->h,
			       "UPDATE scans SET finished_at=" NOW_SQL ", status=?2, files=?3, bytes=?4,"
			       " errors=?5, walk_s=?6, locate_s=?7, read_s=?8, extract_s=?9,"
			       " store_s=?10, wall_s=?11, message=?12, unchanged=?13, changed=?14,"
			       " added=?15, moved=?16, deleted=?17, unavailable=?18, background=?19,"
			       " yield_s=?20, rechecked=?21, complete=?22, upgraded=?23, retried=?24,"
			       " quick=?25 WHERE id=?1",
			       -1, &st, NULL) != SQLITE_OK)
		return DB_FAIL(db->h, err, "prepare scan end");
	sqlite3_bind_int64(st, 1, db->scan_id);
	sqlite3_bind_text(st, 2, e->status, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 3, (sqlite3_int64)e->files);
	sqlite3_bind_int64(st, 4, (sqlite3_int64)e->bytes);
	sqlite3_bind_int64(st, 5, (sqlite3_int64)e->errors);
	sqlite3_bind_double(st, 6, e->walk_s);
	sqlite3_bind_double(st, 7, e->locate_s);
	sqlite3_bind_double(st, 8, e->read_s);
	sqlite3_bind_double(st, 9, e->extract_s);
	sqlite3_bind_double(st, 10, e->store_s);
	sqlite3_bind_double(st, 11, e->wall_s);
	if (e->message)
		sqlite3_bind_text(st, 12, e->message, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 13, (sqlite3_int64)e->unchanged);
	sqlite3_bind_int64(st, 14, (sqlite3_int64)e->changed);
	sqlite3_bind_int64(st, 15, (sqlite3_int64)e->added);
	sqlite3_bind_int64(st, 16, (sqlite3_int64)e->moved);
	sqlite3_bind_int64(st, 17, (sqlite3_int64)e->deleted);
	sqlite3_bind_int64(st, 18, (sqlite3_int64)e->unavailable);
	sqlite3_bind_int(st, 19, e->background);
	sqlite3_bind_double(st, 20, e->yield_s);
	sqlite3_bind_int64(st, 21, (sqlite3_int64)e->rechecked);
	sqlite3_bind_int(st, 22, e->complete);
	sqlite3_bind_int64(st, 23, (sqlite3_int64)e->upgraded);
	sqlite3_bind_int64(st, 24, (sqlite3_int64)e->retried);
	sqlite3_bind_int(st, 25, e->quick);
	return run(db, st, "finish scan row", err);
}

int db_purge(struct db *db, long days, int dry_run, uint64_t *count, struct sl_err *err)
{
	static const char *const sql[] = {
		"DELETE FROM files WHERE deleted_at IS NOT NULL"
		" AND deleted_at <= strftime('%Y-%m-%dT%H:%M:%SZ','now', ?1)",
		"SELECT count(*) FROM files WHERE deleted_at IS NOT NULL"
		" AND deleted_at <= strftime('%Y-%m-%dT%H:%M:%SZ','now', ?1)"};
	sqlite3_stmt *st = NULL;
	char cutoff[32];
	int r, rc = SL_OK;

	*count = 0;
	snprintf(cutoff, sizeof(cutoff), "-%ld days", days);
	if (sqlite3_prepare_v2(db->h, sql[dry_run != 0], -1, &st, NULL) != SQLITE_OK)
		return DB_FAIL(db->h, err, "prepare purge");
	sqlite3_bind_text(st, 1, cutoff, -1, SQLITE_STATIC);
	r = sqlite3_step(st);
	if (dry_run && r == SQLITE_ROW)
		*count = (uint64_t)sqlite3_column_int64(st, 0);
	else if (!dry_run && r == SQLITE_DONE)
		*count = (uint64_t)sqlite3_changes(db->h);
	else
		rc = DB_FAIL(db->h, err, "purge");
	sqlite3_finalize(st);
	return rc;
}

static void copy_text(char *dst, size_t cap, const unsigned char *src)
{
	snprintf(dst, cap, "%s", src ? (const char *)src : "");
}

/* The file systems matching what: by identity first, else by mount point
 * (trailing separators ignored: a Windows volume is stored as E:\\, and
 * is asked for as E: too); the first into *fs, every identity into
 * idents; *by_mount says which way they matched. */
static int find_fs(struct db *db, const char *what, struct db_fs *fs, struct strbuf *idents,
		   int *n, int *by_mount, struct sl_err *err)
{
	static const char *const sql[] = {
		"SELECT id, ident, alt, fstype, mount FROM filesystems WHERE ident = ?1 OR alt = ?1"
		" ORDER BY id",
		"SELECT id, ident, alt, fstype, mount FROM filesystems"
		" WHERE rtrim(mount, '/\\') = rtrim(?1, '/\\') ORDER BY id"};
	size_t q;
	int r = SQLITE_DONE;

	*n = 0;
	for (q = 0; q < 2 && *n == 0; q++) {
		*by_mount = q == 1;
		sqlite3_stmt *st = NULL;
		if (sqlite3_prepare_v2(db->h, sql[q], -1, &st, NULL) != SQLITE_OK)
			return DB_FAIL(db->h, err, "prepare forget");
		sqlite3_bind_text(st, 1, what, -1, SQLITE_STATIC);
		while ((r = sqlite3_step(st)) == SQLITE_ROW) {
			const char *ident = (const char *)sqlite3_column_text(st, 1);
			if ((*n)++ == 0) {
				fs->id = sqlite3_column_int64(st, 0);
				copy_text(fs->ident, sizeof(fs->ident), sqlite3_column_text(st, 1));
				copy_text(fs->alt, sizeof(fs->alt), sqlite3_column_text(st, 2));
				copy_text(fs->fstype, sizeof(fs->fstype), sqlite3_column_text(st, 3));
				copy_text(fs->mount, sizeof(fs->mount), sqlite3_column_text(st, 4));
			}
			if (sb_addf(idents, "%s%s", *n > 1 ? ", " : "", ident ? ident : "") != 0) {
				sqlite3_finalize(st);
				return SL_FAIL(err, SL_E_NOMEM, 0, "forget: out of memory");
			}
		}
		sqlite3_finalize(st);
		if (r != SQLITE_DONE)
			return DB_FAIL(db->h, err, "find the file system");
	}
	return SL_OK;
}

/* One statement on one row id (?1). */
static int run_on(struct db *db, const char *sql, int64_t id, const char *what,
		  struct sl_err *err)
{
	sqlite3_stmt *st = NULL;

	if (sqlite3_prepare_v2(db->h, sql, -1, &st, NULL) != SQLITE_OK)
		return DB_FAIL(db->h, err, what);
	sqlite3_bind_int64(st, 1, id);
	return run(db, st, what, err);
}

int db_fs_find(struct db *db, const char *what, struct db_fs *fs, struct sl_err *err)
{
	struct strbuf idents = STRBUF_INIT;
	sqlite3_stmt *st = NULL;
	int n, by_mount, rc;

	memset(fs, 0, sizeof(*fs));
	rc = find_fs(db, what, fs, &idents, &n, &by_mount, err);
	if (rc == SL_OK && n == 0)
		rc = SL_FAIL(err, SL_E_USAGE, 0,
			     "no file system in the index is '%s' (by identity or last mount point;"
			     " seekless stats lists them)", what);
	else if (rc == SL_OK && n > 1 && by_mount)
		rc = SL_FAIL(err, SL_E_USAGE, 0,
			     "%d file systems were last mounted at '%s': %s; name one by its identity",
			     n, what, idents.p);
	else if (rc == SL_OK && n > 1) /* a statfs id that a device number made */
		rc = SL_FAIL(err, SL_E_USAGE, 0,
			     "%d file systems answer to '%s' (their other name): %s; name one by"
			     " its identity", n, what, idents.p);
	sb_free(&idents);
	if (rc != SL_OK)
		goto out;
	if (sqlite3_prepare_v2(db->h,
			       "SELECT count(*) FILTER (WHERE deleted_at IS NULL),"
			       " count(*) FILTER (WHERE deleted_at IS NOT NULL)"
			       " FROM files WHERE fs_id = ?1",
			       -1, &st, NULL) != SQLITE_OK) {
		rc = DB_FAIL(db->h, err, "prepare count the file system's records");
		goto out;
	}
	sqlite3_bind_int64(st, 1, fs->id);
	if (sqlite3_step(st) == SQLITE_ROW) {
		fs->live = (uint64_t)sqlite3_column_int64(st, 0);
		fs->deleted = (uint64_t)sqlite3_column_int64(st, 1);
	} else {
		rc = DB_FAIL(db->h, err, "count the file system's records");
	}
out:
	sqlite3_finalize(st);
	return rc;
}

int db_forget_fs(struct db *db, const struct db_fs *fs, uint64_t *count, struct sl_err *err)
{
	int rc;

	*count = 0;
	if ((rc = exec(db, "BEGIN IMMEDIATE", "begin forgetting", err)) != SL_OK)
		return rc;
	/* the sidecar links of the folders its live records leave (a pool's
	 * folder may hold files of several branches) */
	rc = run_on(db,
		    "INSERT INTO temp.sl_touched SELECT path FROM files"
		    " WHERE fs_id = ?1 AND deleted_at IS NULL",
		    fs->id, "note the links to update", err);
	if (rc == SL_OK &&
	    (rc = run_on(db, "DELETE FROM files WHERE fs_id = ?1", fs->id,
			 "remove the file system's records", err)) == SL_OK)
		*count = (uint64_t)sqlite3_changes(db->h);
	if (rc == SL_OK)
		rc = run_on(db, "DELETE FROM filesystems WHERE id = ?1", fs->id,
			    "remove the file system", err);
	if (rc == SL_OK)
		rc = exec(db, "DELETE FROM journals", "forget the change-journal positions", err);
	if (rc == SL_OK)
		rc = db_links_update(db, err);
	if (rc == SL_OK)
		rc = exec(db, "COMMIT", "commit forgetting", err);
	if (rc != SL_OK) {
		sqlite3_exec(db->h, "ROLLBACK", NULL, NULL, NULL);
		*count = 0;
	}
	return rc;
}

int db_journal_get(struct db *db, const char *key, uint64_t *journal_id, int64_t *next_usn,
		   double *walked_days, int *found, struct sl_err *err)
{
	sqlite3_stmt *st = NULL;
	int r;

	*found = 0;
	*walked_days = -1;
	if (sqlite3_prepare_v2(db->h,
			       "SELECT j.journal_id, j.next_usn,"
			       " julianday('now') - julianday(s.started_at)"
			       " FROM journals j LEFT JOIN scans s ON s.id = j.scan WHERE j.volume=?1",
			       -1, &st, NULL) != SQLITE_OK)
		return DB_FAIL(db->h, err, "prepare journal lookup");
	sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
	r = sqlite3_step(st);
	if (r == SQLITE_ROW) {
		*journal_id = (uint64_t)sqlite3_column_int64(st, 0);
		*next_usn = sqlite3_column_int64(st, 1);
		if (sqlite3_column_type(st, 2) != SQLITE_NULL)
			*walked_days = sqlite3_column_double(st, 2);
		*found = 1;
	}
	sqlite3_finalize(st);
	if (r != SQLITE_ROW && r != SQLITE_DONE)
		return DB_FAIL(db->h, err, "journal lookup");
	return SL_OK;
}

int db_journal_put(struct db *db, const char *key, uint64_t journal_id, int64_t next_usn,
		   int walked, struct sl_err *err)
{
	sqlite3_stmt *st = NULL;

	/* the row's scan is the last that walked the root: a scan that only
	 * read the journal leaves it (a new row is always a walk's) */
	if (sqlite3_prepare_v2(db->h,
			       "INSERT INTO journals(volume, journal_id, next_usn, scan)"
			       " VALUES(?1, ?2, ?3, ?4) ON CONFLICT(volume) DO UPDATE SET"
			       " journal_id=excluded.journal_id, next_usn=excluded.next_usn,"
			       " scan=CASE WHEN ?5 THEN excluded.scan ELSE journals.scan END",
			       -1, &st, NULL) != SQLITE_OK)
		return DB_FAIL(db->h, err, "prepare journal store");
	sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 2, (sqlite3_int64)journal_id);
	sqlite3_bind_int64(st, 3, next_usn);
	sqlite3_bind_int64(st, 4, db->scan_id);
	sqlite3_bind_int(st, 5, walked != 0);
	return run(db, st, "journal store", err);
}

int db_journal_forget(struct db *db, const char *key, struct sl_err *err)
{
	sqlite3_stmt *st = NULL;

	if (sqlite3_prepare_v2(db->h, "DELETE FROM journals WHERE volume=?1", -1, &st, NULL) !=
	    SQLITE_OK)
		return DB_FAIL(db->h, err, "prepare journal forget");
	sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
	return run(db, st, "journal forget", err);
}

int64_t db_scan_id(const struct db *db)
{
	return db->scan_id;
}

void db_scan_counts(const struct db *db, uint64_t *relinked, uint64_t *ctime_changed)
{
	*relinked = db->relinked;
	*ctime_changed = db->ctime_changed;
}
