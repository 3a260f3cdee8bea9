/* What a scan takes from a change journal and what it leaves for the next
 * (app/scanjn.h), through whole scans (scan_run) against a journal this
 * file plays: it defines jn_query, jn_read and jn_paths, so the linker
 * takes them instead of the platform's (journal_none.c, journal_win.c),
 * and each scan sees the journal the test says.  Portable: Linux has no
 * journal of its own, and Wine none to read.
 *
 *   - a walk that met a folder it could not list forgets the root's
 *     position: a quiet journal afterwards still walks (the position used
 *     to move on, and the folder stayed out of the index);
 *   - a listed file that failed to read keeps the old position: the next
 *     scan reads the journal from there and lists the file again;
 *   - a scan of one folder vouches for that folder only, not its volume;
 *   - a root not walked for SJ_WALK_DAYS is walked, the journal quiet or
 *     not (what another system wrote is not in it). */
#include "app/scan.h"
#include "app/scanjn.h"
#include "common/sys.h"
#include "indexer/reader.h"
#include "tests/unit/test.h"

#include <sqlite3.h>

/* ---- the journal, as the test sets it ---- */

#define MAX_LISTED 4

static struct {
	uint64_t id;                    /* the journal's ID */
	int64_t next;                   /* where the next record would go */
	uint64_t created, renamed;      /* since any position (the test's say) */
	uint64_t ids[MAX_LISTED];       /* the files created, by ID */
	char paths[MAX_LISTED][4096];   /* and their paths */
	size_t nids;
	int64_t read_from;              /* the position the last read began at */
	int reads;
} jn;

int jn_query(const char *path, struct jn_state *now, char *why, size_t cap)
{
	(void)path;
	(void)why;
	(void)cap;
	memset(now, 0, sizeof(*now));
	snprintf(now->volume, sizeof(now->volume), "test:0001");
	now->journal_id = jn.id;
	now->first_usn = 0;
	now->next_usn = jn.next;
	return 0;
}

int jn_read(const char *path, const struct jn_state *now, int64_t from,
	    const uint64_t *ignore_dirs, size_t n, struct usn_tally *t, char *why, size_t cap)
{
	size_t i;

	(void)path;
	(void)now;
	(void)ignore_dirs;
	(void)n;
	(void)why;
	(void)cap;
	jn.reads++;
	jn.read_from = from;
	t->created = jn.created;
	t->renamed = jn.renamed;
	t->records = jn.created + jn.renamed;
	if (t->max_ids && jn.nids) {
		t->ids = calloc(jn.nids, sizeof(*t->ids));
		if (!t->ids)
			return ENOMEM;
		for (i = 0; i < jn.nids; i++)
			t->ids[i].lo = jn.ids[i];
		t->nids = t->cap_ids = jn.nids;
	}
	return 0;
}

int jn_paths(const char *path, const struct fileid *ids, size_t n,
	     int (*fn)(const char *p, uint64_t id, void *ctx), void *ctx, char *why, size_t cap)
{
	size_t i, k;
	int rc = 0;

	(void)path;
	(void)why;
	(void)cap;
	for (i = 0; i < n && rc == 0; i++)
		for (k = 0; k < jn.nids && rc == 0; k++)
			if (jn.ids[k] == ids[i].lo)
				rc = fn(jn.paths[k], ids[i].lo, ctx);
	return rc;
}

/* ---- scans ---- */

static char *base;
static char conf[4096];

struct outcome {
	int rc;
	uint64_t files, errors, dirs, dir_errors;
	char journal[2048];
};

static struct outcome scan(const char *db, const char *root, int full)
{
	char *roots[1];
	struct scan_args a;
	struct scan_result r;
	struct outcome o;

	roots[0] = (char *)root;
	memset(&a, 0, sizeof(a));
	a.unconfined = 1;
	a.order = a.cross_fs = a.phash = a.phash_now = a.trust_mtime = a.background = -1;
	a.config = conf;
	a.db = db;
	a.roots = roots;
	a.nroots = 1;
	a.full = full;
	memset(&o, 0, sizeof(o));
	o.rc = scan_run(&a, &r);
	o.files = r.st.files;
	o.errors = r.st.errors;
	o.dirs = r.set.p.ws.dirs;
	o.dir_errors = r.set.p.ws.dir_errors;
	snprintf(o.journal, sizeof(o.journal), "%s", r.journal.p ? r.journal.p : "");
	scan_result_free(&r);
	jn.next += 10; /* the index's own writes, and time */
	return o;
}

/* The position stored for root (-1: none), and the scan that last walked
 * it. */
static int64_t position(const char *db, const char *root, int64_t *walked_by)
{
	char key[2048];
	sqlite3 *h = NULL;
	sqlite3_stmt *st = NULL;
	int64_t pos = -1;

	snprintf(key, sizeof(key), "test:0001|%s", root);
	*walked_by = -1;
	if (sqlite3_open_v2(db, &h, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK &&
	    sqlite3_prepare_v2(h, "SELECT next_usn, scan FROM journals WHERE volume = ?1", -1, &st,
			       NULL) == SQLITE_OK) {
		sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
		if (sqlite3_step(st) == SQLITE_ROW) {
			pos = sqlite3_column_int64(st, 0);
			*walked_by = sqlite3_column_int64(st, 1);
		}
	}
	sqlite3_finalize(st);
	sqlite3_close(h);
	return pos;
}

/* Live records in the index. */
static int64_t live(const char *db)
{
	sqlite3 *h = NULL;
	sqlite3_stmt *st = NULL;
	int64_t n = -1;

	if (sqlite3_open_v2(db, &h, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK &&
	    sqlite3_prepare_v2(h, "SELECT count(*) FROM files WHERE deleted_at IS NULL", -1, &st,
			       NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
		n = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	sqlite3_close(h);
	return n;
}

static void age_walk(const char *db, const char *root, int days)
{
	char sql[4096];
	int64_t by;
	sqlite3 *h = NULL;

	position(db, root, &by);
	snprintf(sql, sizeof(sql),
		 "UPDATE scans SET started_at = strftime('%%Y-%%m-%%dT%%H:%%M:%%SZ', 'now', '-%d days')"
		 " WHERE id = %lld",
		 days, (long long)by);
	CHECK_INT(sqlite3_open(db, &h), SQLITE_OK);
	CHECK_INT(sqlite3_exec(h, sql, NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(h);
}

static void quiet(void)
{
	jn.created = jn.renamed = 0;
	jn.nids = 0;
}

/* A tree of two photos, in the test's own folder. */
static void make_tree(const char *tree)
{
	char p[4096];

	CHECK_INT(t_mkdir(tree), 0);
	snprintf(p, sizeof(p), "%s/a.jpg", tree);
	t_write(p, "photo a", 7);
	snprintf(p, sizeof(p), "%s/sub", tree);
	CHECK_INT(t_mkdir(p), 0);
	snprintf(p, sizeof(p), "%s/sub/b.jpg", tree);
	t_write(p, "photo b", 7);
}

/* A folder the walk cannot list: nested deeper than it descends (a real
 * folder error on every platform, for any user). */
static void make_deep(const char *tree, char *top, size_t cap)
{
	char p[4096];
	int i;

	snprintf(top, cap, "%s/deep", tree);
	snprintf(p, sizeof(p), "%s", top);
	for (i = 0; i <= WALK_MAX_DEPTH + 1; i++) {
		size_t n = strlen(p);
		CHECK_INT(t_mkdir(p), 0);
		snprintf(p + n, sizeof(p) - n, "/d");
	}
}

static void test_folder_error(void)
{
	char tree[1024], db[1024], deep[4096];
	struct outcome o;
	int64_t by, before;

	snprintf(tree, sizeof(tree), "%s/t1", base);
	snprintf(db, sizeof(db), "%s/t1.db", base);
	make_tree(tree);
	quiet();
	o = scan(db, tree, 0);
	CHECK_INT(o.rc, SL_OK);
	CHECK(strstr(o.journal, "recorded its position yet; walked") != NULL);
	CHECK_INT(o.files, 2);
	before = position(db, tree, &by);
	CHECK(before > 0);
	o = scan(db, tree, 0);
	CHECK(strstr(o.journal, "no change since the last scan") != NULL);
	CHECK_INT(o.files, 0);

	/* a rename makes a walk, which meets a folder it cannot list */
	make_deep(tree, deep, sizeof(deep));
	jn.renamed = 1;
	o = scan(db, tree, 0);
	CHECK_INT(o.rc, SL_OK);
	CHECK_INT(o.dir_errors, 1);
	CHECK(strstr(o.journal, "was not read: the next scan walks it") != NULL);
	CHECK_INT(position(db, tree, &by), -1);
	/* the journal is quiet now: the root is walked all the same */
	quiet();
	o = scan(db, tree, 0);
	CHECK(strstr(o.journal, "recorded its position yet; walked") != NULL);
	CHECK(o.dirs > 2);
	CHECK_INT(o.dir_errors, 1);
	/* the folder can be listed again: covered, and quiet means quiet */
	t_rmtree(deep);
	o = scan(db, tree, 0);
	CHECK_INT(o.dir_errors, 0);
	CHECK(position(db, tree, &by) > before);
	o = scan(db, tree, 0);
	CHECK(strstr(o.journal, "no change since the last scan") != NULL);
	CHECK_INT(o.dirs, 0);
}

static void test_list_failed(void)
{
	char tree[1024], db[1024], p[4096];
	struct outcome o;
	uint64_t dev, ino;
	int64_t by, kept;

	snprintf(tree, sizeof(tree), "%s/t2", base);
	snprintf(db, sizeof(db), "%s/t2.db", base);
	make_tree(tree);
	quiet();
	o = scan(db, tree, 0);
	kept = position(db, tree, &by);
	CHECK(kept > 0);

	/* a new photo, which the reader cannot open this time */
	snprintf(p, sizeof(p), "%s/new.jpg", tree);
	t_write(p, "new photo", 9);
	CHECK_INT(sys_file_id(p, &dev, &ino), 0);
	jn.created = 1;
	jn.ids[0] = ino;
	snprintf(jn.paths[0], sizeof(jn.paths[0]), "%s", p);
	jn.nids = 1;
	rd_inject(RD_OP_OPEN, RD_FAULT_EIO, 0);
	o = scan(db, tree, 0);
	CHECK_INT(o.rc, SL_OK);
	CHECK(strstr(o.journal, "read from the journal's list") != NULL);
	CHECK_INT(o.files, 1);
	CHECK_INT(o.errors, 1);
	CHECK(strstr(o.journal, "reads the journal from the same point") != NULL);
	CHECK_INT(position(db, tree, &by), kept);
	/* the next scan reads from there, finds the photo again, and reads it */
	o = scan(db, tree, 0);
	CHECK_INT(jn.read_from, kept);
	CHECK(strstr(o.journal, "read from the journal's list") != NULL);
	CHECK_INT(o.files, 1);
	CHECK_INT(o.errors, 0);
	CHECK(position(db, tree, &by) > kept);
	quiet();
}

static void test_subset(void)
{
	char tree[1024], sub[2048], db[1024];
	struct outcome o;
	int64_t by;

	snprintf(tree, sizeof(tree), "%s/t3", base);
	snprintf(sub, sizeof(sub), "%s/sub", tree);
	snprintf(db, sizeof(db), "%s/t3.db", base);
	make_tree(tree);
	quiet();
	o = scan(db, sub, 0);
	CHECK_INT(o.files, 1);
	CHECK(position(db, sub, &by) > 0);
	/* the whole tree: the folder's position says nothing of a.jpg */
	o = scan(db, tree, 0);
	CHECK(strstr(o.journal, "recorded its position yet; walked") != NULL);
	CHECK(o.dirs >= 2);
	CHECK_INT(live(db), 2);
	o = scan(db, tree, 0);
	CHECK(strstr(o.journal, "no change since the last scan") != NULL);
}

static void test_walk_every_week(void)
{
	char tree[1024], db[1024];
	struct outcome o;
	int64_t by, walked;

	snprintf(tree, sizeof(tree), "%s/t4", base);
	snprintf(db, sizeof(db), "%s/t4.db", base);
	make_tree(tree);
	quiet();
	o = scan(db, tree, 0);
	position(db, tree, &walked);
	o = scan(db, tree, 0);
	CHECK(strstr(o.journal, "no change since the last scan") != NULL);
	/* a skip keeps the walk's date */
	position(db, tree, &by);
	CHECK_INT(by, walked);
	age_walk(db, tree, SJ_WALK_DAYS - 1);
	o = scan(db, tree, 0);
	CHECK(strstr(o.journal, "no change since the last scan") != NULL);
	age_walk(db, tree, SJ_WALK_DAYS + 1);
	o = scan(db, tree, 0);
	CHECK(strstr(o.journal, "days ago, and a journal misses what other systems write; "
			        "walked") != NULL);
	CHECK(o.dirs >= 2);
	position(db, tree, &by);
	CHECK(by > walked);
	o = scan(db, tree, 0);
	CHECK(strstr(o.journal, "no change since the last scan") != NULL);
}

int main(void)
{
	base = t_tmpdir("scanjn");
	snprintf(conf, sizeof(conf), "%s/seekless.conf", base);
	t_write(conf, "", 0); /* none of the machine's settings */
	jn.id = 0x01d9f00dcafe0001ull;
	jn.next = 1000;
	RUN(test_folder_error);
	RUN(test_list_failed);
	RUN(test_subset);
	RUN(test_walk_every_week);
	t_rmtree(base);
	return t_done();
}
