/* dupes.c - groups of identical files (same content hash) and of
 * near-identical images (perceptual hashes within a Hamming distance),
 * db.h db_dupes and db_near_groups.
 *
 * Near groups use multi-index hashing.  Cut the hash into m blocks and
 * give block i a radius r_i, the radii adding up to d + 1 - m: two hashes
 * within d bits differ by at most r_i bits in some block i (were every
 * block r_i + 1 or more apart, the whole would be d + 1).  So each hash is
 * filed under its blocks, and each looks up only the keys within r_i of
 * its own in each block's table.  How to cut is chosen per run: a block
 * of about log2(n) bits holds about one hash per key, so what a look-up
 * costs is the keys it visits, not the hashes it compares, and stays flat
 * as the index grows.  (Cutting into d + 1 exact blocks, as this file did
 * before, gives keys of 64 / (d + 1) bits: at 7 bits, for an embedded
 * picture against an image, 8-bit keys with n / 256 hashes each, which is
 * quadratic: a million unrelated hashes took most of an hour.)
 *
 * The same picture turned or mirrored has one of seven other hashes
 * (phash.h, ph_variant): each hash looks up all eight of its variants, so a
 * copy that lost its orientation tag joins its original.  The variants are
 * a group of distance-keeping bit maps, so "a variant of x is near y" is
 * the same as "a variant of y is near x" and one side's look-ups suffice.
 * Matches are joined with union-find, so a group is closed under "near". */
#include <stdlib.h>
#include <string.h>

#include "common/strbuf.h"
#include "db/db_int.h"
#include "indexer/formats/phash.h"

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

#define MAX_KEY_BITS 22 /* a table of 4M keys (16 MB) at most */
#define MAX_BLOCKS 64

/* One search: the hashes filed (h[filed[0..nfiled)]) are looked up by
 * those asking, in each of their eight variants; pairs within d bits are
 * joined in group. */
struct search {
	const uint64_t *h;
	uint32_t *group;
	const uint32_t *filed, *asking;
	size_t nfiled, nasking;
	int d;
};

/* Block i: bits [lo, lo + w) of the hash, looked up within r bits. */
struct block {
	int lo, w, r;
};

/* Keys within r bits of one w-bit key. */
static double keys_within(int w, int r)
{
	double n = 0, c = 1;
	int k;
	for (k = 0; k <= r && k <= w; k++) {
		n += c;
		c = c * (w - k) / (k + 1);
	}
	return n;
}

/* The cut with the fewest keys visited and hashes compared (the tables'
 * filling counted too); returns m, the blocks in b. */
static int plan_blocks(const struct search *s, struct block *b)
{
	int wcap = 4, m, i, best_m = s->d + 1;
	double best = -1;

	/* about two keys per filed hash: wider keys only cost table */
	while (wcap < MAX_KEY_BITS && ((size_t)1 << wcap) < 2 * s->nfiled)
		wcap++;
	for (m = 1; m <= s->d + 1 && m <= MAX_BLOCKS; m++) {
		int w = 64 / m < wcap ? 64 / m : wcap;
		double cost = 0, cells = (double)((size_t)1 << w);
		for (i = 0; i < m; i++) {
			int r = (s->d + 1) / m - 1 + (i < (s->d + 1) % m);
			double k = keys_within(w, r);
			cost += (double)s->nasking * 8 * k * (1 + (double)s->nfiled / cells) + cells +
				(double)s->nfiled;
		}
		if (best < 0 || cost < best) {
			best = cost;
			best_m = m;
		}
	}
	for (i = 0; i < best_m; i++) {
		b[i].lo = i * (64 / best_m);
		b[i].w = 64 / best_m < wcap ? 64 / best_m : wcap;
		b[i].r = (s->d + 1) / best_m - 1 + (i < (s->d + 1) % best_m);
	}
	return best_m;
}

/* One look-up: a variant of an asking hash and its key in the block. */
struct ask {
	uint64_t hv;
	uint32_t q, key;
};

/* Sort a[0..n) by key (w bits), with tmp as room: in two passes of a
 * counting sort, low half first. */
static void sort_asks(struct ask *a, struct ask *tmp, size_t n, int w, uint32_t *count)
{
	int lo, half = (w + 1) / 2;
	for (lo = 0; lo < w; lo += half) {
		uint32_t mask = (1u << half) - 1, sum = 0, c;
		size_t i, k;
		memset(count, 0, ((size_t)1 << half) * sizeof(*count));
		for (i = 0; i < n; i++)
			count[(a[i].key >> lo) & mask]++;
		for (k = 0; k < ((size_t)1 << half); k++) {
			c = count[k];
			count[k] = sum;
			sum += c;
		}
		for (i = 0; i < n; i++)
			tmp[count[(a[i].key >> lo) & mask]++] = a[i];
		memcpy(a, tmp, n * sizeof(*a));
	}
}

/* The filed hashes with key k are fh[off[k]..off[k+1]), their indexes in
 * fi: the values beside each other, so a look-up reads one run of memory. */
struct table {
	uint32_t *off, *fi;
	uint64_t *fh;
};

/* Every asking key xor flip, in key order: with both the asks and the
 * table in key order the look-ups walk memory forwards instead of
 * jumping (a million hashes' tables are far bigger than a cache). */
static void lookup_all(const struct search *s, const struct table *t, const struct ask *a,
		       size_t n, uint32_t flip)
{
	size_t i;
	uint32_t e;

	for (i = 0; i < n; i++) {
		uint32_t k = a[i].key ^ flip;
		for (e = t->off[k]; e < t->off[k + 1]; e++)
			if (t->fi[e] != a[i].q && ph_bits(a[i].hv ^ t->fh[e]) <= s->d)
				join(s->group, a[i].q, t->fi[e]);
	}
}

/* Each flip of at most r of the w bits, the bits above `from` added. */
static void each_flip(const struct search *s, const struct table *t, const struct ask *a,
		      size_t n, int w, uint32_t flip, int from, int r)
{
	int bit;
	lookup_all(s, t, a, n, flip);
	if (r > 0)
		for (bit = from; bit < w; bit++)
			each_flip(s, t, a, n, w, flip | (1u << bit), bit + 1, r - 1);
}

/* Run s, one block's table at a time.  Returns 0 or -1 (no memory). */
static int search_run(const struct search *s)
{
	struct block b[MAX_BLOCKS];
	struct table t = {NULL, NULL, NULL};
	struct ask *a = NULL, *tmp = NULL;
	uint32_t *count = NULL, mask;
	size_t cells, i;
	int m, c, v, w, rc = -1;

	if (!s->nfiled || !s->nasking)
		return 0;
	m = plan_blocks(s, b);
	w = b[0].w; /* every block has the same width */
	cells = (size_t)1 << w;
	mask = (uint32_t)(cells - 1);
	t.off = malloc((cells + 1) * sizeof(*t.off));
	t.fi = malloc(s->nfiled * sizeof(*t.fi));
	t.fh = malloc(s->nfiled * sizeof(*t.fh));
	a = malloc(s->nasking * sizeof(*a));
	tmp = malloc(s->nasking * sizeof(*tmp));
	count = malloc(((size_t)1 << ((w + 1) / 2)) * sizeof(*count));
	if (!t.off || !t.fi || !t.fh || !a || !tmp || !count)
		goto out;
	for (c = 0; c < m; c++) {
		int lo = b[c].lo;
		/* counts at off[k + 1], then starts; filling moves each start to
		 * its end, the next key's start, so shifting by one restores it */
		memset(t.off, 0, (cells + 1) * sizeof(*t.off));
		for (i = 0; i < s->nfiled; i++)
			t.off[((s->h[s->filed[i]] >> lo) & mask) + 1]++;
		for (i = 1; i <= cells; i++)
			t.off[i] += t.off[i - 1];
		for (i = 0; i < s->nfiled; i++) {
			uint32_t e = t.off[(s->h[s->filed[i]] >> lo) & mask]++;
			t.fi[e] = s->filed[i];
			t.fh[e] = s->h[s->filed[i]];
		}
		memmove(t.off + 1, t.off, cells * sizeof(*t.off));
		t.off[0] = 0;
		for (v = 0; v < 8; v++) {
			for (i = 0; i < s->nasking; i++) {
				a[i].q = s->asking[i];
				a[i].hv = ph_variant(s->h[a[i].q], v);
				a[i].key = (uint32_t)(a[i].hv >> lo) & mask;
			}
			sort_asks(a, tmp, s->nasking, w, count);
			each_flip(s, &t, a, s->nasking, w, 0, 0, b[c].r);
		}
	}
	rc = 0;
out:
	free(t.off);
	free(t.fi);
	free(t.fh);
	free(a);
	free(tmp);
	free(count);
	return rc;
}

int db_near_groups(const uint64_t *h, const unsigned char *embedded, size_t n, int bits, int extra,
		   uint32_t *group)
{
	uint32_t *order, *rep, *emb_rep = NULL, *img_rep = NULL;
	size_t i, nrep = 0, nemb = 0, nimg = 0;
	int rc = 0;

	if (bits < 0 || bits > 16 || extra < 0 || extra > 16 || n > UINT32_MAX)
		return -1;
	for (i = 0; i < n; i++)
		group[i] = (uint32_t)i;
	order = malloc((n ? n : 1) * sizeof(*order));
	rep = malloc((n ? n : 1) * sizeof(*rep));
	if (!order || !rep) {
		rc = -1;
		goto out;
	}
	/* equal hashes first (copies, re-saves): joined at once, one of them
	 * stands for all, so no table's key fills with the same value */
	for (i = 0; i < n; i++)
		order[i] = (uint32_t)i;
	sort_base = h;
	sort_emb = embedded;
	qsort(order, n, sizeof(*order), cmp_by_hash);
	for (i = 0; i < n; i++) {
		if (nrep && h[order[i]] == h[rep[nrep - 1]] &&
		    (!embedded || embedded[order[i]] == embedded[rep[nrep - 1]]))
			join(group, order[i], rep[nrep - 1]);
		else
			rep[nrep++] = order[i];
	}
	{
		/* within bits: any two */
		struct search s = {h, group, rep, rep, nrep, nrep, bits};
		if (search_run(&s) != 0) {
			rc = -1;
			goto out;
		}
	}
	if (embedded && extra > 0) {
		/* within bits + extra: an embedded picture and an image only.  The
		 * smaller side asks: its eight look-ups cost more than filing. */
		emb_rep = malloc((nrep ? nrep : 1) * sizeof(*emb_rep));
		img_rep = malloc((nrep ? nrep : 1) * sizeof(*img_rep));
		if (!emb_rep || !img_rep) {
			rc = -1;
			goto out;
		}
		for (i = 0; i < nrep; i++) {
			if (embedded[rep[i]])
				emb_rep[nemb++] = rep[i];
			else
				img_rep[nimg++] = rep[i];
		}
		{
			struct search s = {h, group, NULL, NULL, 0, 0, bits + extra};
			s.filed = nemb >= nimg ? emb_rep : img_rep;
			s.nfiled = nemb >= nimg ? nemb : nimg;
			s.asking = nemb >= nimg ? img_rep : emb_rep;
			s.nasking = nemb >= nimg ? nimg : nemb;
			if (search_run(&s) != 0) {
				rc = -1;
				goto out;
			}
		}
	}
	for (i = 0; i < n; i++)
		group[i] = find(group, (uint32_t)i);
out:
	free(order);
	free(rep);
	free(emb_rep);
	free(img_rep);
	return rc;
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

int db_dupe_candidates(struct db *db, char **list, size_t *len, uint64_t *count,
		       uint64_t *bytes, struct sl_err *err)
{
	sqlite3_stmt *st = NULL;
	struct strbuf out = STRBUF_INIT;
	int step, rc = SL_OK;

	*list = NULL;
	*len = 0;
	*count = *bytes = 0;
	if (sqlite3_prepare_v2(db->h,
			       /* two lookups in files_size, not a walk of every file of
				* the size: fixed-size RAWs can be thousands */
			       "SELECT p.path, p.size FROM files p WHERE p.deleted_at IS NULL"
			       " AND p.size > 0 AND " DB_PENDING_SQL_OF("p") " AND (EXISTS("
			       "SELECT 1 FROM files q WHERE q.deleted_at IS NULL AND q.size = p.size"
			       " AND q.quick_hash = p.quick_hash AND q.id <> p.id"
			       " AND (q.content_hash IS NOT NULL OR q.error IS NULL))"
			       " OR EXISTS(SELECT 1 FROM files q WHERE q.deleted_at IS NULL"
			       " AND q.size = p.size AND q.quick_hash IS NULL"
			       " AND q.content_hash IS NOT NULL))",
			       -1, &st, NULL) != SQLITE_OK)
		return DB_FAIL(db->h, err, "prepare the duplicate candidates");
	while ((step = sqlite3_step(st)) == SQLITE_ROW) {
		sb_add(&out, sqlite3_column_text(st, 0), (size_t)sqlite3_column_bytes(st, 0));
		sb_addc(&out, '\0');
		(*count)++;
		*bytes += (uint64_t)sqlite3_column_int64(st, 1);
	}
	if (step != SQLITE_DONE)
		rc = DB_FAIL(db->h, err, "read the duplicate candidates");
	sqlite3_finalize(st);
	if (rc == SL_OK && out.oom)
		rc = SL_FAIL(err, SL_E_NOMEM, 0, "dupes: out of memory");
	if (rc != SL_OK) {
		sb_free(&out);
		return rc;
	}
	*list = out.p;
	*len = out.len;
	return SL_OK;
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
