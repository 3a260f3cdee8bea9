/* test.h - a minimal harness: CHECK macros that count failures, temp
 * directories, file helpers.  Each test_<module>.c is one CTest test. */
#ifndef SL_TEST_H
#define SL_TEST_H

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/anchor.h"
#include "common/sys.h"
#include "scanner/walk.h"

static int t_failures;
static int t_checks;

#define CHECK(cond)                                                                    \
	do {                                                                           \
		t_checks++;                                                            \
		if (!(cond)) {                                                         \
			fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
			t_failures++;                                                  \
		}                                                                      \
	} while (0)

#define CHECK_INT(a, b)                                                                \
	do {                                                                           \
		long long t_a = (long long)(a), t_b = (long long)(b);                  \
		t_checks++;                                                            \
		if (t_a != t_b) {                                                      \
			fprintf(stderr, "%s:%d: CHECK failed: %s == %s (%lld != %lld)\n", \
				__FILE__, __LINE__, #a, #b, t_a, t_b);                 \
			t_failures++;                                                  \
		}                                                                      \
	} while (0)

#define CHECK_STR(a, b)                                                                \
	do {                                                                           \
		const char *t_a = (a), *t_b = (b);                                     \
		t_checks++;                                                            \
		if (!t_a || !t_b || strcmp(t_a, t_b) != 0) {                           \
			fprintf(stderr, "%s:%d: CHECK failed: %s == %s ('%s' != '%s')\n", \
				__FILE__, __LINE__, #a, #b, t_a ? t_a : "(null)",      \
				t_b ? t_b : "(null)");                                 \
			t_failures++;                                                  \
		}                                                                      \
	} while (0)

#define RUN(fn)                                                                        \
	do {                                                                           \
		int t_before = t_failures;                                             \
		fn();                                                                  \
		fprintf(stderr, "%s %s\n", t_failures == t_before ? "ok  " : "FAIL", #fn); \
	} while (0)

/* Parts of the test that could not run here (t_skip_part). */
static int t_skips;

/* 1 when every test must run (SEEKLESS_REQUIRE_ALL=1: CI, and tests/run.sh
 * as root), where a skip would hide what was not tested. */
static inline int t_required(void)
{
	const char *all = getenv("SEEKLESS_REQUIRE_ALL");
	return all && strcmp(all, "1") == 0;
}

/* A part of the test cannot run here (not root, no corpus...): say why and
 * go on with the rest; t_done then makes the whole a skip, or a failure
 * where every test is required. */
static inline void t_skip_part(const char *why)
{
	fprintf(stderr, "%s: %s\n", t_required() ? "required but not possible here" : "skip", why);
	t_skips++;
}

/* The status to exit with: 1 when a check failed; else 77 (CTest's
 * SKIP_RETURN_CODE) when a part was skipped, 1 for that when every test is
 * required; else 0. */
static inline int t_done(void)
{
	fprintf(stderr, "%d checks, %d failed, %d parts not run\n", t_checks, t_failures, t_skips);
	if (t_failures)
		return 1;
	if (t_skips)
		return t_required() ? 1 : 77;
	return 0;
}

/* Nothing of the test can run here: t_skip_part, and exit as t_done says. */
static inline void t_skip(const char *why)
{
	t_skip_part(why);
	exit(t_done());
}

/* The folder of path held as an anchor (anchor.h, as a scan holds its
 * roots), *name pointing at path's last name.  Exits when it cannot be
 * opened.  anchor_free it. */
static inline struct anchor *t_anchor(const char *path, const char **name)
{
	const char *slash = strrchr(path, '/');
	char dir[4096];
	struct anchor *a;
	struct sl_err e;
	size_t n = slash ? (size_t)(slash - path) : 0;

	if (!slash || n >= sizeof(dir)) {
		fprintf(stderr, "t_anchor: no folder in %s\n", path);
		exit(2);
	}
	memcpy(dir, path, n ? n : 1);
	dir[n ? n : 1] = '\0';
	if (anchor_open(dir, 0, &a, &e) != SL_OK) {
		fprintf(stderr, "t_anchor: %s\n", e.msg);
		exit(2);
	}
	*name = slash + 1;
	return a;
}

/* walk_root of the root named path, resolved as prep_roots does. */
static inline int t_walk_root(struct ftab *ft, const char *path, const struct walk_opts *o,
			      struct walk_stats *st, struct sl_err *e)
{
	struct anchor *a;
	int rc = anchor_open(path, ANCHOR_FILE | (o->cross_fs ? ANCHOR_CROSS_FS : 0), &a, e);
	if (rc != SL_OK)
		return rc;
	rc = walk_root(ft, a, o, st, e);
	anchor_free(a);
	return rc;
}

/* The platform part (tplat_posix.c, tplat_win.c, chosen by CMake). */

/* A fresh directory under $TMPDIR (or the system's temporary folder), in
 * seekless's path form; removed with everything in it by t_rmtree. */
char *t_tmpdir(const char *tag);
void t_rmtree(const char *dir);

/* Write a whole file (exits on failure), make a directory, remove a file. */
void t_write(const char *path, const void *data, size_t n);
/* Rewrite the existing file at path in place to hold just data: the same
 * file (its identity kept; Wine's truncating open makes a new one). */
void t_rewrite(const char *path, const void *data, size_t n);
int t_mkdir(const char *path);
int t_unlink(const char *path);

/* 1 when only the owner (and on Windows SYSTEM and Administrators) may
 * open path, and on Windows the creating user is named in the DACL; 0
 * when others may (or that user is missing), -1 when it cannot be told. */
int t_private(const char *path);

/* A copy of the n bytes at src in memory that ends where an inaccessible
 * page begins: a read past its end faults at once, in every build, where
 * only AddressSanitizer would see it in a malloc'd copy.  Exits when
 * memory cannot be had; t_unguard(p, n) gives it back. */
unsigned char *t_guarded(const void *src, size_t n);
void t_unguard(unsigned char *p, size_t n);

/* Local time from now on is that of zone (an IANA name such as
 * "Europe/Berlin"), as TZ sets it for the C library.  Returns 1 where the
 * C library reads IANA names (a zone it does not know is then missing
 * from the machine), 0 where it reads only POSIX forms ("EST5EDT":
 * Windows' runtime). */
int t_set_tz(const char *zone);

/* The next number of a splitmix64 sequence kept in *state. */
static inline uint64_t t_rnd(uint64_t *state)
{
	uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

/* n pseudo-random bytes from seed, into a new buffer. */
static inline unsigned char *t_bytes(size_t n, uint64_t seed)
{
	unsigned char *p = malloc(n ? n : 1);
	size_t i;
	for (i = 0; i < n; i++) {
		seed = seed * 6364136223846793005ull + 1442695040888963407ull;
		p[i] = (unsigned char)(seed >> 56);
	}
	return p;
}

/* Read a whole file (a UTF-8 path, on Windows too); NULL when missing or
 * not a file to read (a folder opens too, and ext4 puts its end at
 * LLONG_MAX: no test file is near 1 GiB). */
static inline unsigned char *t_read(const char *path, size_t *len)
{
	FILE *f = sys_fopen(path, "rb");
	unsigned char *p;
	long n;
	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	p = n >= 0 && n < (1L << 30) ? malloc(n > 0 ? (size_t)n : 1) : NULL;
	if (!p || (n > 0 && fread(p, 1, (size_t)n, f) != (size_t)n)) {
		fclose(f);
		free(p);
		return NULL;
	}
	fclose(f);
	*len = (size_t)n;
	return p;
}

#endif
