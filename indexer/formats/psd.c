/* psd.c - Photoshop documents (parsers.h). */
#include <stddef.h>
#include <stdint.h>

#include "indexer/formats/cursor.h"
#include "indexer/formats/iptc.h"
#include "indexer/formats/parsers.h"

/* PSD and PSB: the header's size (height before width, big-endian), then
 * past the color mode data, the image resources (iptc.h: IPTC, XMP and
 * the EXIF block Photoshop keeps in resource 0x0422). */
int psd_parse(const uint8_t *p, size_t n, struct x_meta *m, struct sl_err *err)
{
	struct bc c = bc_make(p, n, 1);
	uint32_t w, h, mode_len, res_len;
	size_t res;

	if (bc_be32(&c, 14, &h) || bc_be32(&c, 18, &w))
		return SL_FAIL(err, SL_E_CORRUPT, 0, "psd: truncated header");
	m->width = w;
	m->height = h;
	m->have |= XM_DIMS;
	if (bc_be32(&c, 26, &mode_len) || (uint64_t)mode_len + 34 > n ||
	    bc_be32(&c, 30 + (size_t)mode_len, &res_len)) {
		x_warn(m, "psd: no image resources in the bytes read");
		return SL_OK;
	}
	res = 34 + (size_t)mode_len;
	if (res_len > n - res) {
		x_warn(m, "psd: image resources cut short");
		res_len = (uint32_t)(n - res);
	}
	iptc_psir(p + res, res_len, m);
	return SL_OK;
}
