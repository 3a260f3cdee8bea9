/* jpegref.h - libjpeg's own 1/8 grey output after the luma's first DC scan
 * (buffered-image mode, no block smoothing): what indexer/formats/jpeg_dc.h must
 * give, for unit_jpegdc and fuzz_jpegdc. */
#ifndef SL_JPEGREF_H
#define SL_JPEGREF_H

#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <jpeglib.h>

struct jref_err {
	struct jpeg_error_mgr pub;
	jmp_buf jump;
	int warnings;
};

static void jref_error(j_common_ptr c)
{
	longjmp(((struct jref_err *)c->err)->jump, 1);
}

static void jref_message(j_common_ptr c, int level)
{
	if (level < 0)
		((struct jref_err *)c->err)->warnings++;
}

/* The plane (malloc'd, *w x *h), or NULL when libjpeg cannot decode the
 * file, or it is bigger than max_pixels at 1/8.  *warnings: libjpeg's
 * warnings on the way (damage it worked around). */
static inline uint8_t *jref_plane(const uint8_t *p, size_t n, uint64_t max_pixels, uint32_t *w,
				  uint32_t *h, int *warnings)
{
	struct jpeg_decompress_struct ci;
	struct jref_err je;
	uint8_t *volatile out = NULL;

	ci.err = jpeg_std_error(&je.pub);
	je.pub.error_exit = jref_error;
	je.pub.emit_message = jref_message;
	je.warnings = 0;
	jpeg_create_decompress(&ci);
	ci.mem->max_memory_to_use = 256L << 20;
	if (setjmp(je.jump)) {
		jpeg_destroy_decompress(&ci);
		free(out);
		return NULL;
	}
	jpeg_mem_src(&ci, p, (unsigned long)n);
	jpeg_read_header(&ci, TRUE);
	if ((uint64_t)((ci.image_width + 7) / 8) * ((ci.image_height + 7) / 8) > max_pixels) {
		jpeg_destroy_decompress(&ci);
		return NULL;
	}
	ci.scale_num = 1;
	ci.scale_denom = 8;
	ci.out_color_space = JCS_GRAYSCALE;
	ci.do_block_smoothing = FALSE;
	ci.buffered_image = TRUE;
	jpeg_start_decompress(&ci);
	for (;;) {
		int r = jpeg_consume_input(&ci);
		if (r == JPEG_REACHED_EOI || r == JPEG_SUSPENDED)
			break;
		if (r == JPEG_SCAN_COMPLETED && ci.coef_bits && ci.coef_bits[0][0] >= 0)
			break;
	}
	jpeg_start_output(&ci, ci.input_scan_number);
	*w = ci.output_width;
	*h = ci.output_height;
	out = malloc((size_t)*w * *h + 1);
	while (ci.output_scanline < ci.output_height) {
		JSAMPROW row = out + (size_t)ci.output_scanline * *w;
		jpeg_read_scanlines(&ci, &row, 1);
	}
	*warnings = je.warnings;
	jpeg_destroy_decompress(&ci);
	return out;
}

#endif
