/* bmp.c - Windows and OS/2 bitmaps: their size (parsers.h). */
#include <stddef.h>
#include <stdint.h>

#include "indexer/formats/cursor.h"
#include "indexer/formats/parsers.h"

/* BMP: BITMAPINFOHEADER width and height (negative height: top-down rows). */
int bmp_parse(const uint8_t *p, size_t n, struct x_meta *m, struct sl_err *err)
{
	struct bc c = bc_make(p, n, 0);
	uint32_t hdr, w, h;
	uint16_t w16, h16;

	if (bc_le32(&c, 14, &hdr))
		return SL_FAIL(err, SL_E_CORRUPT, 0, "bmp: truncated header");
	if (hdr == 12) { /* OS/2 BITMAPCOREHEADER */
		if (bc_le16(&c, 18, &w16) || bc_le16(&c, 20, &h16))
			return SL_FAIL(err, SL_E_CORRUPT, 0, "bmp: truncated header");
		w = w16, h = h16;
	} else if (bc_le32(&c, 18, &w) || bc_le32(&c, 22, &h)) {
		return SL_FAIL(err, SL_E_CORRUPT, 0, "bmp: truncated header");
	}
	m->width = (uint32_t)((int32_t)w < 0 ? -(int64_t)(int32_t)w : (int32_t)w);
	m->height = (uint32_t)((int32_t)h < 0 ? -(int64_t)(int32_t)h : (int32_t)h);
	m->have |= XM_DIMS;
	return SL_OK;
}
