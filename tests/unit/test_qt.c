/* Movies built here box by box (qt.h): what each source gives, which wins,
 * and that the moov box streamed past in chunks of every size from 1 byte
 * gives what it gives held whole.  (test_media.py compares real movies
 * and ffmpeg's with exiftool; the fuzz target qt checks whole against
 * streamed on any input.) */
#include <math.h>

#include "indexer/formats/qt.h"
#include "tests/unit/test.h"

static uint8_t *buf;
static size_t len, cap;
static size_t open_at[8];
static int depth;

static void put(const void *p, size_t n)
{
	if (len + n > cap) {
		cap = (len + n) * 2;
		buf = realloc(buf, cap);
		if (!buf)
			abort();
	}
	memcpy(buf + len, p, n);
	len += n;
}

static void be(uint64_t v, int bytes)
{
	uint8_t b[8];
	int i;
	for (i = 0; i < bytes; i++)
		b[i] = (uint8_t)(v >> (8 * (bytes - 1 - i)));
	put(b, (size_t)bytes);
}

static void zeros(size_t n)
{
	static const uint8_t z[256];
	while (n) {
		size_t k = n < sizeof(z) ? n : sizeof(z);
		put(z, k);
		n -= k;
	}
}

static void box(const char *type)
{
	open_at[depth++] = len;
	be(0, 4);
	put(type, 4);
}

static void end(void)
{
	size_t at = open_at[--depth], size = len - at;
	buf[at] = (uint8_t)(size >> 24), buf[at + 1] = (uint8_t)(size >> 16);
	buf[at + 2] = (uint8_t)(size >> 8), buf[at + 3] = (uint8_t)size;
}

static void text_item(const char *type, const char *s)
{
	box(type);
	be(strlen(s), 2), be(0x15c7, 2), put(s, strlen(s));
	end();
}

static void data_item(uint32_t index, const char *s)
{
	be(8 + 16 + strlen(s), 4), be(index, 4);
	be(16 + strlen(s), 4), put("data", 4), be(1, 4), be(0, 4), put(s, strlen(s));
}

static void tkhd(uint32_t w, uint32_t h, int quarter)
{
	box("tkhd");
	be(0, 4), zeros(20 + 8 + 8);
	/* a b u / c d v / x y w */
	be(quarter ? 0 : 0x10000, 4), be(quarter ? 0x10000 : 0, 4), be(0, 4);
	be(quarter ? 0xffff0000u : 0, 4), be(quarter ? 0 : 0x10000, 4), be(0, 4);
	be(0, 4), be(0, 4), be(0x40000000, 4);
	be((uint64_t)w << 16, 4), be((uint64_t)h << 16, 4);
	end();
}

static void track(const char *handler, uint32_t w, uint32_t h, int quarter, size_t stsz)
{
	box("trak");
	tkhd(w, h, quarter);
	box("mdia");
	box("mdhd"), be(0, 4), zeros(20), end();
	box("hdlr"), be(0, 4), put("mhlr", 4), put(handler, 4), zeros(12), end();
	box("minf"), box("stbl"), box("stsz"), zeros(stsz), end(), end(), end();
	end();
	end();
}

struct opts {
	int apple;          /* Apple's keys in moov/meta */
	int udta;           /* (c)xyz, (c)mak, (c)mod in udta */
	uint64_t ctime;     /* mvhd, since 1904 */
	int fragmented;     /* mvhd duration 0, mvex */
	int mehd;           /* with mvex/mehd */
	int moov_first;
	const char *date, *loc;
	int big; /* sample tables over QT_LEAF_MAX (left out both ways) */
};

/* ftyp | mdat (a 64-bit header) | moov, or moov first */
static void movie(const struct opts *o)
{
	static const char *const keys[] = {"com.apple.quicktime.creationdate",
					   "com.apple.quicktime.location.ISO6709",
					   "com.apple.quicktime.make", "com.apple.quicktime.model",
					   "com.apple.quicktime.content.identifier",
					   "com.apple.quicktime.software"};
	size_t i;
	int pass;

	len = 0;
	box("ftyp"), put("qt  ", 4), be(0, 4), put("qt  ", 4), end();
	for (pass = 0; pass < 2; pass++) {
		if ((pass == 0) != (o->moov_first != 0)) {
			be(1, 4), put("mdat", 4), be(16 + 70000, 8), zeros(70000);
			continue;
		}
		box("moov");
		box("mvhd"), be(0x01000000, 4), be(o->ctime, 8), be(o->ctime, 8), be(600, 4);
		be(o->fragmented ? 0 : 600 * 25 / 2, 8), zeros(4 + 2 + 10 + 36 + 24 + 4), end();
		track("soun", 0, 0, 0, 100);
		track("vide", 1920, 1080, 1, o->big ? 1100000 : 3000);
		if (o->fragmented) {
			box("mvex");
			if (o->mehd)
				box("mehd"), be(0, 4), be(600 * 3, 4), end();
			box("trex"), zeros(24), end();
			end();
		}
		if (o->apple) {
			box("meta");
			box("hdlr"), be(0, 4), be(0, 4), put("mdta", 4), zeros(12), end();
			box("keys"), be(0, 4), be(6, 4);
			for (i = 0; i < 6; i++)
				be(8 + strlen(keys[i]), 4), put("mdta", 4), put(keys[i], strlen(keys[i]));
			end();
			box("ilst");
			data_item(6, "17.1"); /* out of order, and not ours */
			data_item(1, o->date);
			data_item(2, o->loc);
			data_item(3, "Apple");
			data_item(4, "iPhone 15 Pro");
			data_item(5, "0F1E2D3C-AAAA-BBBB-CCCC-001122334455");
			end();
			end();
		}
		if (o->udta) {
			box("udta");
			text_item("\xa9xyz", "-33.8568+151.2153/");
			text_item("\xa9mak", "Canon");
			text_item("\xa9mod", "EOS R5");
			end();
		}
		end();
	}
}

static void same(const struct x_meta *a, const struct x_meta *b)
{
	CHECK_INT(a->have, b->have);
	CHECK(a->width == b->width && a->height == b->height);
	CHECK(a->duration == b->duration);
	CHECK(a->gps_lat == b->gps_lat && a->gps_lon == b->gps_lon);
	CHECK_STR(a->datetime_original, b->datetime_original);
	CHECK_STR(a->tz_offset, b->tz_offset);
	CHECK_STR(a->make, b->make);
	CHECK_STR(a->model, b->model);
	CHECK_STR(a->content_id, b->content_id);
}

/* qt_parse on the whole, then qt_catch fed in chunks of every size given:
 * the same fields every time, and the catch lets go at moov's end. */
static void both_ways(struct x_meta *m)
{
	static const size_t sizes[] = {1, 2, 3, 5, 7, 8, 9, 15, 16, 17, 31, 100, 4095, 65536,
				       1 << 20, 1 << 24};
	size_t k;

	memset(m, 0, sizeof(*m));
	m->pics.whole = 1;
	qt_parse(buf, len, m);
	CHECK(m->pics.moov_read);
	for (k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
		struct qt_catch *c = qt_catch_new(len);
		struct x_meta s;
		size_t off = 0;
		int more = 1;
		memset(&s, 0, sizeof(s));
		while (off < len && more) {
			size_t n = len - off < sizes[k] ? len - off : sizes[k];
			more = qt_catch_feed(c, buf + off, n);
			off += n;
		}
		qt_catch_end(c, &s);
		same(m, &s);
		CHECK(s.pics.moov_read);
		CHECK_STR(s.warnings, m->warnings);
	}
}

static void test_apple_keys_win(void)
{
	struct opts o = {1, 1, 3660000000u, 0, 0, 0, "2023-09-30T18:45:12.123+0530",
			 "+4851.5040+00217.6700+035.000/", 1};
	struct x_meta m;
	int first;

	for (first = 0; first < 2; first++) {
		o.moov_first = first;
		movie(&o);
		both_ways(&m);
		CHECK(m.have & XM_DURATION);
		CHECK(m.duration == 12.5);
		CHECK(m.width == 1080 && m.height == 1920); /* turned a quarter */
		CHECK_STR(m.datetime_original, "2023-09-30T18:45:12");
		CHECK_STR(m.tz_offset, "+05:30");
		CHECK(fabs(m.gps_lat - (48 + 51.504 / 60)) < 1e-9);
		CHECK(fabs(m.gps_lon - (2 + 17.67 / 60)) < 1e-9);
		CHECK_STR(m.make, "Apple");
		CHECK_STR(m.model, "iPhone 15 Pro");
		CHECK_STR(m.content_id, "0F1E2D3C-AAAA-BBBB-CCCC-001122334455");
		CHECK_STR(m.warnings, "");
	}
}

static void test_without_keys(void)
{
	/* 2020-01-02T03:04:05Z since 1904 */
	struct opts o = {0, 1, 1577934245u + 2082844800u, 0, 0, 0, "", "", 0};
	struct x_meta m;

	movie(&o);
	both_ways(&m);
	CHECK_STR(m.datetime_original, "2020-01-02T03:04:05");
	CHECK_STR(m.tz_offset, ""); /* mvhd does not say whose clock */
	CHECK(fabs(m.gps_lat + 33.8568) < 1e-9 && fabs(m.gps_lon - 151.2153) < 1e-9);
	CHECK_STR(m.make, "Canon");
	CHECK_STR(m.model, "EOS R5");
	CHECK_STR(m.content_id, "");
	/* a writer that counted from 1970 */
	o.ctime = 1577934245u;
	o.udta = 0;
	movie(&o);
	both_ways(&m);
	CHECK_STR(m.datetime_original, "2020-01-02T03:04:05");
	CHECK(strstr(m.warnings, "counted from 1970") != NULL);
	CHECK(!(m.have & XM_GPS));
	/* nothing: the time zero */
	o.ctime = 2082844800u;
	movie(&o);
	both_ways(&m);
	CHECK_STR(m.datetime_original, "");
}

static void test_shapes(void)
{
	static const struct {
		const char *date, *loc, *want_date, *want_tz;
		double lat, lon;
		int gps;
	} cases[] = {
		{"2021-02-03T04:05:06Z", "+40.7484-073.9857/", "2021-02-03T04:05:06", "+00:00",
		 40.7484, -73.9857, 1},
		{"2021-02-03T04:05:06-03:00", "-334512.5+1510715.25/", "2021-02-03T04:05:06",
		 "-03:00", -(33 + 45 / 60.0 + 12.5 / 3600), 151 + 7 / 60.0 + 15.25 / 3600, 1},
		{"2021-02-03T04:05:06+2500", "+91.0+000.0/", "2021-02-03T04:05:06", "", 0, 0, 0},
		{"2021-02-03", "+12-", "", "", 0, 0, 0},
	};
	struct opts o = {1, 0, 0, 0, 0, 0, "", "", 0};
	struct x_meta m;
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		o.date = cases[i].date;
		o.loc = cases[i].loc;
		movie(&o);
		both_ways(&m);
		CHECK_STR(m.datetime_original, cases[i].want_date);
		CHECK_STR(m.tz_offset, cases[i].want_tz);
		CHECK_INT(!!(m.have & XM_GPS), cases[i].gps);
		if (cases[i].gps)
			CHECK(fabs(m.gps_lat - cases[i].lat) < 1e-9 &&
			      fabs(m.gps_lon - cases[i].lon) < 1e-9);
	}
}

static void test_fragmented(void)
{
	struct opts o = {0, 0, 0, 1, 0, 0, "", "", 0};
	struct x_meta m;

	movie(&o);
	both_ways(&m);
	CHECK(!(m.have & XM_DURATION)); /* mvhd's 0 is not the length */
	o.mehd = 1;
	movie(&o);
	both_ways(&m);
	CHECK((m.have & XM_DURATION) && m.duration == 3.0);
}

static void test_broken(void)
{
	struct opts o = {1, 1, 3660000000u, 0, 0, 0, "2023-09-30T18:45:12Z", "+10.0+020.0/", 0};
	struct x_meta m, s;
	struct qt_catch *c;
	size_t cut;

	movie(&o);
	/* cut anywhere: whole and streamed still agree, and nothing reads
	 * past the end (ASan) */
	for (cut = 0; cut < len; cut += cut < 70000 ? 7000 : 1) {
		memset(&m, 0, sizeof(m));
		memset(&s, 0, sizeof(s));
		m.pics.whole = 1;
		qt_parse(buf, cut, &m);
		c = qt_catch_new(cut);
		qt_catch_feed(c, buf, cut);
		qt_catch_end(c, &s);
		same(&m, &s);
		CHECK_INT(s.pics.moov_read, m.pics.moov_read);
	}
	/* a box that says it is smaller than its header ends the walk */
	memset(&s, 0, sizeof(s));
	buf[20 + 3] = 4; /* mdat's size: 4 */
	buf[20 + 0] = buf[20 + 1] = buf[20 + 2] = 0;
	c = qt_catch_new(len);
	CHECK_INT(qt_catch_feed(c, buf, len), 0);
	qt_catch_end(c, &s);
	CHECK(strstr(s.warnings, "no moov box") != NULL);
}

int main(void)
{
	RUN(test_apple_keys_win);
	RUN(test_without_keys);
	RUN(test_shapes);
	RUN(test_fragmented);
	RUN(test_broken);
	free(buf);
	return t_done();
}
