/* dupes.c - groups of identical files (same content hash) and of
 * near-identical images (perceptual hashes within a Hamming distance),
 * db.h db_dupes and db_near_groups.
 *
 * Near groups use multi-index hashing: split the 64 bits into bits+1
 * chunks; two hashes within `bits` of each other differ in at most `bits`
 * chunks, so they agree exactly on at least one (pigeonhole).  Sorting the
 * hashes by each chunk puts candidates next to each other; only those are
 * compared.  The same picture turned or mirrored has one of seven other
 * hashes (phash.h, ph_variant): each looks up its chunk among the sorted
 * ones too, so a copy that lost its orientation tag joins its original.  A million images at the default 4 bits compare a few hundred
 * candidates each, instead of a million (docs/benchmarks.md).  Matches are
 * joined with union-find, so a group is closed under "near". */
#include <stdlib.h>
#include <string.h>

#include "common/strbuf.h"
#include "db/db_int.h"
#include "indexer/formats/phash.h"

struct keyed {
	uint32_t key;
	uint32_t idx;
};

static int cmp_keyed(const void *a, const void *b)
{
	const struct keyed *x = a, *y = b;
	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

static uint32_t find(uint32_t *up, uint32_t i)
{
	while (up[i] != i) {
		up[i] = up[up[i]]; /* path halving */
		i = up[i];
	}
	return i;
}

static void join(uint32_t *up, uint32_t x, uint32_t y)
{
	uint32_t rx = find(up, x), ry = find(up, y);
	if (rx != ry)
		up[rx > ry ? rx : ry] = rx < ry ? rx : ry;
}

/* The first of the n sorted entries whose key is not below key. */
static size_t lower_bound(const struct keyed *k, size_t n, uint32_t key)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (k[mid].key < key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static int popcount64(uint64_t x)
{
#if defined(__GNUC__)
	return __builtin_popcountll(x); /* one instruction where the CPU has it */
#else
	int n = 0;
	for (; x; x &= x - 1)
		n++;
	return n;
#endif
}

static const uint64_t *sort_base;
static const unsigned char *sort_emb;

/* by hash, then embedded or not, so that each kind of each value has one
 * representative */
static int cmp_by_hash(const void *a, const void *b)
{
	uint32_t i = *(const uint32_t *)a, j = *(const uint32_t *)b;
	uint64_t x = sort_base[i], y = sort_base[j];
	if (x != y)
		return x < y ? -1 : 1;
	return sort_emb ? (sort_emb[i] > sort_emb[j]) - (sort_emb[i] < sort_emb[j]) : 0;
}

/* Whether x and y (hash indexes) are near: d within bits, or bits + extra
 * across an embedded picture and an image. */
static int close_enough(const unsigned char *embedded, uint32_t x, uint32_t y, int d, int bits,
			int extra)
{
	if (d <= bits)
		return 1;
	return embedded && embedded[x] != embedded[y] && d <= bits + extra;
}

int db_near_groups(const uint64_t *h, const unsigned char *embedded, size_t n, int bits, int extra,
		   uint32_t *group)
{
	int m, c, most;
	struct keyed *k;
	uint32_t *order, *rep;
	size_t i, j, nrep = 0;

	if (bits < 0 || bits > 16 || extra < 0 || extra > 16 || n > UINT32_MAX)
		return -1;
	most = bits + (embedded ? extra : 0); /* chunks enough for the widest test */
	m = most + 1;
	for (i = 0; i < n; i++)
		group[i] = (uint32_t)i;
	k = malloc((n ? n : 1) * sizeof(*k));
	order = malloc((n ? n : 1) * sizeof(*order));
	rep = malloc((n ? n : 1) * sizeof(*rep));
	if (!k || !order || !rep) {
		free(k);
		free(order);
		free(rep);
		return -1;
	}
	/* equal hashes first (copies, re-saves): joined at once, one of them
	 * stands for all, so no chunk bucket fills with the same value */
	for (i = 0; i < n; i++)
		order[i] = (uint32_t)i;
	sort_base = h;
	sort_emb = embedded;
	qsort(order, n, sizeof(*order), cmp_by_hash);
	for (i = 0; i < n; i++) {
		if (nrep && h[order[i]] == h[rep[nrep - 1]] &&
		    (!embedded || embedded[order[i]] == embedded[rep[nrep - 1]])) {
			uint32_t a = find(group, order[i]), b = find(group, rep[nrep - 1]);
			if (a != b)
				group[a > b ? a : b] = a < b ? a : b;
		} else {
			rep[nrep++] = order[i];
		}
	}
	for (c = 0; c < m; c++) {
		/* chunk c: bits [lo, hi) of the 64 */
		int lo = c * 64 / m, hi = (c + 1) * 64 / m, v;
		uint64_t mask = hi - lo == 64 ? ~0ull : ((1ull << (hi - lo)) - 1);
		for (i = 0; i < nrep; i++) {
			k[i].key = (uint32_t)((h[rep[i]] >> lo) & mask);
			k[i].idx = rep[i];
		}
		qsort(k, nrep, sizeof(*k), cmp_keyed);
		for (i = 0; i < nrep; i = j) {
			size_t a, b;
			for (j = i + 1; j < nrep && k[j].key == k[i].key; j++)
				;
			for (a = i; a < j; a++)
				for (b = a + 1; b < j; b++)
					if (close_enough(embedded, k[a].idx, k[b].idx,
							 popcount64(h[k[a].idx] ^ h[k[b].idx]), bits,
							 extra))
						join(group, k[a].idx, k[b].idx);
		}
		/* the same picture in another orientation (phash.h): each of the
		 * other seven variants of each hash looks up its chunk */
		for (i = 0; i < nrep; i++)
			for (v = 1; v < 8; v++) {
				uint64_t hv = ph_variant(h[rep[i]], v);
				uint32_t key = (uint32_t)((hv >> lo) & mask);
				size_t a = lower_bound(k, nrep, key);
				for (; a < nrep && k[a].key == key; a++)
					if (k[a].idx != rep[i] &&
					    close_enough(embedded, rep[i], k[a].idx,
							 popcount64(hv ^ h[k[a].idx]), bits, extra))
						join(group, rep[i], k[a].idx);
			}
	}
	for (i = 0; i < n; i++)
		group[i] = find(group, (uint32_t)i);
	free(k);
	free(order);
	free(rep);
	return 0;
}

/* What a group is handed to (db.h db_dupes). */
struct out {
	int (*fn)(void *ctx, const struct db_dupe_group *g);
	void *ctx;
};

/* Hand one group on, with its paths (ids in the same group, in order). */
static int emit(struct db *db, sqlite3_stmt *path_of, const int64_t *ids, size_t n,
		struct db_dupe_group *g, const struct out *o, struct sl_err *err)
{
	char **paths = calloc(n ? n : 1, sizeof(*paths));
	size_t *lens = calloc(n ? n : 1, sizeof(*lens));
	size_t i;
	int rc = SL_OK;

	if (!paths || !lens)
		rc = SL_FAIL(err, SL_E_NOMEM, 0, "dupes: out of memory");
	for (i = 0; i < n && rc == SL_OK; i++) {
		sqlite3_reset(path_of);
		sqlite3_bind_int64(path_of, 1, ids[i]);
		if (sqlite3_step(path_of) != SQLITE_ROW) {
			rc = DB_FAIL(db->h, err, "dupes: path");
			break;
		}
		lens[i] = (size_t)sqlite3_column_bytes(path_of, 0);
		paths[i] = malloc(lens[i] + 1);
		if (!paths[i]) {
			rc = SL_FAIL(err, SL_E_NOMEM, 0, "dupes: out of memory");
			break;
		}
		memcpy(paths[i], sqlite3_column_blob(path_of, 0), lens[i]);
		paths[i][lens[i]] = '\0';
	}
	if (rc == SL_OK) {
		g->paths = (const char *const *)paths;
		g->lens = lens;
		g->n = n;
		if (o->fn(o->ctx, g) != 0)
			rc = SL_FAIL(err, SL_E_IO, 0, "dupes: write error");
	}
	for (i = 0; paths && i < n; i++)
		free(paths[i]);
	free(paths);
	free(lens);
	return rc;
}

static int identical(struct db *db, sqlite3_stmt *path_of, const struct out *o,
		     uint64_t *ngroups, struct sl_err *err)
{
	sqlite3_stmt *st = NULL;
	int64_t *ids = NULL;
	size_t n = 0, cap = 0;
	char prev[64] = "";
	int64_t size = 0;
	int r, rc = SL_OK;

	/* empty files all share one hash and are no one's copies */
	if (sqlite3_prepare_v2(db->h,
			       "SELECT id, content_hash, size FROM files WHERE deleted_at IS NULL"
			       " AND size > 0 AND content_hash IN (SELECT content_hash FROM files"
			       " WHERE deleted_at IS NULL AND size > 0 AND content_hash IS NOT NULL"
			       " GROUP BY content_hash HAVING count(*) > 1)"
			       " ORDER BY content_hash, path",
			       -1, &st, NULL) != SQLITE_OK)
		return DB_FAIL(db->h, err, "prepare dupes");
	for (;;) {
		const char *hash = NULL;
		r = sqlite3_step(st);
		if (r == SQLITE_ROW)
			hash = (const char *)sqlite3_column_text(st, 1);
		if (n && (r != SQLITE_ROW || strcmp(hash, prev) != 0)) {
			struct db_dupe_group g = {"identical", prev, size, -1, NULL, NULL, 0};
			rc = emit(db, path_of, ids, n, &g, o, err);
			(*ngroups)++;
			n = 0;
			if (rc != SL_OK)
				break;
		}
		if (r != SQLITE_ROW)
			break;
		if (sl_grow(&ids, &cap, n + 1, sizeof(*ids)) != 0) {
			rc = SL_FAIL(err, SL_E_NOMEM, 0, "dupes: out of memory");
			break;
		}
		ids[n++] = sqlite3_column_int64(st, 0);
		snprintf(prev, sizeof(prev), "%s", hash);
		size = sqlite3_column_int64(st, 2);
	}
	if (rc == SL_OK && r != SQLITE_DONE)
		rc = DB_FAIL(db->h, err, "dupes");
	sqlite3_finalize(st);
	free(ids);
	return rc;
}

struct member {
	uint32_t group;
	int64_t id;
};

static int cmp_member(const void *a, const void *b)
{
	const struct member *x = a, *y = b;
	if (x->group != y->group)
		return x->group < y->group ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

static int near(struct db *db, sqlite3_stmt *path_of, int bits, const struct out *o,
		uint64_t *ngroups, struct sl_err *err)
{
	sqlite3_stmt *st = NULL;
	uint64_t *h = NULL;
	int64_t *ids = NULL, *run = NULL;
	uint32_t *group = NULL;
	struct member *mem = NULL;
	unsigned char *emb = NULL;
	size_t n = 0, cap = 0, capi = 0, cape = 0, i, j;
	int r, rc = SL_OK;

	if (sqlite3_prepare_v2(db->h,
			       "SELECT id, phash, coalesce(phash_src IN ('exif-thumbnail', 'heif-thumbnail', 'preview'), 0)"
			       " FROM files WHERE deleted_at IS NULL AND phash IS NOT NULL",
			       -1, &st, NULL) != SQLITE_OK)
		return DB_FAIL(db->h, err, "prepare dupes");
	while ((r = sqlite3_step(st)) == SQLITE_ROW) {
		if (sl_grow(&h, &cap, n + 1, sizeof(*h)) != 0 ||
		    sl_grow(&ids, &capi, n + 1, sizeof(*ids)) != 0 ||
		    sl_grow(&emb, &cape, n + 1, sizeof(*emb)) != 0) {
			rc = SL_FAIL(err, SL_E_NOMEM, 0, "dupes: out of memory");
			break;
		}
		ids[n] = sqlite3_column_int64(st, 0);
		emb[n] = (unsigned char)sqlite3_column_int(st, 2);
		h[n++] = (uint64_t)sqlite3_column_int64(st, 1);
	}
	if (rc == SL_OK && r != SQLITE_DONE)
		rc = DB_FAIL(db->h, err, "dupes");
	sqlite3_finalize(st);
	if (rc == SL_OK && n) {
		group = malloc(n * sizeof(*group));
		mem = malloc(n * sizeof(*mem));
		run = malloc(n * sizeof(*run));
		if (!group || !mem || !run ||
		    db_near_groups(h, emb, n, bits, DB_EMBEDDED_EXTRA_BITS, group) != 0)
			rc = SL_FAIL(err, SL_E_NOMEM, 0, "dupes: out of memory");
	}
	if (rc == SL_OK && n) {
		for (i = 0; i < n; i++) {
			mem[i].group = group[i];
			mem[i].id = ids[i];
		}
		qsort(mem, n, sizeof(*mem), cmp_member);
		for (i = 0; i < n && rc == SL_OK; i = j) {
			for (j = i; j < n && mem[j].group == mem[i].group; j++)
				run[j - i] = mem[j].id;
			if (j - i > 1) {
				struct db_dupe_group g = {"near", NULL, 0, bits, NULL, NULL, 0};
				rc = emit(db, path_of, run, j - i, &g, o, err);
				(*ngroups)++;
			}
		}
	}
	free(h);
	free(emb);
	free(ids);
	free(group);
	free(mem);
	free(run);
	return rc;
}

int db_dupes(struct db *db, int near_bits, int (*fn)(void *ctx, const struct db_dupe_group *g),
	     void *ctx, uint64_t *ngroups, struct sl_err *err)
{
	struct out o = {fn, ctx};
	sqlite3_stmt *path_of = NULL;
	int rc;

	*ngroups = 0;
	if (sqlite3_prepare_v2(db->h, "SELECT path FROM files WHERE id = ?1", -1, &path_of,
			       NULL) != SQLITE_OK)
		return DB_FAIL(db->h, err, "prepare dupes");
	rc = near_bits < 0 ? identical(db, path_of, &o, ngroups, err)
			   : near(db, path_of, near_bits, &o, ngroups, err);
	sqlite3_finalize(path_of);
	return rc;
}
