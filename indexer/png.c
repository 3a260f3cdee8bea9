/* png.c - PNG: IHDR dimensions and the eXIf chunk. */
#include <string.h>

#include "indexer/cursor.h"
#include "indexer/exif.h"
#include "indexer/extract.h"

int png_parse(const uint8_t *p, size_t n, struct x_meta *m, struct sl_err *err)
{
	struct bc c = bc_make(p, n, 1);
	size_t off = 8;
	int first = 1, have_ihdr = 0;

	while (bc_has(&c, off, 8)) {
		uint32_t len, w, h;
		bc_be32(&c, off, &len);
		if (bc_is(&c, off + 4, "IHDR", 4) && !have_ihdr) {
			if (!first)
				x_warn(m, "PNG image did not start with IHDR");
			if (len >= 8 && bc_be32(&c, off + 8, &w) == 0 && bc_be32(&c, off + 12, &h) == 0) {
				m->width = w;
				m->height = h;
				if (w && h)
					m->have |= XM_DIMS;
				have_ihdr = 1;
			}
		} else if (bc_is(&c, off + 4, "eXIf", 4)) {
			if (bc_has(&c, off + 8, len))
				exif_parse(p + off + 8, len, 0, m);
			else
				x_warn(m, "PNG eXIf chunk truncated");
		} else if (bc_is(&c, off + 4, "IEND", 4)) {
			break;
		}
		first = 0;
		if ((uint64_t)len + 12 > c.len - off)
			break; /* truncated, or we only hold the first chunk of the file */
		off += (size_t)len + 12;
	}
	if (!have_ihdr)
		return SL_FAIL(err, SL_E_CORRUPT, 0, "png: no IHDR chunk");
	return SL_OK;
}
