/* Our EXIF/TIFF reader on blocks written by the independent writer in
 * tools/mkcorpus, on hand-damaged blocks, and on every truncation. */
#include <math.h>

#include "indexer/exif.h"
#include "indexer/parsers.h"
#include "tests/unit/test.h"
#include "tools/mkcorpus/exifw.h"

static void fill(struct exifw_in *in, int be)
{
	memset(in, 0, sizeof(*in));
	in->big_endian = be;
	in->make = "NIKON CORPORATION";
	in->model = "NIKON D750";
	in->lens_model = "24.0-120.0 mm f/4.0";
	in->datetime = "2019:07:14 16:05:59";
	in->orientation = 6;
	in->exp_num = 1;
	in->exp_den = 250;
	in->fnum_num = 56;
	in->fnum_den = 10;
	in->focal_num = 85;
	in->focal_den = 1;
	in->iso = 800;
	in->pixel_w = 6016;
	in->pixel_h = 4016;
	in->has_gps = 1;
	in->lat[0][0] = 33, in->lat[0][1] = 1;
	in->lat[1][0] = 51, in->lat[1][1] = 1;
	in->lat[2][0] = 3150, in->lat[2][1] = 100;
	in->lon[0][0] = 151, in->lon[0][1] = 1;
	in->lon[1][0] = 12, in->lon[1][1] = 1;
	in->lon[2][0] = 3600, in->lon[2][1] = 100;
	in->lat_ref = 'S';
	in->lon_ref = 'E';
}

static void check_full(const struct x_meta *m)
{
	CHECK_STR(m->make, "NIKON CORPORATION");
	CHECK_STR(m->model, "NIKON D750");
	CHECK_STR(m->lens_model, "24.0-120.0 mm f/4.0");
	CHECK_STR(m->datetime_original, "2019-07-14T16:05:59");
	CHECK(m->have & XM_ORIENTATION);
	CHECK_INT(m->orientation, 6);
	CHECK(m->have & XM_EXPOSURE && fabs(m->exposure_time - 0.004) < 1e-12);
	CHECK(m->have & XM_FNUMBER && fabs(m->f_number - 5.6) < 1e-12);
	CHECK(m->have & XM_FOCAL && fabs(m->focal_length - 85) < 1e-12);
	CHECK(m->have & XM_ISO && m->iso == 800);
	CHECK(m->have & XM_GPS);
	CHECK(fabs(m->gps_lat - -(33 + 51 / 60.0 + 31.5 / 3600)) < 1e-9);
	CHECK(fabs(m->gps_lon - (151 + 12 / 60.0 + 36.0 / 3600)) < 1e-9);
	CHECK_STR(m->warnings, "");
}

static void test_both_orders(void)
{
	int be;
	for (be = 0; be <= 1; be++) {
		struct exifw_in in;
		struct strbuf sb = STRBUF_INIT;
		struct x_meta m;
		fill(&in, be);
		exifw_build(&in, &sb);
		memset(&m, 0, sizeof(m));
		CHECK_INT(exif_parse((const uint8_t *)sb.p, sb.len, 0, &m, NULL), SL_OK);
		check_full(&m);
		CHECK(!(m.have & XM_DIMS)); /* not asked: a JPEG's size is its SOF */
		sb_free(&sb);
	}
}

/* Offsets in a little-endian block from the writer: IFD0 at 8. */
static uint16_t rd16(const uint8_t *p) { return (uint16_t)(p[0] | p[1] << 8); }
static void wr16(uint8_t *p, uint16_t v) { p[0] = (uint8_t)v; p[1] = (uint8_t)(v >> 8); }
static void wr32(uint8_t *p, uint32_t v) { wr16(p, (uint16_t)v); wr16(p + 2, (uint16_t)(v >> 16)); }

static uint8_t *entry(uint8_t *blk, uint32_t ifd, uint16_t tag)
{
	uint16_t n = rd16(blk + ifd), i;
	for (i = 0; i < n; i++)
		if (rd16(blk + ifd + 2 + 12 * i) == tag)
			return blk + ifd + 2 + 12 * i;
	return NULL;
}

static void test_damage(void)
{
	struct exifw_in in;
	struct strbuf sb = STRBUF_INIT;
	struct x_meta m;
	uint8_t *blk, *e;
	uint32_t exif_ifd;

	fill(&in, 0);
	exifw_build(&in, &sb);
	blk = (uint8_t *)sb.p;
	e = entry(blk, 8, 0x8769);
	CHECK(e != NULL);
	exif_ifd = (uint32_t)(e[8] | e[9] << 8 | e[10] << 16 | (uint32_t)e[11] << 24);

	/* zero denominator: the field stays unknown */
	e = entry(blk, exif_ifd, 0x829D);
	{
		uint32_t off = (uint32_t)(e[8] | e[9] << 8 | e[10] << 16 | (uint32_t)e[11] << 24);
		wr32(blk + off + 4, 0);
	}
	/* absurd count on LensModel */
	wr32(entry(blk, exif_ifd, 0xA434) + 4, 0x7fffffff);
	memset(&m, 0, sizeof(m));
	CHECK_INT(exif_parse(blk, sb.len, 0, &m, NULL), SL_OK);
	CHECK(!(m.have & XM_FNUMBER));
	CHECK_STR(m.lens_model, "");
	CHECK(strstr(m.warnings, "count 2147483647 larger than the EXIF block") != NULL);
	CHECK_STR(m.make, "NIKON CORPORATION"); /* the rest still read */
	CHECK_INT(m.iso, 800);

	/* Exif IFD pointer aimed at IFD0 itself */
	wr32(entry(blk, 8, 0x8769) + 8, 8);
	memset(&m, 0, sizeof(m));
	CHECK_INT(exif_parse(blk, sb.len, 0, &m, NULL), SL_OK);
	CHECK(strstr(m.warnings, "IFD loop at offset 8") != NULL);
	CHECK(!(m.have & XM_ISO));

	/* bad headers */
	memset(&m, 0, sizeof(m));
	CHECK_INT(exif_parse((const uint8_t *)"XX*\0\10\0\0\0", 8, 0, &m, NULL), SL_E_CORRUPT);
	CHECK_INT(exif_parse((const uint8_t *)"II*\0\377\0\0\0", 8, 0, &m, NULL), SL_E_CORRUPT);
	CHECK_INT(exif_parse((const uint8_t *)"II+\0\10\0\0\0", 8, 0, &m, NULL), SL_E_CORRUPT);
	CHECK_INT(exif_parse((const uint8_t *)"II+\0\4\0\0\0\20\0\0\0\0\0\0\0", 16, 0, &m, NULL),
		  SL_E_CORRUPT); /* BigTIFF wants 8-byte offsets */
	CHECK_INT(exif_parse((const uint8_t *)"II", 2, 0, &m, NULL), SL_E_CORRUPT);
	CHECK_INT(exif_parse(NULL, 0, 0, &m, NULL), SL_E_CORRUPT);
	sb_free(&sb);
}

static void test_every_truncation(void)
{
	struct exifw_in in;
	struct strbuf sb = STRBUF_INIT;
	size_t n;
	int be, complete = 0;

	for (be = 0; be <= 1; be++) {
		sb_reset(&sb);
		fill(&in, be);
		exifw_build(&in, &sb);
		for (n = 0; n <= sb.len; n++) {
			/* a copy of exactly n bytes, so ASan sees any overread */
			uint8_t *copy = malloc(n ? n : 1);
			struct x_meta m;
			memcpy(copy, sb.p, n);
			memset(&m, 0, sizeof(m));
			exif_parse(copy, n, EXIF_DIMS, &m, NULL);
			if (n == sb.len && m.iso == 800 && (m.have & XM_GPS))
				complete++;
			free(copy);
		}
	}
	CHECK_INT(complete, 2);
	sb_free(&sb);
}

static void test_text_and_dates(void)
{
	struct exifw_in in;
	struct strbuf sb = STRBUF_INIT;
	struct x_meta m;
	char dst[16];

	fill(&in, 1);
	in.make = "Canon   ";
	in.datetime = "    :  :     :  :  "; /* EXIF's "unknown": no date, no fuss */
	exifw_build(&in, &sb);
	memset(&m, 0, sizeof(m));
	exif_parse((const uint8_t *)sb.p, sb.len, 0, &m, NULL);
	CHECK_STR(m.make, "Canon");
	CHECK_STR(m.datetime_original, "");
	CHECK_STR(m.warnings, "");
	sb_reset(&sb);
	in.datetime = "2019-07-14 16:05"; /* not the EXIF form: dropped, said */
	exifw_build(&in, &sb);
	memset(&m, 0, sizeof(m));
	exif_parse((const uint8_t *)sb.p, sb.len, 0, &m, NULL);
	CHECK_STR(m.datetime_original, "");
	CHECK(strstr(m.warnings, "not in EXIF form") != NULL);
	sb_free(&sb);

	x_copy_text(dst, sizeof(dst), (const uint8_t *)"SONY\xe9\x01X\0junk", 10);
	CHECK_STR(dst, "SONY?X"); /* undecodable byte shown as such, control byte dropped */
	x_copy_text(dst, 4, (const uint8_t *)"abcdef", 6);
	CHECK_STR(dst, "abc");
	x_copy_text(dst, 3, (const uint8_t *)"a\xc3\xa9", 3);
	CHECK_STR(dst, "a"); /* never half a character */
}

/* Parse a block written with these offsets and fraction into *m (kept
 * from an earlier call when keep). */
static void parse_times(struct x_meta *m, int keep, const char *offset, const char *original,
			const char *subsec)
{
	struct exifw_in in;
	struct strbuf sb = STRBUF_INIT;

	fill(&in, 0);
	in.offset = offset;
	in.offset_original = original;
	in.subsec_original = subsec;
	exifw_build(&in, &sb);
	if (!keep)
		memset(m, 0, sizeof(*m));
	CHECK_INT(exif_parse((const uint8_t *)sb.p, sb.len, 0, m, NULL), SL_OK);
	sb_free(&sb);
}

static void test_time_zone(void)
{
	struct x_meta m;

	parse_times(&m, 0, "+01:00", "-05:30", "070");
	CHECK_STR(m.tz_offset, "-05:30"); /* the capture's own offset wins */
	CHECK_STR(m.subsec, "070");       /* digits as written: leading zeros count */
	parse_times(&m, 0, "+09:00", NULL, NULL);
	CHECK_STR(m.tz_offset, "+09:00"); /* else the offset of ModifyDate's clock */
	CHECK_STR(m.subsec, "");
	/* a later EXIF block's OffsetTimeOriginal overrides an OffsetTime ... */
	parse_times(&m, 1, NULL, "+02:00", "5");
	CHECK_STR(m.tz_offset, "+02:00");
	CHECK_STR(m.subsec, "5");
	/* ... but nothing overrides an OffsetTimeOriginal */
	parse_times(&m, 1, "+03:00", "+04:00", "6");
	CHECK_STR(m.tz_offset, "+02:00");
	CHECK_STR(m.subsec, "5");
	CHECK_STR(m.warnings, "");
	/* blank is EXIF's "unknown"; other shapes are dropped and said */
	parse_times(&m, 0, "+01:00", "   :  ", "  ");
	CHECK_STR(m.tz_offset, "+01:00");
	CHECK_STR(m.subsec, "");
	CHECK_STR(m.warnings, "");
	parse_times(&m, 0, NULL, "+0200", "12 34");
	CHECK_STR(m.tz_offset, "");
	CHECK(strstr(m.warnings, "time offset '+0200' not in EXIF form") != NULL);
	CHECK_STR(m.subsec, "12");
	parse_times(&m, 0, "+25:00", "+1:00", "x9");
	CHECK_STR(m.tz_offset, "");
	CHECK_STR(m.subsec, "");
	parse_times(&m, 0, NULL, "-14:00", NULL);
	CHECK_STR(m.tz_offset, "-14:00");
	parse_times(&m, 0, NULL, NULL, "  042");   /* padded on the left */
	CHECK_STR(m.subsec, "042");
}

int main(void)
{
	RUN(test_time_zone);
	RUN(test_both_orders);
	RUN(test_damage);
	RUN(test_every_truncation);
	RUN(test_text_and_dates);
	return t_done();
}
