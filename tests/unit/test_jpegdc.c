/* jpeg_dc.h against libjpeg itself: for progressive JPEGs of every shape
 * the encoder can make (sizes down to 1x1 and odd ones, 4:4:4, 4:2:2,
 * 4:2:0, 4:4:0, grey, restart intervals in MCUs and in rows, low quality
 * with 16-bit tables, scan scripts that put chroma first, luma's DC alone,
 * or its DC in two passes) and for every progressive JPEG of the shared
 * corpus (SEEKLESS_CORPUS_DIR), the plane jdc_grey gives must be libjpeg's
 * own 1/8 output after the luma's first DC scan (buffered-image mode,
 * grey, no block smoothing), byte for byte.  Arithmetic coding and cut-off
 * data are refused, never guessed. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jerror.h>
#include <jpeglib.h>

#include "indexer/jpeg_dc.h"
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

	*rc = jdc_grey(p, n, &got, &w, &h, &e);
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
	int w, h, sampling, quality, restart_mcus, restart_rows, script, arith;
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

/* Scan scripts: 1 chroma DC first, then luma's DC alone, two passes of
 * luma's DC (successive approximation), then the rest. */
static void script(struct jpeg_compress_struct *c, int kind, jpeg_scan_info *sc)
{
	int n = 0, grey = c->num_components == 1;
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
	int comps = s->sampling == GREY ? 1 : 3, y;
	uint8_t *px = picture(s->w, s->h, comps, (uint64_t)s->w * 31 + (uint64_t)s->h);

	c.err = jpeg_std_error(&je);
	jpeg_create_compress(&c);
	jpeg_mem_dest(&c, &buf, &len);
	c.image_width = (JDIMENSION)s->w;
	c.image_height = (JDIMENSION)s->h;
	c.input_components = comps;
	c.in_color_space = comps == 1 ? JCS_GRAYSCALE : JCS_RGB;
	jpeg_set_defaults(&c);
	jpeg_set_quality(&c, s->quality, FALSE); /* low quality: 16-bit tables */
	if (comps == 3) {
		static const int hv[4][2] = {{1, 1}, {2, 1}, {2, 2}, {1, 2}};
		c.comp_info[0].h_samp_factor = hv[s->sampling][0];
		c.comp_info[0].v_samp_factor = hv[s->sampling][1];
	}
	c.restart_interval = (unsigned)s->restart_mcus;
	c.restart_in_rows = s->restart_rows;
	c.arith_code = s->arith ? TRUE : FALSE;
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
			for (k = 0; k < 6; k++) {
				struct shape s = {sizes[si][0], sizes[si][1], sam, k == 3 ? 3 : 85,
						  k == 1 ? 1 : k == 4 ? 3 : 0, k == 2 ? 1 : 0,
						  k == 4 ? 1 : k == 5 ? 2 : 0, 0};
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

static void test_refused(void)
{
	struct shape s = {64, 48, S420, 85, 0, 0, 0, 1};
	uint8_t *plane, *f;
	uint32_t w, h;
	struct sl_err e;
	size_t n, cut;

	f = encode(&s, &n); /* arithmetic coding */
	CHECK_INT(jdc_grey(f, n, &plane, &w, &h, &e), SL_E_UNSUPPORTED);
	CHECK(plane == NULL);
	free(f);
	s.arith = 0;
	f = encode(&s, &n);
	CHECK_INT(jdc_grey(f, n, &plane, &w, &h, &e), SL_OK);
	free(plane);
	/* every cut inside the headers and the DC scan: refused, or (cut
	 * past the DC scan) the same plane */
	for (cut = 0; cut < n && cut < 2000; cut++) {
		int rc = jdc_grey(f, cut, &plane, &w, &h, &e);
		CHECK(rc == SL_E_UNSUPPORTED || rc == SL_OK);
		free(plane);
	}
	free(f);
	/* baseline: not this decoder's */
	{
		struct jpeg_compress_struct c;
		struct jpeg_error_mgr je;
		unsigned char *buf = NULL;
		unsigned long len = 0;
		uint8_t px[3 * 16 * 16];
		int y;
		memset(px, 100, sizeof(px));
		c.err = jpeg_std_error(&je);
		jpeg_create_compress(&c);
		jpeg_mem_dest(&c, &buf, &len);
		c.image_width = c.image_height = 16;
		c.input_components = 3;
		c.in_color_space = JCS_RGB;
		jpeg_set_defaults(&c);
		jpeg_start_compress(&c, TRUE);
		for (y = 0; y < 16; y++) {
			JSAMPROW row = px + (size_t)y * 48;
			jpeg_write_scanlines(&c, &row, 1);
		}
		jpeg_finish_compress(&c);
		jpeg_destroy_compress(&c);
		CHECK_INT(jdc_grey(buf, len, &plane, &w, &h, &e), SL_E_UNSUPPORTED);
		free(buf);
	}
}

/* Whether libjpeg reads a progressive frame header in the n bytes at p. */
static int is_progressive(const uint8_t *p, size_t n)
{
	struct jpeg_decompress_struct ci;
	struct jref_err je;
	volatile int prog = 0;

	if (n < 4 || p[0] != 0xFF || p[1] != 0xD8)
		return 0;
	ci.err = jpeg_std_error(&je.pub);
	je.pub.error_exit = jref_error;
	je.pub.emit_message = jref_message;
	jpeg_create_decompress(&ci);
	if (setjmp(je.jump) == 0) {
		jpeg_mem_src(&ci, p, (unsigned long)n);
		jpeg_read_header(&ci, TRUE);
		prog = ci.progressive_mode;
	}
	jpeg_destroy_decompress(&ci);
	return prog;
}

static void test_corpus(void)
{
#ifdef SEEKLESS_CORPUS_DIR
	const char *dir = getenv("SEEKLESS_CORPUS") ? getenv("SEEKLESS_CORPUS") : SEEKLESS_CORPUS_DIR;
	DIR *d = opendir(dir);
	struct dirent *de;
	int agreed = 0, refused = 0, progressive = 0;

	if (!d) {
		fprintf(stderr, "no corpus at %s\n", dir);
		CHECK(!getenv("SEEKLESS_REQUIRE_ALL") || strcmp(getenv("SEEKLESS_REQUIRE_ALL"), "1"));
		return;
	}
	while ((de = readdir(d)) != NULL) {
		char path[4096];
		size_t n;
		uint8_t *p;
		int rc, r;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		p = t_read(path, &n);
		if (!p || !is_progressive(p, n)) {
			free(p);
			continue;
		}
		progressive++;
		r = compare(p, n, de->d_name, &rc);
		agreed += r == 1;
		refused += r == 0;
		if (r == 0)
			fprintf(stderr, "  %s: refused (libjpeg decodes it)\n", de->d_name);
		CHECK(r >= 0);
		free(p);
	}
	closedir(d);
	fprintf(stderr, "  corpus: %d progressive JPEGs: %d agree with libjpeg, %d refused\n",
		progressive, agreed, refused);
	CHECK(agreed > 0);
#endif
}

int main(void)
{
	RUN(test_generated);
	RUN(test_refused);
	RUN(test_corpus);
	return t_done();
}
