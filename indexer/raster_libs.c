/* raster_libs.c - raster.h with libpng (simplified API) and libwebp. */
#include "indexer/raster.h"

#include <stdlib.h>
#include <string.h>

#include <png.h>
#include <webp/decode.h>

#include "indexer/phash.h"

static int hash_plane(const uint8_t *plane, uint32_t w, uint32_t h, size_t stride, int orientation,
		      uint64_t *out, struct sl_err *err)
{
	if (ph_hash_plane(plane, w, h, stride, orientation, out) != 0)
		return SL_FAIL(err, SL_E_NOMEM, 0, "phash: out of memory");
	return SL_OK;
}

/* libpng's simplified API says what went wrong in words only */
static int png_fail(png_image *im, struct sl_err *err)
{
	int code = strstr(im->message, "memory") ? SL_E_NOMEM : SL_E_CORRUPT;
	return SL_FAIL(err, code, 0, "phash: png: %s", im->message);
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

static int png_hash(const uint8_t *p, size_t n, int orientation, uint64_t *out,
		    struct sl_err *err)
{
	png_image im;
	png_color white = {255, 255, 255};
	uint8_t *buf;
	uint64_t px;
	int rc;

	if (!png_chunks_fit(p, n))
		return SL_FAIL(err, SL_E_CORRUPT, 0,
			       "phash: png: a chunk runs past the end of the file (cut short?)");
	memset(&im, 0, sizeof(im));
	im.version = PNG_IMAGE_VERSION;
	if (!png_image_begin_read_from_memory(&im, p, n))
		return png_fail(&im, err);
	px = (uint64_t)im.width * im.height;
	if (!px || px > RASTER_MAX_PIXELS) {
		png_image_free(&im);
		return SL_FAIL(err, SL_E_UNSUPPORTED, 0, "phash: a %ux%u PNG: not decoded",
			       (unsigned)im.width, (unsigned)im.height);
	}
	/* a pixel is a bit at the least, and deflate packs at most 1032
	 * bytes in one: a small file declaring a big picture is no picture */
	if (px / 8 + im.height > (uint64_t)n * 1032 + 65536) {
		png_image_free(&im);
		return SL_FAIL(err, SL_E_CORRUPT, 0, "phash: a %ux%u PNG cannot fit in %zu bytes",
			       (unsigned)im.width, (unsigned)im.height, n);
	}
	im.format = PNG_FORMAT_GRAY;
	buf = malloc((size_t)px);
	if (!buf) {
		png_image_free(&im);
		return SL_FAIL(err, SL_E_NOMEM, 0, "phash: out of memory");
	}
	if (!png_image_finish_read(&im, &white, buf, 0, NULL)) {
		rc = png_fail(&im, err);
		png_image_free(&im);
		free(buf);
		return rc;
	}
	rc = hash_plane(buf, im.width, im.height, im.width, orientation, out, err);
	png_image_free(&im);
	free(buf);
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
