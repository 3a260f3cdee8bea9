/* gif.c - GIF: logical screen size; XMP from its application extension.
 *
 * Adobe stores the packet in an application extension ("XMP DataXMP") as
 * raw bytes, not sub-blocks, followed by a 258-byte "magic trailer" that
 * makes a reader walking sub-blocks skip it; the packet is what lies
 * between.  Finding it means walking the file's blocks: frames are skipped
 * sub-block by sub-block (a length byte each), which touches one byte in
 * 256 of the image data. */
#include <string.h>

#include "indexer/formats/cursor.h"
#include "indexer/formats/fmt.h"
#include "indexer/formats/parsers.h"
#include "indexer/formats/xmp.h"

#define XMP_APP "XMP DataXMP"
/* the first bytes of the magic trailer: 0x01, then 0xFF down to 0x00 */
#define XMP_TRAILER "\x01\xff\xfe\xfd\xfc"

/* Skip the sub-blocks at off; returns the offset after their terminator,
 * or 0 when they run past the buffer. */
static size_t skip_blocks(const struct bc *c, size_t off)
{
	uint8_t k;

	while (bc_u8(c, off, &k) == 0) {
		off += 1 + (size_t)k;
		if (k == 0)
			return off;
	}
	return 0;
}

/* Where the magic trailer starts in the n bytes at p, or n (memmem is not
 * in MinGW's C library). */
static size_t trailer_at(const uint8_t *p, size_t n)
{
	const size_t k = sizeof(XMP_TRAILER) - 1;
	const uint8_t *q = p, *end = p + n;

	while ((size_t)(end - q) >= k && (q = memchr(q, 0x01, (size_t)(end - q) - k + 1)) != NULL) {
		if (memcmp(q, XMP_TRAILER, k) == 0)
			return (size_t)(q - p);
		q++;
	}
	return n;
}

static void find_xmp(const struct bc *c, const uint8_t *p, struct x_meta *m)
{
	size_t off = 13;
	uint8_t flags, b, label;

	if (bc_u8(c, 10, &flags))
		return;
	if (flags & 0x80) /* global color table */
		off += 3u << ((flags & 7) + 1);
	while (bc_u8(c, off, &b) == 0) {
		if (b == 0x3B) /* trailer */
			return;
		if (b == 0x2C) { /* image: descriptor, local color table, LZW size, data */
			if (bc_u8(c, off + 9, &flags))
				return;
			off += 10;
			if (flags & 0x80)
				off += 3u << ((flags & 7) + 1);
			if (!(off = skip_blocks(c, off + 1)))
				return;
			continue;
		}
		if (b != 0x21 || bc_u8(c, off + 1, &label))
			return; /* damage: what came before is kept */
		if (label == 0xFF && bc_is(c, off + 2, "\x0b" XMP_APP, 12)) {
			size_t at = off + 14;
			xmp_parse(p + at, trailer_at(p + at, c->len - at), m, DS_XMP);
			return;
		}
		if (!(off = skip_blocks(c, off + 2)))
			return;
	}
}

int gif_parse(const uint8_t *p, size_t n, struct x_meta *m, struct sl_err *err)
{
	struct bc c = bc_make(p, n, 0);
	uint16_t w, h;

	if (bc_le16(&c, 6, &w) || bc_le16(&c, 8, &h))
		return SL_FAIL(err, SL_E_CORRUPT, 0, "gif: truncated header");
	m->width = w;
	m->height = h;
	m->have |= XM_DIMS; /* zero is what the file says, so it is reported */
	find_xmp(&c, p, m);
	return SL_OK;
}
