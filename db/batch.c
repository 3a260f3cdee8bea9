/* batch.c - the open write transaction (db_int.h): committed, with the
 * sidecar links it changed, or rolled back whole.  The writer, the diff and
 * the connection's own steps all end a batch here, below them; it calls
 * only links.c and core.c. */
#include <sqlite3.h>

#include "db/db_int.h"

int db_drop_batch(struct db *db, int rc)
{
	sqlite3_reset(db->put);
	sqlite3_exec(db->h, "ROLLBACK", NULL, NULL, NULL);
	db->in_txn = 0;
	return rc;
}

int db_commit(struct db *db, struct sl_err *err)
{
	int rc;

	if (!db->in_txn)
		return SL_OK;
	if ((rc = db_links_update(db, err)) != SL_OK)
		return db_drop_batch(db, rc);
	if (sqlite3_exec(db->h, "COMMIT", NULL, NULL, NULL) != SQLITE_OK)
		return db_drop_batch(db, DB_FAIL(db->h, err, "commit batch"));
	db->in_txn = 0;
	db->batch_rows = 0;
	return SL_OK;
}
