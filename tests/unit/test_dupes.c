/* test_dupes.c - db_near_groups against the rule it implements, applied
 * to every pair: random hashes with planted clusters (copies at and just
 * past each distance, turned copies, chains, crowds sharing most bits,
 * embedded thumbnails), several seeds and settings. */
#include "db/db.h"
#include "indexer/formats/phash.h"
#include "tests/unit/test.h"

enum { N = 2500 };

static uint32_t uf_find(uint32_t *up, uint32_t i)
{
	while (up[i] != i)
		i = up[i] = up[up[i]];
	return i;
}

/* The rule as stated (db.h), pair by pair and both ways round: near when
 * some variant of one is within bits of the other, or within bits + extra
 * when exactly one is embedded; groups are what "near" connects. */
static void brute(const uint64_t *h, const unsigned char *emb, size_t n, int bits, int extra,
		  uint32_t *want)
{
	size_t i, j;
	int v;

	for (i = 0; i < n; i++)
		want[i] = (uint32_t)i;
	for (i = 0; i < n; i++)
		for (j = i + 1; j < n; j++) {
			int lim = bits + (emb && emb[i] != emb[j] ? extra : 0), near = 0;
			for (v = 0; v < 8 && !near; v++)
				near = __builtin_popcountll(ph_variant(h[i], v) ^ h[j]) <= lim ||
				       __builtin_popcountll(ph_variant(h[j], v) ^ h[i]) <= lim;
			if (near) {
				uint32_t ri = uf_find(want, (uint32_t)i), rj = uf_find(want, (uint32_t)j);
				if (ri != rj)
					want[ri > rj ? ri : rj] = ri < rj ? ri : rj;
			}
		}
	for (i = 0; i < n; i++)
		want[i] = uf_find(want, (uint32_t)i);
}

/* k distinct random bits of the 64 */
static uint64_t flips(uint64_t *rs, int k)
{
	uint64_t m = 0;
	while (__builtin_popcountll(m) < k)
		m |= 1ull << (t_rnd(rs) % 64);
	return m;
}

static void fill(uint64_t seed, uint64_t *h, unsigned char *emb, size_t n)
{
	uint64_t rs = seed;
	size_t i;

	for (i = 0; i < n; i++) {
		h[i] = t_rnd(&rs);
		emb[i] = (unsigned char)(t_rnd(&rs) % 3 == 0);
	}
	/* copies 0 to 9 bits off an earlier hash: each side of every limit */
	for (i = n / 2; i < n / 2 + 400; i++)
		h[i] = h[t_rnd(&rs) % (n / 2)] ^ flips(&rs, (int)(t_rnd(&rs) % 10));
	/* turned or mirrored copies, a few bits off */
	for (i = n / 2 + 400; i < n / 2 + 600; i++)
		h[i] = ph_variant(h[t_rnd(&rs) % (n / 2)], (int)(t_rnd(&rs) % 7) + 1) ^
		       flips(&rs, (int)(t_rnd(&rs) % 8));
	/* chains: each link 3-5 bits from the last */
	for (i = n / 2 + 600; i < n / 2 + 700; i++)
		h[i] = h[i - 1] ^ flips(&rs, 3 + (int)(t_rnd(&rs) % 3));
	/* the same value many times, embedded and not */
	for (i = n / 2 + 700; i < n / 2 + 800; i++)
		h[i] = h[7];
	/* a crowd agreeing on 48 bits: one key of every table full */
	for (i = n / 2 + 800; i < n / 2 + 1000; i++)
		h[i] = (h[11] & ~0xFFFFull) | (t_rnd(&rs) & 0xFFFF);
}

static void test_against_pairs(void)
{
	static uint64_t h[N];
	static unsigned char emb[N];
	static uint32_t got[N], want[N];
	static const int set[][2] = {{4, 3}, {0, 0}, {2, 0}, {6, 3}, {4, 0}, {1, 5}};
	uint64_t seed;
	size_t s, i;

	for (seed = 1; seed <= 4; seed++) {
		fill(seed * 0x1234567ull, h, emb, N);
		for (s = 0; s < sizeof(set) / sizeof(set[0]); s++) {
			int bits = set[s][0], extra = set[s][1], same = 1;
			const unsigned char *e = extra || s % 2 ? emb : NULL;
			CHECK_INT(db_near_groups(h, e, N, bits, extra, got), 0);
			brute(h, e, N, bits, extra, want);
			for (i = 0; i < N; i++)
				if (got[i] != want[i])
					same = 0;
			if (!same)
				fprintf(stderr, "seed %llu bits %d extra %d: groups differ\n",
					(unsigned long long)seed, bits, extra);
			CHECK(same);
		}
	}
}

/* Sizes from none to a few, and all on one side of embedded. */
static void test_small(void)
{
	uint64_t h[5] = {0, 1, 3, 0xF0ull, ~0ull};
	unsigned char one[5] = {1, 1, 1, 1, 1};
	uint32_t got[5], want[5];
	size_t n, i;
	int same;

	CHECK_INT(db_near_groups(h, NULL, 0, 4, 0, got), 0);
	for (n = 1; n <= 5; n++) {
		CHECK_INT(db_near_groups(h, one, n, 1, 3, got), 0);
		brute(h, one, n, 1, 3, want);
		for (same = 1, i = 0; i < n; i++)
			same &= got[i] == want[i];
		CHECK(same);
	}
	CHECK_INT(db_near_groups(h, NULL, 5, 17, 0, got), -1);
	CHECK_INT(db_near_groups(h, NULL, 5, 4, -1, got), -1);
}

/* The transposition the grouping looks up, against its definition (bit
 * u + 8v to v + 8u). */
static void test_transpose(void)
{
	uint64_t rs = 99, h, t;
	int k, u, v, ok = 1;

	for (k = 0; k < 10000; k++) {
		h = k < 64 ? 1ull << k : t_rnd(&rs);
		t = 0;
		for (v = 0; v < 8; v++)
			for (u = 0; u < 8; u++)
				if (h >> (u + 8 * v) & 1)
					t |= 1ull << (v + 8 * u);
		ok &= ph_variant(h, 4) == t;
	}
	CHECK(ok);
}

int main(void)
{
	RUN(test_transpose);
	RUN(test_small);
	RUN(test_against_pairs);
	return t_done();
}
