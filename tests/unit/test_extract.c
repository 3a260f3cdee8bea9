/* Sniffing, container parsers and the hash, on real JPEGs encoded here,
 * hand-built PNG/GIF/WebP headers, and every truncation of a JPEG. */
#include <stdio.h>

#include <jpeglib.h>
#include <xxhash.h>
#include <zlib.h>

#include "common/sys.h"
#include "indexer/extract.h"
#include "indexer/formats/parsers.h"
#include "indexer/formats/phash.h"
#include "indexer/formats/raster.h"
#include "tests/unit/test.h"
#include "tools/mkcorpus/exifw.h"

/* Encode w x h RGB pixels as a JPEG; app1, when not NULL, is written as an
 * APP1 segment right after SOI. */
static unsigned char *encode(const unsigned char *px, int w, int h, int q, int progressive,
			     const struct strbuf *app1, unsigned long *len)
{
	struct jpeg_compress_struct c;
	struct jpeg_error_mgr jerr;
	unsigned char *out = NULL;

	c.err = jpeg_std_error(&jerr);
	jpeg_create_compress(&c);
	*len = 0;
	jpeg_mem_dest(&c, &out, len);
	c.image_width = (JDIMENSION)w;
	c.image_height = (JDIMENSION)h;
	c.input_components = 3;
	c.in_color_space = JCS_RGB;
	jpeg_set_defaults(&c);
	jpeg_set_quality(&c, q, TRUE);
	if (progressive)
		jpeg_simple_progression(&c);
	jpeg_start_compress(&c, TRUE);
	if (app1)
		jpeg_write_marker(&c, JPEG_APP0 + 1, (const JOCTET *)app1->p, (unsigned)app1->len);
	while (c.next_scanline < c.image_height) {
		JSAMPROW r = (JSAMPROW)(px + (size_t)c.next_scanline * (size_t)w * 3);
		jpeg_write_scanlines(&c, &r, 1);
	}
	jpeg_finish_compress(&c);
	jpeg_destroy_compress(&c);
	return out;
}

/* A real JPEG of w x h, optionally with an Exif APP1 from the writer. */
static unsigned char *make_jpeg(int w, int h, int with_exif, int progressive, unsigned long *len)
{
	unsigned char *px = malloc((size_t)w * (size_t)h * 3), *out;
	struct strbuf sb = STRBUF_INIT;
	int y, x;

	for (y = 0; y < h; y++)
		for (x = 0; x < w * 3; x++)
			px[(size_t)y * (size_t)w * 3 + (size_t)x] = (unsigned char)(x * 7 + y * 3);
	if (with_exif) {
		struct exifw_in in;
		memset(&in, 0, sizeof(in));
		in.make = "FUJIFILM";
		in.model = "X-T3";
		in.datetime = "2021:01:02 03:04:05";
		in.orientation = 8;
		in.exp_num = 1, in.exp_den = 60, in.fnum_num = 2, in.fnum_den = 1;
		in.focal_num = 35, in.focal_den = 1, in.iso = 160;
		sb_add(&sb, "Exif\0\0", 6);
		exifw_build(&in, &sb);
	}
	out = encode(px, w, h, 75, progressive, with_exif ? &sb : NULL, len);
	sb_free(&sb);
	free(px);
	return out;
}

static void test_jpeg(void)
{
	unsigned long len;
	unsigned char *j = make_jpeg(333, 222, 1, 0, &len);
	struct x_meta m;
	struct sl_err e;

	CHECK_INT(x_extract(j, len, len, &m, &e), SL_OK);
	CHECK_STR(m.format, "jpeg");
	CHECK(m.have & XM_DIMS);
	CHECK_INT(m.width, 333);
	CHECK_INT(m.height, 222);
	CHECK_STR(m.make, "FUJIFILM");
	CHECK_INT(m.orientation, 8);
	CHECK_STR(m.datetime_original, "2021-01-02T03:04:05");
	CHECK_STR(m.warnings, "");
	free(j);

	j = make_jpeg(17, 1001, 0, 1, &len);
	CHECK_INT(x_extract(j, len, len, &m, &e), SL_OK);
	CHECK_INT(m.width, 17);
	CHECK_INT(m.height, 1001);
	CHECK_STR(m.make, "");
	free(j);
}

static void test_jpeg_damage(void)
{
	unsigned long len, n;
	unsigned char *j = make_jpeg(64, 48, 1, 0, &len);
	struct x_meta m;
	struct sl_err e;
	int ok = 0, corrupt = 0;

	/* every prefix: never a crash (ASan checks reads), never exit() */
	for (n = 0; n <= len; n++) {
		unsigned char *copy = malloc(n ? n : 1);
		int rc;
		memcpy(copy, j, n);
		rc = x_extract(copy, n, n ? n : 1, &m, &e);
		if (rc == SL_OK)
			ok++;
		else {
			CHECK_INT(rc, SL_E_CORRUPT);
			CHECK(strncmp(e.msg, "jpeg: ", 6) == 0);
			corrupt++;
		}
		/* once the frame header is in, the size is known */
		if (rc == SL_OK && n > 600)
			CHECK(m.width == 64 && m.height == 48);
		free(copy);
	}
	CHECK(ok > 0 && corrupt > 0);

	/* garbage right after SOI: libjpeg refuses, our walk finds the frame */
	memcpy(j + 2, "\xff\x4f\x00\x04zz", 6); /* reserved marker code */
	CHECK_INT(x_extract(j, len, len, &m, &e), SL_OK);
	CHECK(m.width == 64 && m.height == 48);
	CHECK(strstr(m.warnings, "jpeg: skipped 18 bytes between segments") != NULL);
	CHECK(strstr(m.warnings, "jpeg: Unsupported marker type 0x4f") != NULL);
	/* no frame header anywhere: not a readable JPEG */
	memset(j + 4, 0x20, len - 4);
	CHECK_INT(x_extract(j, len, len, &m, &e), SL_E_CORRUPT);
	free(j);
}

static void test_formats(void)
{
	static const unsigned char png[] =
		"\x89PNG\r\n\x1a\n\0\0\0\x0dIHDR\0\0\x01\x2c\0\0\0\xc8\x08\x02\0\0\0XXXX"
		"\0\0\0\0IEND\xae\x42\x60\x82";
	static const unsigned char gif[] = "GIF89a\x40\x01\xf0\0\0\0\0";
	/* VP8X canvas 1000 x 750 (stored minus one, 24-bit little-endian) */
	static const unsigned char webp_x[] =
		"RIFF\x16\0\0\0WEBPVP8X\x0a\0\0\0\0\0\0\0\xe7\x03\0\xed\x02\0";
	/* VP8L: signature 0x2f then 14-bit width-1 and height-1: 100 x 50 */
	unsigned char webp_l[] = "RIFF\x0e\0\0\0WEBPVP8L\x05\0\0\0\x2f\0\0\0\0";
	uint32_t bits = (100 - 1) | ((uint32_t)(50 - 1) << 14);
	struct x_meta m;
	struct sl_err e;

	CHECK_INT(x_extract(png, sizeof(png) - 1, sizeof(png) - 1, &m, &e), SL_OK);
	CHECK_STR(m.format, "png");
	CHECK(m.width == 300 && m.height == 200);
	CHECK_INT(x_extract(gif, sizeof(gif) - 1, 100, &m, &e), SL_OK);
	CHECK_STR(m.format, "gif");
	CHECK(m.width == 320 && m.height == 240);
	CHECK_INT(x_extract(webp_x, sizeof(webp_x) - 1, sizeof(webp_x) - 1, &m, &e), SL_OK);
	CHECK_STR(m.format, "webp");
	CHECK(m.width == 1000 && m.height == 750);
	webp_l[21] = (uint8_t)bits;
	webp_l[22] = (uint8_t)(bits >> 8);
	webp_l[23] = (uint8_t)(bits >> 16);
	webp_l[24] = (uint8_t)(bits >> 24);
	CHECK_INT(x_extract(webp_l, sizeof(webp_l) - 1, sizeof(webp_l) - 1, &m, &e), SL_OK);
	CHECK(m.width == 100 && m.height == 50);
	/* a PNG signature with nothing after it */
	CHECK_INT(x_extract(png, 8, 8, &m, &e), SL_E_CORRUPT);
	/* ... unless we only hold the head of a bigger file */
	CHECK_INT(x_extract(png, 8, 1 << 30, &m, &e), SL_OK);
	CHECK_INT(x_extract((const uint8_t *)"", 0, 0, &m, &e), SL_OK);
	CHECK_STR(m.warnings, "empty file");
}

static void test_sniff(void)
{
	static const struct {
		const char *bytes;
		size_t n;
		const char *want;
	} t[] = {
		{"\xff\xd8\xff\xe0", 4, "jpeg"},
		/* the TIFF family is named by tiff_parse, from the contents */
		{"II*\0\x10\0\0\0CR\x02\0", 12, "tiff"},
		{"MM\0*\0\0\0\x08", 8, "tiff"},
		{"II+\0\x08\0\0\0", 8, "tiff"},
		{"IIRO\x08\0\0\0", 8, "tiff"},
		{"IIU\0\x08\0\0\0", 8, "tiff"},
		{"FUJIFILMCCD-RAW 0201", 20, "raf"},
		{"\xff\x01" "Exiv2\xff\xe1", 9, "exv"},
		{"\0\0\0\x0cjP  \r\n\x87\n", 12, "jp2"},
		{"II\x1a\0\0\0HEAPCCDR", 14, "crw"},
		{"\0MRM\0\0\0\0", 8, "mrw"},
		/* ISO BMFF: named by the major brand, as exiftool does */
		{"\0\0\0\x18" "ftypheic\0\0\0\0mif1heic", 24, "heic"},
		{"\0\0\0\x1c" "ftypavif\0\0\0\0mif1avifmiaf", 28, "avif"},
		{"\0\0\0\x1c" "ftypmif1\0\0\0\0mif1avifmiaf", 28, "heif"},
		{"\0\0\0\x18" "ftypheix\0\0\0\0mif1heix", 24, "heif"},
		{"\0\0\0\x18" "ftypcrx \0\0\0\x01" "crx isom", 24, "cr3"},
		{"\0\0\0\x14" "ftypqt  \0\0\0\0qt  ", 20, "mov"},
		{"\0\0\0\x18" "ftyphhhh\0\0\0\0mif1heic", 24, "mp4"},
		{"\0\0\0\x18" "ftyp", 8, ""}, /* box cut off: not a format */
		{"RIFF\0\0\0\0WAVE", 12, ""},
		{"hello", 5, ""},
	};
	size_t i;
	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		CHECK_STR(x_sniff((const uint8_t *)t[i].bytes, t[i].n), t[i].want);
}

/* A picture with structure (gradients and a bright disc), w x h, stored
 * rotated by `turn` quarter turns clockwise, JPEG quality q. */
static unsigned char *picture_as(int w, int h, int turn, int q, int seed, int progressive,
				 unsigned long *len)
{
	int sw = turn % 2 ? h : w, sh = turn % 2 ? w : h, x, y;
	unsigned char *px = malloc((size_t)sw * (size_t)sh * 3), *out = NULL;

	for (y = 0; y < sh; y++)
		for (x = 0; x < sw; x++) {
			/* (u, v): where this stored pixel sits in the upright picture */
			int u = x, v = y, k;
			if (turn == 1)
				u = y, v = sw - 1 - x;
			else if (turn == 2)
				u = sw - 1 - x, v = sh - 1 - y;
			else if (turn == 3)
				u = sh - 1 - y, v = x;
			for (k = 0; k < 3; k++) {
				int val = (u * 200 / w + v * (seed * 37 % 50) / h + k * 20) & 255;
				int dx = u - w * (seed % 3 + 1) / 4, dy = v - h / 3;
				if (dx * dx + dy * dy < (w / 6) * (w / 6))
					val = 255 - val / 3;
				px[((size_t)y * (size_t)sw + (size_t)x) * 3 + (size_t)k] = (unsigned char)val;
			}
		}
	out = encode(px, sw, sh, q, progressive, NULL, len);
	free(px);
	return out;
}

static unsigned char *picture(int w, int h, int turn, int q, int seed, unsigned long *len)
{
	return picture_as(w, h, turn, q, seed, 0, len);
}

static const char *src; /* where jpg_phash took its picture from */

static int hamming(uint64_t a, uint64_t b)
{
	uint64_t x = a ^ b;
	int n = 0;
	while (x) {
		x &= x - 1;
		n++;
	}
	return n;
}

/* phash of picture(w, h, turn, q, seed) shown with the given orientation */
static uint64_t phash_of(int w, int h, int turn, int q, int seed, int orientation)
{
	unsigned long len;
	unsigned char *j = picture(w, h, turn, q, seed, &len);
	uint64_t ph = 0;
	struct sl_err e;
	CHECK_INT(jpg_phash(j, len, NULL, orientation, &ph, &src, &e), SL_OK);
	free(j);
	return ph;
}

static void test_phash(void)
{
	unsigned long len;
	uint64_t a = phash_of(640, 480, 0, 90, 1, 1);
	uint64_t reencoded = phash_of(640, 480, 0, 60, 1, 1);
	uint64_t smaller = phash_of(320, 240, 0, 85, 1, 1);
	uint64_t other = phash_of(640, 480, 0, 90, 2, 1);
	/* stored turned, with the EXIF orientation that shows it upright */
	uint64_t as6 = phash_of(640, 480, 3, 90, 1, 6);
	uint64_t as8 = phash_of(640, 480, 1, 90, 1, 8);
	uint64_t as3 = phash_of(640, 480, 2, 90, 1, 3);
	/* the same turned bytes shown as stored are another picture */
	uint64_t sideways = phash_of(640, 480, 3, 90, 1, 1);
	struct sl_err e;
	uint64_t h;

	fprintf(stderr, "  distances: reencoded %d, smaller %d, o6 %d, o8 %d, o3 %d, other %d, "
			"sideways %d\n",
		hamming(a, reencoded), hamming(a, smaller), hamming(a, as6), hamming(a, as8),
		hamming(a, as3), hamming(a, other), hamming(a, sideways));
	CHECK(hamming(a, reencoded) <= 6);
	CHECK(hamming(a, smaller) <= 6);
	CHECK(hamming(a, as6) <= 6);
	CHECK(hamming(a, as8) <= 6);
	CHECK(hamming(a, as3) <= 6);
	CHECK(hamming(a, other) >= 16);
	CHECK(hamming(a, sideways) >= 16);
	/* a tiny image (smaller than the 32x32 thumbnail at 1/8) still hashes */
	h = phash_of(40, 30, 0, 90, 1, 1);
	CHECK(h != 0);
	/* not a JPEG, truncated: an error, never a crash */
	CHECK_INT(jpg_phash((const uint8_t *)"\xff\xd8\xff\xe0", 4, NULL, 1, &h, &src, &e), SL_E_CORRUPT);
	{
		unsigned char *j = picture(64, 48, 0, 90, 1, &len);
		unsigned long n;
		for (n = 0; n < len; n += 7)
			jpg_phash(j, n, NULL, 1, &h, &src, &e);
		free(j);
	}
}

/* The pixels picture_as() encodes, for thumbnails of the same picture. */
static unsigned char *pixels_of(int w, int h, int seed)
{
	unsigned long len;
	unsigned char *j = picture_as(w, h, 0, 100, seed, 0, &len), *px;
	struct jpeg_decompress_struct d;
	struct jpeg_error_mgr jerr;
	d.err = jpeg_std_error(&jerr);
	jpeg_create_decompress(&d);
	jpeg_mem_src(&d, j, len);
	jpeg_read_header(&d, TRUE);
	jpeg_start_decompress(&d);
	px = malloc((size_t)w * (size_t)h * 3);
	while (d.output_scanline < d.output_height) {
		JSAMPROW r = px + (size_t)d.output_scanline * (size_t)w * 3;
		jpeg_read_scanlines(&d, &r, 1);
	}
	jpeg_finish_decompress(&d);
	jpeg_destroy_decompress(&d);
	free(j);
	return px;
}

/* A camera-like JPEG: picture `seed` at w x h with EXIF, whose IFD1
 * thumbnail is picture `tseed` at tw x th (-tseed: its negative;
 * letterboxed to tw x lb_h when lb_h > th: black bars above and below), the
 * Exif pixel size ew x eh, and a ModifyDate of its own when edited. */
static unsigned char *with_thumb(int w, int h, int seed, int tw, int th, int lb_h, int tseed,
				 uint32_t ew, uint32_t eh, int edited, unsigned long *len)
{
	unsigned char *px = pixels_of(w, h, seed), *tp = pixels_of(tw, th, tseed < 0 ? -tseed : tseed);
	unsigned char *box = NULL, *thumb, *out;
	unsigned long tlen;
	size_t i;

	if (tseed < 0) /* the picture as it was before an edit made it its negative */
		for (i = 0; i < (size_t)tw * (size_t)th * 3; i++)
			tp[i] = (unsigned char)(255 - tp[i]);
	struct exifw_in in;
	struct strbuf tiff = STRBUF_INIT, app1 = STRBUF_INIT;
	int ty = lb_h > th ? lb_h : th;

	if (lb_h > th) { /* the picture in the middle, black above and below */
		box = calloc((size_t)tw * (size_t)lb_h * 3, 1);
		memcpy(box + (size_t)((lb_h - th) / 2) * (size_t)tw * 3, tp, (size_t)tw * (size_t)th * 3);
		free(tp);
		tp = box;
	}
	thumb = encode(tp, tw, ty, 80, 0, NULL, &tlen);
	memset(&in, 0, sizeof(in));
	in.make = "Canon";
	in.model = "EOS 5D";
	in.datetime = "2024:06:01 12:00:00";
	in.modified = edited ? "2025:01:02 10:00:00" : NULL;
	in.orientation = 1;
	in.exp_den = in.fnum_den = in.focal_den = 1;
	in.pixel_w = ew;
	in.pixel_h = eh;
	in.thumb = thumb;
	in.thumb_len = tlen;
	exifw_build(&in, &tiff);
	sb_add(&app1, "Exif\0\0", 6);
	sb_add(&app1, tiff.p, tiff.len);
	out = encode(px, w, h, 90, 0, &app1, len);
	free(px);
	free(tp);
	free(thumb);
	sb_free(&tiff);
	sb_free(&app1);
	return out;
}

/* Where the hash of a with_thumb() file comes from, and how far it is
 * from the hash of its full image. */
static const char *thumb_source(unsigned char *j, unsigned long len, int *dist)
{
	struct x_meta m;
	struct sl_err e;
	uint64_t a = 0, b = 0;
	const char *s = NULL;
	memset(&m, 0, sizeof(m));
	CHECK_INT(jpg_parse(j, len, &m, &e), SL_OK);
	CHECK_INT(jpg_phash(j, len, &m, 1, &a, &s, &e), SL_OK);
	CHECK_INT(jpg_phash(j, len, NULL, 1, &b, &src, &e), SL_OK);
	*dist = ph_distance(a, b);
	free(j);
	return s ? s : "";
}

/* The EXIF thumbnail stands in for the image when it shows it, letterbox
 * or not; a stale one (another picture, an old size or shape) does not. */
static void test_phash_thumbnail(void)
{
	unsigned char *j;
	unsigned long len;
	int d;
	const char *s;

	j = with_thumb(960, 720, 1, 160, 120, 0, 1, 960, 720, 0, &len);
	s = thumb_source(j, len, &d);
	CHECK_STR(s, "exif-thumbnail");
	CHECK(d <= 4);
	fprintf(stderr, "  thumbnail against image: %d bits\n", d);
	/* a 3:2 picture in a 4:3 thumbnail, with black bars */
	j = with_thumb(960, 640, 3, 160, 107, 120, 3, 960, 640, 0, &len);
	s = thumb_source(j, len, &d);
	CHECK_STR(s, "exif-thumbnail");
	CHECK(d <= 4);
	fprintf(stderr, "  letterboxed thumbnail against image: %d bits\n", d);
	/* edited: the picture changed (to its negative), the thumbnail is the
	 * old one */
	j = with_thumb(960, 720, 1, 160, 120, 0, -1, 960, 720, 1, &len);
	s = thumb_source(j, len, &d);
	CHECK_STR(s, "image");
	/* ... and the same, as an editor that keeps the camera's dates: the
	 * top rows are not checked then, but an edit that keeps no size is
	 * seen by the Exif size (a crop), or by the shape */
	j = with_thumb(912, 720, 1, 160, 120, 0, 1, 960, 720, 0, &len);
	s = thumb_source(j, len, &d);
	CHECK_STR(s, "image");
	j = with_thumb(960, 720, 1, 160, 160, 0, 1, 0, 0, 0, &len);
	s = thumb_source(j, len, &d);
	CHECK_STR(s, "image");
	/* resized (an export at half size keeps the camera's EXIF): the
	 * thumbnail still shows the picture, and its top rows say so ... */
	j = with_thumb(960, 720, 1, 160, 120, 0, 1, 1920, 1440, 0, &len);
	s = thumb_source(j, len, &d);
	CHECK_STR(s, "exif-thumbnail");
	CHECK(d <= 4);
	/* ... unless the picture changed on the way, camera dates or not */
	j = with_thumb(960, 720, 1, 160, 120, 0, -1, 1920, 1440, 0, &len);
	s = thumb_source(j, len, &d);
	CHECK_STR(s, "image");
}

/* A RAW file is hashed from its embedded JPEG preview (the camera's own
 * rendering), so a RAW and the JPEG the camera wrote beside it compare;
 * here a Fujifilm RAF, whose header points at its preview. */
static void test_phash_raw_preview(void)
{
	unsigned long jl;
	unsigned char *jpg = picture(960, 640, 0, 85, 6, &jl), *raf;
	uint64_t hr = 0, hj = 0;
	const char *s = NULL;
	struct x_meta m;
	struct sl_err e;
	size_t n = 160 + jl + 64;

	raf = calloc(1, n);
	memcpy(raf, "FUJIFILMCCD-RAW 0201FF392201FinePix S5Pro", 41);
	raf[84] = 0, raf[85] = 0, raf[86] = 0, raf[87] = 160;           /* JPEG at 160 */
	raf[88] = (unsigned char)(jl >> 24), raf[89] = (unsigned char)(jl >> 16);
	raf[90] = (unsigned char)(jl >> 8), raf[91] = (unsigned char)jl;
	raf[92 + 2] = (unsigned char)((160 + jl) >> 8), raf[92 + 3] = (unsigned char)(160 + jl);
	raf[93] = (unsigned char)((160 + jl) >> 16);                      /* directory after */
	memcpy(raf + 160, jpg, jl);
	memset(&m, 0, sizeof(m));
	CHECK_INT(x_extract(raf, n, n, &m, &e), SL_OK);
	CHECK_STR(m.format, "raf");
	CHECK(x_phashable(m.format));
	CHECK_INT(x_phash(raf, n, 1, &m, &hr, &s, &e), SL_OK);
	CHECK_STR(s ? s : "", "preview");
	/* the camera's JPEG beside it: the same picture, smaller */
	free(jpg);
	jpg = picture(480, 320, 0, 90, 6, &jl);
	CHECK_INT(jpg_phash(jpg, jl, NULL, 1, &hj, &src, &e), SL_OK);
	CHECK(ph_distance(hr, hj) <= 3);
	/* only the first bytes of a streamed RAW: no preview there, no hash,
	 * and no claim that there is one */
	memset(&m, 0, sizeof(m));
	x_extract(raf, 120, n, &m, &e);
	CHECK(x_phash(raf, 120, 0, &m, &hr, &s, &e) == SL_E_UNSUPPORTED);
	free(jpg);
	free(raf);
}

/* The eight orientations of a picture are bit operations on its hash: a
 * copy without its orientation tag (stored pixels the same, shown
 * otherwise), or turned on disk, is at distance 0 over the variants. */
static void test_phash_orientations(void)
{
	unsigned long len;
	unsigned char *j = picture(640, 480, 1, 90, 4, &len);
	struct sl_err e;
	uint64_t as[9];
	int o, k, found;

	for (o = 1; o <= 8; o++)
		CHECK_INT(jpg_phash(j, len, NULL, o, &as[o], &src, &e), SL_OK);
	for (o = 2; o <= 8; o++) {
		for (k = 0, found = 0; k < 8; k++)
			if (ph_variant(as[1], k) == as[o])
				found = 1;
		CHECK(found);
		CHECK_INT(ph_distance(as[1], as[o]), 0);
	}
	free(j);
	/* turned on disk, then re-encoded: the same picture, near */
	{
		uint64_t up = phash_of(640, 480, 0, 90, 4, 1), turned = phash_of(640, 480, 2, 80, 4, 1);
		CHECK(ph_distance(up, turned) <= 2);
		CHECK(ph_distance(up, phash_of(640, 480, 0, 90, 5, 1)) > 12);
	}
}

/* Large progressive pictures, which libjpeg decodes through whole-image
 * coefficient buffers, and pictures whose data ends early. */
static void test_phash_limits(void)
{
	unsigned long ls, lp;
	unsigned char *seq = picture_as(6000, 4000, 0, 80, 3, 0, &ls);
	unsigned char *prog = picture_as(6000, 4000, 0, 80, 3, 1, &lp);
	uint64_t hs = 0, hp = 0, h;
	struct sl_err e;

	/* 24 MP progressive needs 72 MB of coefficients: more than the 64 MB
	 * libjpeg was once allowed ("Backing store not supported") */
	CHECK_INT(jpg_phash(seq, ls, NULL, 1, &hs, &src, &e), SL_OK);
	CHECK_INT(jpg_phash(prog, lp, NULL, 1, &hp, &src, &e), SL_OK);
	CHECK(hamming(hs, hp) <= 4);
	/* sequential, cut in the middle: no hash (it would describe grey) */
	CHECK_INT(jpg_phash(seq, ls / 2, NULL, 1, &h, &src, &e), SL_E_CORRUPT);
	CHECK(strstr(e.msg, "data ends at row") != NULL);
	/* progressive, cut in its later scans: the whole picture is there */
	CHECK_INT(jpg_phash(prog, lp * 3 / 4, NULL, 1, &h, &src, &e), SL_OK);
	CHECK(hamming(h, hp) <= 4);
	/* the last rows missing are tolerated (libjpeg reads ahead) */
	CHECK_INT(jpg_phash(seq, ls - 200, NULL, 1, &h, &src, &e), SL_OK);
	CHECK(hamming(h, hs) <= 4);
	free(seq);
	free(prog);
	/* a small file that declares a huge frame is refused before decoding */
	{
		unsigned long n;
		unsigned char *j = picture(64, 48, 0, 90, 1, &n);
		size_t k;
		for (k = 2; k + 9 < n; k++)
			if (j[k] == 0xff && j[k + 1] == 0xc0) {
				j[k + 5] = 0xfd, j[k + 6] = 0xe8; /* height 65000 */
				j[k + 7] = 0xfd, j[k + 8] = 0xe8; /* width 65000 */
				break;
			}
		CHECK_INT(jpg_phash(j, n, NULL, 1, &h, &src, &e), SL_E_CORRUPT);
		CHECK(strstr(e.msg, "65000x65000 frame cannot fit") != NULL);
		free(j);
	}
}

static void test_hash(void)
{
	unsigned char *d = t_bytes(1000003, 9);
	char one[33], inc[33], ref[33];
	struct x_hash *h;
	XXH128_canonical_t c;
	size_t off;
	int i;

	x_hash_once(d, 1000003, one);
	CHECK_INT(x_hash_new(&h), SL_OK);
	for (off = 0; off < 1000003; off += 65536)
		x_hash_update(h, d + off, 1000003 - off < 65536 ? 1000003 - off : 65536);
	x_hash_hex(h, inc);
	x_hash_free(h);
	x_hash_free(NULL);
	XXH128_canonicalFromHash(&c, XXH3_128bits(d, 1000003));
	for (i = 0; i < 16; i++)
		snprintf(ref + 2 * i, 3, "%02x", c.digest[i]);
	CHECK_STR(one, ref);
	CHECK_STR(inc, ref);
	x_hash_once("", 0, one);
	CHECK_STR(one, "99aa06d3014798d86001c324468d497f"); /* XXH3-128 of nothing */
	free(d);
}

static void put32(unsigned char *p, uint32_t v)
{
	p[0] = (unsigned char)(v >> 24), p[1] = (unsigned char)(v >> 16);
	p[2] = (unsigned char)(v >> 8), p[3] = (unsigned char)v;
}

/* A PNG chunk at out + *at: length, type, data, CRC (zlib's crc32). */
static void chunk(unsigned char *out, size_t *at, const char *type, const unsigned char *d,
		  uint32_t n)
{
	put32(out + *at, n);
	memcpy(out + *at + 4, type, 4);
	if (n)
		memcpy(out + *at + 8, d, n);
	put32(out + *at + 8 + n, (uint32_t)crc32(0, out + *at + 4, n + 4));
	*at += 12 + n;
}

/* An 8-bit grey PNG of w x h declared, whose IDAT is zlib of the len bytes
 * of rows (each a filter byte and w samples, or fewer than it declares);
 * *n its size. */
static unsigned char *grey_png(uint32_t w, uint32_t h, const unsigned char *rows, size_t len,
			       size_t *n)
{
	unsigned char ihdr[13] = {0}, *out, *z;
	uLongf zn = compressBound((uLong)len);
	size_t at = 8;

	z = malloc(zn);
	CHECK(compress(z, &zn, rows, (uLong)len) == Z_OK);
	out = malloc(8 + 25 + 12 + zn + 12);
	memcpy(out, "\x89PNG\r\n\x1a\n", 8);
	put32(ihdr, w);
	put32(ihdr + 4, h);
	ihdr[8] = 8; /* bit depth; colour type 0 (grey), no interlace */
	chunk(out, &at, "IHDR", ihdr, 13);
	chunk(out, &at, "IDAT", z, (uint32_t)zn);
	chunk(out, &at, "IEND", NULL, 0);
	free(z);
	*n = at;
	return out;
}

/* PNG through libpng: the pixels we wrote hash as they do in the grid
 * directly; pictures too big or too small for their bytes are refused
 * before decoding. */
static void test_raster_png(void)
{
	enum { W = 96, H = 64 };
	unsigned char rows[H * (W + 1)], *png, *big;
	struct ph_grid grid;
	uint64_t want, h;
	size_t n, x, y;
	struct sl_err e;

	if (!raster_decodes()) { /* the Windows build: it says so */
		CHECK_INT(raster_phash("png", rows, sizeof(rows), 1, &h, &src, &e),
			  SL_E_UNSUPPORTED);
		CHECK(strstr(e.msg, "this build has no png decoder") != NULL);
		return;
	}
	for (y = 0; y < H; y++) {
		rows[y * (W + 1)] = 0;
		for (x = 0; x < W; x++)
			rows[y * (W + 1) + 1 + x] = (unsigned char)((x * 7 + y * y) & 0xff);
	}
	ph_grid_init(&grid, W, H);
	for (y = 0; y < H; y++)
		ph_grid_row(&grid, (uint32_t)y, rows + y * (W + 1) + 1);
	want = ph_hash(&grid, 6);
	png = grey_png(W, H, rows, sizeof(rows), &n);
	CHECK_INT(raster_phash("png", png, n, 6, &h, &src, &e), SL_OK);
	CHECK(h == want);
	CHECK(src && strcmp(src, "image") == 0);
	/* cut: no hash */
	CHECK_INT(raster_phash("png", png, n / 2, 6, &h, &src, &e), SL_E_CORRUPT);
	CHECK(strstr(e.msg, "runs past the end") != NULL);
	CHECK(src == NULL);
	/* a text chunk declaring 1.8 GB in a file of a few hundred bytes
	 * (fuzz_extract's find): refused before libpng sizes a buffer for it,
	 * so the scan's memory stays where it was */
	{
		static const unsigned char text[] = {0x6d, 0x6f, 0x6f, 0x79, 't', 'E', 'X', 't'};
		unsigned char *t = malloc(n + 64);
		uint64_t before = sys_peak_rss();
		memcpy(t, png, 33); /* signature and IHDR */
		memcpy(t + 33, text, sizeof(text));
		memset(t + 33 + sizeof(text), 'a', 20);
		memcpy(t + 33 + sizeof(text) + 20, png + 33, n - 33);
		CHECK_INT(raster_phash("png", t, n + 28, 6, &h, &src, &e), SL_E_CORRUPT);
		CHECK(strstr(e.msg, "runs past the end") != NULL);
		CHECK(sys_peak_rss() < before + (64u << 20));
		/* the same declaration in the file's last 9 bytes, where a full
		 * chunk header and CRC (12) no longer fit (fuzz_raster's find: 191
		 * bytes, 8.5 s and 1.8 GB before) */
		memcpy(t + 33, text, sizeof(text));
		t[33 + sizeof(text)] = 'a';
		CHECK_INT(raster_phash("png", t, 33 + sizeof(text) + 1, 6, &h, &src, &e), SL_E_CORRUPT);
		CHECK(strstr(e.msg, "runs past the end") != NULL);
		CHECK(sys_peak_rss() < before + (64u << 20));
		/* the whole file with data after IEND still decodes */
		memcpy(t, png, n);
		memset(t + n, 0xff, 64);
		CHECK_INT(raster_phash("png", t, n + 64, 6, &h, &src, &e), SL_OK);
		CHECK(h == want);
		free(t);
	}
	free(png);
	/* 49 MP declared in a few hundred bytes: cannot fit, not decoded */
	big = grey_png(7000, 7000, rows, sizeof(rows), &n);
	CHECK_INT(raster_phash("png", big, n, 1, &h, &src, &e), SL_E_CORRUPT);
	CHECK(strstr(e.msg, "7000x7000 PNG cannot fit") != NULL);
	free(big);
	/* over the cap */
	big = grey_png(8000, 8000, rows, sizeof(rows), &n);
	CHECK_INT(raster_phash("png", big, n, 1, &h, &src, &e), SL_E_UNSUPPORTED);
	CHECK(strstr(e.msg, "8000x8000 PNG: not decoded") != NULL);
	free(big);
	/* not a WebP */
	CHECK(raster_phash("webp", rows, sizeof(rows), 1, &h, &src, &e) != SL_OK);
}

/* A JPEG held whole that stops before its end marker says so (the hash,
 * from a thumbnail, may not notice); a whole one, sequential or
 * progressive, does not; the head of a streamed file is no evidence. */
static void test_jpeg_truncated(void)
{
	int progressive;

	for (progressive = 0; progressive < 2; progressive++) {
		unsigned long len, n;
		unsigned char *j = picture_as(320, 240, 0, 85, 4, progressive, &len);
		struct x_meta m;
		struct sl_err e;
		int cut = 0;

		CHECK_INT(x_extract(j, len, len, &m, &e), SL_OK);
		CHECK(strstr(m.warnings, "end marker") == NULL);
		for (n = len / 4; n < len - 1; n += 97) {
			unsigned char *copy = malloc(n);
			memcpy(copy, j, n);
			CHECK_INT(x_extract(copy, n, n, &m, &e), SL_OK);
			cut += strstr(m.warnings, "ends before its end marker (a truncated file?)") != NULL;
			CHECK_INT(x_extract(copy, n, len, &m, &e), SL_OK);
			CHECK(strstr(m.warnings, "end marker") == NULL);
			free(copy);
		}
		CHECK_INT(cut, (int)((len - 1 - len / 4 + 96) / 97));
		/* data after the end marker (a maker's trailer, padding): the
		 * file no longer ends with FF D9, the scans are stepped through
		 * to the marker, and it is whole */
		{
			unsigned char *t = malloc(len + 600);
			memcpy(t, j, len);
			memset(t + len, 0, 600);
			memcpy(t + len + 100, "\xff\xd8\xff\xe1\x00\x10SEFT", 10);
			CHECK_INT(x_extract(t, len + 600, len + 600, &m, &e), SL_OK);
			CHECK(strstr(m.warnings, "end marker") == NULL);
			/* and cut inside the scan data with that trailer's bytes
			 * after the cut: still truncated */
			memmove(t + len / 2, t + len, 600);
			CHECK_INT(x_extract(t, len / 2 + 600, len / 2 + 600, &m, &e), SL_OK);
			CHECK(strstr(m.warnings, "ends before its end marker") != NULL);
			free(t);
		}
		free(j);
	}
}

int main(void)
{
	RUN(test_jpeg);
	RUN(test_jpeg_damage);
	RUN(test_formats);
	RUN(test_sniff);
	RUN(test_hash);
	RUN(test_phash);
	RUN(test_phash_limits);
	RUN(test_phash_thumbnail);
	RUN(test_phash_orientations);
	RUN(test_phash_raw_preview);
	RUN(test_raster_png);
	RUN(test_jpeg_truncated);
	return t_done();
}
