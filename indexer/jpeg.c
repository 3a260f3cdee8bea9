/* jpeg.c - JPEG, MPO and Exiv2's EXV: markers, EXIF, frame size.
 *
 * Two readers look at every JPEG.  Our own marker walk (bounded cursor)
 * finds the segments: the first Exif APP1, the MPF APP2 and the frame
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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jpeglib.h>
#include <jerror.h>

#include "indexer/cursor.h"
#include "indexer/exif.h"
#include "indexer/extract.h"

/* ---- marker walk --------------------------------------------------------- */

struct segments {
	int have_sof;
	uint16_t sof_w, sof_h;
	size_t exif_at, exif_len; /* TIFF block after "Exif\0\0" */
	int have_exif, exif_cut;
	size_t mpf_at, mpf_len;   /* TIFF block after "MPF\0" */
	int have_mpf;
	size_t skipped;           /* bytes of garbage between segments */
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
		if (mk == 0xD9 || mk == 0xDA || bc_be16(c, pos, &len) || len < 2)
			return; /* end of image, start of scan, or damage */
		body = pos + 2;
		avail = c->len - body < (size_t)len - 2 ? c->len - body : (size_t)len - 2;
		if (is_sof(mk) && !s->have_sof && avail >= 5) {
			bc_be16(c, body + 1, &s->sof_h);
			bc_be16(c, body + 3, &s->sof_w);
			s->have_sof = 1;
		} else if (mk == 0xE1 && !s->have_exif && bc_is(c, body, "Exif\0\0", 6) && avail > 6) {
			s->exif_at = body + 6;
			s->exif_len = avail - 6;
			s->exif_cut = avail < (size_t)len - 2;
			s->have_exif = 1;
		} else if (mk == 0xE2 && !s->have_mpf && bc_is(c, body, "MPF\0", 4) && avail > 4) {
			s->mpf_at = body + 4;
			s->mpf_len = avail - 4;
			s->have_mpf = 1;
		}
		pos += len;
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

/* Read the header with libjpeg.  Returns 0 when it is a decodable JPEG;
 * otherwise -1 with the reason in why.  w, h and have get the frame size
 * whenever libjpeg got as far as the frame header. */
static int libjpeg_header(const uint8_t *p, size_t n, uint32_t *w, uint32_t *h, int *have,
			  char *why, size_t cap, char *warn, size_t wcap)
{
	struct jpeg_decompress_struct ci;
	struct jerr je;

	memset(&ci, 0, sizeof(ci));
	memset(&je, 0, sizeof(je));
	*have = 0;
	ci.err = jpeg_std_error(&je.pub);
	je.pub.error_exit = on_error;
	je.pub.emit_message = on_message;
	if (setjmp(je.jump)) {
		ci.err->format_message((j_common_ptr)&ci, why);
		if (ci.image_width || ci.image_height) {
			*w = ci.image_width;
			*h = ci.image_height;
			*have = 1;
		}
		jpeg_destroy_decompress(&ci);
		return -1;
	}
	jpeg_create_decompress(&ci);
	ci.mem->max_memory_to_use = 64L << 20;
	jpeg_mem_src(&ci, p, (unsigned long)n);
	jpeg_read_header(&ci, TRUE);
	*w = ci.image_width;
	*h = ci.image_height;
	*have = 1;
	if (je.warnings)
		snprintf(warn, wcap, "%s", je.first_warning);
	jpeg_destroy_decompress(&ci);
	(void)cap;
	return 0;
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
	if (s.have_exif) {
		if (s.exif_cut)
			x_warn(m, "Exif segment truncated");
		exif_parse(p + s.exif_at, s.exif_len, 0, m, NULL);
	}
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
	if (!ok) {
		if (!have)
			return SL_FAIL(err, SL_E_CORRUPT, 0, "jpeg: %s", why);
		x_warn(m, "jpeg: %s", why);
	}
	return SL_OK;
}

/* ---- perceptual hash ------------------------------------------------------ */

#define PH 32 /* the hash looks at a 32 x 32 thumbnail */

/* The displayed image from the stored one, for each EXIF orientation. */
static float oriented(const float *s, int o, int x, int y)
{
	const int n = PH - 1;
	switch (o) {
	case 2: return s[y * PH + (n - x)];
	case 3: return s[(n - y) * PH + (n - x)];
	case 4: return s[(n - y) * PH + x];
	case 5: return s[x * PH + y];
	case 6: return s[(n - x) * PH + y];
	case 7: return s[(n - x) * PH + (n - y)];
	case 8: return s[x * PH + (n - y)];
	default: return s[y * PH + x];
	}
}

static int cmp_float(const void *a, const void *b)
{
	float x = *(const float *)a, y = *(const float *)b;
	return (x > y) - (x < y);
}

/* pHash of a grey thumbnail: DCT-II, the 8x8 lowest frequencies against
 * their median. */
static uint64_t dct_hash(const float *img)
{
	float cosines[8][PH], rows[PH][8], coef[64], sorted[64], median;
	uint64_t h = 0;
	int u, v, x, y;

	/* 256 cosines per image: microseconds beside the decode, and no state
	 * shared between extractor threads */
	for (u = 0; u < 8; u++)
		for (x = 0; x < PH; x++)
			cosines[u][x] = (float)cos((2 * x + 1) * u * 3.14159265358979 / (2 * PH));
	for (y = 0; y < PH; y++)
		for (u = 0; u < 8; u++) {
			float s = 0;
			for (x = 0; x < PH; x++)
				s += img[y * PH + x] * cosines[u][x];
			rows[y][u] = s;
		}
	for (v = 0; v < 8; v++)
		for (u = 0; u < 8; u++) {
			float s = 0;
			for (y = 0; y < PH; y++)
				s += rows[y][u] * cosines[v][y];
			coef[v * 8 + u] = s;
		}
	memcpy(sorted, coef + 1, 63 * sizeof(float)); /* the DC term sets no level */
	qsort(sorted, 63, sizeof(float), cmp_float);
	median = sorted[31];
	for (u = 0; u < 64; u++)
		if (coef[u] > median)
			h |= (uint64_t)1 << u;
	return h;
}

int jpg_phash(const uint8_t *p, size_t n, int orientation, uint64_t *out, struct sl_err *err)
{
	struct jpeg_decompress_struct ci;
	struct jerr je;
	float stored[PH * PH], shown[PH * PH];
	double *sum = NULL;
	unsigned *cnt = NULL;
	JSAMPLE *volatile row = NULL;
	volatile int rc = SL_OK;
	unsigned w, h, x, y;
	uint64_t blocks;

	*out = 0;
	memset(&ci, 0, sizeof(ci));
	memset(&je, 0, sizeof(je));
	ci.err = jpeg_std_error(&je.pub);
	je.pub.error_exit = on_error;
	je.pub.emit_message = on_message;
	sum = calloc(PH * PH, sizeof(*sum));
	cnt = calloc(PH * PH, sizeof(*cnt));
	if (!sum || !cnt) {
		free(sum);
		free(cnt);
		return SL_FAIL(err, SL_E_NOMEM, 0, "phash: out of memory");
	}
	if (setjmp(je.jump)) {
		char msg[JMSG_LENGTH_MAX];
		ci.err->format_message((j_common_ptr)&ci, msg);
		rc = SL_FAIL(err, ci.err->msg_code == JERR_OUT_OF_MEMORY ? SL_E_NOMEM : SL_E_CORRUPT, 0,
			     "phash: %s", msg);
		goto out;
	}
	jpeg_create_decompress(&ci);
	/* A progressive image is decoded through coefficient buffers for the
	 * whole frame, 128 bytes a block: 72 MB for 24 MP at 4:2:0.  256 MB
	 * covers about 90 MP; the blocks-per-byte check below keeps a small
	 * hostile file from asking for it. */
	ci.mem->max_memory_to_use = 256L << 20;
	jpeg_mem_src(&ci, p, (unsigned long)n);
	jpeg_read_header(&ci, TRUE);
	if (ci.jpeg_color_space == JCS_CMYK || ci.jpeg_color_space == JCS_YCCK) {
		rc = SL_FAIL(err, SL_E_UNSUPPORTED, 0, "phash: CMYK JPEG");
		goto out;
	}
	/* Decoding costs per 8x8 block, and a Huffman-coded block takes at
	 * least two bits (a DC and an end-of-block code): more than 8 blocks a
	 * byte is no picture, only a small file declaring a huge frame (1 kB
	 * claiming 65000 x 65000 cost 0.6 s).  Arithmetic coding can go below
	 * a bit a block; it gets 64 a byte. */
	blocks = (uint64_t)((ci.image_width + 7) / 8) * ((ci.image_height + 7) / 8);
	if (blocks > (ci.arith_code ? 64u : 8u) * (uint64_t)n + 4096) {
		rc = SL_FAIL(err, SL_E_CORRUPT, 0, "phash: a %ux%u frame cannot fit in %zu bytes",
			     ci.image_width, ci.image_height, n);
		goto out;
	}
	/* 1/8 scale: libjpeg keeps only each block's DC term, no inverse DCT */
	ci.scale_num = 1;
	ci.scale_denom = 8;
	ci.out_color_space = JCS_GRAYSCALE;
	ci.dct_method = JDCT_IFAST;
	ci.do_fancy_upsampling = FALSE;
	ci.do_block_smoothing = FALSE;
	jpeg_start_decompress(&ci);
	w = ci.output_width;
	h = ci.output_height;
	if (!w || !h) {
		rc = SL_FAIL(err, SL_E_CORRUPT, 0, "phash: empty image");
		goto out;
	}
	row = malloc(w);
	if (!row) {
		rc = SL_FAIL(err, SL_E_NOMEM, 0, "phash: out of memory");
		goto out;
	}
	while (ci.output_scanline < h) {
		JSAMPROW r = row;
		unsigned cy;
		y = ci.output_scanline;
		jpeg_read_scanlines(&ci, &r, 1);
		/* A sequential image whose data ends early decodes as grey from
		 * there on: its hash would say "grey", and any two such files
		 * would look alike.  (A progressive one that ends early still has
		 * its whole picture at lower quality: that hash is kept.)  The
		 * last rows are spared, since libjpeg reads a little ahead. */
		if (je.data_ended && !ci.progressive_mode && ci.output_scanline < h - h / 32) {
			rc = SL_FAIL(err, SL_E_CORRUPT, 0, "phash: the data ends at row %u of %u",
				     ci.output_scanline, h);
			goto out;
		}
		cy = y * PH / h;
		for (x = 0; x < w; x++) {
			sum[cy * PH + x * PH / w] += row[x];
			cnt[cy * PH + x * PH / w]++;
		}
	}
	jpeg_finish_decompress(&ci);
	/* cells a small image does not reach take their neighbour's value */
	for (y = 0; y < PH; y++)
		for (x = 0; x < PH; x++) {
			unsigned sy = cnt[y * PH + x] ? y : y * h / PH * PH / h;
			unsigned sx = cnt[y * PH + x] ? x : x * w / PH * PH / w;
			unsigned k = sy * PH + sx;
			stored[y * PH + x] = cnt[k] ? (float)(sum[k] / cnt[k]) : 0.0f;
		}
	for (y = 0; y < PH; y++)
		for (x = 0; x < PH; x++)
			shown[y * PH + x] = oriented(stored, orientation, (int)x, (int)y);
	*out = dct_hash(shown);
out:
	jpeg_destroy_decompress(&ci);
	free(row);
	free(sum);
	free(cnt);
	return rc;
}
