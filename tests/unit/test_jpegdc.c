/* jpeg_dc.h against libjpeg itself: for progressive JPEGs of every shape
 * the encoder can make (sizes down to 1x1 and odd ones, 4:4:4, 4:2:2,
 * 4:2:0, 4:4:0, grey, restart intervals in MCUs and in rows, low quality
 * with 16-bit tables, progressive scan scripts that put chroma first,
 * luma's DC alone, or its DC in two passes; baseline and extended
 * sequential, interleaved or a scan per component, optimised Huffman
 * tables) and for every JPEG of the shared corpus (SEEKLESS_CORPUS_DIR),
 * the plane jdc_grey gives must be libjpeg's own 1/8 output (after the
 * luma's first DC scan for a progressive one: buffered-image mode, grey, no
 * block smoothing), byte for byte.  Arithmetic coding and cut-off data are
 * refused, never guessed. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jerror.h>
#include <jpeglib.h>

#include "indexer/formats/jpeg_dc.h"
#include "tests/jpegref.h"
#include "tests/unit/test.h"

/* 1 when jdc_grey agrees with libjpeg on the file, 0 when it refused it
 * (rc), -1 when they differ. */
static int compare(const uint8_t *p, size_t n, const char *what, int *rc)
{
	uint32_t rw = 0, rh = 0, w, h;
	int warnings = 0;
	uint8_t *ref = jref_plane(p, n, UINT64_MAX, &rw, &rh, &warnings), *got = NULL;
	struct sl_err e;
	int same;

	*rc = jdc_grey(p, n, 0, &got, &w, &h, &e);
	if (*rc != SL_OK) {
		free(ref);
		return 0;
	}
	same = ref && w == rw && h == rh && memcmp(ref, got, (size_t)w * h) == 0;
	if (!same)
		fprintf(stderr, "  %s: differs from libjpeg (%ux%u against %ux%u)\n", what, w, h, rw,
			rh);
	free(ref);
	free(got);
	return same ? 1 : -1;
}

enum { S444, S422, S420, S440, GREY };

struct shape {
	int w, h, sampling, quality, restart_mcus, restart_rows, script, arith, optimize;
	int space; /* a colour space other than YCbCr: enum space */
};

/* How three (or four) components are stored, and what says so. */
enum space {
	YCC,           /* YCbCr, JFIF */
	YCC_ADOBE,     /* YCbCr, an Adobe segment (transform 1), no JFIF */
	RGB_ADOBE,     /* RGB, an Adobe segment (transform 0), components 'R','G','B' */
	RGB_IDS,       /* RGB, no JFIF or Adobe segment: only the names say so */
	RGB_ADOBE_NUM, /* RGB, an Adobe segment (transform 0), components 1, 2, 3 */
	CMYK,          /* four components, an Adobe segment */
};

/* A picture with edges and gradients, so that DC differences are large
 * and small. */
static uint8_t *picture(int w, int h, int comps, uint64_t seed)
{
	uint8_t *px = malloc((size_t)w * h * comps);
	int x, y, c;
	for (y = 0; y < h; y++)
		for (x = 0; x < w; x++)
			for (c = 0; c < comps; c++) {
				seed = seed * 6364136223846793005ull + 1442695040888963407ull;
				px[((size_t)y * w + x) * comps + c] =
					(uint8_t)((x * 255 / (w > 1 ? w - 1 : 1) + ((x / 13 + y / 7) % 2) * 90 +
						   c * 40 + (int)(seed >> 61)) & 0xFF);
			}
	return px;
}

/* Scan scripts: 0 libjpeg's progression; 1 chroma DC first, then luma's
 * DC in two passes (successive approximation); 2 luma's DC alone; 3
 * sequential, a scan per component; 4 sequential, one interleaved scan
 * (baseline, or extended with 16-bit tables). */
static void script(struct jpeg_compress_struct *c, int kind, jpeg_scan_info *sc)
{
	int n = 0, grey = c->num_components == 1, i;
	if (kind == 4)
		return;
	if (kind == 3) {
		for (i = 0; i < c->num_components; i++)
			sc[n++] = (jpeg_scan_info){1, {i}, 0, 63, 0, 0};
		c->scan_info = sc;
		c->num_scans = n;
		return;
	}
	if (kind == 0 || grey) {
		jpeg_simple_progression(c);
		return;
	}
	if (kind == 1) { /* chroma's DC before luma's */
		sc[n++] = (jpeg_scan_info){2, {1, 2}, 0, 0, 0, 0};
		sc[n++] = (jpeg_scan_info){1, {0}, 0, 0, 0, 1};
		sc[n++] = (jpeg_scan_info){1, {0}, 0, 0, 1, 0};
	} else { /* luma's DC alone, without successive approximation */
		sc[n++] = (jpeg_scan_info){1, {0}, 0, 0, 0, 0};
		sc[n++] = (jpeg_scan_info){2, {1, 2}, 0, 0, 0, 0};
	}
	sc[n++] = (jpeg_scan_info){1, {0}, 1, 63, 0, 0};
	sc[n++] = (jpeg_scan_info){1, {1}, 1, 63, 0, 0};
	sc[n++] = (jpeg_scan_info){1, {2}, 1, 63, 0, 0};
	c->scan_info = sc;
	c->num_scans = n;
}

static uint8_t *encode(const struct shape *s, size_t *n)
{
	struct jpeg_compress_struct c;
	struct jpeg_error_mgr je;
	jpeg_scan_info sc[8];
	unsigned char *buf = NULL;
	unsigned long len = 0;
	int comps = s->sampling == GREY ? 1 : s->space == CMYK ? 4 : 3, y;
	uint8_t *px = picture(s->w, s->h, comps, (uint64_t)s->w * 31 + (uint64_t)s->h);

	c.err = jpeg_std_error(&je);
	jpeg_create_compress(&c);
	jpeg_mem_dest(&c, &buf, &len);
	c.image_width = (JDIMENSION)s->w;
	c.image_height = (JDIMENSION)s->h;
	c.input_components = comps;
	c.in_color_space = comps == 1 ? JCS_GRAYSCALE : comps == 4 ? JCS_CMYK : JCS_RGB;
	jpeg_set_defaults(&c);
	switch (s->space) {
	case YCC_ADOBE:
		c.write_JFIF_header = FALSE;
		c.write_Adobe_marker = TRUE;
		break;
	case RGB_ADOBE:
	case RGB_IDS:
	case RGB_ADOBE_NUM:
		jpeg_set_colorspace(&c, JCS_RGB);
		c.write_Adobe_marker = s->space != RGB_IDS;
		if (s->space == RGB_ADOBE_NUM)
			for (y = 0; y < 3; y++)
				c.comp_info[y].component_id = y + 1;
		break;
	case CMYK:
		jpeg_set_colorspace(&c, JCS_CMYK);
		break;
	default:
		break;
	}
	jpeg_set_quality(&c, s->quality, FALSE); /* low quality: 16-bit tables */
	if (comps == 3 && s->space == YCC) {
		static const int hv[4][2] = {{1, 1}, {2, 1}, {2, 2}, {1, 2}};
		c.comp_info[0].h_samp_factor = hv[s->sampling][0];
		c.comp_info[0].v_samp_factor = hv[s->sampling][1];
	}
	c.restart_interval = (unsigned)s->restart_mcus;
	c.restart_in_rows = s->restart_rows;
	c.arith_code = s->arith ? TRUE : FALSE;
	c.optimize_coding = s->optimize ? TRUE : FALSE;
	script(&c, s->script, sc);
	jpeg_start_compress(&c, TRUE);
	for (y = 0; y < s->h; y++) {
		JSAMPROW row = px + (size_t)y * s->w * comps;
		jpeg_write_scanlines(&c, &row, 1);
	}
	jpeg_finish_compress(&c);
	jpeg_destroy_compress(&c);
	free(px);
	*n = len;
	return buf;
}

static void test_generated(void)
{
	static const int sizes[][2] = {{1, 1}, {7, 9}, {8, 8}, {17, 33}, {100, 3}, {3, 100},
				       {257, 129}, {640, 480}, {1001, 667}};
	int si, sam, k, agreed = 0, tried = 0;

	for (si = 0; si < (int)(sizeof(sizes) / sizeof(sizes[0])); si++)
		for (sam = S444; sam <= GREY; sam++)
			for (k = 0; k < 9; k++) {
				static const int scripts[9] = {0, 0, 0, 0, 1, 2, 4, 3, 4};
				struct shape s = {sizes[si][0], sizes[si][1], sam,
						  k == 3 || k == 8 ? 3 : 85,
						  k == 1 ? 1 : k == 4 ? 3 : k == 7 ? 2 : 0, k == 2 ? 1 : 0,
						  scripts[k], 0, k == 8, YCC};
				char what[96];
				size_t n;
				uint8_t *f = encode(&s, &n);
				int rc, r;
				snprintf(what, sizeof(what), "%dx%d sampling %d variant %d", s.w, s.h,
					 sam, k);
				r = compare(f, n, what, &rc);
				tried++;
				agreed += r == 1;
				if (r != 1)
					fprintf(stderr, "  %s: %s\n", what,
						r == 0 ? "refused" : "differs");
				CHECK_INT(r, 1);
				free(f);
			}
	fprintf(stderr, "  generated: %d of %d agree with libjpeg\n", agreed, tried);
}

/* Three components libjpeg reads as RGB, and four, are no luma plane:
 * refused, whatever says so; YCbCr said by an Adobe segment alone is read. */
static void test_colour(void)
{
	int sp, script;

	for (sp = YCC_ADOBE; sp <= CMYK; sp++)
		for (script = 0; script <= 1; script++) { /* sequential, progressive */
			struct shape s = {96, 64, S444, 85, 0, 0, script ? 0 : 4, 0, 0, sp};
			size_t n;
			uint8_t *f = encode(&s, &n), *plane = NULL;
			uint32_t w, h;
			struct sl_err e;
			int rc;
			if (sp == YCC_ADOBE) {
				CHECK_INT(compare(f, n, "YCbCr, Adobe segment", &rc), 1);
			} else {
				CHECK_INT(jdc_grey(f, n, 0, &plane, &w, &h, &e), SL_E_UNSUPPORTED);
				CHECK(plane == NULL);
			}
			free(f);
		}
}

static void test_refused(void)
{
	struct shape s = {64, 48, S420, 85, 0, 0, 0, 1, 0, YCC};
	uint8_t *plane, *f;
	uint32_t w, h;
	struct sl_err e;
	size_t n, cut;

	f = encode(&s, &n); /* arithmetic coding */
	CHECK_INT(jdc_grey(f, n, 0, &plane, &w, &h, &e), SL_E_UNSUPPORTED);
	CHECK(plane == NULL);
	free(f);
	s.arith = 0;
	f = encode(&s, &n);
	CHECK_INT(jdc_grey(f, n, 0, &plane, &w, &h, &e), SL_OK);
	free(plane);
	/* every cut inside the headers and the DC scan: refused, or (cut
	 * past the DC scan) the same plane */
	for (cut = 0; cut < n && cut < 2000; cut++) {
		int rc = jdc_grey(f, cut, 0, &plane, &w, &h, &e);
		CHECK(rc == SL_E_UNSUPPORTED || rc == SL_OK);
		free(plane);
	}
	free(f);
	/* sequential, arithmetic-coded: not this decoder's either */
	s.arith = 1;
	s.script = 4;
	f = encode(&s, &n);
	CHECK_INT(jdc_grey(f, n, 0, &plane, &w, &h, &e), SL_E_UNSUPPORTED);
	free(f);
	/* max_rows: the rows asked for are libjpeg's, whatever the rest holds */
	s.arith = 0;
	s.w = 640;
	s.h = 480;
	f = encode(&s, &n);
	{
		uint32_t rw, rh;
		int warnings;
		uint8_t *ref = jref_plane(f, n, UINT64_MAX, &rw, &rh, &warnings);
		CHECK_INT(jdc_grey(f, n, 3, &plane, &w, &h, &e), SL_OK);
		CHECK(ref && w == rw && h == rh && memcmp(ref, plane, (size_t)w * 3) == 0);
		free(ref);
		free(plane);
	}
	free(f);
}

/* 2 when libjpeg reads a progressive frame header in the n bytes at p,
 * 1 a sequential one, 0 none. */
static int jpeg_kind(const uint8_t *p, size_t n)
{
	struct jpeg_decompress_struct ci;
	struct jref_err je;
	volatile int kind = 0;

	if (n < 4 || p[0] != 0xFF || p[1] != 0xD8)
		return 0;
	ci.err = jpeg_std_error(&je.pub);
	je.pub.error_exit = jref_error;
	je.pub.emit_message = jref_message;
	jpeg_create_decompress(&ci);
	if (setjmp(je.jump) == 0) {
		jpeg_mem_src(&ci, p, (unsigned long)n);
		jpeg_read_header(&ci, TRUE);
		kind = ci.progressive_mode ? 2 : 1;
	}
	jpeg_destroy_decompress(&ci);
	return kind;
}

static void test_corpus(void)
{
#ifdef SEEKLESS_CORPUS_DIR
	const char *dir = getenv("SEEKLESS_CORPUS") ? getenv("SEEKLESS_CORPUS") : SEEKLESS_CORPUS_DIR;
	DIR *d = opendir(dir);
	struct dirent *de;
	int agreed = 0, refused = 0, seen[3] = { 0, 0, 0 };

	if (!d) {
		char why[4200];
		snprintf(why, sizeof(why), "no shared corpus at %s", dir);
		t_skip_part(why);
		return;
	}
	while ((de = readdir(d)) != NULL) {
		char path[4096];
		size_t n;
		uint8_t *p;
		int rc, r, kind;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		p = t_read(path, &n);
		kind = p ? jpeg_kind(p, n) : 0;
		if (!kind) {
			free(p);
			continue;
		}
		seen[kind]++;
		r = compare(p, n, de->d_name, &rc);
		agreed += r == 1;
		refused += r == 0;
		if (r == 0)
			fprintf(stderr, "  %s: refused\n", de->d_name);
		CHECK(r >= 0);
		free(p);
	}
	closedir(d);
	fprintf(stderr, "  corpus: %d sequential and %d progressive JPEGs: "
		"%d agree with libjpeg, %d refused\n", seen[1], seen[2], agreed, refused);
	CHECK(agreed > 0);
#endif
}

int main(void)
{
	RUN(test_generated);
	RUN(test_colour);
	RUN(test_refused);
	RUN(test_corpus);
	return t_done();
}
