/* The FSCTL_GET_RETRIEVAL_POINTERS reader on synthetic answers: holes,
 * continuation after ERROR_MORE_DATA (also rounded down), fragments, and
 * the impossible layouts that must be refused (Wine's stub among them). */
#include "scanner/retrieval.h"
#include "tests/unit/test.h"

/* Build an answer: starting VCN, then (next_vcn, lcn) pairs. */
static size_t answer(unsigned char *buf, int64_t start, const int64_t *pairs, uint32_t n)
{
	size_t at = 0, i;
	uint64_t v;
	int k;

	memset(buf, 0, RP_HEADER + n * RP_EXTENT);
	for (k = 0; k < 4; k++)
		buf[k] = (unsigned char)(n >> (8 * k));
	v = (uint64_t)start;
	for (k = 0; k < 8; k++)
		buf[8 + k] = (unsigned char)(v >> (8 * k));
	at = RP_HEADER;
	for (i = 0; i < 2 * n; i++, at += 8) {
		v = (uint64_t)pairs[i];
		for (k = 0; k < 8; k++)
			buf[at + k] = (unsigned char)(v >> (8 * k));
	}
	return at;
}

static void test_contiguous(void)
{
	unsigned char b[256];
	int64_t x[] = {10, 5000};
	struct rp_state s;

	rp_init(&s);
	CHECK_INT(rp_feed(&s, b, answer(b, 0, x, 1), 0), RP_DONE);
	CHECK(s.located);
	CHECK_INT(s.first_lcn, 5000);
	CHECK_INT(s.fragments, 1);
}

static void test_holes_and_fragments(void)
{
	unsigned char b[256];
	/* a hole first (sparse start), then 2 runs back to back, then a jump */
	int64_t x[] = {4, -1, 8, 100, 12, 104, 16, 900};
	struct rp_state s;

	rp_init(&s);
	CHECK_INT(rp_feed(&s, b, answer(b, 0, x, 4), 0), RP_DONE);
	CHECK_INT(s.first_lcn, 100); /* the hole is not a position */
	CHECK_INT(s.fragments, 2);   /* 100..107 is one run, 900 another */
	CHECK_INT(s.extents, 4);
}

static void test_all_holes(void)
{
	unsigned char b[256];
	int64_t x[] = {16, -1};
	struct rp_state s;

	rp_init(&s);
	CHECK_INT(rp_feed(&s, b, answer(b, 0, x, 1), 0), RP_DONE);
	CHECK(!s.located);
	CHECK_INT(s.fragments, 0);
}

static void test_more_data(void)
{
	unsigned char b[256];
	int64_t a[] = {4, 10, 8, 50};
	int64_t c[] = {12, 54, 20, 200};
	int64_t rounded[] = {8, 50, 12, 54, 20, 200}; /* restarts at VCN 4 */
	struct rp_state s;

	rp_init(&s);
	CHECK_INT(rp_feed(&s, b, answer(b, 0, a, 2), 1), RP_MORE);
	CHECK_INT(s.next_vcn, 8);
	CHECK_INT(rp_feed(&s, b, answer(b, 8, c, 2), 0), RP_DONE);
	CHECK_INT(s.first_lcn, 10);
	CHECK_INT(s.fragments, 3); /* 10, 50..57 (54 follows 50+4), 200 */
	CHECK_INT(s.extents, 4);

	/* the file system may round the start down to an extent it gave */
	rp_init(&s);
	CHECK_INT(rp_feed(&s, b, answer(b, 0, a, 2), 1), RP_MORE);
	CHECK_INT(rp_feed(&s, b, answer(b, 4, rounded, 3), 0), RP_DONE);
	CHECK_INT(s.extents, 4);
	CHECK_INT(s.fragments, 3);
}

static void test_bogus(void)
{
	unsigned char b[256];
	int64_t wine[] = {0, 0};         /* StartingVcn 1, NextVcn 0, Lcn 0 */
	int64_t backwards[] = {8, 10, 4, 20};
	int64_t badlcn[] = {8, -7};
	int64_t stuck[] = {8, 10};
	int64_t huge_back[] = {5, 10, INT64_MIN, 0}; /* found by fuzz_retrieval: overflowed */
	struct rp_state s;

	rp_init(&s);
	CHECK_INT(rp_feed(&s, b, answer(b, 1, wine, 1), 0), RP_BOGUS);
	rp_init(&s);
	CHECK_INT(rp_feed(&s, b, answer(b, 0, backwards, 2), 0), RP_BOGUS);
	rp_init(&s);
	CHECK_INT(rp_feed(&s, b, answer(b, 0, badlcn, 1), 0), RP_BOGUS);
	rp_init(&s);
	CHECK_INT(rp_feed(&s, b, answer(b, 0, huge_back, 2), 0), RP_BOGUS);
	/* a MORE_DATA answer that does not move forward would loop */
	rp_init(&s);
	CHECK_INT(rp_feed(&s, b, answer(b, 0, stuck, 1), 1), RP_MORE);
	CHECK_INT(rp_feed(&s, b, answer(b, 0, stuck, 1), 1), RP_BOGUS);
	/* short buffers and counts beyond the buffer */
	rp_init(&s);
	CHECK_INT(rp_feed(&s, b, 8, 0), RP_BOGUS);
	CHECK_INT(rp_feed(&s, b, answer(b, 0, stuck, 1) - 1, 0), RP_BOGUS);
	/* zero extents: after a MORE_DATA answer that is impossible; as the
	 * first answer it places nothing, and says nothing of the volume */
	rp_init(&s);
	CHECK_INT(rp_feed(&s, b, answer(b, 0, stuck, 1), 1), RP_MORE);
	b[0] = 0;
	CHECK_INT(rp_feed(&s, b, RP_HEADER + RP_EXTENT, 0), RP_BOGUS);
	rp_init(&s);
	CHECK_INT(rp_feed(&s, b, RP_HEADER, 0), RP_NOTHING);
	CHECK_INT(s.located, 0);
	rp_init(&s);
	CHECK_INT(rp_feed(&s, b, RP_HEADER, 1), RP_BOGUS); /* "more" of nothing */
}

/* FAT32 as mkfs.fat lays it out for 8 GiB: 32 reserved sectors, two FATs
 * of 7,672 sectors, 4 KiB clusters; the cluster heap starts at sector
 * 32 + 2 * 7672 = 15,376, and LCN 0 is cluster 2, the first of the heap. */
static void test_offset(void)
{
	uint64_t at = 0;

	CHECK_INT(rp_offset(0, 4096, 15376, 512, &at), 0);
	CHECK(at == 15376ull * 512);
	CHECK_INT(rp_offset(1000, 4096, 15376, 512, &at), 0);
	CHECK(at == 7872512ull + 4096000ull);
	/* NTFS: the heap is the volume */
	CHECK_INT(rp_offset(1000, 4096, 0, 512, &at), 0);
	CHECK(at == 4096000ull);
	/* 4Kn sectors */
	CHECK_INT(rp_offset(3, 65536, 100, 4096, &at), 0);
	CHECK(at == 409600ull + 196608ull);
	CHECK_INT(rp_offset(-1, 4096, 0, 512, &at), -1);
	CHECK_INT(rp_offset(0, 4096, -1, 512, &at), -1);
	CHECK_INT(rp_offset(1, 0, 0, 512, &at), -1);
	CHECK_INT(rp_offset(1, 4096, 0, 0, &at), -1);
	CHECK_INT(rp_offset(INT64_MAX / 4096 + 1, 4096, 0, 512, &at), -1);
	CHECK_INT(rp_offset(INT64_MAX / 4096, 4096, 1 << 20, 512, &at), -1);
	CHECK_INT(rp_offset(INT64_MAX / 4096, 4096, 0, 512, &at), 0);
}

int main(void)
{
	RUN(test_contiguous);
	RUN(test_holes_and_fragments);
	RUN(test_all_holes);
	RUN(test_more_data);
	RUN(test_bogus);
	RUN(test_offset);
	return t_done();
}
