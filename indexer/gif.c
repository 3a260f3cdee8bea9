/* gif.c - GIF: logical screen size. */
#include "indexer/cursor.h"
#include "indexer/extract.h"

int gif_parse(const uint8_t *p, size_t n, struct x_meta *m, struct sl_err *err)
{
	struct bc c = bc_make(p, n, 0);
	uint16_t w, h;

	if (bc_le16(&c, 6, &w) || bc_le16(&c, 8, &h))
		return SL_FAIL(err, SL_E_CORRUPT, 0, "gif: truncated header");
	m->width = w;
	m->height = h;
	m->have |= XM_DIMS; /* zero is what the file says, so it is reported */
	return SL_OK;
}
