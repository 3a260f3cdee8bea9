/* Allocation failures: a scan (app/scan.h), run in this process, with one
 * allocation made to fail, for every Nth allocation of a small scan.
 *
 * seekless's own malloc, calloc, realloc, strdup and realpath are wrapped at
 * link time (-Wl,--wrap, see tests/CMakeLists.txt), and SQLite is given an
 * allocator that fails the same way.  libjpeg's own allocations are not
 * reached (it allocates inside its shared library).
 *
 * After each faulted run: the status is one seekless documents, the
 * index passes SQLite's integrity check, and a clean rerun on the same index
 * leaves it exactly as a clean scan from scratch does (same records, same
 * errors).  A second test fails, one after the other, every allocation that
 * extracting and hashing one file makes, for every picture of the corpus:
 * the file's hash must then be either the clean one or an out-of-memory
 * error, never another picture's (a thumbnail that cannot be decoded for
 * want of memory must not let the whole image stand in).  Under ASan (tests/run.sh --sanitize) leaks and bad frees on the
 * failure paths fail the test too. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sqlite3.h>

#include "app/scan.h"
#include "indexer/extract.h"
#include "tests/unit/test.h"

/* ---- the failing allocator ---------------------------------------------- */

/* < 0: count only.  Otherwise the allocation that finds it at 0 fails. */
static atomic_long countdown = -1;
static atomic_long allocations;
static atomic_int failed;

static int fail_now(void)
{
	atomic_fetch_add(&allocations, 1);
	if (atomic_load(&countdown) < 0)
		return 0;
	if (atomic_fetch_sub(&countdown, 1) != 0)
		return 0;
	atomic_store(&failed, 1);
	errno = ENOMEM;
	return 1;
}

void *__real_malloc(size_t n);
void *__real_calloc(size_t k, size_t n);
void *__real_realloc(void *p, size_t n);
char *__real_strdup(const char *s);
char *__real_realpath(const char *path, char *resolved);
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t k, size_t n);
void *__wrap_realloc(void *p, size_t n);
char *__wrap_strdup(const char *s);
char *__wrap_realpath(const char *path, char *resolved);

void *__wrap_malloc(size_t n) { return fail_now() ? NULL : __real_malloc(n); }
void *__wrap_calloc(size_t k, size_t n) { return fail_now() ? NULL : __real_calloc(k, n); }
void *__wrap_realloc(void *p, size_t n) { return fail_now() ? NULL : __real_realloc(p, n); }
char *__wrap_strdup(const char *s) { return fail_now() ? NULL : __real_strdup(s); }

char *__wrap_realpath(const char *path, char *resolved)
{
	if (!resolved && fail_now())
		return NULL;
	return __real_realpath(path, resolved);
}

/* SQLite's allocator: a 16-byte header keeps the size (xSize needs it) and
 * the alignment. */
static void *sq_malloc(int n)
{
	uint8_t *p;
	if (fail_now())
		return NULL;
	p = __real_malloc((size_t)n + 16);
	if (!p)
		return NULL;
	memcpy(p, &n, sizeof(n));
	return p + 16;
}

static void sq_free(void *p)
{
	if (p)
		free((uint8_t *)p - 16);
}

static int sq_size(void *p)
{
	int n;
	memcpy(&n, (uint8_t *)p - 16, sizeof(n));
	return n;
}

static void *sq_realloc(void *p, int n)
{
	uint8_t *q;
	int old;
	if (!p)
		return sq_malloc(n);
	if (fail_now())
		return NULL;
	old = sq_size(p);
	q = __real_malloc((size_t)n + 16);
	if (!q)
		return NULL;
	memcpy(q + 16, p, (size_t)(old < n ? old : n));
	memcpy(q, &n, sizeof(n));
	sq_free(p);
	return q + 16;
}

static int sq_roundup(int n) { return (n + 7) & ~7; }
static int sq_init(void *arg) { (void)arg; return SQLITE_OK; }
static void sq_shutdown(void *arg) { (void)arg; }

static const sqlite3_mem_methods sq_methods = {
	sq_malloc, sq_free, sq_realloc, sq_size, sq_roundup, sq_init, sq_shutdown, NULL,
};

/* ---- the tree and the runs ---------------------------------------------- */

static char *root, *dbdir;

static void copy_file(const char *from, const char *to)
{
	size_t n;
	unsigned char *d = t_read(from, &n);
	if (!d) {
		fprintf(stderr, "cannot read %s\n", from);
		exit(2);
	}
	t_write(to, d, n);
	free(d);
}

/* A corpus JPEG with 700 kB of noise after its end. */
static int big_jpeg(void)
{
	char path[PATH_MAX];
	size_t n;
	unsigned char *j, *noise, *both;

	snprintf(path, sizeof(path), "%s/Piexif__01.jpg", SEEKLESS_CORPUS_DIR);
	if (!(j = t_read(path, &n)))
		return -1;
	noise = t_bytes(700000, 5);
	both = malloc(n + 700000);
	memcpy(both, j, n);
	memcpy(both + n, noise, 700000);
	snprintf(path, sizeof(path), "%s/sub/big.jpg", root);
	t_write(path, both, n + 700000);
	free(both);
	free(noise);
	free(j);
	return 0;
}

/* One file of each kind the shared corpus has (by extension), at most 14,
 * an empty file, a subdirectory, and a JPEG of 700 kB that the scan's
 * 1 MiB budget makes it read in chunks.  Returns how many files. */
static int make_tree(void)
{
	char seen[32][8], path[PATH_MAX], dst[PATH_MAX];
	int nseen = 0, files = 0, i;
	struct dirent **names;
	int n = scandir(SEEKLESS_CORPUS_DIR, &names, NULL, alphasort);

	if (n < 0)
		return -1;
	snprintf(path, sizeof(path), "%s/sub", root);
	t_mkdir(path);
	for (i = 0; i < n; i++) {
		const char *dot = strrchr(names[i]->d_name, '.');
		int k, dup = 0;
		if (dot && names[i]->d_name[0] != '.' && names[i]->d_type == DT_REG &&
		    strcmp(dot, ".json") != 0 && strcmp(dot, ".md") != 0 && strlen(dot) < 8 &&
		    nseen < 14) {
			for (k = 0; k < nseen; k++)
				dup |= strcmp(seen[k], dot) == 0;
			if (!dup) {
				strcpy(seen[nseen++], dot);
				snprintf(path, sizeof(path), "%s/%s", SEEKLESS_CORPUS_DIR, names[i]->d_name);
				snprintf(dst, sizeof(dst), "%s/%s%s", root, files % 2 ? "sub/" : "",
					 names[i]->d_name);
				copy_file(path, dst);
				files++;
			}
		}
		free(names[i]);
	}
	free(names);
	snprintf(path, sizeof(path), "%s/empty.jpg", root);
	t_write(path, "", 0);
	if (big_jpeg() != 0)
		return -1;
	return files + 2;
}

/* What `seekless scan` would exit with. */
enum { EXIT_OK, EXIT_FILE_ERRORS, EXIT_USAGE, EXIT_FATAL, EXIT_INTERRUPTED };

/* A scan into db, as `seekless scan --jobs 2 --mem 1M ROOT` runs it (the
 * library call: it prints nothing); the exit status it would give. */
static int scan(const char *db)
{
	char *roots[] = {root};
	struct scan_args a;
	struct scan_result r;
	int rc, status;

	memset(&a, 0, sizeof(a));
	a.unconfined = 1; /* many scans in this one process */
	a.order = a.cross_fs = a.phash = a.trust_mtime = a.background = -1;
	/* every hash in the scan, as a clean scan's index has them: whether a
	 * file counts as read from the disk (and its hash may be left for the
	 * next scan) depends on the page cache and the file system under $TMPDIR
	 * (overlayfs answers cachestat for its own, empty mapping), not on the
	 * failed allocation this test is about; test_pending covers leaving */
	a.phash_now = 1;
	a.db = db;
	a.roots = roots;
	a.nroots = 1;
	a.jobs = 2;
	a.mem = 1u << 20;
	rc = scan_run(&a, &r);
	status = rc == SL_OK ? (r.st.errors ? EXIT_FILE_ERRORS : EXIT_OK)
		 : rc == SL_E_USAGE ? EXIT_USAGE
		 : rc == SL_E_CANCELLED ? EXIT_INTERRUPTED : EXIT_FATAL;
	CHECK(!r.abandoned);
	scan_result_free(&r);
	return status;
}

/* What the index says of the files, as one string: the records that
 * matter, ordered by path.  NULL when the index cannot be read. */
static char *records(const char *db)
{
	static const char sql[] =
		"SELECT path, size, mtime_ns, format, width, height, make, model, datetime_original,"
		" content_hash, phash, error, deleted_at IS NULL FROM files ORDER BY path";
	sqlite3 *h;
	sqlite3_stmt *st;
	struct strbuf out = STRBUF_INIT;
	int rc, c;

	if (sqlite3_open_v2(db, &h, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
		sqlite3_close(h);
		return NULL;
	}
	if (sqlite3_prepare_v2(h, sql, -1, &st, NULL) != SQLITE_OK) {
		sqlite3_close(h);
		return NULL;
	}
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		for (c = 0; c < sqlite3_column_count(st); c++) {
			const unsigned char *t = sqlite3_column_text(st, c);
			sb_addf(&out, "%s|", t ? (const char *)t : "NULL");
		}
		sb_add(&out, "\n", 1);
	}
	sqlite3_finalize(st);
	sqlite3_close(h);
	if (rc != SQLITE_DONE) {
		sb_free(&out);
		return NULL;
	}
	return out.p ? out.p : __real_strdup("");
}

static int integrity_ok(const char *db)
{
	sqlite3 *h;
	sqlite3_stmt *st;
	int ok = 0;

	if (sqlite3_open_v2(db, &h, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK &&
	    sqlite3_prepare_v2(h, "PRAGMA integrity_check", -1, &st, NULL) == SQLITE_OK) {
		ok = sqlite3_step(st) == SQLITE_ROW &&
		     strcmp((const char *)sqlite3_column_text(st, 0), "ok") == 0;
		sqlite3_finalize(st);
	}
	sqlite3_close(h);
	return ok;
}

static void remove_index(const char *db)
{
	char p[PATH_MAX];
	const char *sfx[] = {"", "-wal", "-shm", ".lock"};
	size_t i;
	for (i = 0; i < sizeof(sfx) / sizeof(sfx[0]); i++) {
		snprintf(p, sizeof(p), "%s%s", db, sfx[i]);
		unlink(p);
	}
}

static void test_every_allocation(void)
{
	char db0[PATH_MAX], db[PATH_MAX];
	char *want;
	long total, n, runs = 0, hit = 0, fatal = 0;
	int nfiles = make_tree(), rc0;

	if (nfiles < 0)
		t_skip("no shared corpus at " SEEKLESS_CORPUS_DIR);
	snprintf(db0, sizeof(db0), "%s/clean.db", dbdir);
	snprintf(db, sizeof(db), "%s/index.db", dbdir);

	/* the reference: a clean scan, counting allocations */
	atomic_store(&allocations, 0);
	rc0 = scan(db0);
	total = atomic_load(&allocations);
	CHECK(rc0 == EXIT_OK || rc0 == EXIT_FILE_ERRORS);
	want = records(db0);
	CHECK(want != NULL);
	fprintf(stderr, "  %d files, %ld allocations in a clean scan (exit %d)\n", nfiles, total,
		rc0);

	/* Every allocation of the first 400 (opening, schema, walk, first files),
	 * then every 7th: the later ones repeat per file. */
	for (n = getenv("OOM_FROM") ? atol(getenv("OOM_FROM")) : 0; n < total + 50;
	     n += n < 400 ? 1 : 7) {
		char *got;
		int rc;

		remove_index(db);
		atomic_store(&failed, 0);
		atomic_store(&countdown, n);
		rc = scan(db);
		atomic_store(&countdown, -1);
		runs++;
		hit += atomic_load(&failed);
		fatal += rc == EXIT_FATAL;
		if (rc != EXIT_OK && rc != EXIT_FILE_ERRORS && rc != EXIT_FATAL) {
			fprintf(stderr, "  allocation %ld: exit %d\n", n, rc);
			CHECK(0);
		}
		if (access(db, F_OK) == 0 && !integrity_ok(db)) {
			fprintf(stderr, "  allocation %ld: index fails its integrity check\n", n);
			CHECK(0);
		}
		/* the next run, with memory, completes the index */
		rc = scan(db);
		CHECK(rc == rc0);
		got = records(db);
		if (!got || strcmp(got, want) != 0) {
			fprintf(stderr, "  allocation %ld (first run exit %d): the rerun's index "
					"differs from a clean scan's\n--- want\n%s--- got\n%s",
				n, rc, want, got ? got : "(unreadable)\n");
			CHECK(0);
			free(got);
			break;
		}
		free(got);
	}
	fprintf(stderr, "  %ld runs, %ld with a failed allocation, %ld of them fatal\n", runs, hit,
		fatal);
	CHECK(hit > runs / 2);
	free(want);
}

/* Extraction and perceptual hash of one file: the hash's status, the hash
 * and its source. */
struct hashed {
	int tried; /* a picture x_phash was asked to hash */
	int rc;
	uint64_t h;
	const char *src;
};

static struct hashed hash_once(const uint8_t *p, size_t n)
{
	struct x_meta m;
	struct sl_err e;
	struct hashed r = {0, SL_E_UNSUPPORTED, 0, NULL};
	int rc;

	memset(&m, 0, sizeof(m));
	rc = x_extract(p, n, n, &m, &e);
	if (rc == SL_E_NOMEM) {
		r.rc = rc;
	} else if (rc == SL_OK && x_phashable(m.format)) {
		r.tried = 1;
		r.rc = x_phash(p, n, 1, &m, &r.h, &r.src, &e);
	}
	/* the descriptive values are the caller's, whatever the outcome */
	x_meta_release(&m);
	return r;
}

static void test_every_allocation_of_a_hash(void)
{
	struct dirent **names;
	int n = scandir(SEEKLESS_CORPUS_DIR, &names, NULL, alphasort), i;
	long pictures = 0, runs = 0, nomem = 0;

	CHECK(n > 0);
	for (i = 0; i < n; i++) {
		char path[PATH_MAX];
		unsigned char *d = NULL;
		size_t len;
		struct hashed want, got;
		long total, k;

		snprintf(path, sizeof(path), "%s/%s", SEEKLESS_CORPUS_DIR, names[i]->d_name);
		if (names[i]->d_type != DT_REG || !(d = t_read(path, &len)))
			goto next;
		atomic_store(&countdown, -1);
		atomic_store(&allocations, 0);
		want = hash_once(d, len);
		total = atomic_load(&allocations);
		if (!want.tried)
			goto next; /* not a picture we hash */
		pictures++;
		for (k = 0; k < total; k++) {
			atomic_store(&countdown, k);
			got = hash_once(d, len);
			atomic_store(&countdown, -1);
			runs++;
			if (got.rc == SL_E_NOMEM) {
				nomem++;
				continue;
			}
			if (got.tried != want.tried || got.rc != want.rc || got.h != want.h ||
			    (want.src && (!got.src || strcmp(got.src, want.src) != 0))) {
				fprintf(stderr, "  %s, allocation %ld of %ld failed: status %d, hash "
						"%016llx from %s; without failure %d, %016llx from %s\n",
					names[i]->d_name, k, total, got.rc, (unsigned long long)got.h,
					got.src ? got.src : "-", want.rc, (unsigned long long)want.h,
					want.src ? want.src : "-");
				CHECK(0);
				break;
			}
		}
	next:
		free(d);
		free(names[i]);
	}
	free(names);
	fprintf(stderr, "  %ld pictures, %ld faulted runs, %ld of them out of memory\n", pictures,
		runs, nomem);
	CHECK(pictures > 20);
	CHECK(nomem > 0);
}

int main(void)
{
	int rc;

	if (sqlite3_config(SQLITE_CONFIG_MALLOC, &sq_methods) != SQLITE_OK) {
		fprintf(stderr, "cannot install SQLite's allocator\n");
		return 2;
	}
	root = t_tmpdir("oom-tree");
	dbdir = t_tmpdir("oom-db");
	RUN(test_every_allocation_of_a_hash);
	RUN(test_every_allocation);
	rc = t_done();
	t_rmtree(root);
	t_rmtree(dbdir);
	free(root);
	free(dbdir);
	return rc;
}
