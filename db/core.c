/* core.c - what every file of db/ calls and which calls none of them
 * (db_int.h): SQLite's failures as the run's errors, and the rule for a
 * racy timestamp. */
#include <sqlite3.h>

#include "db/db_int.h"

int db_fail(sqlite3 *h, struct sl_err *err, const char *file, int line, const char *what)
{
	int code = h ? sqlite3_extended_errcode(h) : SQLITE_ERROR;
	const char *msg = h ? sqlite3_errmsg(h) : "cannot allocate a handle";
	const char *hint = "";

	if ((code & 0xff) == SQLITE_FULL)
		hint = " (free space on the database's disk, then run again: the scan resumes)";
	else if ((code & 0xff) == SQLITE_BUSY)
		hint = " (another process is writing this database)";
	else if ((code & 0xff) == SQLITE_READONLY)
		hint = " (the index cannot be written here)";
	return sl_fail(err, SL_E_DB, 0, file, line, "database: %s: %s%s", what, msg, hint);
}

int db_racy(const struct db *db, uint16_t devi, int64_t ctime_ns, int64_t mtime_ns, int64_t from,
	    int64_t to)
{
	int64_t tick = devi < db->nfs && db->tick_ns ? db->tick_ns[devi] : 2000000000LL;
	int64_t t = ctime_ns ? ctime_ns : mtime_ns;
	/* a time in the future beyond a tick (a camera's clock, kept by cp -p)
	 * is not racy: no later change can land on it */
	return t > from - tick && t <= to + tick;
}
