/* thumb.c - decode, shrink, turn, encode (thumb.h); libjpeg itself runs
 * in jpeg.c (jpegcodec.h). */
#include <stdlib.h>
#include <string.h>

#include "indexer/formats/jpegcodec.h"
#include "indexer/formats/thumb.h"

/* Average the w x h RGB image into the sw x sh one (each output pixel the
 * mean of the input pixels its area covers). */
static void shrink(const unsigned char *in, unsigned w, unsigned h, unsigned char *out, unsigned sw,
		   unsigned sh)
{
	unsigned x, y;

	for (y = 0; y < sh; y++) {
		unsigned y0 = (unsigned)((uint64_t)y * h / sh), y1 = (unsigned)((uint64_t)(y + 1) * h / sh);
		if (y1 <= y0)
			y1 = y0 + 1;
		for (x = 0; x < sw; x++) {
			unsigned x0 = (unsigned)((uint64_t)x * w / sw);
			unsigned x1 = (unsigned)((uint64_t)(x + 1) * w / sw);
			uint64_t s[3] = {0, 0, 0}, cnt;
			unsigned i, j, k;
			if (x1 <= x0)
				x1 = x0 + 1;
			for (j = y0; j < y1; j++)
				for (i = x0; i < x1; i++)
					for (k = 0; k < 3; k++)
						s[k] += in[((size_t)j * w + i) * 3 + k];
			cnt = (uint64_t)(x1 - x0) * (y1 - y0);
			for (k = 0; k < 3; k++)
				out[((size_t)y * sw + x) * 3 + k] = (unsigned char)(s[k] / cnt);
		}
	}
}

/* Where pixel (x, y) of the stored w x h picture goes in the shown one
 * (EXIF orientation o), whose width is *ow. */
static void turn(const unsigned char *in, unsigned w, unsigned h, int o, unsigned char *out,
		 unsigned *ow, unsigned *oh)
{
	int swap = o >= 5 && o <= 8;
	unsigned x, y;

	*ow = swap ? h : w;
	*oh = swap ? w : h;
	for (y = 0; y < h; y++)
		for (x = 0; x < w; x++) {
			unsigned nx, ny;
			switch (o) {
			case 2: nx = w - 1 - x; ny = y; break;
			case 3: nx = w - 1 - x; ny = h - 1 - y; break;
			case 4: nx = x; ny = h - 1 - y; break;
			case 5: nx = y; ny = x; break;
			case 6: nx = h - 1 - y; ny = x; break;
			case 7: nx = h - 1 - y; ny = w - 1 - x; break;
			case 8: nx = y; ny = w - 1 - x; break;
			default: nx = x; ny = y; break;
			}
			memcpy(out + ((size_t)ny * *ow + nx) * 3, in + ((size_t)y * w + x) * 3, 3);
		}
}

/* libjpeg's largest scale-down (1/2, 1/4, 1/8) still covering the box. */
int thumb_jpeg(const uint8_t *p, size_t n, int orientation, unsigned box, struct strbuf *out,
	       struct sl_err *err)
{
	unsigned char *rows = NULL, *small = NULL, *turned = NULL;
	unsigned w = 0, h = 0, sw, sh, ow, oh;
	int rc;

	if (box < 8 || box > 1024)
		return SL_FAIL(err, SL_E_USAGE, 0, "picture: box of %u pixels", box);
	rc = jpeg_decode_rgb(p, n, box, THUMB_MAX_PIXELS, &rows, &w, &h, err);
	if (rc == SL_OK) {
		if (w >= h) {
			sw = w < box ? w : box;
			sh = (unsigned)((uint64_t)h * sw / w);
		} else {
			sh = h < box ? h : box;
			sw = (unsigned)((uint64_t)w * sh / h);
		}
		if (!sw)
			sw = 1;
		if (!sh)
			sh = 1;
		small = malloc((size_t)sw * sh * 3);
		turned = malloc((size_t)sw * sh * 3);
		if (!small || !turned)
			rc = SL_FAIL(err, SL_E_NOMEM, 0, "picture: out of memory");
	}
	if (rc == SL_OK) {
		shrink(rows, w, h, small, sw, sh);
		turn(small, sw, sh, orientation, turned, &ow, &oh);
		rc = jpeg_encode_rgb(turned, ow, oh, 75, out, err);
	}
	free(rows);
	free(small);
	free(turned);
	return rc;
}
