/* webp.c - WebP: canvas size from VP8/VP8L/VP8X, the EXIF and XMP chunks. */
#include "indexer/formats/cursor.h"
#include "indexer/formats/exif.h"
#include "indexer/formats/fmt.h"
#include "indexer/formats/parsers.h"
#include "indexer/formats/xmp.h"

static void set_dims(struct x_meta *m, uint32_t w, uint32_t h)
{
	if (m->have & XM_DIMS)
		return; /* VP8X comes first and gives the canvas */
	m->width = w;
	m->height = h;
	m->have |= XM_DIMS;
}

int webp_parse(const uint8_t *p, size_t n, struct x_meta *m, struct sl_err *err)
{
	struct bc c = bc_make(p, n, 0);
	size_t off = 12;

	while (bc_has(&c, off, 8)) {
		uint32_t len, v;
		uint16_t a, b;
		uint8_t x0, x1, x2;
		size_t data = off + 8;

		bc_le32(&c, off + 4, &len);
		if (bc_is(&c, off, "VP8X", 4)) {
			if (bc_u8(&c, data + 4, &x0) == 0 && bc_u8(&c, data + 5, &x1) == 0 &&
			    bc_u8(&c, data + 6, &x2) == 0) {
				uint32_t w = (uint32_t)x0 | (uint32_t)x1 << 8 | (uint32_t)x2 << 16;
				uint32_t h;
				bc_u8(&c, data + 7, &x0);
				bc_u8(&c, data + 8, &x1);
				bc_u8(&c, data + 9, &x2);
				h = (uint32_t)x0 | (uint32_t)x1 << 8 | (uint32_t)x2 << 16;
				set_dims(m, w + 1, h + 1);
			}
		} else if (bc_is(&c, off, "VP8 ", 4)) {
			/* frame tag (3 bytes), start code 9d 01 2a, then 14-bit sizes */
			if (bc_is(&c, data + 3, "\x9d\x01\x2a", 3) && bc_le16(&c, data + 6, &a) == 0 &&
			    bc_le16(&c, data + 8, &b) == 0)
				set_dims(m, a & 0x3fffu, b & 0x3fffu);
		} else if (bc_is(&c, off, "VP8L", 4)) {
			if (bc_is(&c, data, "\x2f", 1) && bc_le32(&c, data + 1, &v) == 0)
				set_dims(m, (v & 0x3fffu) + 1, ((v >> 14) & 0x3fffu) + 1);
		} else if (bc_is(&c, off, "EXIF", 4)) {
			if (bc_has(&c, data, len)) {
				/* some writers keep the JPEG "Exif\0\0" prefix */
				size_t skip = bc_is(&c, data, "Exif\0\0", 6) ? 6 : 0;
				exif_parse(p + data + skip, len - skip, 0, m, NULL);
			} else {
				x_warn(m, "WebP EXIF chunk truncated");
			}
		} else if (bc_is(&c, off, "XMP ", 4)) {
			if (bc_has(&c, data, len))
				xmp_parse(p + data, len, m, DS_XMP);
			else
				x_warn(m, "WebP XMP chunk truncated");
		}
		if ((uint64_t)len + 8 + (len & 1) > c.len - off)
			break;
		off += (size_t)len + 8 + (len & 1);
	}
	if (!(m->have & XM_DIMS))
		return SL_FAIL(err, SL_E_CORRUPT, 0, "webp: no image header");
	return SL_OK;
}
