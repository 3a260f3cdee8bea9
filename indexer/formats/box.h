/* box.h - the box layout of ISO BMFF, QuickTime and JPEG 2000.
 *
 * A box is a 32-bit big-endian size (of the whole box), a 4-byte type, and
 * the body; size 1 means a 64-bit size follows the type, size 0 that the box
 * runs to the end of its container.  bmff.c (HEIF, CR3, JP2) and qt.c
 * (movies) walk boxes in memory with box_at; qt.c's streamed walker reads
 * the same headers a few bytes at a time. */
#ifndef SL_BOX_H
#define SL_BOX_H

#include <string.h>

#include "indexer/formats/cursor.h"

struct box {
	char type[5];
	size_t start;  /* first byte of the box */
	size_t body;   /* first byte after the header */
	size_t end;    /* one past the last byte (clipped to the buffer) */
	int truncated; /* declared to run past the bytes we hold */
};

/* The box at off inside [off, limit) of c: 0, or -1 when no box header fits
 * there or its size is smaller than its header. */
static inline int box_at(const struct bc *c, size_t off, size_t limit, struct box *b)
{
	uint32_t size32;
	uint64_t size;

	if (limit > c->len)
		limit = c->len;
	if (off > limit || limit - off < 8 || bc_be32(c, off, &size32))
		return -1;
	memcpy(b->type, c->p + off + 4, 4);
	b->type[4] = '\0';
	b->start = off;
	b->body = off + 8;
	size = size32;
	if (size32 == 1) {
		if (limit - off < 16 || bc_be64(c, off + 8, &size))
			return -1;
		b->body = off + 16;
	} else if (size32 == 0) {
		size = limit - off;
	}
	if (size < b->body - off)
		return -1;
	b->truncated = size > limit - off;
	b->end = b->truncated ? limit : off + (size_t)size;
	return 0;
}

#endif
