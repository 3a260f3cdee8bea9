/* The btrfs chunk tree's items as BTRFS_IOC_TREE_SEARCH answers them, made
 * here byte by byte: mapping against a linear search over random chunk
 * layouts (SINGLE, DUP, striped, gaps, items of other types between),
 * answers split over several searches, and buffers cut short. */
#include "scanner/chunkmap.h"
#include "tests/unit/test.h"

#define CHUNK_KEY 228
#define RAID0 (1u << 3)
#define DUP (1u << 5)

struct model {
	uint64_t logical, length, offset, type;
	uint16_t stripes;
};

static void put64(unsigned char *p, uint64_t v)
{
	int k;
	for (k = 0; k < 8; k++)
		p[k] = (unsigned char)(v >> (8 * k));
}

/* One search result item: host-endian header, little-endian item. */
static size_t item(unsigned char *b, uint32_t type, uint64_t key, const struct model *c)
{
	struct {
		uint64_t transid, objectid, offset;
		uint32_t type, len;
	} h = {7, 256, key, type, 0};
	uint16_t s, n = c ? c->stripes : 0;
	unsigned char *it = b + 32;

	h.len = c ? 48u + 32u * n : 16u;
	memset(it, 0, h.len);
	if (c) {
		put64(it, c->length);
		put64(it + 16, 65536);
		put64(it + 24, c->type);
		it[44] = (unsigned char)n;
		it[46] = 1;
		for (s = 0; s < n; s++) {
			put64(it + 48 + 32 * s, 1);
			/* the second stripe elsewhere: only the first may be used */
			put64(it + 56 + 32 * s, c->offset + s * (1ull << 40));
		}
	}
	memcpy(b, &h, 32);
	return 32 + h.len;
}

static uint64_t rnd_state = 88172645463325252ull;
static uint64_t rnd(void)
{
	rnd_state ^= rnd_state << 13;
	rnd_state ^= rnd_state >> 7;
	rnd_state ^= rnd_state << 17;
	return rnd_state;
}

/* The reference: a linear search. */
static int ref_map(const struct model *m, size_t n, uint64_t a, uint64_t *off)
{
	size_t i;
	for (i = 0; i < n; i++) {
		if (a < m[i].logical || a - m[i].logical >= m[i].length)
			continue;
		if (m[i].type & RAID0)
			return CM_STRIPED;
		*off = m[i].offset + (a - m[i].logical);
		return CM_MAPPED;
	}
	return CM_OUTSIDE;
}

static void test_model(void)
{
	static unsigned char buf[1 << 16];
	struct model m[40];
	int round;

	for (round = 0; round < 200; round++) {
		struct chunkmap cm;
		struct sl_err e;
		size_t n = 1 + rnd() % 40, i, at = 0, split, nitems, bound[42], perm[40];
		uint64_t logical = 1 << 20, last = 0;
		int k;

		memset(&cm, 0, sizeof(cm));
		for (i = 0; i < n; i++) {
			logical += (rnd() % 3) * (1u << 20); /* gaps between chunks */
			m[i].logical = logical;
			m[i].length = (1 + rnd() % 8) << 20;
			m[i].offset = (rnd() % 4096) << 20; /* anywhere on the device */
			m[i].stripes = (uint16_t)(1 + rnd() % 3);
			m[i].type = 1 | (rnd() % 5 == 0 ? RAID0 : m[i].stripes == 2 ? DUP : 0);
			logical += m[i].length;
		}
		/* written in an order of their own, with an item of another type
		 * among them, and split over two searches at item split */
		for (i = 0; i < n; i++)
			perm[i] = i;
		for (i = n - 1; i > 0; i--) {
			size_t j = rnd() % (i + 1), t = perm[i];
			perm[i] = perm[j];
			perm[j] = t;
		}
		for (i = 0, nitems = 0; i < n; i++) {
			size_t j = perm[i];
			if (i == n / 2) {
				bound[nitems++] = at;
				at += item(buf + at, 229, m[j].logical, NULL);
			}
			bound[nitems++] = at;
			at += item(buf + at, CHUNK_KEY, m[j].logical, &m[j]);
		}
		bound[nitems] = at;
		split = rnd() % (nitems + 1);
		CHECK_INT(chunkmap_add_items(&cm, buf, bound[split], (uint32_t)split, &last, &e),
			  SL_OK);
		CHECK_INT(chunkmap_add_items(&cm, buf + bound[split], at - bound[split],
					     (uint32_t)(nitems - split), &last, &e),
			  SL_OK);
		CHECK_INT(cm.n, n);
		for (k = 0; k < 300; k++) {
			uint64_t a, want = 0, got = 0;
			int w, g;
			if (k < 3 * (int)n) {
				/* the edges of each chunk */
				const struct model *c = &m[k / 3];
				a = k % 3 == 0 ? c->logical : k % 3 == 1 ? c->logical + c->length - 1
									 : c->logical + c->length;
			} else {
				a = rnd() % (logical + (8u << 20));
			}
			w = ref_map(m, n, a, &want);
			g = chunkmap_map(&cm, a, &got);
			CHECK_INT(g, w);
			if (w == CM_MAPPED)
				CHECK_INT(got, want);
		}
		chunkmap_free(&cm);
	}
}

static void test_refused(void)
{
	unsigned char buf[512];
	struct model c = {1 << 30, 1 << 30, 5 << 20, 1, 1};
	struct chunkmap cm;
	struct sl_err e;
	uint64_t last = 0, off = 0;
	size_t len = item(buf, CHUNK_KEY, c.logical, &c), cut;

	memset(&cm, 0, sizeof(cm));
	/* one item claimed, none there; a header cut; an item cut */
	CHECK_INT(chunkmap_add_items(&cm, buf, 0, 1, &last, &e), SL_E_CORRUPT);
	CHECK_INT(chunkmap_add_items(&cm, buf, 20, 1, &last, &e), SL_E_CORRUPT);
	for (cut = 32; cut < len; cut += 7)
		CHECK_INT(chunkmap_add_items(&cm, buf, cut, 1, &last, &e), SL_E_CORRUPT);
	/* more stripes claimed than the item holds */
	buf[32 + 44] = 3;
	CHECK_INT(chunkmap_add_items(&cm, buf, len, 1, &last, &e), SL_E_CORRUPT);
	buf[32 + 44] = 0;
	CHECK_INT(chunkmap_add_items(&cm, buf, len, 1, &last, &e), SL_E_CORRUPT);
	CHECK_INT(cm.n, 0);
	buf[32 + 44] = 1;
	CHECK_INT(chunkmap_add_items(&cm, buf, len, 1, &last, &e), SL_OK);
	CHECK_INT(last, c.logical);
	CHECK_INT(chunkmap_map(&cm, c.logical + 4096, &off), CM_MAPPED);
	CHECK_INT(off, (5 << 20) + 4096);
	CHECK_INT(chunkmap_map(&cm, c.logical - 1, &off), CM_OUTSIDE);
	CHECK_INT(chunkmap_map(&cm, 2 * c.logical, &off), CM_OUTSIDE);
	CHECK(strstr(chunkmap_why(CM_NOROOT), "CAP_SYS_ADMIN") != NULL);
	CHECK_STR(chunkmap_why(CM_N), "?");
	chunkmap_free(&cm);
}


int main(void)
{
	RUN(test_model);
	RUN(test_refused);
	return t_done();
}
