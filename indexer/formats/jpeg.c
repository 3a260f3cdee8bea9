/* jpeg.c - JPEG, MPO and Exiv2's EXV: markers, EXIF, frame size.
 *
 * Two readers look at every JPEG.  Our own marker walk (bounded cursor)
 * finds the segments: the Exif APP1s, the MPF APP2 and the frame
 * header, with their positions in the file.  libjpeg-turbo then reads the
 * header as a decoder would; its verdict decides whether the file is a
 * readable JPEG, and its frame size is the one reported.  Where it refuses a
 * frame it cannot decode (lossless, more than 10 components, height given by
 * a DNL marker), the size from our walk is kept with a warning.
 *
 * libjpeg reports fatal errors by calling error_exit, whose default prints
 * and calls exit().  This file is the only place that lets libjpeg run:
 * error_exit longjmps back here, warnings are counted instead of printed,
 * and memory is capped.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jpeglib.h>
#include <jerror.h>

#include "indexer/formats/cursor.h"
#include "indexer/formats/exif.h"
#include "indexer/formats/fmt.h"
#include "indexer/formats/iptc.h"
#include "indexer/formats/jpeg_dc.h"
#include "indexer/formats/jpegcodec.h"
#include "indexer/formats/parsers.h"
#include "indexer/formats/phash.h"
#include "indexer/formats/xmp.h"

/* ---- marker walk --------------------------------------------------------- */

/* APP13 segments joined into one block of Photoshop resources, at most. */
#define JPG_MAX_APP13 16
#define JPG_MAX_EXIF 8

struct segments {
	int have_sof;
	uint16_t sof_w, sof_h;
	/* TIFF blocks after "Exif\0\0", in file order (an editor that adds
	 * its own and keeps the camera's makes two) */
	size_t exif_at[JPG_MAX_EXIF], exif_len[JPG_MAX_EXIF];
	int exif_cont[JPG_MAX_EXIF]; /* the one before goes on here (below) */
	int nexif, exif_cut, last_exif;
	size_t mpf_at, mpf_len;   /* TIFF block after "MPF\0" */
	int have_mpf;
	size_t xmp_at, xmp_len;   /* the packet after XMP_JPEG_SIG, NUL included */
	int have_xmp;
	/* Photoshop resources after "Photoshop 3.0\0": one block split over
	 * consecutive APP13 segments when it is over 64 KiB */
	size_t psir_at[JPG_MAX_APP13], psir_len[JPG_MAX_APP13];
	int npsir;
	size_t skipped;           /* bytes of garbage between segments */
	size_t sos_end;           /* where the first scan's header ends; 0: not reached */
};

/* Codes 0x02-0xBF are reserved: seeing one means we are not on a marker. */
static int is_marker(uint8_t mk)
{
	return mk == 0x01 || (mk >= 0xC0 && mk != 0xFF);
}

static int is_sof(uint8_t mk)
{
	return mk >= 0xC0 && mk <= 0xCF && mk != 0xC4 && mk != 0xC8 && mk != 0xCC;
}

static void walk(const struct bc *c, size_t pos, struct segments *s)
{
	memset(s, 0, sizeof(*s));
	while (pos + 4 <= c->len) {
		uint8_t mk;
		uint16_t len;
		size_t body, avail;

		if (c->p[pos] == 0xFF)
			while (pos + 1 < c->len && c->p[pos + 1] == 0xFF)
				pos++; /* fill bytes before a marker */
		if (c->p[pos] != 0xFF || pos + 1 >= c->len || !is_marker(c->p[pos + 1])) {
			/* garbage between segments: resume at the next marker */
			size_t from = pos++;
			while (pos + 1 < c->len && !(c->p[pos] == 0xFF && is_marker(c->p[pos + 1])))
				pos++;
			if (pos + 1 >= c->len)
				return;
			s->skipped += pos - from;
			continue;
		}
		mk = c->p[pos + 1];
		pos += 2;
		if (mk == 0xD8 || mk == 0x01 || (mk >= 0xD0 && mk <= 0xD7))
			continue; /* no length */
		if (mk == 0xDA && bc_be16(c, pos, &len) == 0 && len >= 2 && bc_has(c, pos, len))
			s->sos_end = pos + len;
		if (mk == 0xD9 || mk == 0xDA || bc_be16(c, pos, &len) || len < 2)
			return; /* end of image, start of scan, or damage */
		body = pos + 2;
		avail = c->len - body < (size_t)len - 2 ? c->len - body : (size_t)len - 2;
		if (is_sof(mk) && !s->have_sof && avail >= 5) {
			bc_be16(c, body + 1, &s->sof_h);
			bc_be16(c, body + 3, &s->sof_w);
			s->have_sof = 1;
		} else if (mk == 0xE1 && s->nexif < JPG_MAX_EXIF && bc_is(c, body, "Exif\0\0", 6) &&
			   avail > 6) {
			/* an Exif segment right after another that does not open
			 * with a TIFF header continues it (a block over 64 KiB
			 * split as exiftool joins it again) */
			s->exif_cont[s->nexif] = s->last_exif && !bc_is(c, body + 6, "MM\0*", 4) &&
						 !bc_is(c, body + 6, "II*\0", 4);
			s->exif_at[s->nexif] = body + 6;
			s->exif_len[s->nexif++] = avail - 6;
			s->exif_cut |= avail < (size_t)len - 2;
			pos += len;
			s->last_exif = 1;
			continue;
		} else if (mk == 0xE1 && avail > sizeof(XMP_JPEG_SIG) &&
			   bc_is(c, body, XMP_JPEG_SIG, sizeof(XMP_JPEG_SIG))) {
			/* the standard packet (the last one, when a broken writer
			 * left two: exiftool's choice); Extended XMP (its own
			 * signature) is not read (docs/extraction.md) */
			s->xmp_at = body + sizeof(XMP_JPEG_SIG);
			s->xmp_len = avail - sizeof(XMP_JPEG_SIG);
			s->have_xmp = 1;
		} else if (mk == 0xED && s->npsir < JPG_MAX_APP13 && avail > sizeof(IPTC_JPEG_SIG) &&
			   bc_is(c, body, IPTC_JPEG_SIG, sizeof(IPTC_JPEG_SIG))) {
			s->psir_at[s->npsir] = body + sizeof(IPTC_JPEG_SIG);
			s->psir_len[s->npsir] = avail - sizeof(IPTC_JPEG_SIG);
			s->npsir++;
		} else if (mk == 0xE2 && !s->have_mpf && bc_is(c, body, "MPF\0", 4) && avail > 4) {
			s->mpf_at = body + 4;
			s->mpf_len = avail - 4;
			s->have_mpf = 1;
		}
		pos += len;
		s->last_exif = 0;
	}
}

/* MPO: the MP index lists a further image that is really in the file
 * (exiftool agrees: an index pointing past the end leaves a plain JPEG). */
static int is_mpo(const struct bc *c, const struct segments *s)
{
	struct bc t;
	uint32_t ifd, nimages = 0, entries_off = 0, entries_len = 0, i;
	uint16_t count;

	if (!s->have_mpf || bc_sub(c, s->mpf_at, s->mpf_len, &t) != 0)
		return 0;
	if (bc_is(&t, 0, "MM", 2))
		t.be = 1;
	else if (bc_is(&t, 0, "II", 2))
		t.be = 0;
	else
		return 0;
	if (bc_u32(&t, 4, &ifd) || bc_u16(&t, ifd, &count))
		return 0;
	for (i = 0; i < count && i < 64; i++) {
		size_t e = (size_t)ifd + 2 + 12u * i;
		uint16_t tag;
		uint32_t n, v;
		if (bc_u16(&t, e, &tag) || bc_u32(&t, e + 4, &n) || bc_u32(&t, e + 8, &v))
			return 0;
		if (tag == 0xB001)
			nimages = v;
		else if (tag == 0xB002)
			entries_off = v, entries_len = n;
	}
	if (nimages < 2 || entries_len < 32)
		return 0;
	for (i = 1; i < nimages && i < entries_len / 16; i++) {
		uint32_t size, off;
		if (bc_u32(&t, (size_t)entries_off + 16u * i + 4, &size) ||
		    bc_u32(&t, (size_t)entries_off + 16u * i + 8, &off))
			return 0;
		/* offsets count from the MPF TIFF header */
		if (off && bc_is(c, s->mpf_at + off, "\xff\xd8", 2))
			return 1;
	}
	return 0;
}

/* ---- libjpeg ------------------------------------------------------------- */

struct jerr {
	struct jpeg_error_mgr pub;
	jmp_buf jump;
	int warnings;
	int data_ended; /* libjpeg ran out of bytes and pads with zeros */
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
	if (cinfo->err->msg_code == JWRN_JPEG_EOF || cinfo->err->msg_code == JWRN_HIT_MARKER)
		j->data_ended = 1;
	if (j->warnings++ == 0)
		cinfo->err->format_message(cinfo, j->first_warning);
}

/* A decompressor and its error manager.  It lives in the frame of the
 * caller of the function that calls setjmp, as in libjpeg's example.c: the
 * objects a longjmp comes back to are then not locals of the setjmp frame,
 * whose values C leaves indeterminate. */
struct jctx {
	struct jpeg_decompress_struct ci;
	struct jerr je;
	const uint8_t *p;
	size_t n;
};

/* Nothing here can raise an error: jpeg_mem_src may (an empty buffer), so
 * it waits for the functions that set the jump. */
static void jctx_init(struct jctx *x, const uint8_t *p, size_t n, long max_memory)
{
	memset(x, 0, sizeof(*x));
	x->ci.err = jpeg_std_error(&x->je.pub);
	x->je.pub.error_exit = on_error;
	x->je.pub.emit_message = on_message;
	jpeg_create_decompress(&x->ci);
	x->ci.mem->max_memory_to_use = max_memory;
	x->p = p;
	x->n = n;
}

static int read_header(struct jctx *x)
{
	if (setjmp(x->je.jump))
		return -1;
	jpeg_mem_src(&x->ci, x->p, (unsigned long)x->n);
	jpeg_read_header(&x->ci, TRUE);
	return 0;
}

/* Read the header with libjpeg.  Returns 0 when it is a decodable JPEG;
 * otherwise -1 with the reason in why.  w, h and have get the frame size
 * whenever libjpeg got as far as the frame header. */
static int libjpeg_header(const uint8_t *p, size_t n, uint32_t *w, uint32_t *h, int *have,
			  char *why, size_t cap, char *warn, size_t wcap)
{
	struct jctx x;
	int rc;

	*have = 0;
	why[0] = 0;
	jctx_init(&x, p, n, 64L << 20);
	rc = read_header(&x);
	if (rc != 0)
		x.ci.err->format_message((j_common_ptr)&x.ci, why);
	if (rc == 0 || x.ci.image_width || x.ci.image_height) {
		*w = x.ci.image_width;
		*h = x.ci.image_height;
		*have = 1;
	}
	if (rc == 0 && x.je.warnings)
		snprintf(warn, wcap, "%s", x.je.first_warning);
	jpeg_destroy_decompress(&x.ci);
	(void)cap;
	return rc;
}

/* The Exif blocks, in file order: a later one's values replace an
 * earlier one's, but for the thumbnail IFD's, as exiftool reads them
 * (exif.h); the Exif size follows the same rule.  The thumbnail is that
 * of the first block that has one, and whether it is the camera's own
 * (pics.original: ModifyDate is DateTimeOriginal) is judged from that
 * same block.  A block continued in the segments after it is joined first
 * (in memory of its own: the parts are not adjacent in the file), and its
 * thumbnail counts only when it lies in the first part, where its file
 * offset is known. */
static void exif_segments(const uint8_t *p, const struct segments *s, struct x_meta *m)
{
	int i, j, blocks = 0;

	if (s->exif_cut)
		x_warn(m, "Exif segment truncated");
	for (i = 0; i < s->nexif; i = j) {
		struct exif_info in;
		const uint8_t *block = p + s->exif_at[i];
		size_t len = s->exif_len[i];
		uint8_t *joined = NULL;

		for (j = i + 1; j < s->nexif && s->exif_cont[j]; j++)
			len += s->exif_len[j];
		if (j > i + 1 && (joined = malloc(len)) == NULL) {
			x_warn(m, "out of memory joining an Exif block split over %d segments", j - i);
			len = s->exif_len[i];
		} else if (joined) {
			size_t at = 0;
			int k;
			for (k = i; k < j; k++) {
				memcpy(joined + at, p + s->exif_at[k], s->exif_len[k]);
				at += s->exif_len[k];
			}
			block = joined;
		}
		blocks++;
		if (exif_parse(block, len, EXIF_IFD1_LOW, m, &in) == SL_OK) {
			if (in.exif_w || in.exif_h) {
				m->pics.exif_w = in.exif_w;
				m->pics.exif_h = in.exif_h;
			}
			if (!m->pics.thumb_len && in.thumb_off && in.thumb_len &&
			    in.thumb_off < s->exif_len[i] && in.thumb_len <= s->exif_len[i] - in.thumb_off) {
				m->pics.thumb_off = s->exif_at[i] + in.thumb_off;
				m->pics.thumb_len = in.thumb_len;
				m->pics.original = in.modified[0] && strcmp(in.modified, in.taken) == 0;
			}
		}
		free(joined);
	}
	if (blocks > 1)
		x_warn(m, "%d Exif blocks: a later one's values win, as exiftool reads them", blocks);
}

/* The APP13 segments' Photoshop resources, joined when there are several
 * (as exiftool joins them: a resource may straddle two segments). */
static void photoshop(const uint8_t *p, const struct segments *s, struct x_meta *m)
{
	uint8_t *joined;
	size_t total = 0, o = 0;
	int i;

	if (s->npsir == 1)
		iptc_psir(p + s->psir_at[0], s->psir_len[0], m);
	if (s->npsir <= 1)
		return;
	for (i = 0; i < s->npsir; i++)
		total += s->psir_len[i];
	if (!(joined = malloc(total))) {
		m->desc_oom = 1;
		return;
	}
	for (i = 0; i < s->npsir; i++) {
		memcpy(joined + o, p + s->psir_at[i], s->psir_len[i]);
		o += s->psir_len[i];
	}
	iptc_psir(joined, total, m);
	free(joined);
}

/* AXS File Concatenation Protocol: a trailer after the image (12 bytes at
 * the very end: "AXS!" big-endian or "AXS*" little-endian, then where the
 * AFCP header starts), whose directory of 12-byte entries (tag, size,
 * offset from the file's start) may hold IPTC ("IPTC").  Only read when
 * the whole file is held. */
static void afcp(const struct bc *file, struct x_meta *m)
{
	struct bc c = *file;
	size_t n = c.len, i;
	uint32_t start, size, off;
	uint16_t count;

	if (n < 24 || !bc_is(&c, n - 12, "AXS", 3) || (c.p[n - 9] != '!' && c.p[n - 9] != '*'))
		return;
	c.be = c.p[n - 9] == '!';
	if (bc_u32(&c, n - 8, &start) || !bc_is(&c, start, c.p + n - 12, 4) ||
	    bc_u16(&c, (size_t)start + 6, &count)) {
		x_warn(m, "jpeg: AFCP trailer without its header");
		return;
	}
	for (i = 0; i < count && i < 64; i++) {
		size_t e = (size_t)start + 12 + 12 * i;
		if (bc_u32(&c, e + 4, &size) || bc_u32(&c, e + 8, &off))
			return;
		if (bc_is(&c, e, "IPTC", 4) && bc_has(&c, off, size)) {
			iptc_parse(c.p + off, size, m);
			return;
		}
	}
}

int jpg_parse(const uint8_t *p, size_t n, struct x_meta *m, struct sl_err *err)
{
	struct bc c = bc_make(p, n, 1);
	struct segments s;
	char why[JMSG_LENGTH_MAX] = "", warn[JMSG_LENGTH_MAX] = "";
	uint32_t w = 0, h = 0;
	int exv = bc_is(&c, 0, "\xff\x01" "Exiv2", 7), have = 0, ok;

	walk(&c, exv ? 7 : 2, &s);
	if (s.skipped)
		x_warn(m, "jpeg: skipped %zu bytes between segments", s.skipped);
	if (s.nexif)
		exif_segments(p, &s, m);
	if (s.have_xmp)
		xmp_parse(p + s.xmp_at, s.xmp_len, m, DS_XMP);
	photoshop(p, &s, m);
	if (m->pics.whole)
		afcp(&c, m);
	if (exv) {
		/* Exiv2's metadata sidecar: markers only, no image */
		snprintf(m->format, sizeof(m->format), "exv");
		return SL_OK;
	}
	if (is_mpo(&c, &s))
		snprintf(m->format, sizeof(m->format), "mpo");
	ok = libjpeg_header(p, n, &w, &h, &have, why, sizeof(why), warn, sizeof(warn)) == 0;
	if (!have && s.have_sof) {
		w = s.sof_w;
		h = s.sof_h;
		have = 1;
	}
	if (have) {
		m->width = w;
		m->height = h;
		m->have |= XM_DIMS;
	}
	if (warn[0])
		x_warn(m, "jpeg: %s", warn);
	/* Everything read above lies before the first scan, which libjpeg's
	 * header read stops at too; a margin past its header for libjpeg's
	 * look-ahead.  What lies after it: a second picture of a multi-picture
	 * file (is_mpo looks for it), and the end (jpg_quick_ok). */
	m->pics.head_done = ok && s.sos_end && s.sos_end + 4096 <= n && !s.have_mpf;
	if (!ok) {
		if (!have)
			return SL_FAIL(err, SL_E_CORRUPT, 0, "jpeg: %s", why);
		x_warn(m, "jpeg: %s", why);
	}
	return SL_OK;
}


int jpg_quick_ok(const struct x_meta *m, const uint8_t *tail, size_t tn)
{
	/* jpg_check_end's common case, silent; a file ending otherwise (an
	 * AFCP trailer, appended data, a cut) is read whole to be judged */
	return m->pics.head_done && !(m->have & XM_EMBEDDED) && tn >= 12 &&
	       tail[tn - 2] == 0xFF && tail[tn - 1] == 0xD9 &&
	       !(memcmp(tail + tn - 12, "AXS", 3) == 0 &&
		 (tail[tn - 9] == '!' || tail[tn - 9] == '*'));
}

void jpg_check_end(const uint8_t *p, size_t n, struct x_meta *m)
{
	size_t pos = 2;
	int scans = 0;

	/* markers up to the first scan, then through the entropy-coded data:
	 * a 0xFF there is stuffing (FF 00), a restart marker or fill, else
	 * the next marker (tables and scans of a progressive image) */
	while (pos + 1 < n) {
		const uint8_t *q;
		uint8_t mk;
		uint16_t len;

		if (scans) {
			q = memchr(p + pos, 0xFF, n - pos);
			if (!q)
				break;
			pos = (size_t)(q - p);
			if (pos + 1 >= n)
				break;
		} else if (p[pos] != 0xFF) {
			return; /* damage before the scan: jpg_parse has said so */
		}
		mk = p[pos + 1];
		if (mk == 0xFF) {
			pos++;
			continue;
		}
		if (mk == 0x00 || (mk >= 0xD0 && mk <= 0xD7) || mk == 0x01) {
			pos += 2;
			continue;
		}
		if (mk == 0xD9)
			return; /* the end of the image */
		if (pos + 4 > n)
			break;
		len = (uint16_t)(p[pos + 2] << 8 | p[pos + 3]);
		if (len < 2)
			return; /* damage: not ours to judge here */
		pos += 2 + (size_t)len;
		if (mk == 0xDA && !scans++ && pos + 2 <= n && p[n - 2] == 0xFF && p[n - 1] == 0xD9)
			return; /* the common case: the file ends with the end marker,
				   which the entropy-coded data cannot hold; a memchr
				   through it cost a fifth of a warm scan */
	}
	if (scans)
		x_warn(m, "jpeg: the image data ends before its end marker (a truncated file?)");
}

/* ---- perceptual hash ------------------------------------------------------ */

/* A decode to grey for the hash (phash.h).  The output scale is the
 * smallest of 1/8, 1/4, 1/2, 1/1 whose shorter side has min_side pixels
 * (libjpeg computes less the smaller it goes: at 1/8 only each block's DC
 * term, no inverse DCT); with keep the rows are kept in buf (allocated here,
 * w * rows bytes, at most keep_max; the caller frees it), else reduced into
 * grid. */
struct jgrey {
	uint32_t min_side;
	int dc_scan;         /* progressive: the first scan holding the grey DC terms
				is enough at 1/8 (the rest refines what 1/8 drops) */
	uint32_t max_rows;   /* stop after so many output rows (0: all) */
	int keep;
	size_t keep_max;
	uint8_t *buf;        /* out, with keep */
	uint8_t *row;        /* scratch: one output row (freed by jpg_grey) */
	struct ph_grid *grid;
	uint32_t w, h;       /* out: the output size */
	uint32_t frame_w, frame_h;
	int dc_only;         /* out: decoded from the first scan only */
	int strict;          /* the bytes are a head, not the file: running out
				of them fails (a picture padded with grey is
				not this file's) */
	char why[JMSG_LENGTH_MAX];
	int code;            /* SL_E_ of a failure */
};

/* The scale denominator (8, 4, 2 or 1) a w x h frame is decoded at. */
static unsigned scale_for(uint32_t w, uint32_t h, uint32_t min_side)
{
	uint32_t shorter = w < h ? w : h;
	unsigned denom = 8;
	while (denom > 1 && shorter / denom < min_side)
		denom /= 2;
	return denom;
}

static int fail_grey(struct jgrey *d, int code, const char *fmt, ...) SL_PRINTF(3, 4);
static int fail_grey(struct jgrey *d, int code, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(d->why, sizeof(d->why), fmt, ap);
	va_end(ap);
	d->code = code;
	return -1;
}

/* grey_run's rows from jdc_grey: 1 done, 0 not taken (libjpeg's turn),
 * -1 failed (d says why). */
static int dc_plane(const struct jctx *x, struct jgrey *d)
{
	struct sl_err e;
	uint8_t *plane;
	uint32_t y, rows;
	int rc = jdc_grey(x->p, x->n, d->max_rows, &plane, &d->w, &d->h, &e);

	if (rc == SL_E_UNSUPPORTED)
		return 0;
	if (rc != SL_OK)
		return fail_grey(d, rc, "%s", e.msg);
	rows = d->max_rows && d->max_rows < d->h ? d->max_rows : d->h;
	if (d->keep) {
		if ((size_t)d->w * rows > d->keep_max) {
			free(plane);
			return fail_grey(d, SL_E_UNSUPPORTED, "%ux%u: too big to keep", d->w, d->h);
		}
		d->buf = plane; /* its first rows are the ones asked for */
		return 1;
	}
	if (d->grid) {
		ph_grid_init(d->grid, d->w, d->h);
		for (y = 0; y < rows; y++)
			ph_grid_row(d->grid, y, plane + (size_t)y * d->w);
	}
	free(plane);
	return 1;
}

static int grey_run(struct jctx *x, struct jgrey *d, size_t n)
{
	size_t kept;
	struct jpeg_decompress_struct *ci = &x->ci;
	unsigned denom, y;
	uint64_t blocks;

	if (setjmp(x->je.jump)) {
		ci->err->format_message((j_common_ptr)ci, d->why);
		d->code = ci->err->msg_code == JERR_OUT_OF_MEMORY ? SL_E_NOMEM : SL_E_CORRUPT;
		return -1;
	}
	jpeg_mem_src(ci, x->p, (unsigned long)x->n);
	jpeg_read_header(ci, TRUE);
	d->frame_w = ci->image_width;
	d->frame_h = ci->image_height;
	if (ci->jpeg_color_space == JCS_CMYK || ci->jpeg_color_space == JCS_YCCK)
		return fail_grey(d, SL_E_UNSUPPORTED, "CMYK JPEG");
	/* Decoding costs per 8x8 block, and a Huffman-coded block takes at
	 * least two bits (a DC and an end-of-block code): more than 8 blocks a
	 * byte is no picture, only a small file declaring a huge frame (1 kB
	 * claiming 65000 x 65000 cost 0.6 s).  Arithmetic coding can go below
	 * a bit a block; it gets 64 a byte. */
	blocks = (uint64_t)((ci->image_width + 7) / 8) * ((ci->image_height + 7) / 8);
	if (blocks > (ci->arith_code ? 64u : 8u) * (uint64_t)n + 4096)
		return fail_grey(d, SL_E_CORRUPT, "a %ux%u frame cannot fit in %zu bytes",
				 ci->image_width, ci->image_height, n);
	denom = scale_for(ci->image_width, ci->image_height, d->min_side);
	ci->scale_num = 1;
	ci->scale_denom = denom;
	ci->out_color_space = JCS_GRAYSCALE;
	ci->dct_method = JDCT_IFAST;
	ci->do_fancy_upsampling = FALSE;
	ci->do_block_smoothing = FALSE;
	d->dc_only = d->dc_scan && ci->progressive_mode && denom == 8;
	/* At 1/8 a block is its DC term: read alone (jpeg_dc.h), without
	 * libjpeg's whole-frame coefficient buffers for a progressive file
	 * (its first DC scan, when that is enough), without dequantising and
	 * transforming a sequential file's AC terms; what it does not take,
	 * libjpeg decodes as ever */
	if (denom == 8 && (d->dc_only || !ci->progressive_mode) &&
	    (ci->jpeg_color_space == JCS_YCbCr || ci->jpeg_color_space == JCS_GRAYSCALE))
		switch (dc_plane(x, d)) {
		case 1: return 0;
		case 0: break;
		default: return -1;
		}
	ci->buffered_image = d->dc_only ? TRUE : FALSE;
	jpeg_start_decompress(ci);
	if (d->dc_only) {
		/* absorb scans until the grey component's DC terms are in */
		for (;;) {
			int r = jpeg_consume_input(ci);
			if (r == JPEG_REACHED_EOI || r == JPEG_SUSPENDED)
				break;
			if (r == JPEG_SCAN_COMPLETED && ci->coef_bits && ci->coef_bits[0][0] >= 0)
				break;
		}
		if (d->strict && x->je.data_ended)
			return fail_grey(d, SL_E_UNSUPPORTED, "the first scan goes past the bytes read");
		jpeg_start_output(ci, ci->input_scan_number);
	}
	d->w = ci->output_width;
	d->h = ci->output_height;
	if (!d->w || !d->h)
		return fail_grey(d, SL_E_CORRUPT, "empty image");
	/* allocated once the size is known; kept in d, which outlives a
	 * longjmp out of here */
	kept = (size_t)d->w * (d->max_rows && d->max_rows < d->h ? d->max_rows : d->h);
	if (d->keep && kept > d->keep_max)
		return fail_grey(d, SL_E_UNSUPPORTED, "%ux%u: too big to keep", d->w, d->h);
	if (d->keep ? !(d->buf = malloc(kept)) : !(d->row = malloc(d->w)))
		return fail_grey(d, SL_E_NOMEM, "out of memory");
	if (d->grid)
		ph_grid_init(d->grid, d->w, d->h);
	while (ci->output_scanline < d->h && (!d->max_rows || ci->output_scanline < d->max_rows)) {
		JSAMPROW r = d->keep ? d->buf + (size_t)ci->output_scanline * d->w : d->row;
		y = ci->output_scanline;
		jpeg_read_scanlines(ci, &r, 1);
		/* A sequential image whose data ends early decodes as grey from
		 * there on: its hash would say "grey", and any two such files
		 * would look alike.  (A progressive one that ends early still has
		 * its whole picture at lower quality: that hash is kept.)  The
		 * last rows are spared, since libjpeg reads a little ahead. */
		if (x->je.data_ended && !ci->progressive_mode &&
		    ci->output_scanline < d->h - d->h / 32)
			return fail_grey(d, SL_E_CORRUPT, "the data ends at row %u of %u",
					 ci->output_scanline, d->h);
		if (d->strict && x->je.data_ended)
			return fail_grey(d, SL_E_UNSUPPORTED, "row %u goes past the bytes read",
					 ci->output_scanline);
		if (d->grid)
			ph_grid_row(d->grid, y, r);
	}
	return 0;
}

static int jpg_grey(const uint8_t *p, size_t n, struct jgrey *d)
{
	struct jctx x;
	int rc;

	d->why[0] = 0;
	d->code = SL_OK;
	d->w = d->h = 0;
	/* A progressive image is decoded through coefficient buffers for the
	 * whole frame, 128 bytes a block: 72 MB for 24 MP at 4:2:0.  256 MB
	 * covers about 90 MP; the blocks-per-byte check keeps a small hostile
	 * file from asking for it. */
	d->buf = d->row = NULL;
	jctx_init(&x, p, n, 256L << 20);
	rc = grey_run(&x, d, n);
	jpeg_destroy_decompress(&x.ci); /* also ends a decode stopped early */
	free(d->row);
	d->row = NULL;
	if (rc != 0) {
		free(d->buf);
		d->buf = NULL;
	}
	return rc;
}

/* Whether the thumbnail's picture has the main image's shape: aspect
 * ratios within 4%, stored orientation (the thumbnail is stored as the main
 * image is). */
static int same_shape(uint32_t tw, uint32_t th, uint32_t w, uint32_t h)
{
	double a, b;
	if (!tw || !th || !w || !h)
		return 0;
	a = (double)tw / th;
	b = (double)w / h;
	return fabs(log(a / b)) < 0.04;
}

/* Mean of img's columns [x0, x1) over rows [y0, y1), in k bins across. */
static void band(const uint8_t *img, uint32_t stride, uint32_t x0, uint32_t x1, uint32_t y0,
		 uint32_t y1, int k, double *out)
{
	int b;
	for (b = 0; b < k; b++) {
		uint32_t a = x0 + (uint32_t)((uint64_t)(x1 - x0) * b / k);
		uint32_t e = x0 + (uint32_t)((uint64_t)(x1 - x0) * (b + 1) / k);
		double sum = 0;
		uint32_t x, y, cnt = 0;
		if (e <= a)
			e = a + 1;
		for (y = y0; y < y1; y++)
			for (x = a; x < e; x++, cnt++)
				sum += img[(size_t)y * stride + x];
		out[b] = cnt ? sum / cnt : 0;
	}
}

#define THUMB_MAX (640u * 640u) /* an "EXIF thumbnail" bigger than this is no thumbnail */
#define BAND_BINS 8

/* The hash of the file's EXIF thumbnail, when it shows the picture the
 * file holds: 1 when *out is set, 0 when the thumbnail cannot stand in, -1
 * when memory ran out (then the whole image must not stand in either: the
 * file's hash would depend on the memory of the scan that read it).  Editors that change the pixels and keep
 * the old EXIF leave a stale thumbnail; three checks, each costing next to
 * nothing beside a full decode, keep one from standing in:
 *   - the Exif PixelX/YDimension, which cameras write, must be the frame's
 *     size, or its shape: a resize keeps the picture (then the top rows
 *     are always compared), a crop or a lossless rotation does not;
 *   - the thumbnail, without the black bars a camera puts round a 3:2
 *     picture in its 4:3 thumbnail, must have the frame's aspect;
 *   - its top rows must look like the top of the main image, decoded at
 *     1/8 for just as many rows (a different picture, a global edit).
 * An edit small enough to pass all three changes a perceptual hash little
 * anyway. */
static int thumb_hash(const uint8_t *p, size_t n, const struct x_meta *m, int orientation,
		      int strict, uint64_t *out)
{
	struct jgrey t, s;
	uint8_t *img = NULL, *strip = NULL;
	uint32_t top, bottom, left, right, cw, ch, rows;
	unsigned denom;
	double a[BAND_BINS], b[BAND_BINS], mad = 0;
	int i, ok = 0, resized;

	if (!m->pics.thumb_len || m->pics.thumb_off >= n || m->pics.thumb_len > n - m->pics.thumb_off ||
	    !(m->have & XM_DIMS) || !m->width || !m->height)
		return 0;
	/* EXIF's size not the frame's: the file was cropped, resized or
	 * turned since the camera wrote it.  A resize keeps the aspect, and
	 * its thumbnail still shows the picture; the top rows then decide
	 * (below), whatever the dates say.  Anything else: not the same. */
	resized = m->pics.exif_w && m->pics.exif_h &&
		  (m->pics.exif_w != m->width || m->pics.exif_h != m->height);
	if (resized && !same_shape(m->pics.exif_w, m->pics.exif_h, m->width, m->height))
		return 0;
	memset(&t, 0, sizeof(t));
	t.min_side = 48; /* 80x60 of a 160x120 thumbnail: enough for the grid and its bars */
	t.keep = 1;
	t.keep_max = THUMB_MAX;
	if (jpg_grey(p + m->pics.thumb_off, (size_t)m->pics.thumb_len, &t) != 0) {
		ok = t.code == SL_E_NOMEM ? -1 : 0;
		goto out;
	}
	img = t.buf;
	if (t.w < 32 || t.h < 24)
		goto out;
	ph_bars(img, t.w, t.h, &top, &bottom, &left, &right);
	cw = t.w - left - right;
	ch = t.h - top - bottom;
	if (!same_shape(cw, ch, m->width, m->height)) {
		top = bottom = left = right = 0; /* a dark picture, not a letterbox? */
		cw = t.w;
		ch = t.h;
		if (!same_shape(cw, ch, m->width, m->height))
			goto out;
	}
	/* the top two rows of the thumbnail's picture against as much of the
	 * main image, unless the file is as the camera wrote it: then the
	 * thumbnail is the camera's own, of this picture (and this check, a
	 * second decoder set-up, would double the hash's cost) */
	if (m->pics.original && !resized)
		goto take;
	memset(&s, 0, sizeof(s));
	s.min_side = 64;
	/* a progressive file gives its first rows only after every scan:
	 * the DC scan alone, as for the hash */
	s.dc_scan = 1;
	denom = scale_for(m->width, m->height, s.min_side);
	rows = (uint32_t)(((uint64_t)(m->height + denom - 1) / denom * 2 + ch - 1) / ch) + 1;
	s.max_rows = rows;
	s.keep = 1;
	s.keep_max = ((size_t)m->width / denom + 8) * rows;
	s.strict = strict;
	if (jpg_grey(p, n, &s) != 0) {
		ok = s.code == SL_E_NOMEM ? -1 : 0;
		goto out;
	}
	strip = s.buf;
	if (s.w < BAND_BINS)
		goto out;
	rows = (uint32_t)(((uint64_t)s.h * 2 + ch / 2) / ch);
	if (rows < 1)
		rows = 1;
	band(img, t.w, left, t.w - right, top, top + 2, BAND_BINS, a);
	band(strip, s.w, 0, s.w, 0, rows, BAND_BINS, b);
	for (i = 0; i < BAND_BINS; i++)
		mad += fabs(a[i] - b[i]);
	if (mad / BAND_BINS > 24)
		goto out;
take:
	if (ph_hash_plane(img + (size_t)top * t.w + left, cw, ch, t.w, orientation, out) != 0)
		ok = -1;
	else
		ok = 1;
out:
	free(img);
	free(strip);
	return ok;
}

int jpg_phash(const uint8_t *p, size_t n, const struct x_meta *m, int orientation, uint64_t *out,
	      const char **src, struct sl_err *err)
{
	struct jgrey d;
	struct ph_grid *grid;
	int th;

	*out = 0;
	*src = NULL;
	th = m ? thumb_hash(p, n, m, orientation, 0, out) : 0;
	if (th < 0)
		return SL_FAIL(err, SL_E_NOMEM, 0, "phash: out of memory");
	if (th > 0) {
		*src = "exif-thumbnail";
		return SL_OK;
	}
	grid = malloc(sizeof(*grid));
	if (!grid)
		return SL_FAIL(err, SL_E_NOMEM, 0, "phash: out of memory");
	memset(&d, 0, sizeof(d));
	d.min_side = 64;
	d.dc_scan = 1;
	d.grid = grid;
	if (jpg_grey(p, n, &d) != 0) {
		free(grid);
		return SL_FAIL(err, d.code, 0, "phash: %s", d.why);
	}
	*out = ph_hash(grid, orientation);
	*src = d.dc_only ? "image-dc" : "image";
	free(grid);
	return SL_OK;
}

int jpg_phash_head(const uint8_t *p, size_t n, const struct x_meta *m, int orientation,
		   uint64_t *out, const char **src, struct sl_err *err)
{
	int th = thumb_hash(p, n, m, orientation, 1, out);

	*src = NULL;
	if (th < 0)
		return SL_FAIL(err, SL_E_NOMEM, 0, "phash: out of memory");
	if (th == 0)
		return SL_FAIL(err, SL_E_UNSUPPORTED, 0, "phash: no thumbnail the head shows is this "
							  "picture's");
	*src = "exif-thumbnail";
	return SL_OK;
}

/* --- pictures for people (jpegcodec.h): libjpeg as a plain decoder and
 * encoder, its errors caught here like the parser's */

struct codec_err {
	struct jpeg_error_mgr pub;
	jmp_buf jump;
};

static void codec_error(j_common_ptr cinfo)
{
	struct codec_err *t = (struct codec_err *)cinfo->err;
	longjmp(t->jump, 1);
}

/* Warnings (a file cut short is padded with grey) still give a picture:
 * that is what a viewer would show. */
static void codec_message(j_common_ptr cinfo, int level)
{
	(void)cinfo, (void)level;
}

/* Both codecs and what they allocate live in the caller's frame, not in
 * the one that calls setjmp, so that their values are defined after a
 * longjmp. */
struct codec {
	struct jpeg_decompress_struct d;
	struct jpeg_compress_struct c;
	struct codec_err de, ce;
	int have_d, have_c;
	unsigned char *rows;   /* decoded, RGB */
	unsigned char *enc;    /* jpeg_mem_dest's */
	unsigned long enc_len;
};

/* The largest denominator whose picture's longer side still covers box
 * (the parser's scale_for goes by the shorter side, for its hash). */
static unsigned codec_scale(unsigned w, unsigned h, unsigned box)
{
	unsigned side = w > h ? w : h, denom = 1;

	while (denom < 8 && side / (denom * 2) >= box)
		denom *= 2;
	return denom;
}

static int codec_decode(struct codec *t, const uint8_t *p, size_t n, unsigned box,
			uint64_t max_pixels, unsigned *w, unsigned *h, struct sl_err *err)
{
	t->d.err = jpeg_std_error(&t->de.pub);
	t->de.pub.error_exit = codec_error;
	t->de.pub.emit_message = codec_message;
	if (setjmp(t->de.jump))
		return SL_FAIL(err, SL_E_CORRUPT, 0, "picture: not a JPEG that can be decoded");
	jpeg_create_decompress(&t->d);
	t->have_d = 1;
	t->d.mem->max_memory_to_use = 64L << 20;
	jpeg_mem_src(&t->d, p, (unsigned long)n);
	jpeg_read_header(&t->d, TRUE);
	if ((uint64_t)t->d.image_width * t->d.image_height > max_pixels)
		return SL_FAIL(err, SL_E_UNSUPPORTED, 0, "picture: too big to decode (%ux%u)",
			       t->d.image_width, t->d.image_height);
	if (t->d.jpeg_color_space == JCS_CMYK || t->d.jpeg_color_space == JCS_YCCK)
		return SL_FAIL(err, SL_E_UNSUPPORTED, 0, "picture: CMYK");
	t->d.scale_num = 1;
	t->d.scale_denom = codec_scale(t->d.image_width, t->d.image_height, box);
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

static int codec_encode(struct codec *t, const unsigned char *img, unsigned w, unsigned h,
			int quality, struct sl_err *err)
{
	unsigned y;

	t->c.err = jpeg_std_error(&t->ce.pub);
	t->ce.pub.error_exit = codec_error;
	t->ce.pub.emit_message = codec_message;
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
	jpeg_set_quality(&t->c, quality, TRUE);
	jpeg_start_compress(&t->c, TRUE);
	for (y = 0; y < h; y++) {
		JSAMPROW row = (JSAMPROW)(img + (size_t)y * w * 3);
		jpeg_write_scanlines(&t->c, &row, 1);
	}
	jpeg_finish_compress(&t->c);
	return SL_OK;
}

int jpeg_decode_rgb(const uint8_t *p, size_t n, unsigned box, uint64_t max_pixels,
		    unsigned char **rgb, unsigned *w, unsigned *h, struct sl_err *err)
{
	struct codec t;
	int rc;

	memset(&t, 0, sizeof(t));
	*rgb = NULL;
	*w = *h = 0;
	rc = codec_decode(&t, p, n, box, max_pixels, w, h, err);
	if (t.have_d)
		jpeg_destroy_decompress(&t.d);
	if (rc == SL_OK)
		*rgb = t.rows;
	else
		free(t.rows);
	return rc;
}

int jpeg_encode_rgb(const unsigned char *rgb, unsigned w, unsigned h, int quality,
		    struct strbuf *out, struct sl_err *err)
{
	struct codec t;
	int rc;

	memset(&t, 0, sizeof(t));
	rc = codec_encode(&t, rgb, w, h, quality, err);
	if (rc == SL_OK && sb_add(out, t.enc, t.enc_len) != 0)
		rc = SL_FAIL(err, SL_E_NOMEM, 0, "picture: out of memory");
	if (t.have_c)
		jpeg_destroy_compress(&t.c);
	free(t.enc);
	return rc;
}
