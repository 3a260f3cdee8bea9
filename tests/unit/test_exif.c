/* Our EXIF/TIFF reader on blocks written by the independent writer in
 * tools/mkcorpus, on hand-damaged blocks, on every truncation, and on the
 * shared corpus of files from cameras and other programs against what
 * exiftool read from them (expected.json): a reference neither written nor
 * read by this project. */
#include <ctype.h>
#include <math.h>

#include "indexer/formats/exif.h"
#include "indexer/extract.h"
#include "indexer/formats/parsers.h"
#include "tests/unit/test.h"
#include "tests/unit/tmeta.h"
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

/* Every cut of a block: read from a buffer that ends where an inaccessible
 * page begins (a read past the cut faults in every build), and recorded
 * with nothing the whole block does not say (tmeta.h). */
static void test_every_truncation(void)
{
	struct exifw_in in;
	struct strbuf sb = STRBUF_INIT;
	struct x_meta whole;
	size_t n, bad = 0;
	int be, complete = 0;
	char why[256];

	for (be = 0; be <= 1; be++) {
		sb_reset(&sb);
		fill(&in, be);
		exifw_build(&in, &sb);
		memset(&whole, 0, sizeof(whole));
		exif_parse((const uint8_t *)sb.p, sb.len, EXIF_DIMS, &whole, NULL);
		for (n = 0; n <= sb.len; n++) {
			uint8_t *copy = t_guarded(sb.p, n);
			struct x_meta m;
			memset(&m, 0, sizeof(m));
			exif_parse(copy, n, EXIF_DIMS, &m, NULL);
			if (n == sb.len && m.iso == 800 && (m.have & XM_GPS))
				complete++;
			if (!t_meta_within(&m, &whole, why, sizeof(why))) {
				fprintf(stderr, "  cut at %zu of %zu: %s\n", n, sb.len, why);
				bad++;
			}
			x_meta_release(&m);
			t_unguard(copy, n);
		}
		x_meta_release(&whole);
	}
	CHECK_INT(complete, 2);
	CHECK_INT(bad, 0);
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

/* ---- the shared corpus against exiftool ----------------------------------- */

/* expected.json (exiftool -j -G) is a list of flat objects whose values
 * are strings and numbers: a reader for that shape and no other. */
struct jval {
	char key[64];
	char text[512]; /* a string, or a number as exiftool printed it */
	int is_num;
	double num;
};

struct jobj {
	struct jval v[96];
	int n;
};

static const char *j_ws(const char *p)
{
	while (*p && isspace((unsigned char)*p))
		p++;
	return p;
}

/* A JSON string at p (at its quote) into out; the text after it, NULL when
 * it is not one.  \u escapes beyond ASCII are kept as '?': no field
 * compared here has any. */
static const char *j_string(const char *p, char *out, size_t cap)
{
	size_t n = 0;

	if (*p++ != '"')
		return NULL;
	for (; *p && *p != '"'; p++) {
		char ch = *p;
		if (ch == '\\') {
			p++;
			switch (*p) {
			case 'n': ch = '\n'; break;
			case 't': ch = '\t'; break;
			case 'r': ch = '\r'; break;
			case 'b': ch = '\b'; break;
			case 'f': ch = '\f'; break;
			case 'u': {
				unsigned u = 0;
				if (sscanf(p + 1, "%4x", &u) != 1)
					return NULL;
				ch = u < 0x80 ? (char)u : '?';
				p += 4;
				break;
			}
			case '\0': return NULL;
			default: ch = *p;
			}
		}
		if (n + 1 < cap)
			out[n++] = ch;
	}
	out[n] = '\0';
	return *p == '"' ? p + 1 : NULL;
}

/* The next object of the list at *pp into *o: 1, 0 at the list's end, -1
 * on anything not of the shape. */
static int j_next(const char **pp, struct jobj *o)
{
	const char *p = j_ws(*pp);

	if (*p == '[' || *p == ',')
		p = j_ws(p + 1);
	if (*p == ']')
		return 0;
	if (*p != '{')
		return -1;
	o->n = 0;
	for (p = j_ws(p + 1); *p != '}'; p = j_ws(p)) {
		struct jval *v = &o->v[o->n < 96 ? o->n : 95];
		if (*p == ',')
			p = j_ws(p + 1);
		p = j_string(p, v->key, sizeof(v->key));
		if (!p || *(p = j_ws(p)) != ':')
			return -1;
		p = j_ws(p + 1);
		if (*p == '"') {
			p = j_string(p, v->text, sizeof(v->text));
			v->is_num = 0;
		} else {
			char *end;
			v->num = strtod(p, &end);
			if (end == p)
				return -1;
			snprintf(v->text, sizeof(v->text), "%.*s", (int)(end - p), p);
			v->is_num = 1;
			p = end;
		}
		if (!p)
			return -1;
		if (o->n < 96)
			o->n++;
	}
	*pp = p + 1;
	return 1;
}

static const struct jval *j_get(const struct jobj *o, const char *key)
{
	int i;
	for (i = 0; i < o->n; i++)
		if (strcmp(o->v[i].key, key) == 0)
			return &o->v[i];
	return NULL;
}

/* exiftool's text, trimmed as a record's is: an empty text is no text */
static void trimmed(const char *s, char *out, size_t cap)
{
	size_t n;
	while (isspace((unsigned char)*s))
		s++;
	snprintf(out, cap, "%s", s);
	n = strlen(out);
	while (n && isspace((unsigned char)out[n - 1]))
		out[--n] = '\0';
}

struct tally {
	int compared, bad;
};

static void agree(struct tally *t, const char *file, const char *what, int ok, const char *got,
		  const char *want)
{
	t->compared++;
	if (!ok) {
		t->bad++;
		fprintf(stderr, "  %s: %s '%s', exiftool '%s'\n", file, what, got, want);
	}
}

static void text_field(struct tally *t, const char *file, const struct jobj *o, const char *key,
		       const char *got)
{
	const struct jval *v = j_get(o, key);
	char want[512];
	if (!v)
		return;
	trimmed(v->text, want, sizeof(want));
	agree(t, file, key, strcmp(got, want) == 0, got, want);
}

/* exiftool's number (the first of several: "200 0"), within a relative
 * 1e-6; a text that is no number is no value */
static void number_field(struct tally *t, const char *file, const struct jobj *o, const char *key,
			 int have, double got)
{
	const struct jval *v = j_get(o, key);
	char g[64];
	double want;
	int is;
	if (!v)
		return;
	is = v->is_num || sscanf(v->text, "%lf", &want) == 1;
	if (v->is_num)
		want = v->num;
	snprintf(g, sizeof(g), have ? "%.10g" : "(none)", got);
	agree(t, file, key,
	      is ? have && fabs(got - want) <= 1e-6 * (fabs(want) > 1 ? fabs(want) : 1) : !have, g,
	      v->text);
}

static void date_field(struct tally *t, const char *file, const struct jobj *o, const char *got)
{
	const struct jval *v = j_get(o, "EXIF:DateTimeOriginal");
	int f[6];
	char want[32] = "";
	if (!v)
		return;
	/* EXIF's blank date ("    :  :     :  :  ") is no date */
	if (sscanf(v->text, "%4d:%2d:%2d %2d:%2d:%2d", &f[0], &f[1], &f[2], &f[3], &f[4], &f[5]) ==
	    6)
		snprintf(want, sizeof(want), "%.4s-%.2s-%.2sT%.2s:%.2s:%.2s", v->text, v->text + 5,
			 v->text + 8, v->text + 11, v->text + 14, v->text + 17);
	agree(t, file, "EXIF:DateTimeOriginal", strcmp(got, want) == 0, got, v->text);
}

static void test_corpus(void)
{
	const char *dir = getenv("SEEKLESS_CORPUS") ? getenv("SEEKLESS_CORPUS") : SEEKLESS_CORPUS_DIR;
	struct tally t = {0, 0};
	char path[4200];
	struct jobj *o = malloc(sizeof(*o));
	unsigned char *json;
	const char *p;
	size_t n;
	int files = 0, rc;

	snprintf(path, sizeof(path), "%s/expected.json", dir);
	json = t_read(path, &n);
	if (!json) {
		snprintf(path, sizeof(path), "no shared corpus at %s", dir);
		t_skip_part(path);
		free(o);
		return;
	}
	json = realloc(json, n + 1);
	json[n] = '\0';
	for (p = (const char *)json; (rc = j_next(&p, o)) == 1;) {
		const struct jval *name = j_get(o, "SourceFile");
		unsigned char *data;
		struct x_meta m;
		struct sl_err e;
		size_t len;
		if (!name || !j_get(o, "File:FileType"))
			continue; /* exiftool could not read it either */
		snprintf(path, sizeof(path), "%s/%s", dir, name->text);
		data = t_read(path, &len);
		CHECK(data != NULL);
		if (!data)
			continue;
		memset(&m, 0, sizeof(m));
		x_extract(data, len, len, &m, &e);
		text_field(&t, name->text, o, "EXIF:Make", m.make);
		text_field(&t, name->text, o, "EXIF:Model", m.model);
		text_field(&t, name->text, o, "EXIF:LensModel", m.lens_model);
		date_field(&t, name->text, o, m.datetime_original);
		number_field(&t, name->text, o, "EXIF:Orientation", m.have & XM_ORIENTATION,
			     m.orientation);
		number_field(&t, name->text, o, "EXIF:ISO", m.have & XM_ISO, (double)m.iso);
		number_field(&t, name->text, o, "EXIF:ExposureTime", m.have & XM_EXPOSURE,
			     m.exposure_time);
		number_field(&t, name->text, o, "EXIF:FNumber", m.have & XM_FNUMBER, m.f_number);
		number_field(&t, name->text, o, "EXIF:FocalLength", m.have & XM_FOCAL,
			     m.focal_length);
		number_field(&t, name->text, o, "Composite:GPSLatitude", m.have & XM_GPS, m.gps_lat);
		number_field(&t, name->text, o, "Composite:GPSLongitude", m.have & XM_GPS,
			     m.gps_lon);
		x_meta_release(&m);
		free(data);
		files++;
	}
	CHECK_INT(rc, 0); /* the whole list read */
	fprintf(stderr, "  %d files, %d EXIF values compared with exiftool's, %d differ\n", files,
		t.compared, t.bad);
	/* the corpus holds some 1400 such values: most must have been read */
	CHECK(t.compared >= 1000);
	CHECK_INT(t.bad, 0);
	free(json);
	free(o);
}

int main(void)
{
	RUN(test_time_zone);
	RUN(test_both_orders);
	RUN(test_damage);
	RUN(test_every_truncation);
	RUN(test_text_and_dates);
	RUN(test_corpus);
	return t_done();
}
