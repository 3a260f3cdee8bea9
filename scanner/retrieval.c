/* retrieval.c - see retrieval.h. */
#include "scanner/retrieval.h"

#include <string.h>

static uint32_t le32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static int64_t le64s(const unsigned char *p)
{
	uint64_t v = (uint64_t)le32(p) | (uint64_t)le32(p + 4) << 32;
	int64_t s;
	memcpy(&s, &v, sizeof(s));
	return s;
}

void rp_init(struct rp_state *s)
{
	memset(s, 0, sizeof(*s));
}

enum rp_result rp_feed(struct rp_state *s, const unsigned char *buf, size_t len, int more)
{
	uint32_t n, i;
	int64_t vcn, asked = s->next_vcn;

	if (len < RP_HEADER)
		return RP_BOGUS;
	n = le32(buf);
	vcn = le64s(buf + 8);
	if (n == 0 && !more && s->extents == 0)
		return RP_NOTHING;
	if (n == 0 || (size_t)n > (len - RP_HEADER) / RP_EXTENT)
		return RP_BOGUS;
	if (vcn < 0 || vcn > s->next_vcn)
		return RP_BOGUS;
	for (i = 0; i < n; i++) {
		const unsigned char *x = buf + RP_HEADER + (size_t)i * RP_EXTENT;
		int64_t next = le64s(x), lcn = le64s(x + 8), count;

		if (next <= vcn || lcn < -1)
			return RP_BOGUS;
		count = next - vcn; /* both non-negative: no overflow */
		if (s->extents && next <= s->next_vcn) {
			vcn = next; /* rounded down to an extent the last answer had */
			continue;
		}
		s->extents++;
		if (lcn >= 0) {
			if (lcn > INT64_MAX - count)
				return RP_BOGUS;
			if (!s->located) {
				s->located = 1;
				s->first_lcn = lcn;
			}
			if (!s->have_prev || lcn != s->prev_end)
				s->fragments++;
			s->have_prev = 1;
			s->prev_end = lcn + count;
		}
		vcn = next;
	}
	if (more) {
		if (vcn <= asked)
			return RP_BOGUS; /* would ask the same thing forever */
		s->next_vcn = vcn;
		return RP_MORE;
	}
	s->next_vcn = vcn;
	return RP_DONE;
}

int rp_offset(int64_t lcn, uint32_t cluster, int64_t base_sectors, uint32_t sector,
	      uint64_t *out)
{
	uint64_t heap, at;

	if (lcn < 0 || base_sectors < 0 || !cluster || !sector)
		return -1;
	if ((uint64_t)base_sectors > (uint64_t)INT64_MAX / sector ||
	    (uint64_t)lcn > (uint64_t)INT64_MAX / cluster)
		return -1;
	heap = (uint64_t)base_sectors * sector;
	at = (uint64_t)lcn * cluster;
	if (at > (uint64_t)INT64_MAX - heap)
		return -1;
	*out = heap + at;
	return 0;
}
