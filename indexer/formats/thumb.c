/* thumb.c - decode, shrink, turn, encode (thumb.h). */
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jpeglib.h>

#include "indexer/formats/thumb.h"

struct terr {
	struct jpeg_error_mgr pub;
	jmp_buf jump;
};

static void on_error(j_common_ptr cinfo)
{
	struct terr *t = (struct terr *)cinfo->err;
	longjmp(t->jump, 1);
}

/* Warnings (a file cut short is padded with grey) still give a picture:
 * that is what a viewer would show. */
static void on_message(j_common_ptr cinfo, int level)
{
	(void)cinfo, (void)level;
}

/* Both codecs and what they allocate live in the caller's frame, not in
 * the one that calls setjmp, so that their values are defined after a
 * longjmp. */
struct tctx {
	struct jpeg_decompress_struct d;
	struct jpeg_compress_struct c;
	struct terr de, ce;
	int have_d, have_c;
	unsigned char *rows;   /* decoded, RGB */
	unsigned char *small;  /* averaged down, RGB */
	unsigned char *turned;
	unsigned char *enc;    /* jpeg_mem_dest's */
	unsigned long enc_len;
};

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
static unsigned scale_for(unsigned w, unsigned h, unsigned box)
{
	unsigned side = w > h ? w : h, denom = 1;

	while (denom < 8 && side / (denom * 2) >= box)
		denom *= 2;
	return denom;
}

static int decode(struct tctx *t, const uint8_t *p, size_t n, unsigned box, unsigned *w,
		  unsigned *h, struct sl_err *err)
{
	t->d.err = jpeg_std_error(&t->de.pub);
	t->de.pub.error_exit = on_error;
	t->de.pub.emit_message = on_message;
	if (setjmp(t->de.jump))
		return SL_FAIL(err, SL_E_CORRUPT, 0, "picture: not a JPEG that can be decoded");
	jpeg_create_decompress(&t->d);
	t->have_d = 1;
	t->d.mem->max_memory_to_use = 64L << 20;
	jpeg_mem_src(&t->d, p, (unsigned long)n);
	jpeg_read_header(&t->d, TRUE);
	if ((uint64_t)t->d.image_width * t->d.image_height > THUMB_MAX_PIXELS)
		return SL_FAIL(err, SL_E_UNSUPPORTED, 0, "picture: too big to decode (%ux%u)",
			       t->d.image_width, t->d.image_height);
	if (t->d.jpeg_color_space == JCS_CMYK || t->d.jpeg_color_space == JCS_YCCK)
		return SL_FAIL(err, SL_E_UNSUPPORTED, 0, "picture: CMYK");
	t->d.scale_num = 1;
	t->d.scale_denom = scale_for(t->d.image_width, t->d.image_height, box);
	t->d.out_color_space = JCS_RGB;
	jpeg_start_decompress(&t->d);
	*w = t->d.output_width;
	*h = t->d.output_height;
	if (!*w || !*h)
		return SL_FAIL(err, SL_E_CORRUPT, 0, "picture: empty");
	t->rows = malloc((size_t)*w * *h * 3);
	if (!t->rows)
		return SL_FAIL(err, SL_E_NOMEM, 0, "picture: out of memory");
	while (t->d.output_scanline < t->d.output_height) {
		JSAMPROW row = t->rows + (size_t)t->d.output_scanline * *w * 3;
		jpeg_read_scanlines(&t->d, &row, 1);
	}
	jpeg_finish_decompress(&t->d);
	return SL_OK;
}

static int encode(struct tctx *t, const unsigned char *img, unsigned w, unsigned h,
		  struct sl_err *err)
{
	unsigned y;

	t->c.err = jpeg_std_error(&t->ce.pub);
	t->ce.pub.error_exit = on_error;
	t->ce.pub.emit_message = on_message;
	if (setjmp(t->ce.jump))
		return SL_FAIL(err, SL_E_NOMEM, 0, "picture: cannot encode");
	jpeg_create_compress(&t->c);
	t->have_c = 1;
	jpeg_mem_dest(&t->c, &t->enc, &t->enc_len);
	t->c.image_width = w;
	t->c.image_height = h;
	t->c.input_components = 3;
	t->c.in_color_space = JCS_RGB;
	jpeg_set_defaults(&t->c);
	jpeg_set_quality(&t->c, 75, TRUE);
	jpeg_start_compress(&t->c, TRUE);
	for (y = 0; y < h; y++) {
		JSAMPROW row = (JSAMPROW)(img + (size_t)y * w * 3);
		jpeg_write_scanlines(&t->c, &row, 1);
	}
	jpeg_finish_compress(&t->c);
	return SL_OK;
}

int thumb_jpeg(const uint8_t *p, size_t n, int orientation, unsigned box, struct strbuf *out,
	       struct sl_err *err)
{
	struct tctx t;
	unsigned w = 0, h = 0, sw, sh, ow, oh;
	int rc;

	memset(&t, 0, sizeof(t));
	if (box < 8 || box > 1024)
		return SL_FAIL(err, SL_E_USAGE, 0, "picture: box of %u pixels", box);
	rc = decode(&t, p, n, box, &w, &h, err);
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
		t.small = malloc((size_t)sw * sh * 3);
		t.turned = malloc((size_t)sw * sh * 3);
		if (!t.small || !t.turned)
			rc = SL_FAIL(err, SL_E_NOMEM, 0, "picture: out of memory");
	}
	if (rc == SL_OK) {
		shrink(t.rows, w, h, t.small, sw, sh);
		turn(t.small, sw, sh, orientation, t.turned, &ow, &oh);
		rc = encode(&t, t.turned, ow, oh, err);
	}
	if (rc == SL_OK && sb_add(out, t.enc, t.enc_len) != 0)
		rc = SL_FAIL(err, SL_E_NOMEM, 0, "picture: out of memory");
	if (t.have_d)
		jpeg_destroy_decompress(&t.d);
	if (t.have_c)
		jpeg_destroy_compress(&t.c);
	free(t.enc);
	free(t.rows);
	free(t.small);
	free(t.turned);
	return rc;
}
