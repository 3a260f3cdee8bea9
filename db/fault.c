/* fault.c - failing database writes on demand, for tests (db.h db_inject).
 *
 * A VFS that wraps the platform's own and forwards everything, except that
 * once armed, after `after` more successful writes, every write, truncate
 * and sync of any database file fails as asked (SQLITE_IOERR_WRITE, or
 * SQLITE_FULL as a full disk gives).  It is registered as the default VFS
 * the first time a test arms it, so connections opened afterwards go
 * through it; nothing in a normal run ever registers it. */
#include <stdatomic.h>
#include <string.h>

#include "db/db_int.h"

static sqlite3_vfs *real;
static sqlite3_vfs shim;
static atomic_int fault_kind;
static atomic_int fault_after;
static atomic_long subjournals;

struct ffile {
	sqlite3_file base;
	sqlite3_file *real; /* follows this struct in the same allocation */
};

#define REAL(f) (((struct ffile *)(f))->real)

/* The fault to return now, or SQLITE_OK. */
static int take(void)
{
	int kind = atomic_load(&fault_kind);
	if (kind == DB_FAULT_NONE)
		return SQLITE_OK;
	if (atomic_fetch_sub(&fault_after, 1) > 0)
		return SQLITE_OK;
	atomic_store(&fault_after, 0);
	return kind == DB_FAULT_FULL ? SQLITE_FULL : SQLITE_IOERR_WRITE;
}

static int f_close(sqlite3_file *f)
{
	int rc = REAL(f)->pMethods ? REAL(f)->pMethods->xClose(REAL(f)) : SQLITE_OK;
	f->pMethods = NULL;
	return rc;
}

static int f_read(sqlite3_file *f, void *b, int n, sqlite3_int64 off)
{
	return REAL(f)->pMethods->xRead(REAL(f), b, n, off);
}

static int f_write(sqlite3_file *f, const void *b, int n, sqlite3_int64 off)
{
	int rc = take();
	return rc != SQLITE_OK ? rc : REAL(f)->pMethods->xWrite(REAL(f), b, n, off);
}

static int f_truncate(sqlite3_file *f, sqlite3_int64 size)
{
	int rc = take();
	return rc != SQLITE_OK ? rc : REAL(f)->pMethods->xTruncate(REAL(f), size);
}

static int f_sync(sqlite3_file *f, int flags)
{
	int rc = take();
	if (rc == SQLITE_IOERR_WRITE)
		rc = SQLITE_IOERR_FSYNC;
	return rc != SQLITE_OK ? rc : REAL(f)->pMethods->xSync(REAL(f), flags);
}

static int f_size(sqlite3_file *f, sqlite3_int64 *size)
{
	return REAL(f)->pMethods->xFileSize(REAL(f), size);
}

static int f_lock(sqlite3_file *f, int l)
{
	return REAL(f)->pMethods->xLock(REAL(f), l);
}

static int f_unlock(sqlite3_file *f, int l)
{
	return REAL(f)->pMethods->xUnlock(REAL(f), l);
}

static int f_reserved(sqlite3_file *f, int *out)
{
	return REAL(f)->pMethods->xCheckReservedLock(REAL(f), out);
}

static int f_control(sqlite3_file *f, int op, void *arg)
{
	return REAL(f)->pMethods->xFileControl(REAL(f), op, arg);
}

static int f_sector(sqlite3_file *f)
{
	return REAL(f)->pMethods->xSectorSize(REAL(f));
}

static int f_chars(sqlite3_file *f)
{
	return REAL(f)->pMethods->xDeviceCharacteristics(REAL(f));
}

static int f_shm_map(sqlite3_file *f, int pg, int sz, int extend, void volatile **p)
{
	return REAL(f)->pMethods->xShmMap(REAL(f), pg, sz, extend, p);
}

static int f_shm_lock(sqlite3_file *f, int off, int n, int flags)
{
	return REAL(f)->pMethods->xShmLock(REAL(f), off, n, flags);
}

static void f_shm_barrier(sqlite3_file *f)
{
	REAL(f)->pMethods->xShmBarrier(REAL(f));
}

static int f_shm_unmap(sqlite3_file *f, int del)
{
	return REAL(f)->pMethods->xShmUnmap(REAL(f), del);
}

/* Version 2: no memory-mapped reads through the shim (xFetch), so every
 * page goes through xRead/xWrite. */
static const sqlite3_io_methods methods = {
	2, f_close, f_read, f_write, f_truncate, f_sync, f_size, f_lock, f_unlock, f_reserved,
	f_control, f_sector, f_chars, f_shm_map, f_shm_lock, f_shm_barrier, f_shm_unmap,
	NULL, NULL,
};

static int v_open(sqlite3_vfs *vfs, const char *name, sqlite3_file *file, int flags,
		  int *out_flags)
{
	struct ffile *f = (struct ffile *)file;
	int rc;

	(void)vfs;
	f->real = (sqlite3_file *)(f + 1);
	if (flags & SQLITE_OPEN_SUBJOURNAL)
		atomic_fetch_add(&subjournals, 1);
	rc = real->xOpen(real, name, f->real, flags, out_flags);
	f->base.pMethods = f->real->pMethods ? &methods : NULL;
	return rc;
}

static int v_delete(sqlite3_vfs *vfs, const char *name, int sync)
{
	(void)vfs;
	return real->xDelete(real, name, sync);
}

static int v_access(sqlite3_vfs *vfs, const char *name, int flags, int *out)
{
	(void)vfs;
	return real->xAccess(real, name, flags, out);
}

static int v_full(sqlite3_vfs *vfs, const char *name, int n, char *out)
{
	(void)vfs;
	return real->xFullPathname(real, name, n, out);
}

static int v_random(sqlite3_vfs *vfs, int n, char *out)
{
	(void)vfs;
	return real->xRandomness(real, n, out);
}

static int v_sleep(sqlite3_vfs *vfs, int us)
{
	(void)vfs;
	return real->xSleep(real, us);
}

static int v_time(sqlite3_vfs *vfs, double *out)
{
	(void)vfs;
	return real->xCurrentTime(real, out);
}

static int v_last_error(sqlite3_vfs *vfs, int n, char *out)
{
	(void)vfs;
	return real->xGetLastError ? real->xGetLastError(real, n, out) : 0;
}

static int v_time64(sqlite3_vfs *vfs, sqlite3_int64 *out)
{
	(void)vfs;
	return real->xCurrentTimeInt64(real, out);
}

long db_fault_subjournals(void)
{
	return atomic_load(&subjournals);
}

void db_inject(enum db_fault kind, int after)
{
	if (!real) {
		db_configure();
		real = sqlite3_vfs_find(NULL);
		if (!real)
			return;
		shim.iVersion = 2;
		shim.szOsFile = (int)sizeof(struct ffile) + real->szOsFile;
		shim.mxPathname = real->mxPathname;
		shim.zName = "seekless-fault";
		shim.xOpen = v_open;
		shim.xDelete = v_delete;
		shim.xAccess = v_access;
		shim.xFullPathname = v_full;
		shim.xRandomness = v_random;
		shim.xSleep = v_sleep;
		shim.xCurrentTime = v_time;
		shim.xGetLastError = v_last_error;
		shim.xCurrentTimeInt64 = v_time64;
		sqlite3_vfs_register(&shim, 1);
	}
	atomic_store(&fault_after, after);
	atomic_store(&fault_kind, (int)kind);
}
