#include "scanner/chunkmap.h"

#include <stdlib.h>
#include <string.h>

#include "common/strbuf.h"

/* btrfs_tree.h, restated so that the parsing builds everywhere */
#define CHUNK_ITEM_KEY 228
#define SEARCH_HEADER 32 /* transid, objectid, offset (u64), type, len (u32) */
#define CHUNK_FIXED 48   /* length, owner, stripe_len, type (le64); io_align,
			    io_width, sector_size (le32); num_stripes, sub_stripes (le16) */
#define STRIPE_SIZE 32   /* devid, offset (le64), dev_uuid[16] */
#define BG_STRIPED ((1u << 3) | (1u << 6) | (1u << 7) | (1u << 8)) /* RAID0, RAID10, RAID5, RAID6 */

static const char *const whys[CM_N] = {
	"mapped through the chunk map",
	"reading the chunk map needs CAP_SYS_ADMIN: run as root",
	"the file system has several devices, and a chunk's device is not the one read",
	"data in striped chunks (RAID0/10/5/6)",
	"a file's address lies in no chunk (a balance moved it since)",
	"the chunk map could not be read",
};

const char *chunkmap_why(int why)
{
	return why >= 0 && why < CM_N ? whys[why] : "?";
}

static uint64_t le64(const unsigned char *p)
{
	uint64_t v = 0;
	int i;
	for (i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

static uint16_t le16(const unsigned char *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

static int cmp_chunk(const void *a, const void *b)
{
	const struct cm_chunk *x = a, *y = b;
	return x->logical < y->logical ? -1 : x->logical > y->logical;
}

int chunkmap_add_items(struct chunkmap *m, const unsigned char *buf, size_t len, uint32_t nitems,
		       uint64_t *last, struct sl_err *err)
{
	size_t at = 0;
	uint32_t i;

	for (i = 0; i < nitems; i++) {
		struct btrfs_hdr {
			uint64_t transid, objectid, offset;
			uint32_t type, len;
		} h;
		const unsigned char *it;
		struct cm_chunk c;
		uint64_t type;

		if (len - at < SEARCH_HEADER)
			return SL_FAIL(err, SL_E_CORRUPT, 0, "btrfs chunk tree: item %u past the end",
				       i);
		memcpy(&h, buf + at, SEARCH_HEADER); /* host-endian, from the kernel */
		at += SEARCH_HEADER;
		if (h.len > len - at)
			return SL_FAIL(err, SL_E_CORRUPT, 0,
				       "btrfs chunk tree: item %u of %u bytes past the end", i, h.len);
		it = buf + at;
		at += h.len;
		*last = h.offset;
		if (h.type != CHUNK_ITEM_KEY)
			continue;
		if (h.len < CHUNK_FIXED + STRIPE_SIZE ||
		    (h.len - CHUNK_FIXED) / STRIPE_SIZE < le16(it + 44) || le16(it + 44) == 0)
			return SL_FAIL(err, SL_E_CORRUPT, 0,
				       "btrfs chunk tree: chunk at %llu too short for its stripes",
				       (unsigned long long)h.offset);
		type = le64(it + 24);
		c.logical = h.offset;
		c.length = le64(it);
		c.stripes = le16(it + 44);
		c.devid = le64(it + CHUNK_FIXED);
		c.offset = le64(it + CHUNK_FIXED + 8);
		c.linear = !(type & BG_STRIPED);
		if (m->n == m->cap && sl_grow(&m->c, &m->cap, m->n + 1, sizeof(*m->c)) != 0)
			return SL_FAIL(err, SL_E_NOMEM, 0, "btrfs chunk tree: out of memory");
		m->c[m->n++] = c;
	}
	if (m->n > 1)
		qsort(m->c, m->n, sizeof(*m->c), cmp_chunk);
	return SL_OK;
}

int chunkmap_map(const struct chunkmap *m, uint64_t a, uint64_t *off)
{
	size_t lo = 0, hi = m->n;

	/* the last chunk starting at or before a */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (m->c[mid].logical <= a)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0 || a - m->c[lo - 1].logical >= m->c[lo - 1].length)
		return CM_OUTSIDE;
	if (!m->c[lo - 1].linear)
		return CM_STRIPED;
	*off = m->c[lo - 1].offset + (a - m->c[lo - 1].logical);
	return CM_MAPPED;
}

void chunkmap_free(struct chunkmap *m)
{
	free(m->c);
	memset(m, 0, sizeof(*m));
}
