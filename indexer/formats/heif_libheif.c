/* heif_libheif.c - heif.h with libheif. */
#include "indexer/formats/heif.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <libheif/heif.h>

#include "indexer/formats/fmt.h"
#include "indexer/formats/parsers.h"
#include "indexer/formats/phash.h"

static pthread_once_t init_once = PTHREAD_ONCE_INIT;

/* libheif's plugins (its decoders) are loaded once for the process; never
 * undone: extractor threads come and go, the library stays */
static void init(void)
{
	heif_init(NULL);
}

void heif_prepare(void)
{
	pthread_once(&init_once, init);
}

static int fail(struct heif_error e, struct sl_err *err, const char *what)
{
	int code = SL_E_CORRUPT;
	if (e.code == heif_error_Memory_allocation_error)
		code = SL_E_NOMEM;
	else if (e.code == heif_error_Unsupported_feature || e.code == heif_error_Unsupported_filetype ||
		 e.code == heif_error_Plugin_loading_error)
		code = SL_E_UNSUPPORTED;
	return SL_FAIL(err, code, 0, "phash: %s: %s", what, e.message ? e.message : "libheif");
}

/* w x h 8-bit grey from libheif's samples: 16-bit little-endian ones of
 * `bits` bits (size 2), or interleaved RGB (size 3).  NULL without memory. */
static uint8_t *to_grey(const uint8_t *plane, int stride, int w, int h, int size, int bits)
{
	uint8_t *grey = malloc((size_t)w * (size_t)h);
	int x, y;

	if (!grey)
		return NULL;
	for (y = 0; y < h; y++)
		for (x = 0; x < w; x++) {
			const uint8_t *q = plane + (size_t)y * (size_t)stride + (size_t)size * (size_t)x;
			uint8_t *g = grey + (size_t)y * (size_t)w + (size_t)x;
			if (size == 2)
				*g = (uint8_t)(((unsigned)q[0] | (unsigned)q[1] << 8) >> (bits - 8));
			else
				*g = (uint8_t)((299 * q[0] + 587 * q[1] + 114 * q[2] + 500) / 1000);
		}
	return grey;
}

/* Whether an item may be decoded: a grid or overlay only when its canvas,
 * which libheif allocates whole, is within HEIF_MAX_PIXELS (bmff_canvas).
 * 1 yes, 0 no, -1 out of memory (an error: no other picture may stand in,
 * or the hash would depend on the memory of the scan). */
static int canvas_ok(const uint8_t *p, size_t n, heif_item_id id)
{
	uint32_t cw, ch;
	int rc = bmff_canvas(p, n, id, &cw, &ch);
	if (rc == -2)
		return -1;
	return rc == 1 || (rc == 0 && (uint64_t)cw * ch <= HEIF_MAX_PIXELS);
}

/* Over 150 lines on purpose: libheif's handles (context, primary,
 * thumbnail, image) are taken in the order the library needs and all let
 * go at one label; cut into functions, each would hand them on. */
int heif_phash(const uint8_t *p, size_t n, uint64_t *out, const char **src, struct sl_err *err)
{
	struct heif_context *ctx = NULL;
	struct heif_image_handle *primary = NULL, *thumb = NULL, *use;
	struct heif_image *img = NULL;
	struct heif_error e;
	const uint8_t *plane, *rgb;
	uint8_t *grey = NULL;
	int stride, w, h, rc = SL_OK, ok = 0;
	heif_item_id id;

	*out = 0;
	*src = NULL;
	pthread_once(&init_once, init);
	ctx = heif_context_alloc();
	if (!ctx) {
		rc = SL_FAIL(err, SL_E_NOMEM, 0, "phash: out of memory");
		goto out;
	}
	/* a side as long as the biggest a HEIF we hash can have */
	heif_context_set_maximum_image_size_limit(ctx, 16384);
	/* the grid's tiles in this thread: extractors already run one per
	 * core, and a thread pool started for every picture cost more than
	 * a thumbnail's decode */
	heif_context_set_max_decoding_threads(ctx, 0);
	e = heif_context_read_from_memory_without_copy(ctx, p, n, NULL);
	if (e.code != heif_error_Ok) {
		rc = fail(e, err, "read");
		goto out;
	}
	e = heif_context_get_primary_image_handle(ctx, &primary);
	if (e.code != heif_error_Ok) {
		rc = fail(e, err, "primary image");
		goto out;
	}
	use = primary;
	*src = "image";
	/* the smallest thumbnail of 64 pixels or more on its shorter side
	 * (Sony's HIF carry 1616x1080 and 320x212: 214 ms against 13) */
	{
		heif_item_id ids[8];
		int k, count = heif_image_handle_get_list_of_thumbnail_IDs(primary, ids, 8);
		uint64_t best = UINT64_MAX;
		for (k = 0; k < count; k++) {
			struct heif_image_handle *t = NULL;
			int tw, th;
			uint64_t px;
			e = heif_image_handle_get_thumbnail(primary, ids[k], &t);
			if (e.code == heif_error_Memory_allocation_error) {
				/* no other picture may stand in: the hash would
				 * depend on the memory of the scan */
				rc = fail(e, err, "thumbnail");
				goto out;
			}
			if (e.code != heif_error_Ok)
				continue;
			tw = heif_image_handle_get_width(t);
			th = heif_image_handle_get_height(t);
			px = tw > 0 && th > 0 ? (uint64_t)tw * (uint64_t)th : UINT64_MAX;
			ok = (tw < th ? tw : th) >= 64 && px < best ? canvas_ok(p, n, ids[k]) : 0;
			if (ok < 0) {
				heif_image_handle_release(t);
				rc = SL_FAIL(err, SL_E_NOMEM, 0, "phash: out of memory");
				goto out;
			}
			if (ok) {
				heif_image_handle_release(thumb);
				thumb = t;
				best = px;
			} else {
				heif_image_handle_release(t);
			}
		}
		if (thumb) {
			use = thumb;
			*src = "heif-thumbnail";
		}
	}
	if (use == primary) {
		ok = heif_context_get_primary_image_ID(ctx, &id).code == heif_error_Ok
			     ? canvas_ok(p, n, id) : 0;
		if (ok < 0) {
			rc = SL_FAIL(err, SL_E_NOMEM, 0, "phash: out of memory");
			goto out;
		}
		if (!ok) {
			rc = SL_FAIL(err, SL_E_UNSUPPORTED, 0,
				     "phash: a HEIF picture made of others on a canvas over %u"
				     " pixels, or of no readable size: not decoded", HEIF_MAX_PIXELS);
			goto out;
		}
	}
	w = heif_image_handle_get_width(use);
	h = heif_image_handle_get_height(use);
	/* A picture costs its decode per pixel; HEVC and AV1 compress flat
	 * areas to almost nothing, so a small file can ask for a long decode
	 * (7008x4672 in 135 kB: 4.5 s).  Without a thumbnail, only pictures
	 * up to HEIF_MAX_PIXELS are decoded. */
	if (w <= 0 || h <= 0 || (uint64_t)w * (uint64_t)h > HEIF_MAX_PIXELS) {
		rc = SL_FAIL(err, SL_E_UNSUPPORTED, 0,
			     "phash: a %dx%d HEIF picture without a thumbnail: not decoded", w, h);
		goto out;
	}
	/* the luma plane of YCbCr is the grey we want (libheif 1.15 converts
	 * to monochrome from nothing it decodes); else interleaved RGB, made
	 * grey here */
	e = heif_decode_image(use, &img, heif_colorspace_YCbCr, heif_chroma_420, NULL);
	if (e.code == heif_error_Ok) {
		int bits = heif_image_get_bits_per_pixel_range(img, heif_channel_Y);
		plane = heif_image_get_plane_readonly(img, heif_channel_Y, &stride);
		w = heif_image_get_width(img, heif_channel_Y);
		h = heif_image_get_height(img, heif_channel_Y);
		if (plane && bits > 8 && bits <= 16 && w > 0 && h > 0 && stride >= 2 * w) {
			/* 10 or 12 bits (Sony's HIF): 16-bit samples, made 8 */
			if (!(grey = to_grey(plane, stride, w, h, 2, bits))) {
				rc = SL_FAIL(err, SL_E_NOMEM, 0, "phash: out of memory");
				goto out;
			}
			plane = grey;
			stride = w;
		} else if (bits != 8) {
			plane = NULL;
		}
	} else if (e.code == heif_error_Memory_allocation_error) {
		rc = fail(e, err, "decode");
		goto out;
	} else {
		e = heif_decode_image(use, &img, heif_colorspace_RGB, heif_chroma_interleaved_RGB, NULL);
		if (e.code != heif_error_Ok) {
			rc = fail(e, err, "decode");
			goto out;
		}
		rgb = heif_image_get_plane_readonly(img, heif_channel_interleaved, &stride);
		w = heif_image_get_width(img, heif_channel_interleaved);
		h = heif_image_get_height(img, heif_channel_interleaved);
		plane = NULL;
		if (rgb && w > 0 && h > 0 && stride >= 3 * w) {
			if (!(grey = to_grey(rgb, stride, w, h, 3, 8))) {
				rc = SL_FAIL(err, SL_E_NOMEM, 0, "phash: out of memory");
				goto out;
			}
			plane = grey;
			stride = w;
		}
	}
	if (!plane || w <= 0 || h <= 0 || stride < w) {
		rc = SL_FAIL(err, SL_E_UNSUPPORTED, 0, "phash: a HEIF picture not of 8-bit samples");
		goto out;
	}
	/* libheif turned it as it is shown */
	if (ph_hash_plane(plane, (uint32_t)w, (uint32_t)h, (size_t)stride, 1, out) != 0)
		rc = SL_FAIL(err, SL_E_NOMEM, 0, "phash: out of memory");
out:
	if (rc != SL_OK)
		*src = NULL;
	heif_image_release(img);
	heif_image_handle_release(thumb);
	heif_image_handle_release(primary);
	heif_context_free(ctx);
	free(grey);
	return rc;
}
