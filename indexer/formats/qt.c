/* qt.c - QuickTime and MP4 movies: the moov box, held or streamed (qt.h). */
#include "indexer/formats/qt.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "indexer/formats/box.h"
#include "indexer/formats/cursor.h"
#include "indexer/formats/parsers.h"
#include "indexer/formats/xmp.h"

/* seconds from QuickTime's time zero (1904-01-01) to Unix's */
#define QT_EPOCH_OFFSET ((int64_t)(66 * 365 + 17) * 24 * 3600)
#define MAX_KEYS 512 /* Apple keys past this index are not looked up */

/* ---- sniffing ------------------------------------------------------------ */

int qt_sniff(const uint8_t *p, size_t n)
{
	static const char types[][5] = {"moov", "mdat", "wide", "free", "skip", "pnot"};
	struct bc c = bc_make(p, n, 1);
	uint32_t size;
	size_t i;

	if (bc_be32(&c, 0, &size) || !bc_has(&c, 4, 4) || (size < 8 && size != 1))
		return 0;
	for (i = 0; i < sizeof(types) / sizeof(types[0]); i++)
		if (memcmp(p + 4, types[i], 4) == 0)
			return 1;
	return 0;
}

int qt_movie(const char *format)
{
	static const char *const movies[] = {"mov", "mp4", "m4v", "3gp", "3g2"};
	size_t i;
	for (i = 0; i < sizeof(movies) / sizeof(movies[0]); i++)
		if (strcmp(format, movies[i]) == 0)
			return 1;
	return 0;
}

/* ---- the movie box in memory --------------------------------------------- */

enum key { K_NONE, K_DATE, K_LOC, K_MAKE, K_MODEL, K_CID };

struct movie {
	const struct bc *c;
	struct x_meta *m;
	/* candidates by source; finish() applies the priorities */
	char k_date[40], k_loc[80], k_make[64], k_model[64], k_cid[64]; /* Apple keys */
	char u_loc[80], u_make[64], u_model[64]; /* user data, iTunes-style items */
	uint64_t ctime;                          /* mvhd creation time, since 1904 */
	uint64_t timescale, duration, mehd;
	int have_mvhd, dur_unknown, fragmented;
	uint32_t vw, vh; /* the first video track's size as displayed */
	int have_video;
	uint32_t aw, ah; /* else the first other sized track's (not sound) */
	int have_any;
	uint8_t keys[MAX_KEYS + 1]; /* enum key of each Apple key index */
	uint32_t nkeys;
};

/* Children of [from, end), one at a time: box_at's walk, shared by every level. */
static int child(const struct bc *c, size_t *pos, size_t end, struct box *b)
{
	if (box_at(c, *pos, end, b) != 0)
		return 0;
	*pos = b->end;
	return 1;
}

static int leaf(const struct box *b)
{
	return b->end - b->start <= QT_LEAF_MAX;
}

/* A box's body on its own: a reader that runs past the box's end fails
 * there, instead of reading the next box's bytes (which differ between a
 * moov held whole and its copy: the fuzz target qt found that). */
static struct bc body_of(const struct bc *c, const struct box *b)
{
	return bc_make(c->p + b->body, b->end - b->body, 1);
}

static void parse_mvhd(struct movie *mv, const struct box *b)
{
	const struct bc body = body_of(mv->c, b), *c = &body;
	uint8_t v;
	uint32_t t32, s32, d32;

	if (bc_u8(c, 0, &v))
		return;
	if (v == 1) {
		if (bc_be64(c, 4, &mv->ctime) || bc_be32(c, 20, &s32) || bc_be64(c, 24, &mv->duration))
			return;
		mv->dur_unknown = mv->duration == UINT64_MAX;
	} else {
		if (bc_be32(c, 4, &t32) || bc_be32(c, 12, &s32) || bc_be32(c, 16, &d32))
			return;
		mv->ctime = t32;
		mv->duration = d32;
		mv->dur_unknown = d32 == UINT32_MAX;
	}
	mv->timescale = s32;
	mv->have_mvhd = 1;
}

static void parse_mehd(struct movie *mv, const struct box *b)
{
	const struct bc body = body_of(mv->c, b);
	uint8_t v;
	uint32_t d32;
	uint64_t d64;

	if (bc_u8(&body, 0, &v))
		return;
	if (v == 1 && bc_be64(&body, 4, &d64) == 0)
		mv->mehd = d64;
	else if (v != 1 && bc_be32(&body, 4, &d32) == 0)
		mv->mehd = d32;
}

/* tkhd: the track's size, and whether its matrix turns it a quarter. */
static int parse_tkhd(const struct bc *box, const struct box *b, uint32_t *w, uint32_t *h)
{
	const struct bc body = body_of(box, b), *c = &body;
	uint8_t v;
	size_t mat;
	uint32_t a, bb, cc, d, fw, fh;

	if (bc_u8(c, 0, &v))
		return -1;
	mat = v == 1 ? 52 : 40;
	if (bc_be32(c, mat, &a) || bc_be32(c, mat + 4, &bb) ||
	    bc_be32(c, mat + 12, &cc) || bc_be32(c, mat + 16, &d) || bc_be32(c, mat + 36, &fw) ||
	    bc_be32(c, mat + 40, &fh))
		return -1;
	/* 16.16 fixed point, rounded */
	*w = (uint32_t)(((uint64_t)fw + 0x8000) >> 16);
	*h = (uint32_t)(((uint64_t)fh + 0x8000) >> 16);
	if (a == 0 && d == 0 && bb != 0 && cc != 0) { /* 90 or 270 degrees */
		uint32_t t = *w;
		*w = *h;
		*h = t;
	}
	return 0;
}

static void parse_trak(struct movie *mv, const struct box *t)
{
	const struct bc *c = mv->c;
	struct box b, d;
	size_t pos = t->body, q;
	uint32_t w = 0, h = 0;
	int sized = 0;
	char handler[5] = "";

	while (child(c, &pos, t->end, &b)) {
		if (strcmp(b.type, "tkhd") == 0 && leaf(&b) && !sized)
			sized = parse_tkhd(c, &b, &w, &h) == 0 && w && h;
		else if (strcmp(b.type, "mdia") == 0) {
			q = b.body;
			while (child(c, &q, b.end, &d))
				if (strcmp(d.type, "hdlr") == 0 && leaf(&d) && !handler[0] &&
				    d.end - d.body >= 12) {
					memcpy(handler, c->p + d.body + 8, 4);
					handler[4] = '\0';
				}
		}
	}
	if (!sized)
		return;
	if (strcmp(handler, "vide") == 0 && !mv->have_video) {
		mv->vw = w, mv->vh = h, mv->have_video = 1;
	} else if (strcmp(handler, "soun") != 0 && !mv->have_any) {
		mv->aw = w, mv->ah = h, mv->have_any = 1;
	}
}

static enum key key_kind(const uint8_t *s, size_t n)
{
	static const struct {
		const char *name;
		enum key k;
	} names[] = {
		{"com.apple.quicktime.creationdate", K_DATE},
		{"com.apple.quicktime.location.ISO6709", K_LOC},
		{"com.apple.quicktime.make", K_MAKE},
		{"com.apple.quicktime.model", K_MODEL},
		{"com.apple.quicktime.content.identifier", K_CID},
	};
	size_t i;
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strlen(names[i].name) == n && memcmp(names[i].name, s, n) == 0)
			return names[i].k;
	return K_NONE;
}

/* keys: a full box, a count, then (size, namespace, name) per key, from 1. */
static void parse_keys(struct movie *mv, const struct box *b)
{
	const struct bc *c = mv->c;
	size_t pos = b->body + 8;
	uint32_t count, i, size;

	if (b->end - b->body < 8 || bc_be32(c, b->body + 4, &count))
		return;
	for (i = 1; i <= count && i <= MAX_KEYS; i++) {
		if (pos > b->end || b->end - pos < 8 || bc_be32(c, pos, &size) || size < 8 ||
		    size > b->end - pos)
			break;
		mv->keys[i] = (uint8_t)key_kind(c->p + pos + 8, size - 8);
		mv->nkeys = i;
		pos += size;
	}
}

/* The UTF-8 text of an ilst item's data box (type 1), or nothing. */
static void item_text(const struct bc *c, const struct box *item, char *dst, size_t cap)
{
	struct box d;
	size_t pos = item->body;
	uint32_t type;

	while (child(c, &pos, item->end, &d)) {
		if (strcmp(d.type, "data") != 0 || bc_be32(c, d.body, &type) || d.body + 8 > d.end)
			continue;
		if (type == 1 && !dst[0])
			x_copy_text(dst, cap, c->p + d.body + 8, d.end - d.body - 8);
		return;
	}
}

/* Where a user-data value named by its type goes ((c)xyz, (c)mak, (c)mod:
 * as udta items and as iTunes-style ilst items alike), or NULL. */
static char *user_slot(struct movie *mv, const char *type, size_t *cap)
{
	if (strcmp(type, "\xa9xyz") == 0) {
		*cap = sizeof(mv->u_loc);
		return mv->u_loc;
	}
	if (strcmp(type, "\xa9mak") == 0) {
		*cap = sizeof(mv->u_make);
		return mv->u_make;
	}
	if (strcmp(type, "\xa9mod") == 0) {
		*cap = sizeof(mv->u_model);
		return mv->u_model;
	}
	return NULL;
}

static char *ilst_slot(struct movie *mv, const struct box *item, int keyed, size_t *cap)
{
	uint32_t idx;

	if (keyed && bc_be32(mv->c, item->start + 4, &idx) == 0 && idx >= 1 && idx <= mv->nkeys) {
		switch (mv->keys[idx]) {
		case K_DATE: *cap = sizeof(mv->k_date); return mv->k_date;
		case K_LOC: *cap = sizeof(mv->k_loc); return mv->k_loc;
		case K_MAKE: *cap = sizeof(mv->k_make); return mv->k_make;
		case K_MODEL: *cap = sizeof(mv->k_model); return mv->k_model;
		case K_CID: *cap = sizeof(mv->k_cid); return mv->k_cid;
		case K_NONE: return NULL;
		}
	}
	/* iTunes-style items are named by their type */
	return keyed ? NULL : user_slot(mv, item->type, cap);
}

/* meta: Apple's keys and their values (handler mdta), or iTunes-style
 * items (handler mdir). */
static void parse_meta(struct movie *mv, const struct box *m)
{
	const struct bc *c = mv->c;
	struct box b, it;
	size_t pos = m->body, q;
	int keyed = 0;

	/* ISO's meta is a full box (4 bytes of version and flags before its
	 * children), QuickTime's is not */
	if (m->end - pos >= 8 && !bc_is(c, pos + 4, "hdlr", 4) && bc_is(c, pos, "\0\0\0\0", 4))
		pos += 4;
	q = pos;
	while (child(c, &q, m->end, &b))
		if (strcmp(b.type, "keys") == 0 && !keyed) {
			parse_keys(mv, &b);
			keyed = 1;
		}
	while (child(c, &pos, m->end, &b)) {
		if (strcmp(b.type, "ilst") != 0)
			continue;
		q = b.body;
		while (child(c, &q, b.end, &it)) {
			size_t cap = 0;
			char *dst = ilst_slot(mv, &it, keyed, &cap);
			if (dst)
				item_text(c, &it, dst, cap);
		}
		break;
	}
}

/* udta: QuickTime's text items ((c)xyz: 16-bit length, 16-bit language,
 * text), an iTunes-style meta and an XMP packet (XMP_). */
static void parse_udta(struct movie *mv, const struct box *u)
{
	const struct bc *c = mv->c;
	struct box b;
	size_t pos = u->body;
	uint16_t len;

	while (child(c, &pos, u->end, &b)) {
		char *dst;
		size_t cap = 0;
		if (strcmp(b.type, "meta") == 0) {
			parse_meta(mv, &b);
			continue;
		}
		if (strcmp(b.type, "XMP_") == 0) { /* Adobe's packet, as QuickTime keeps it */
			xmp_parse(c->p + b.body, b.end - b.body, mv->m, DS_XMP);
			continue;
		}
		dst = user_slot(mv, b.type, &cap);
		if (!dst || dst[0] || bc_be16(c, b.body, &len) || b.body + 4 > b.end)
			continue;
		if (len > b.end - b.body - 4)
			len = (uint16_t)(b.end - b.body - 4);
		x_copy_text(dst, cap, c->p + b.body + 4, len);
	}
}

/* One ISO 6709 coordinate: sign, then degrees (up to deg_digits digits),
 * or degrees and minutes (+2), or degrees, minutes and seconds (+4), the
 * last with a fraction.  Returns the characters used, 0 when none fit. */
static size_t iso6709_one(const char *s, int deg_digits, double *out)
{
	size_t i = 1, ndig = 0;
	double whole = 0, frac = 0, scale = 1, v;

	if (s[0] != '+' && s[0] != '-')
		return 0;
	while (s[i] >= '0' && s[i] <= '9' && ndig < 12) {
		whole = whole * 10 + (s[i] - '0');
		i++, ndig++;
	}
	if (s[i] == '.') {
		for (i++; s[i] >= '0' && s[i] <= '9'; i++) {
			scale /= 10;
			frac += (s[i] - '0') * scale;
		}
	}
	if (ndig >= 1 && (int)ndig <= deg_digits) {
		v = whole + frac;
	} else if ((int)ndig == deg_digits + 2) {
		double deg = (double)((long long)whole / 100), min = whole - deg * 100 + frac;
		v = deg + min / 60;
	} else if ((int)ndig == deg_digits + 4) {
		long long w = (long long)whole;
		double sec = (double)(w % 100) + frac;
		v = (double)(w / 10000) + (double)(w / 100 % 100) / 60 + sec / 3600;
	} else {
		return 0;
	}
	*out = s[0] == '-' ? -v : v;
	return i;
}

static int iso6709(const char *s, double *lat, double *lon)
{
	size_t a = iso6709_one(s, 2, lat), b;
	if (!a)
		return -1;
	b = iso6709_one(s + a, 3, lon);
	if (!b || *lat < -90 || *lat > 90 || *lon < -180 || *lon > 180)
		return -1;
	return 0;
}

static int digits(const char *s, size_t n)
{
	size_t i;
	for (i = 0; i < n; i++)
		if (s[i] < '0' || s[i] > '9')
			return 0;
	return 1;
}

/* Apple's creation date: "YYYY-MM-DDTHH:MM:SS", a fraction perhaps, then
 * "Z", "+HHMM" or "+HH:MM".  The local time and its offset. */
static int apple_date(const char *s, char date[24], char tz[8])
{
	const char *o;
	int hh, mm;

	if (strlen(s) < 19 || !digits(s, 4) || s[4] != '-' || !digits(s + 5, 2) || s[7] != '-' ||
	    !digits(s + 8, 2) || (s[10] != 'T' && s[10] != ' ') || !digits(s + 11, 2) ||
	    s[13] != ':' || !digits(s + 14, 2) || s[16] != ':' || !digits(s + 17, 2))
		return -1;
	memcpy(date, s, 19);
	date[10] = 'T';
	date[19] = '\0';
	tz[0] = '\0';
	o = s + 19;
	if (*o == '.')
		for (o++; *o >= '0' && *o <= '9'; o++)
			;
	if (*o == 'Z') {
		snprintf(tz, 8, "+00:00");
	} else if ((*o == '+' || *o == '-') && digits(o + 1, 2)) {
		const char *mp = o + 3 + (o[3] == ':');
		hh = (o[1] - '0') * 10 + (o[2] - '0');
		if (digits(mp, 2) && hh <= 14 && (mm = (mp[0] - '0') * 10 + (mp[1] - '0')) < 60) {
			tz[0] = *o, tz[1] = o[1], tz[2] = o[2], tz[3] = ':';
			tz[4] = mp[0], tz[5] = mp[1], tz[6] = '\0';
		}
	}
	return 0;
}

static void set_text(char *dst, size_t cap, const char *a, const char *b)
{
	if (!dst[0])
		snprintf(dst, cap, "%s", a[0] ? a : b);
}

static void finish(struct movie *mv)
{
	struct x_meta *m = mv->m;
	double lat, lon;
	char date[24], tz[8];

	/* a fragmented movie's mvhd says 0, its mvex/mehd the whole; without
	 * mehd only the fragments know (not summed here): unknown, not 0 */
	if (mv->have_mvhd && mv->timescale && !mv->dur_unknown && !(m->have & XM_DURATION) &&
	    (mv->duration || mv->mehd || !mv->fragmented)) {
		uint64_t d = mv->duration ? mv->duration : mv->mehd;
		m->duration = (double)d / (double)mv->timescale;
		m->have |= XM_DURATION;
	}
	if (!(m->have & XM_DIMS) && (mv->have_video || mv->have_any)) {
		m->width = mv->have_video ? mv->vw : mv->aw;
		m->height = mv->have_video ? mv->vh : mv->ah;
		m->have |= XM_DIMS;
	}
	if (!m->datetime_original[0]) {
		if (mv->k_date[0] && apple_date(mv->k_date, date, tz) == 0) {
			memcpy(m->datetime_original, date, sizeof(date));
			if (tz[0] && !m->tz_offset[0])
				memcpy(m->tz_offset, tz, sizeof(tz));
		} else if (mv->have_mvhd && mv->ctime) {
			int64_t t = (int64_t)(mv->ctime > (uint64_t)INT64_MAX ? INT64_MAX : mv->ctime);
			if (t >= QT_EPOCH_OFFSET) {
				t -= QT_EPOCH_OFFSET;
			} else {
				x_warn(m, "movie: creation time counted from 1970, not 1904");
			}
			if (t != 0) /* the time zero of 1970 is what writers put for none */
				x_unix_datetime(m, t);
		}
	}
	if (!(m->have & XM_GPS) && ((mv->k_loc[0] && iso6709(mv->k_loc, &lat, &lon) == 0) ||
				    (mv->u_loc[0] && iso6709(mv->u_loc, &lat, &lon) == 0))) {
		m->gps_lat = lat;
		m->gps_lon = lon;
		m->have |= XM_GPS;
	}
	set_text(m->make, sizeof(m->make), mv->k_make, mv->u_make);
	set_text(m->model, sizeof(m->model), mv->k_model, mv->u_model);
	set_text(m->content_id, sizeof(m->content_id), mv->k_cid, "");
}

void qt_moov(const uint8_t *p, size_t n, struct x_meta *m)
{
	struct bc c = bc_make(p, n, 1);
	struct movie movie, *mv = &movie; /* 1.2 kB: no allocation to fail */
	struct box b, e;
	size_t pos = 0, q;

	memset(mv, 0, sizeof(*mv));
	mv->c = &c;
	mv->m = m;
	while (child(&c, &pos, n, &b)) {
		if (strcmp(b.type, "trak") == 0) {
			parse_trak(mv, &b);
		} else if (strcmp(b.type, "mvex") == 0) {
			mv->fragmented = 1;
			q = b.body;
			while (child(&c, &q, b.end, &e))
				if (strcmp(e.type, "mehd") == 0 && leaf(&e))
					parse_mehd(mv, &e);
		} else if (!leaf(&b)) {
			continue;
		} else if (strcmp(b.type, "mvhd") == 0 && !mv->have_mvhd) {
			parse_mvhd(mv, &b);
		} else if (strcmp(b.type, "meta") == 0) {
			parse_meta(mv, &b);
		} else if (strcmp(b.type, "udta") == 0) {
			parse_udta(mv, &b);
		}
	}
	finish(mv);
}

void qt_parse(const uint8_t *p, size_t n, struct x_meta *m)
{
	struct bc c = bc_make(p, n, 1);
	struct box b;
	size_t pos = 0;

	while (child(&c, &pos, n, &b)) {
		if (strcmp(b.type, "moov") != 0)
			continue;
		if (b.truncated && !m->pics.whole)
			return; /* the rest is streamed past: qt_catch */
		qt_moov(p + b.body, b.end - b.body, m);
		if (b.truncated)
			x_warn(m, "movie: moov box cut short");
		else
			m->pics.moov_read = 1;
		return;
	}
	if (m->pics.whole)
		x_warn(m, "movie: no moov box");
}

/* ---- the movie box streamed past ----------------------------------------- */

enum { C_HEADER, C_SKIP, C_COPY };

struct level {
	uint64_t end; /* file offset where the box ends (clipped to its parent) */
	size_t at;    /* its header in buf */
	char type[5];
};

struct qt_catch {
	uint64_t pos;  /* file offset of the next byte fed */
	uint64_t size; /* the file's size */
	int mode;
	uint64_t until; /* C_SKIP, C_COPY: where that ends */
	uint8_t hdr[16];
	size_t hlen, hneed;
	uint64_t hstart;
	struct level lv[3]; /* moov, then trak or mvex, then mdia */
	int depth;
	uint8_t *buf;
	size_t len, cap;
	int found, done, overflow;
	int cut;   /* moov declared past the end of the file */
	int nomem; /* the copy could not grow */
	uint64_t broken_at; /* + 1; 0: not broken */
};

struct qt_catch *qt_catch_new(uint64_t file_size)
{
	struct qt_catch *c = calloc(1, sizeof(*c));
	if (c)
		c->size = file_size;
	return c;
}

void qt_catch_free(struct qt_catch *c)
{
	if (!c)
		return;
	free(c->buf);
	free(c);
}

static int reserve(struct qt_catch *c, uint64_t more)
{
	size_t want;
	uint8_t *nb;

	if (more > QT_CATCH_MAX - c->len)
		return -1;
	if (c->len + more <= c->cap)
		return 0;
	want = c->cap ? c->cap : 16384;
	while (want < c->len + more)
		want *= 2;
	if (want > QT_CATCH_MAX)
		want = QT_CATCH_MAX;
	nb = realloc(c->buf, want);
	if (!nb) {
		c->nomem = 1;
		return -1;
	}
	c->buf = nb;
	c->cap = want;
	return 0;
}

static void put_header(struct qt_catch *c, uint64_t size, const uint8_t type[4])
{
	uint8_t *h = c->buf + c->len;
	h[0] = (uint8_t)(size >> 24), h[1] = (uint8_t)(size >> 16);
	h[2] = (uint8_t)(size >> 8), h[3] = (uint8_t)size;
	memcpy(h + 4, type, 4);
	c->len += 8;
}

static uint64_t limit_of(const struct qt_catch *c)
{
	return c->depth ? c->lv[c->depth - 1].end : c->size;
}

static void skip_to(struct qt_catch *c, uint64_t end)
{
	c->mode = end > c->pos ? C_SKIP : C_HEADER;
	c->until = end;
}

/* A header that does not fit or declares less than itself: box_at stops
 * reading that container there, so the catch skips the rest of it; at the
 * top level nothing after it can be found. */
static void broken(struct qt_catch *c)
{
	if (c->depth == 0) {
		c->broken_at = c->hstart + 1;
		c->done = 1;
		return;
	}
	skip_to(c, limit_of(c));
}

static int opens(const char *parent, const char *type)
{
	if (strcmp(parent, "moov") == 0)
		return strcmp(type, "trak") == 0 || strcmp(type, "mvex") == 0;
	if (strcmp(parent, "trak") == 0)
		return strcmp(type, "mdia") == 0;
	return 0;
}

/* A whole header is in c->hdr: open, copy or skip its box. */
static void on_box(struct qt_catch *c)
{
	uint64_t limit = limit_of(c), declared, end;
	uint32_t size32 = (uint32_t)c->hdr[0] << 24 | (uint32_t)c->hdr[1] << 16 |
			  (uint32_t)c->hdr[2] << 8 | c->hdr[3];
	char type[5];
	size_t i;

	memcpy(type, c->hdr + 4, 4);
	type[4] = '\0';
	if (size32 == 1) {
		for (declared = 0, i = 8; i < 16; i++)
			declared = declared << 8 | c->hdr[i];
	} else {
		declared = size32 ? size32 : limit - c->hstart;
	}
	c->hlen = 0;
	if (declared < c->hneed) {
		broken(c);
		return;
	}
	end = declared > limit - c->hstart ? limit : c->hstart + declared;
	if (c->depth == 0) {
		if (strcmp(type, "moov") != 0 || c->found) {
			skip_to(c, end);
			return;
		}
		if (reserve(c, 8) != 0) {
			c->overflow = 1;
			skip_to(c, end);
			return;
		}
		c->found = 1;
		c->cut = declared > limit - c->hstart;
	} else if (opens(c->lv[c->depth - 1].type, type)) {
		if (reserve(c, 8) != 0) {
			c->overflow = 1;
			skip_to(c, end);
			return;
		}
	} else {
		/* copied whole, its header in the short form, unless qt_moov would
		 * not read it (over QT_LEAF_MAX) or the copy is full */
		if (end - c->hstart > QT_LEAF_MAX || reserve(c, 8 + (end - c->pos)) != 0) {
			if (end - c->hstart <= QT_LEAF_MAX)
				c->overflow = 1;
			skip_to(c, end);
			return;
		}
		put_header(c, 8 + (end - c->pos), c->hdr + 4);
		c->mode = end > c->pos ? C_COPY : C_HEADER;
		c->until = end;
		return;
	}
	c->lv[c->depth].end = end;
	c->lv[c->depth].at = c->len;
	memcpy(c->lv[c->depth].type, type, 5);
	c->depth++;
	put_header(c, 0, c->hdr + 4); /* its size is known when it closes */
}

/* Boxes that end where the catch is close; moov closing ends the catch. */
static void close_ended(struct qt_catch *c)
{
	while (c->depth > 0 && c->pos >= c->lv[c->depth - 1].end) {
		size_t at = c->lv[--c->depth].at, size = c->len - at;
		c->buf[at] = (uint8_t)(size >> 24), c->buf[at + 1] = (uint8_t)(size >> 16);
		c->buf[at + 2] = (uint8_t)(size >> 8), c->buf[at + 3] = (uint8_t)size;
		if (c->depth == 0)
			c->done = 1;
	}
}

int qt_catch_feed(struct qt_catch *c, const uint8_t *p, size_t n)
{
	for (;;) {
		size_t take;

		close_ended(c);
		if (c->done)
			break;
		if (c->mode != C_HEADER) {
			uint64_t left = c->until - c->pos;
			take = n < left ? n : (size_t)left;
			if (c->mode == C_COPY) {
				memcpy(c->buf + c->len, p, take);
				c->len += take;
			}
			p += take, n -= take, c->pos += take;
			if (c->pos == c->until)
				c->mode = C_HEADER;
			if (n == 0)
				break;
			continue;
		}
		if (c->hlen == 0) {
			uint64_t limit = limit_of(c);
			if (c->depth == 0 && c->pos >= c->size) {
				c->done = 1;
				break;
			}
			c->hstart = c->pos;
			c->hneed = 8;
			if (limit - c->pos < 8) {
				broken(c);
				continue;
			}
		}
		if (n == 0)
			break;
		take = c->hneed - c->hlen < n ? c->hneed - c->hlen : n;
		memcpy(c->hdr + c->hlen, p, take);
		c->hlen += take, p += take, n -= take, c->pos += take;
		if (c->hlen < c->hneed)
			continue;
		if (c->hneed == 8 && c->hdr[0] == 0 && c->hdr[1] == 0 && c->hdr[2] == 0 &&
		    c->hdr[3] == 1) {
			c->hneed = 16;
			if (limit_of(c) - c->hstart < 16) {
				c->hlen = 0;
				broken(c);
			}
			continue;
		}
		on_box(c);
	}
	close_ended(c); /* a box that ends with this chunk (moov, last in the file) */
	return !c->done;
}

uint64_t qt_catch_next(const struct qt_catch *c)
{
	if (c->done)
		return UINT64_MAX;
	return c->mode == C_SKIP ? c->until : c->pos;
}

int qt_catch_feed_at(struct qt_catch *c, uint64_t off, const uint8_t *p, size_t n)
{
	if (c->done)
		return 0;
	if (off < c->pos) { /* what was fed already */
		uint64_t seen = c->pos - off;
		if (seen >= n)
			return 1;
		p += seen, n -= (size_t)seen, off = c->pos;
	}
	if (off > c->pos) {
		/* a gap the catch did not want is skipped as if fed; one it
		 * wanted would leave it a box it cannot follow */
		if (off > qt_catch_next(c))
			return 0;
		c->pos = off;
		if (c->pos == c->until)
			c->mode = C_HEADER;
	}
	return qt_catch_feed(c, p, n);
}

int qt_catch_end(struct qt_catch *c, struct x_meta *m)
{
	int rc;

	if (!c)
		return SL_OK;
	/* a reader that skips (qt_catch_feed_at) stops where the last skip
	 * would take it to the end: the boxes that end there end */
	if (c->mode == C_SKIP && c->until >= c->size && c->pos < c->until) {
		c->pos = c->until;
		close_ended(c);
	}
	if (c->found) {
		int cut = c->depth > 0 || c->cut;
		c->pos = UINT64_MAX; /* close what is still open, as far as it came */
		close_ended(c);
		qt_moov(c->buf + 8, c->len - 8, m);
		if (cut)
			x_warn(m, "movie: moov box cut short");
		else
			m->pics.moov_read = 1;
	} else {
		x_warn(m, "movie: no moov box%s", c->broken_at ? " (box structure broken)" : "");
	}
	if (c->overflow && !c->nomem)
		x_warn(m, "movie: moov box over %zu MiB without its sample tables: the rest not read",
		       QT_CATCH_MAX >> 20);
	rc = c->nomem ? SL_E_NOMEM : SL_OK;
	qt_catch_free(c);
	return rc;
}
