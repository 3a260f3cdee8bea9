/* raster_libs.c - raster.h with libpng and libwebp.
 *
 * A PNG streams row by row into the hash's grid: libpng expands each row
 * to 8-bit samples, and the row becomes grey here (integer luma, as a
 * JPEG's Y is made, alpha composited on white).  No picture-sized buffer is
 * allocated (but for interlaced pictures, below), and libpng's
 * gamma-correct conversion to grey (half of a decode through its
 * simplified API, used before issue 41) is not done: the hash compares
 * pictures with JPEGs, whose grey is gamma-encoded luma too.  Interlaced
 * PNGs (rare in photographs: a row is complete only after the last pass)
 * are held whole as libpng expands them, then made grey. */
#include "indexer/formats/raster.h"

#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <png.h>
#include <webp/decode.h>

#include "indexer/formats/phash.h"

static int hash_plane(const uint8_t *plane, uint32_t w, uint32_t h, size_t stride, int orientation,
		      uint64_t *out, struct sl_err *err)
{
	if (ph_hash_plane(plane, w, h, stride, orientation, out) != 0)
		return SL_FAIL(err, SL_E_NOMEM, 0, "phash: out of memory");
	return SL_OK;
}

/* Whether every chunk before IEND lies inside the n bytes.  libpng sizes
 * its buffer for a text chunk by the length the chunk declares, before
 * reading it: a 6 kB file declaring a 1.8 GB tEXt cost 1.8 GB of memory
 * and 13 s (fuzz_extract found it).  A file cut short fails the same way;
 * libpng could not have decoded it either. */
static int png_chunks_fit(const uint8_t *p, size_t n)
{
	size_t pos = 8;

	/* a chunk's length and type (8 bytes) are all libpng needs to size
	 * it: a header in the last 12 bytes counts too (fuzz_raster: a
	 * 191-byte file whose last 9 declared a 1.8 GB tEXt) */
	while (n >= 8 && pos <= n - 8) {
		uint32_t len = (uint32_t)p[pos] << 24 | (uint32_t)p[pos + 1] << 16 |
			       (uint32_t)p[pos + 2] << 8 | p[pos + 3];
		if (n - pos < 12 || len > n - 12 - pos)
			return 0;
		if (memcmp(p + pos + 4, "IEND", 4) == 0)
			break;
		pos += 12 + (size_t)len;
	}
	return 1;
}

/* A PNG being streamed into a grid; lives in png_hash's frame, so that
 * what png_rows changes survives libpng's longjmp. */
struct png_job {
	const uint8_t *p;
	size_t n, pos;
	png_structp png;
	png_infop info;
	uint8_t *row, *grey;
	struct ph_grid *grid;
	char msg[160];
};

static void png_mem_read(png_structp png, png_bytep out, size_t len)
{
	struct png_job *j = png_get_io_ptr(png);
	if (len > j->n - j->pos)
		png_error(png, "the data ends early (cut short?)");
	memcpy(out, j->p + j->pos, len);
	j->pos += len;
}

static void png_on_error(png_structp png, png_const_charp msg)
{
	struct png_job *j = png_get_error_ptr(png);
	snprintf(j->msg, sizeof(j->msg), "%s", msg);
	png_longjmp(png, 1);
}

static void png_on_warning(png_structp png, png_const_charp msg)
{
	(void)png;
	(void)msg;
}

/* v * a / 255 + (255 - a), rounded, without a division: v over white at
 * opacity a. */
static inline uint8_t over_white(uint32_t v, uint32_t a)
{
	uint32_t t = v * a + 255u * (255u - a) + 128u;
	return (uint8_t)((t + (t >> 8)) >> 8);
}

/* A row of w pixels of ch 8-bit samples (grey, grey+alpha, RGB, RGBA) as
 * grey: BT.601 luma in integers, alpha over white. */
static void png_grey_row(const uint8_t *s, uint8_t *d, uint32_t w, int ch)
{
	uint32_t x;

	switch (ch) {
	case 1:
		memcpy(d, s, w);
		break;
	case 2:
		for (x = 0; x < w; x++, s += 2)
			d[x] = over_white(s[0], s[1]);
		break;
	case 3:
		for (x = 0; x < w; x++, s += 3)
			d[x] = (uint8_t)((77u * s[0] + 150u * s[1] + 29u * s[2] + 128u) >> 8);
		break;
	default:
		for (x = 0; x < w; x++, s += 4) {
			uint32_t y = (77u * s[0] + 150u * s[1] + 29u * s[2] + 128u) >> 8;
			d[x] = s[3] == 255 ? (uint8_t)y : over_white(y, s[3]);
		}
	}
}

/* Decode j's PNG row by row into j->grid (none when its size is refused);
 * 0, or -1 after a libpng error (j->msg). */
static int png_rows(struct png_job *j, uint64_t *px_out, uint32_t *w_out, uint32_t *h_out)
{
	png_uint_32 w, h, y;
	int depth, ctype, interlace, ch, passes;
	size_t rowbytes;

	if (setjmp(png_jmpbuf(j->png)))
		return -1;
	png_set_read_fn(j->png, j, png_mem_read);
#ifdef PNG_IGNORE_ADLER32
	/* the chunks' CRCs are checked; zlib's Adler-32 over the inflated
	 * rows was a tenth of a decode */
	png_set_option(j->png, PNG_IGNORE_ADLER32, PNG_OPTION_ON);
#endif
	png_read_info(j->png, j->info);
	png_get_IHDR(j->png, j->info, &w, &h, &depth, &ctype, &interlace, NULL, NULL);
	*w_out = w;
	*h_out = h;
	*px_out = (uint64_t)w * h;
	if (!*px_out || *px_out > RASTER_MAX_PIXELS)
		return 0;
	if (*px_out / 8 + h > (uint64_t)j->n * 1032 + 65536)
		return 0;
	png_set_expand(j->png);   /* palette, low bit depths, tRNS: 8-bit samples */
	png_set_strip_16(j->png);
	passes = png_set_interlace_handling(j->png);
	png_read_update_info(j->png, j->info);
	ch = png_get_channels(j->png, j->info);
	rowbytes = png_get_rowbytes(j->png, j->info);
	if (ch < 1 || ch > 4 || rowbytes < (size_t)w * (size_t)ch)
		png_error(j->png, "unexpected row layout");
	/* an interlaced picture's rows are complete only after its last pass:
	 * it is held whole, as libpng expands it, then made grey */
	j->row = malloc(passes > 1 ? rowbytes * h : rowbytes);
	j->grey = malloc(w);
	j->grid = malloc(sizeof(*j->grid));
	if (!j->row || !j->grey || !j->grid)
		png_error(j->png, "out of memory");
	ph_grid_init(j->grid, w, h);
	if (passes > 1) {
		int pass;
		for (pass = 0; pass < passes; pass++)
			for (y = 0; y < h; y++)
				png_read_row(j->png, j->row + (size_t)y * rowbytes, NULL);
	}
	for (y = 0; y < h; y++) {
		const uint8_t *r = j->row;
		if (passes > 1)
			r += (size_t)y * rowbytes;
		else
			png_read_row(j->png, j->row, NULL);
		png_grey_row(r, j->grey, w, ch);
		ph_grid_row(j->grid, y, j->grey);
	}
	return 0;
}

static int png_hash(const uint8_t *p, size_t n, int orientation, uint64_t *out,
		    struct sl_err *err)
{
	struct png_job j;
	uint64_t px = 0;
	uint32_t w = 0, h = 0;
	int r, rc = SL_OK;

	if (!png_chunks_fit(p, n))
		return SL_FAIL(err, SL_E_CORRUPT, 0,
			       "phash: png: a chunk runs past the end of the file (cut short?)");
	memset(&j, 0, sizeof(j));
	j.p = p;
	j.n = n;
	j.png = png_create_read_struct(PNG_LIBPNG_VER_STRING, &j, png_on_error, png_on_warning);
	if (j.png)
		j.info = png_create_info_struct(j.png);
	if (!j.png || !j.info) {
		png_destroy_read_struct(j.png ? &j.png : NULL, NULL, NULL);
		return SL_FAIL(err, SL_E_NOMEM, 0, "phash: out of memory");
	}
	r = png_rows(&j, &px, &w, &h);
	if (r < 0)
		rc = SL_FAIL(err, strstr(j.msg, "memory") ? SL_E_NOMEM : SL_E_CORRUPT, 0,
			     "phash: png: %s", j.msg);
	else if (!px || px > RASTER_MAX_PIXELS)
		rc = SL_FAIL(err, SL_E_UNSUPPORTED, 0, "phash: a %ux%u PNG: not decoded",
			     (unsigned)w, (unsigned)h);
	else if (px / 8 + h > (uint64_t)n * 1032 + 65536)
		rc = SL_FAIL(err, SL_E_CORRUPT, 0, "phash: a %ux%u PNG cannot fit in %zu bytes",
			     (unsigned)w, (unsigned)h, n);
	else
		*out = ph_hash(j.grid, orientation);
	png_destroy_read_struct(&j.png, &j.info, NULL);
	free(j.row);
	free(j.grey);
	free(j.grid);
	return rc;
}

static int webp_fail(VP8StatusCode st, struct sl_err *err, const char *what)
{
	switch (st) {
	case VP8_STATUS_OUT_OF_MEMORY:
		return SL_FAIL(err, SL_E_NOMEM, 0, "phash: webp: out of memory");
	case VP8_STATUS_UNSUPPORTED_FEATURE:
		return SL_FAIL(err, SL_E_UNSUPPORTED, 0, "phash: webp: %s: unsupported feature",
			       what);
	default:
		return SL_FAIL(err, SL_E_CORRUPT, 0, "phash: webp: %s: status %d", what, (int)st);
	}
}

static int webp_hash(const uint8_t *p, size_t n, int orientation, uint64_t *out,
		     struct sl_err *err)
{
	WebPDecoderConfig c;
	VP8StatusCode st;
	uint32_t w, h, shorter;
	int rc;

	if (!WebPInitDecoderConfig(&c))
		return SL_FAIL(err, SL_E_UNSUPPORTED, 0, "phash: webp: library version mismatch");
	st = WebPGetFeatures(p, n, &c.input);
	if (st != VP8_STATUS_OK)
		return webp_fail(st, err, "header");
	if (c.input.has_animation)
		return SL_FAIL(err, SL_E_UNSUPPORTED, 0, "phash: an animated WebP: not decoded");
	if (c.input.width <= 0 || c.input.height <= 0 ||
	    (uint64_t)c.input.width * (uint64_t)c.input.height > RASTER_MAX_PIXELS)
		return SL_FAIL(err, SL_E_UNSUPPORTED, 0, "phash: a %dx%d WebP: not decoded",
			       c.input.width, c.input.height);
	w = (uint32_t)c.input.width;
	h = (uint32_t)c.input.height;
	shorter = w < h ? w : h;
	if (shorter > RASTER_SIDE) {
		c.options.use_scaling = 1;
		c.options.scaled_width = (int)(((uint64_t)w * RASTER_SIDE + shorter / 2) / shorter);
		c.options.scaled_height = (int)(((uint64_t)h * RASTER_SIDE + shorter / 2) / shorter);
		if (c.options.scaled_width < 1)
			c.options.scaled_width = 1;
		if (c.options.scaled_height < 1)
			c.options.scaled_height = 1;
	}
	c.output.colorspace = MODE_YUV;
	st = WebPDecode(p, n, &c);
	if (st != VP8_STATUS_OK) {
		WebPFreeDecBuffer(&c.output);
		return webp_fail(st, err, "decode");
	}
	if (!c.output.u.YUVA.y || c.output.width <= 0 || c.output.height <= 0 ||
	    c.output.u.YUVA.y_stride < c.output.width) {
		WebPFreeDecBuffer(&c.output);
		return SL_FAIL(err, SL_E_CORRUPT, 0, "phash: webp: no picture decoded");
	}
	rc = hash_plane(c.output.u.YUVA.y, (uint32_t)c.output.width, (uint32_t)c.output.height,
			(size_t)c.output.u.YUVA.y_stride, orientation, out, err);
	WebPFreeDecBuffer(&c.output);
	return rc;
}

int raster_phash(const char *format, const uint8_t *p, size_t n, int orientation, uint64_t *out,
		 const char **src, struct sl_err *err)
{
	int rc;

	*out = 0;
	*src = NULL;
	if (strcmp(format, "png") == 0)
		rc = png_hash(p, n, orientation, out, err);
	else if (strcmp(format, "webp") == 0)
		rc = webp_hash(p, n, orientation, out, err);
	else
		rc = SL_FAIL(err, SL_E_UNSUPPORTED, 0, "phash: %s is no raster format", format);
	if (rc == SL_OK)
		*src = "image";
	return rc;
}

int raster_decodes(void)
{
	return 1;
}
