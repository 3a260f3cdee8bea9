/* jpeg.c - JPEG headers through libjpeg-turbo.
 *
 * libjpeg reports fatal errors by calling error_exit, whose default prints
 * and calls exit().  This file is the only place that lets it run: error_exit
 * longjmps back here, warnings are counted instead of printed, and only the
 * header is decoded (no pixel buffers).  Whatever libjpeg had parsed before an
 * error (the SOF dimensions, saved APP markers) is still used.
 */
#include <setjmp.h>
#include <stdio.h>
#include <string.h>

#include <jpeglib.h>

#include "indexer/cursor.h"
#include "indexer/exif.h"
#include "indexer/extract.h"

struct jerr {
	struct jpeg_error_mgr pub;
	jmp_buf jump;
	int warnings;
	char first_warning[JMSG_LENGTH_MAX];
};

static void on_error(j_common_ptr cinfo)
{
	struct jerr *j = (struct jerr *)cinfo->err;
	longjmp(j->jump, 1);
}

static void on_message(j_common_ptr cinfo, int level)
{
	struct jerr *j = (struct jerr *)cinfo->err;
	if (level >= 0)
		return; /* trace messages */
	if (j->warnings++ == 0)
		cinfo->err->format_message(cinfo, j->first_warning);
}

static void use_markers(struct jpeg_decompress_struct *ci, struct x_meta *m)
{
	jpeg_saved_marker_ptr mk;
	int have_exif = 0;

	for (mk = ci->marker_list; mk; mk = mk->next) {
		struct bc c = bc_make(mk->data, mk->data_length, 1);
		if (mk->marker == JPEG_APP0 + 1 && !have_exif && bc_is(&c, 0, "Exif\0\0", 6)) {
			have_exif = 1;
			if (mk->data_length < mk->original_length)
				x_warn(m, "Exif segment truncated");
			exif_parse(mk->data + 6, mk->data_length - 6, 0, m);
		} else if (mk->marker == JPEG_APP0 + 2 && bc_is(&c, 0, "MPF\0", 4)) {
			snprintf(m->format, sizeof(m->format), "mpo");
		}
	}
}

int jpg_parse(const uint8_t *p, size_t n, struct x_meta *m, struct sl_err *err)
{
	struct jpeg_decompress_struct ci;
	struct jerr je;
	volatile int rc = SL_OK;

	memset(&ci, 0, sizeof(ci));
	memset(&je, 0, sizeof(je));
	ci.err = jpeg_std_error(&je.pub);
	je.pub.error_exit = on_error;
	je.pub.emit_message = on_message;
	if (setjmp(je.jump)) {
		char msg[JMSG_LENGTH_MAX];
		ci.err->format_message((j_common_ptr)&ci, msg);
		if (ci.image_width && ci.image_height) {
			/* the frame header was read before the damage */
			m->width = ci.image_width;
			m->height = ci.image_height;
			m->have |= XM_DIMS;
			x_warn(m, "jpeg: %s", msg);
		} else {
			rc = SL_FAIL(err, SL_E_CORRUPT, 0, "jpeg: %s", msg);
		}
		use_markers(&ci, m);
		jpeg_destroy_decompress(&ci);
		return rc;
	}
	jpeg_create_decompress(&ci);
	ci.mem->max_memory_to_use = 64L << 20;
	jpeg_save_markers(&ci, JPEG_APP0 + 1, 0xFFFF);
	jpeg_save_markers(&ci, JPEG_APP0 + 2, 64);
	jpeg_mem_src(&ci, p, (unsigned long)n);
	jpeg_read_header(&ci, TRUE);
	m->width = ci.image_width;
	m->height = ci.image_height;
	if (m->width && m->height)
		m->have |= XM_DIMS;
	use_markers(&ci, m);
	if (je.warnings)
		x_warn(m, "jpeg: %s", je.first_warning);
	jpeg_destroy_decompress(&ci);
	return rc;
}
