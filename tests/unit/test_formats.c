/* Container rules on synthetic files built here: which IFD gives a RAW's
 * size, how TIFF-based RAW is named, CR2/RW2 sizes, BigTIFF, HEIF items,
 * MPO detection, PNG text profiles, RAF, EXV, BMP, JP2, garbage IFDs.
 * (The corpus test covers the same formats on real camera files.) */
#include <math.h>
#include <zlib.h>

#include "common/strbuf.h"
#include "indexer/formats/exif.h"
#include "indexer/extract.h"
#include "indexer/formats/heif.h"
#include "indexer/formats/parsers.h"
#include "tests/unit/test.h"
#include "tests/unit/tmeta.h"

/* ---- a little-endian TIFF builder ----------------------------------------- */

struct tent {
	uint16_t tag, type;
	uint32_t val;    /* SHORT/LONG value, or with ptr: IFD index to point at */
	const char *str; /* ASCII value */
	int ptr;         /* val is an IFD index: write that IFD's offset */
};

struct tifd {
	const struct tent *e;
	int n;
	int next; /* IFD index chained after this one, or -1 */
};

static void put16(uint8_t *p, uint16_t v) { p[0] = (uint8_t)v; p[1] = (uint8_t)(v >> 8); }
static void put32(uint8_t *p, uint32_t v) { put16(p, (uint16_t)v); put16(p + 2, (uint16_t)(v >> 16)); }

static size_t ifd_size(const struct tifd *d)
{
	size_t s = 2 + 12u * (size_t)d->n + 4;
	int i;
	for (i = 0; i < d->n; i++)
		if (d->e[i].str && strlen(d->e[i].str) + 1 > 4)
			s += (strlen(d->e[i].str) + 2) & ~(size_t)1;
	return s;
}

/* Header (magic, optional 8 extra header bytes) then the IFDs in order;
 * IFD 0 is the first.  Returns the length written to out. */
static size_t build(uint8_t *out, uint16_t magic, const char *extra8, const struct tifd *ifds,
		    int nifd)
{
	uint32_t off[8];
	size_t pos = extra8 ? 16 : 8;
	int i, k;

	for (i = 0; i < nifd; i++) {
		off[i] = (uint32_t)pos;
		pos += ifd_size(&ifds[i]);
	}
	memset(out, 0, pos);
	memcpy(out, "II", 2);
	put16(out + 2, magic);
	put32(out + 4, off[0]);
	if (extra8)
		memcpy(out + 8, extra8, 8);
	for (i = 0; i < nifd; i++) {
		uint8_t *p = out + off[i];
		uint32_t data = off[i] + 2 + 12u * (uint32_t)ifds[i].n + 4;
		put16(p, (uint16_t)ifds[i].n);
		for (k = 0; k < ifds[i].n; k++) {
			const struct tent *e = &ifds[i].e[k];
			uint8_t *q = p + 2 + 12 * k;
			put16(q, e->tag);
			put16(q + 2, e->type);
			if (e->str) {
				uint32_t n = (uint32_t)strlen(e->str) + 1;
				put32(q + 4, n);
				if (n <= 4) {
					memcpy(q + 8, e->str, n);
				} else {
					put32(q + 8, data);
					memcpy(out + data, e->str, n);
					data += (n + 1) & ~1u;
				}
			} else {
				put32(q + 4, 1);
				if (e->ptr)
					put32(q + 8, off[e->val]);
				else if (e->type == 3)
					put16(q + 8, (uint16_t)e->val);
				else
					put32(q + 8, e->val);
			}
		}
		put32(p + 2 + 12 * ifds[i].n, ifds[i].next >= 0 ? off[ifds[i].next] : 0);
	}
	return pos;
}

static int run(const uint8_t *p, size_t n, struct x_meta *m)
{
	struct sl_err e;
	return x_extract(p, n, n, m, &e);
}

/* Every cut of the file b[0..n), whose record is *whole: read from a
 * buffer that ends where an inaccessible page begins (a read past the cut
 * faults in every build, not only under ASan), answered SL_OK or
 * SL_E_CORRUPT, and recorded with nothing the whole file does not say
 * (tmeta.h).  Returns how many cuts were still taken for whole's format:
 * the cuts must have been read as that format for the rest to mean much. */
static size_t every_cut(const uint8_t *b, size_t n, const struct x_meta *whole)
{
	size_t k, kept = 0, bad = 0;

	for (k = 0; k < n; k++) {
		unsigned char *copy = t_guarded(b, k);
		struct x_meta m;
		char why[256];
		int rc;

		memset(&m, 0, sizeof(m));
		rc = run(copy, k, &m);
		if (rc != SL_OK && rc != SL_E_CORRUPT) {
			fprintf(stderr, "  cut at %zu of %zu: status %d\n", k, n, rc);
			bad++;
		} else if (!t_meta_within(&m, whole, why, sizeof(why))) {
			fprintf(stderr, "  cut at %zu of %zu (%s): %s\n", k, n, m.format, why);
			bad++;
		}
		kept += strcmp(m.format, whole->format) == 0;
		x_meta_release(&m);
		t_unguard(copy, k);
	}
	CHECK_INT(bad, 0);
	return kept;
}

/* ---- TIFF-based RAW -------------------------------------------------------- */

static void test_raw_naming_and_size(void)
{
	static uint8_t b[4096];
	struct x_meta m;
	/* NEF-like: IFD0 is a thumbnail; the SubIFD holds the CFA raw */
	const struct tent sub[] = {
		{0x00FE, 4, 0, NULL, 0}, {0x0100, 4, 3008, NULL, 0}, {0x0101, 4, 2000, NULL, 0},
		{0x0106, 3, 32803, NULL, 0},
	};
	const struct tent ifd0[] = {
		{0x00FE, 4, 1, NULL, 0},          {0x0100, 4, 160, NULL, 0},
		{0x0101, 4, 120, NULL, 0},        {0x010F, 2, 0, "NIKON CORPORATION", 0},
		{0x0110, 2, 0, "NIKON D70", 0},   {0x0112, 3, 1, NULL, 0},
		{0x014A, 4, 1, NULL, 1},
	};
	const struct tifd nef[] = {{ifd0, 7, -1}, {sub, 4, -1}};
	size_t n = build(b, 42, NULL, nef, 2);

	CHECK_INT(run(b, n, &m), SL_OK);
	CHECK_STR(m.format, "nef");
	CHECK(m.width == 3008 && m.height == 2000); /* not the 160x120 thumbnail */
	CHECK_STR(m.model, "NIKON D70");

	/* the same layout from a Sony with its private IFD0 tag: ARW */
	{
		const struct tent s0[] = {
			{0x00FE, 4, 1, NULL, 0}, {0x010F, 2, 0, "SONY", 0}, {0xC634, 4, 0, NULL, 0},
		};
		const struct tifd arw[] = {{s0, 3, -1}};
		n = build(b, 42, NULL, arw, 1);
		CHECK_INT(run(b, n, &m), SL_OK);
		CHECK_STR(m.format, "arw");
	}
	/* DNGVersion makes a DNG whoever made it */
	{
		const struct tent d0[] = {
			{0x010F, 2, 0, "Canon", 0}, {0xC612, 1, 0x01040000, NULL, 0},
		};
		const struct tifd dng[] = {{d0, 2, -1}};
		n = build(b, 42, NULL, dng, 1);
		CHECK_INT(run(b, n, &m), SL_OK);
		CHECK_STR(m.format, "dng");
	}
	/* a camera TIFF without sensor data stays a TIFF */
	{
		const struct tent t0[] = {
			{0x0100, 4, 200, NULL, 0}, {0x0101, 4, 130, NULL, 0},
			{0x010F, 2, 0, "NIKON CORPORATION", 0},
		};
		const struct tifd tif[] = {{t0, 3, -1}};
		n = build(b, 42, NULL, tif, 1);
		CHECK_INT(run(b, n, &m), SL_OK);
		CHECK_STR(m.format, "tiff");
		CHECK(m.width == 200 && m.height == 130);
	}
	/* multi-page TIFF: the second page does not replace the first's size */
	{
		const struct tent p0[] = {{0x0100, 4, 10, NULL, 0}, {0x0101, 4, 20, NULL, 0}};
		const struct tent p1[] = {{0x00FE, 4, 2, NULL, 0}, {0x0100, 4, 99, NULL, 0},
					  {0x0101, 4, 99, NULL, 0}};
		const struct tifd pages[] = {{p0, 2, 1}, {p1, 3, -1}};
		n = build(b, 42, NULL, pages, 2);
		CHECK_INT(run(b, n, &m), SL_OK);
		CHECK(m.width == 10 && m.height == 20);
	}
}

static void test_cr2_rw2_orf(void)
{
	static uint8_t b[4096];
	struct x_meta m;
	size_t n;
	/* CR2: "CR" after the header; size from the Exif pixel dimensions */
	const struct tent ex[] = {{0xA002, 4, 5184, NULL, 0}, {0xA003, 4, 3456, NULL, 0}};
	const struct tent c0[] = {
		{0x0100, 4, 1536, NULL, 0}, {0x0101, 4, 1024, NULL, 0},
		{0x010F, 2, 0, "Canon", 0},  {0x8769, 4, 1, NULL, 1},
	};
	const struct tifd cr2[] = {{c0, 4, -1}, {ex, 2, -1}};
	/* RW2: magic 0x55, sensor borders in IFD0 tags 4-7, ISO in tag 0x17 */
	const struct tent r0[] = {
		{0x0004, 3, 8, NULL, 0},    {0x0005, 3, 12, NULL, 0}, {0x0006, 3, 2744, NULL, 0},
		{0x0007, 3, 3660, NULL, 0}, {0x0017, 3, 80, NULL, 0}, {0x010F, 2, 0, "Panasonic", 0},
	};
	const struct tifd rw2[] = {{r0, 6, -1}};
	const struct tent o0[] = {{0x0100, 4, 4640, NULL, 0}, {0x0101, 4, 3472, NULL, 0}};
	const struct tifd orf[] = {{o0, 2, -1}};

	n = build(b, 42, "CR\x02\0\0\0\0\0", cr2, 2);
	CHECK_INT(run(b, n, &m), SL_OK);
	CHECK_STR(m.format, "cr2");
	CHECK(m.width == 5184 && m.height == 3456);

	n = build(b, 0x55, NULL, rw2, 1);
	CHECK_INT(run(b, n, &m), SL_OK);
	CHECK_STR(m.format, "rw2");
	CHECK(m.width == 3648 && m.height == 2736);
	CHECK(m.have & XM_ISO && m.iso == 80);

	n = build(b, 0x4F52, NULL, orf, 1);
	CHECK_INT(run(b, n, &m), SL_OK);
	CHECK_STR(m.format, "orf");
	CHECK(m.width == 4640 && m.height == 3472);
}

static void test_bigtiff(void)
{
	/* II, 43, bytesize 8, 0, IFD0 at 16: 2 entries of 20 bytes, next 0 */
	uint8_t b[16 + 8 + 40 + 8];
	struct x_meta m;
	uint8_t *e;
	memset(b, 0, sizeof(b));
	memcpy(b, "II+\0\x08\0\0\0\x10\0\0\0\0\0\0\0", 16);
	b[16] = 2;
	e = b + 24;
	put16(e, 0x0100), put16(e + 2, 16), put32(e + 4, 1), put32(e + 12, 8);  /* LONG8 */
	e += 20;
	put16(e, 0x0101), put16(e + 2, 3), put32(e + 4, 1), put16(e + 12, 9);   /* SHORT */
	CHECK_INT(run(b, sizeof(b), &m), SL_OK);
	CHECK_STR(m.format, "bigtiff");
	CHECK(m.width == 8 && m.height == 9);
}

static void test_garbage_ifd(void)
{
	static uint8_t b[4096];
	struct x_meta m;
	/* the Exif IFD's first entry has a type that does not exist */
	const struct tent ex[] = {{0x829A, 6656, 0, NULL, 0}, {0x8827, 3, 400, NULL, 0}};
	const struct tent i0[] = {{0x010F, 3, 12336, NULL, 0}, {0x8769, 4, 1, NULL, 1}};
	const struct tifd t[] = {{i0, 2, -1}, {ex, 2, -1}};
	size_t n = build(b, 42, NULL, t, 2);

	memset(&m, 0, sizeof(m));
	CHECK_INT(exif_parse(b, n, 0, &m, NULL), SL_OK);
	CHECK(!(m.have & XM_ISO)); /* nothing taken from a directory of noise */
	CHECK(strstr(m.warnings, "has no valid type; rest ignored") != NULL);
	CHECK_STR(m.make, "12336"); /* a number where text belongs, as a number */
}

/* ---- JPEG family ------------------------------------------------------------- */

/* A tiny baseline JPEG: SOI, [APP segments], SOF0 8x8, EOI. */
static size_t mini_jpeg(uint8_t *out, const uint8_t *app, size_t app_len, uint16_t w, uint16_t h)
{
	static const uint8_t sof[] = {0xFF, 0xC0, 0, 11, 8, 0, 8, 0, 8, 1, 1, 0x11, 0};
	size_t n = 0;
	memcpy(out, "\xff\xd8", 2);
	n = 2;
	memcpy(out + n, app, app_len);
	n += app_len;
	memcpy(out + n, sof, sizeof(sof));
	out[n + 5] = (uint8_t)(h >> 8), out[n + 6] = (uint8_t)h;
	out[n + 7] = (uint8_t)(w >> 8), out[n + 8] = (uint8_t)w;
	n += sizeof(sof);
	memcpy(out + n, "\xff\xd9", 2);
	return n + 2;
}

/* APP2 MPF whose second entry points at offset `second` (from the MPF
 * header, which starts 8 bytes into this segment). */
static size_t mpf_segment(uint8_t *s, uint32_t second)
{
	uint8_t *t = s + 8;
	memset(s, 0, 90);
	memcpy(s, "\xff\xe2\x00\x58MPF\0", 8);
	memcpy(t, "II*\0\x08\0\0\0", 8);
	put16(t + 8, 2);
	put16(t + 10, 0xB001), put16(t + 12, 4), put32(t + 14, 1), put32(t + 18, 2);
	put16(t + 22, 0xB002), put16(t + 24, 7), put32(t + 26, 32), put32(t + 30, 38);
	put32(t + 34, 0);
	/* entries at 38: first image, second image */
	put32(t + 38 + 16 + 8, second);
	return 90;
}

static void test_mpo_and_exv(void)
{
	uint8_t seg[128], b[1024];
	struct x_meta m;
	size_t first, n;

	/* MPF says image 2 follows; it does: MPO */
	mpf_segment(seg, 0);
	first = mini_jpeg(b, seg, 90, 8, 8);   /* its length: where image 2 goes */
	mpf_segment(seg, (uint32_t)(first - 10)); /* the MPF header is at 2 + 8 */
	first = mini_jpeg(b, seg, 90, 8, 8);
	n = first + mini_jpeg(b + first, (const uint8_t *)"", 0, 4, 4);
	CHECK_INT(run(b, n, &m), SL_OK);
	CHECK_STR(m.format, "mpo");
	CHECK(m.width == 8 && m.height == 8);
	/* ... but not when it points past the end */
	mpf_segment(seg, 5000);
	n = mini_jpeg(b, seg, 90, 8, 8);
	CHECK_INT(run(b, n, &m), SL_OK);
	CHECK_STR(m.format, "jpeg");

	/* EXV: Exiv2's sidecar, markers and metadata but no image */
	{
		static const uint8_t tiff[] = "II*\0\x08\0\0\0\x01\0\x0f\x01\x02\0\x04\0\0\0ABC\0\0\0\0\0";
		memcpy(b, "\xff\x01" "Exiv2\xff\xe1", 9);
		b[9] = 0, b[10] = (uint8_t)(2 + 6 + sizeof(tiff) - 1); /* segment length */
		memcpy(b + 11, "Exif\0\0", 6);
		memcpy(b + 17, tiff, sizeof(tiff) - 1);
		n = 17 + sizeof(tiff) - 1;
		CHECK_INT(run(b, n, &m), SL_OK);
		CHECK_STR(m.format, "exv");
		CHECK_STR(m.make, "ABC");
	}
}

/* ---- other containers ------------------------------------------------------ */

/* The HEIF builders below write big-endian boxes into their local b at n. */
#define BE32(v) b[n] = (uint8_t)((v) >> 24), b[n + 1] = (uint8_t)((v) >> 16), \
		b[n + 2] = (uint8_t)((v) >> 8), b[n + 3] = (uint8_t)(v), n += 4
#define BE16(v) b[n] = (uint8_t)((v) >> 8), b[n + 1] = (uint8_t)(v), n += 2
#define TYPE(s) memcpy(b + n, s, 4), n += 4
#define CLOSE(at) b[at] = (uint8_t)((n - (at)) >> 24), b[(at) + 1] = (uint8_t)((n - (at)) >> 16), \
		  b[(at) + 2] = (uint8_t)((n - (at)) >> 8), b[(at) + 3] = (uint8_t)(n - (at))

/* ftyp heic | meta(hdlr, pitm 1, iinf{hvc1 #1, Exif #2}, iloc #2,
 * iprp(ipco(ispe 4032x3024), ipma #1 -> 1)) | mdat(Exif item).
 * lead > 0 puts item #1 first in iloc with that many extents (only the
 * first one is used, the rest must be stepped over). */
static void heif_case(unsigned lead, int exif_found)
{
	static uint8_t b[1024];
	static const uint8_t tiff[] = "MM\0*\0\0\0\x08\0\x01\x01\x0f\0\x02\0\0\0\x04" "App\0\0\0\0\0";
	size_t n = 0, meta_at, iinf_at, iprp_at, ipco_at, mdat_at, iloc_at, exif_at;
	struct x_meta m;

	memset(b, 0, sizeof(b));
	BE32(20), TYPE("ftyp"), TYPE("heic"), BE32(0), TYPE("mif1");
	meta_at = n, BE32(0), TYPE("meta"), BE32(0);
	BE32(33), TYPE("hdlr"), BE32(0), BE32(0), TYPE("pict"), n += 13;
	BE32(14), TYPE("pitm"), BE32(0), BE16(1);
	iinf_at = n, BE32(0), TYPE("iinf"), BE32(0), BE16(2);
	BE32(21), TYPE("infe"), BE32(0x02000000), BE16(1), BE16(0), TYPE("hvc1"), n += 1;
	BE32(21), TYPE("infe"), BE32(0x02000000), BE16(2), BE16(0), TYPE("Exif"), n += 1;
	CLOSE(iinf_at);
	iloc_at = n, BE32(0), TYPE("iloc"), BE32(0), b[n++] = 0x44, b[n++] = 0x00, BE16(lead ? 2 : 1);
	if (lead) {
		unsigned e;
		BE16(1), BE16(0), BE16(lead);
		for (e = 0; e < lead && e < 3; e++)
			BE32(0), BE32(0);
	}
	exif_at = n + 6;
	BE16(2), BE16(0), BE16(1), BE32(0) /* offset, patched */, BE32(4 + sizeof(tiff) - 1);
	CLOSE(iloc_at);
	iprp_at = n, BE32(0), TYPE("iprp");
	ipco_at = n, BE32(0), TYPE("ipco");
	BE32(20), TYPE("ispe"), BE32(0), BE32(4032), BE32(3024);
	CLOSE(ipco_at);
	BE32(20), TYPE("ipma"), BE32(0), BE32(1), BE16(1), b[n++] = 1, b[n++] = 0x81;
	CLOSE(iprp_at);
	CLOSE(meta_at);
	mdat_at = n, BE32(0), TYPE("mdat");
	{
		size_t item = n, at = exif_at;
		BE32(0), memcpy(b + n, tiff, sizeof(tiff) - 1), n += sizeof(tiff) - 1;
		b[at] = (uint8_t)(item >> 24), b[at + 1] = (uint8_t)(item >> 16);
		b[at + 2] = (uint8_t)(item >> 8), b[at + 3] = (uint8_t)item;
	}
	CLOSE(mdat_at);
	CHECK_INT(run(b, n, &m), SL_OK);
	CHECK_STR(m.format, "heic");
	CHECK(m.width == 4032 && m.height == 3024);
	CHECK_STR(m.make, exif_found ? "App" : "");
	if (!lead)
		CHECK(every_cut(b, n, &m) > n / 2);
	x_meta_release(&m);
}

static void test_heif(void)
{
	heif_case(0, 1);
	heif_case(3, 1);     /* three extents stepped over */
	heif_case(40000, 0); /* an extent list that runs past its box */
}

/* A primary item that overlays others (iovl) on a 16000x16000 canvas
 * while its ispe says 64x64: libheif would allocate and fill the canvas
 * (800 MB and 5 s for a 695-byte input of the fuzz target heif); it must
 * not be decoded.  Grids declare their canvas the same way. */
static void overlay_case(const char *type, unsigned wide)
{
	static uint8_t b[512];
	size_t n = 0, meta_at, iinf_at, iprp_at, ipco_at, iloc_at, idat_at;
	uint32_t w = 0, h = 0;
	uint64_t ph;
	const char *src;
	struct sl_err e;
	int grid = strcmp(type, "grid") == 0;
	memset(b, 0, sizeof(b));
	BE32(20), TYPE("ftyp"), TYPE("heic"), BE32(0), TYPE("mif1");
	meta_at = n, BE32(0), TYPE("meta"), BE32(0);
	BE32(33), TYPE("hdlr"), BE32(0), BE32(0), TYPE("pict"), n += 13;
	BE32(14), TYPE("pitm"), BE32(0), BE16(1);
	iinf_at = n, BE32(0), TYPE("iinf"), BE32(0), BE16(1);
	BE32(21), TYPE("infe"), BE32(0x02000000), BE16(1), BE16(0), TYPE(type), n += 1;
	CLOSE(iinf_at);
	/* version 1 for the construction method: 1, in idat */
	iloc_at = n, BE32(0), TYPE("iloc"), BE32(0x01000000), b[n++] = 0x44, b[n++] = 0x00, BE16(1);
	BE16(1), BE16(1), BE16(0), BE16(1), BE32(0), BE32(grid ? 4 + 2 * (wide ? 4 : 2) : 10 + 2 * (wide ? 4 : 2));
	CLOSE(iloc_at);
	iprp_at = n, BE32(0), TYPE("iprp");
	ipco_at = n, BE32(0), TYPE("ipco");
	BE32(20), TYPE("ispe"), BE32(0), BE32(64), BE32(64);
	CLOSE(ipco_at);
	BE32(20), TYPE("ipma"), BE32(0), BE32(1), BE16(1), b[n++] = 1, b[n++] = 0x81;
	CLOSE(iprp_at);
	idat_at = n, BE32(0), TYPE("idat");
	b[n++] = 0, b[n++] = (uint8_t)wide;
	if (grid)
		b[n++] = 0, b[n++] = 0; /* one row, one column */
	else
		n += 8; /* the fill colour */
	if (wide) {
		BE32(16000), BE32(16000);
	} else {
		BE16(16000), BE16(16000);
	}
	CLOSE(idat_at);
	CLOSE(meta_at);
	CHECK_INT(bmff_canvas(b, n, 1, &w, &h), 0);
	CHECK(w == 16000 && h == 16000);
	CHECK_INT(bmff_canvas(b, n, 2, &w, &h), 1); /* no such item: not made of others */
	CHECK_INT(bmff_canvas(b, n - 3, 1, &w, &h), -1); /* its size cut off */
	CHECK_INT(heif_phash(b, n, &ph, &src, &e), SL_E_UNSUPPORTED);
	CHECK(strstr(e.msg, "canvas") != NULL || strstr(e.msg, "no HEIF decoder") != NULL);
}

static void test_heif_canvas(void)
{
	overlay_case("iovl", 1);
	overlay_case("iovl", 0);
	overlay_case("grid", 1);
	overlay_case("grid", 0);
}

#undef BE32
#undef BE16
#undef TYPE
#undef CLOSE

/* RIFF AVI: hdrl(avih, strl(strh vids, strf), strl(strh auds, strf)),
 * IDIT, then movi. */
static size_t avi_build(uint8_t *b, uint32_t usec, uint32_t frames, uint32_t vid_len,
			const char *idit, int video)
{
	size_t n = 0, riff, hdrl, strl;
#define LE32(v) put32(b + n, (uint32_t)(v)), n += 4
#define TAG(s) memcpy(b + n, s, 4), n += 4
#define SIZE_AT(at) put32(b + (at), (uint32_t)(n - (at) - 4))
	TAG("RIFF"), riff = n, LE32(0), TAG("AVI ");
	TAG("LIST"), hdrl = n, LE32(0), TAG("hdrl");
	TAG("avih"), LE32(56), LE32(usec), LE32(0), LE32(0), LE32(0), LE32(frames), LE32(0),
		LE32(2), LE32(0), LE32(video ? 640 : 0), LE32(video ? 480 : 0), n += 16;
	if (video) {
		TAG("LIST"), strl = n, LE32(0), TAG("strl");
		TAG("strh"), LE32(56), TAG("vids"), TAG("DIVX"), LE32(0), LE32(0), LE32(0),
			LE32(1001), LE32(30000), LE32(0), LE32(vid_len), n += 20;
		TAG("strf"), LE32(40), LE32(40), LE32(640), LE32((uint32_t)-480), n += 28;
		SIZE_AT(strl);
	}
	TAG("LIST"), strl = n, LE32(0), TAG("strl");
	TAG("strh"), LE32(56), TAG("auds"), n += 52;
	TAG("strf"), LE32(16), put16(b + n, 1), put16(b + n + 2, 2), n += 4, LE32(48000),
		LE32(192000), n += 4;
	SIZE_AT(strl);
	if (idit) {
		size_t len = strlen(idit) + 1;
		TAG("IDIT"), LE32(len), memcpy(b + n, idit, len), n += len + (len & 1);
	}
	SIZE_AT(hdrl);
	TAG("LIST"), LE32(4 + 8), TAG("movi"), TAG("00dc"), LE32(0);
	SIZE_AT(riff);
#undef LE32
#undef TAG
#undef SIZE_AT
	return n;
}

static void test_avi(void)
{
	static const struct {
		const char *idit, *want;
	} dates[] = {
		{"Mon Mar 10 15:04:43 2003\n", "2003-03-10T15:04:43"},
		{"THU OCT 26 16:46:04 2006", "2006-10-26T16:46:04"},
		{"2001/ 1/27  1:42PM", "2001-01-27T13:42:00"},
		{"2005/11/28/ 09:19", "2005-11-28T09:19:00"},
		{"2002-12-16  15:35:01", "2002-12-16T15:35:01"},
		{"sometime", ""},
	};
	static uint8_t b[1024];
	struct x_meta m;
	size_t i, n;

	for (i = 0; i < sizeof(dates) / sizeof(dates[0]); i++) {
		n = avi_build(b, 33367, 300, 300, dates[i].idit, 1);
		CHECK_INT(run(b, n, &m), SL_OK);
		CHECK_STR(m.format, "avi");
		CHECK_STR(m.datetime_original, dates[i].want);
		CHECK(!dates[i].want[0] == (strstr(m.warnings, "avi: capture date") != NULL));
	}
	CHECK(m.width == 640 && m.height == 480);
	CHECK((m.have & XM_DURATION) && fabs(m.duration - 300 * 0.033367) < 1e-9);
	/* avih counting both streams' frames: the video stream's count wins */
	n = avi_build(b, 33367, 600, 300, NULL, 1);
	CHECK_INT(run(b, n, &m), SL_OK);
	CHECK(fabs(m.duration - 300 * 1001.0 / 30000) < 1e-9);
	/* sound only: the file's size over its bytes per second */
	n = avi_build(b, 0, 0, 0, NULL, 0);
	CHECK_INT(run(b, n, &m), SL_OK);
	CHECK(!(m.have & XM_DIMS));
	CHECK(fabs(m.duration - (double)n / 192000) < 1e-12);
	n = avi_build(b, 33367, 300, 300, dates[0].idit, 1);
	CHECK_INT(run(b, n, &m), SL_OK);
	CHECK(every_cut(b, n, &m) > n / 2);
	x_meta_release(&m);
}

static void test_png_profile(void)
{
	/* zTXt "Raw profile type exif": zlib of "\nexif\n  26\n<hex of Exif\0\0+TIFF>";
	 * a second profile (make "ABC") is not read */
	static uint8_t tiff[] = "II*\0\x08\0\0\0\x01\0\x0f\x01\x02\0\x04\0\0\0XYZ\0\0\0\0\0";
	char text[256];
	uint8_t z[256], b[1024];
	size_t n = 0, i, tl, copy;
	struct x_meta m;

	memcpy(b, "\x89PNG\r\n\x1a\n\0\0\0\x0dIHDR\0\0\0\x05\0\0\0\x07\x08\x02\0\0\0CRC!", 33);
	n = 33;
	for (copy = 0; copy < 2; copy++) {
		uLongf zl = sizeof(z);
		size_t len;
		if (copy)
			memcpy(tiff + 18, "ABC", 3);
		tl = (size_t)snprintf(text, sizeof(text), "\nexif\n      %zu\n457869660000",
				      sizeof(tiff) - 1 + 6);
		for (i = 0; i < sizeof(tiff) - 1; i++)
			tl += (size_t)snprintf(text + tl, sizeof(text) - tl, "%02x", tiff[i]);
		text[tl++] = '\n';
		CHECK(compress(z, &zl, (const Bytef *)text, tl) == Z_OK);
		len = 22 + 1 + zl;
		b[n] = 0, b[n + 1] = 0, b[n + 2] = (uint8_t)(len >> 8), b[n + 3] = (uint8_t)len;
		memcpy(b + n + 4, "zTXtRaw profile type exif\0\0", 4 + 22 + 1);
		memcpy(b + n + 4 + 27, z, zl);
		n += 4 + 4 + len + 4;
	}
	memcpy(b + n, "\0\0\0\0IEND\xae\x42\x60\x82", 12);
	n += 12;
	CHECK_INT(run(b, n, &m), SL_OK);
	CHECK(m.width == 5 && m.height == 7);
	CHECK_STR(m.make, "XYZ");
	CHECK(strstr(m.warnings, "more than one EXIF text profile") != NULL);
}

static void test_small_formats(void)
{
	uint8_t b[256];
	struct x_meta m;

	/* BMP: 40-byte header, width 8, height -6 (top-down) */
	memset(b, 0, sizeof(b));
	memcpy(b, "BM", 2);
	put32(b + 14, 40), put32(b + 18, 8), put32(b + 22, (uint32_t)-6);
	CHECK_INT(run(b, 54, &m), SL_OK);
	CHECK_STR(m.format, "bmp");
	CHECK(m.width == 8 && m.height == 6);

	/* JP2: signature, ftyp, jp2h(ihdr 130 x 200) */
	memset(b, 0, sizeof(b));
	memcpy(b, "\0\0\0\x0cjP  \r\n\x87\n" "\0\0\0\x14" "ftypjp2 \0\0\0\0jp2 "
		  "\0\0\0\x2d" "jp2h" "\0\0\0\x16" "ihdr\0\0\0\x82\0\0\0\xc8\0\x03\x07\x07\0\0",
	       12 + 20 + 8 + 22);
	CHECK_INT(run(b, 12 + 20 + 8 + 22, &m), SL_OK);
	CHECK_STR(m.format, "jp2");
	CHECK(m.width == 200 && m.height == 130);
}

static void test_raf(void)
{
	/* header: JPEG at 108, then a directory with RawImageCroppedSize */
	static uint8_t b[512];
	uint8_t jpg[64];
	size_t jl = mini_jpeg(jpg, (const uint8_t *)"", 0, 8, 8), d;
	struct x_meta m;

	memset(b, 0, sizeof(b));
	memcpy(b, "FUJIFILMCCD-RAW 0201FF392201FinePix S5Pro", 41);
	b[84 + 3] = 108, b[88 + 3] = (uint8_t)jl;
	memcpy(b + 108, jpg, jl);
	d = 108 + jl;
	b[92 + 2] = (uint8_t)(d >> 8), b[92 + 3] = (uint8_t)d;
	b[d + 3] = 2;                                     /* two records */
	memcpy(b + d + 4, "\x01\x00\x00\x04\x05\xa4\x11\x00", 8);  /* full 4352x1444 */
	memcpy(b + d + 12, "\x01\x11\x00\x04\x05\x90\x10\xa0", 8); /* cropped 4256x1424 */
	CHECK_INT(run(b, d + 20, &m), SL_OK);
	CHECK_STR(m.format, "raf");
	CHECK(m.width == 4256 && m.height == 1424);
}

static void test_crw(void)
{
	/* One heap: ImageInfo, MakeModel, then 1022 records naming the heap
	 * itself as a sub-heap.  Five levels of that is 1022^5 records without
	 * the parser's budget; with it, the file costs 4096 records. */
	enum { START = 26, DATA = 8 + 14, COUNT = 1024 };
	static uint8_t b[START + DATA + 2 + 10 * COUNT + 4];
	size_t n = sizeof(b), t = DATA, i;
	struct x_meta m;

	memset(b, 0, sizeof(b));
	memcpy(b, "II\x1a\0\0\0HEAPCCDR", 14);
	put32(b + START, 3000), put32(b + START + 4, 2000);
	memcpy(b + START + 8, "Canon\0EOS D30\0", 14);
	put16(b + START + t, COUNT);
	for (i = 0; i < COUNT; i++) {
		uint8_t *r = b + START + t + 2 + 10 * i;
		if (i == 0)
			put16(r, 0x1810), put32(r + 2, 8), put32(r + 6, 0);
		else if (i == 1)
			put16(r, 0x080a), put32(r + 2, 14), put32(r + 6, 8);
		else
			put16(r, 0x300a), put32(r + 2, (uint32_t)(n - START)), put32(r + 6, 0);
	}
	put32(b + n - 4, (uint32_t)t);
	CHECK_INT(run(b, n, &m), SL_OK);
	CHECK_STR(m.format, "crw");
	CHECK(m.width == 3000 && m.height == 2000);
	CHECK_STR(m.make, "Canon");
	CHECK_STR(m.model, "EOS D30");
	CHECK(strstr(m.warnings, "crw: stopped after 4096 records") != NULL);
}

int main(void)
{
	RUN(test_raw_naming_and_size);
	RUN(test_cr2_rw2_orf);
	RUN(test_bigtiff);
	RUN(test_garbage_ifd);
	RUN(test_mpo_and_exv);
	RUN(test_heif);
	RUN(test_heif_canvas);
	RUN(test_avi);
	RUN(test_png_profile);
	RUN(test_small_formats);
	RUN(test_raf);
	RUN(test_crw);
	return t_done();
}
