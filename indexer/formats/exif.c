#include "indexer/formats/exif.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "indexer/formats/cursor.h"
#include "indexer/formats/desc.h"
#include "indexer/formats/iptc.h"
#include "indexer/formats/parsers.h"
#include "indexer/formats/xmp.h"

enum ifd_kind { IFD_MAIN, IFD_SUB, IFD_EXIF, IFD_GPS };

/* A photo has a handful of IFDs; a file with more is hostile or broken. */
#define MAX_IFDS 64
/* Entries of unknown type an IFD may have before it counts as garbage. */
#define MAX_BAD 4

struct tiff {
	struct bc c;
	struct x_meta *m;
	struct exif_info *info;
	unsigned flags;
	int big;       /* BigTIFF: 8-byte counts and offsets, 20-byte entries */
	uint64_t visited[MAX_IFDS];
	int nvisited;
	/* the image size: IFD0's, unless a later IFD says it is the full image */
	int have_w, have_h;
	uint32_t w, h;
	int low;       /* in IFD1... of a JPEG (EXIF_IFD1_LOW): replaces nothing */
};

/* x_meta.exif.own: the fields EXIF set, which a later EXIF value replaces */
enum {
	EX_MAKE = 1u << 0,
	EX_MODEL = 1u << 1,
	EX_LENS = 1u << 2,
	EX_TAKEN = 1u << 3,
	EX_ISO = 1u << 4,
	EX_EXPOSURE = 1u << 5,
	EX_FNUMBER = 1u << 6,
	EX_FOCAL = 1u << 7,
	EX_GPS = 1u << 8,    /* the position */
	EX_GPSPART = 1u << 9 /* a GPS part or reference in x_meta.exif */
};

/* May the value being read take field bit?  filled: it holds a value. */
static int may_set(const struct tiff *t, unsigned bit, int filled)
{
	return !filled || (!t->low && (t->m->exif.own & bit));
}

struct entry {
	uint16_t tag;
	uint16_t type;
	uint64_t count;
	size_t off;  /* where the value lies in the TIFF block */
	size_t unit; /* bytes per value */
};

/* What the IFD being read says about its image, for choosing the main one. */
struct image {
	int have_subfile;
	uint32_t subfile;
	uint64_t jif_off, jif_len;     /* JPEGInterchangeFormat(Length), 0x0201/0x0202 */
	uint64_t strip_off, strip_len; /* a single strip, 0x0111/0x0117 */
	uint64_t compression;          /* 0x0103 */
	int raw;                       /* CFA or LinearRaw: sensor data, no picture */
};

/* An embedded JPEG worth hashing: the smallest that is no mere thumbnail
 * (32 kB: a 160x120 one is a few kB), else the largest.  A preview is
 * decoded at 1/8, so smaller costs less, and any of them shows the
 * picture the camera made. */
#define PREVIEW_ENOUGH (32u * 1024u)
static void offer_preview(struct tiff *t, uint64_t off, uint64_t len)
{
	struct exif_info *in = t->info;
	int big = len >= PREVIEW_ENOUGH, have_big = in->preview_len >= PREVIEW_ENOUGH;
	if (!off || len < 128 || off > t->c.len || len > t->c.len - off)
		return; /* outside what we were given (a streamed file's first chunk) */
	if (!in->preview_len || (big && (!have_big || len < in->preview_len)) ||
	    (!big && !have_big && len > in->preview_len)) {
		in->preview_off = off;
		in->preview_len = len;
	}
}

static size_t type_size(uint16_t t)
{
	switch (t) {
	case 1: case 2: case 6: case 7: return 1;
	case 3: case 8: return 2;
	case 4: case 9: case 11: case 13: return 4;
	case 5: case 10: case 12: case 16: case 17: case 18: return 8;
	default: return 0;
	}
}

/* 8 bytes at at, in the block's byte order. */
static int rd_u64(struct tiff *t, size_t at, uint64_t *v)
{
	uint32_t a, b;
	if (bc_u32(&t->c, at, &a) || bc_u32(&t->c, at + 4, &b)) {
		*v = 0;
		return -1;
	}
	*v = t->c.be ? ((uint64_t)a << 32 | b) : ((uint64_t)b << 32 | a);
	return 0;
}

static int rd_off(struct tiff *t, size_t at, uint64_t *v)
{
	uint32_t v32;
	if (t->big)
		return rd_u64(t, at, v);
	if (bc_u32(&t->c, at, &v32)) {
		*v = 0;
		return -1;
	}
	*v = v32;
	return 0;
}

static size_t entry_size(const struct tiff *t)
{
	return t->big ? 20 : 12;
}

static size_t count_size(const struct tiff *t)
{
	return t->big ? 8 : 2;
}

/* Entry i of the IFD at ifd; 0 on success, -1 when it cannot be used,
 * BAD_TYPE when its type is not a TIFF type at all (garbage, not an entry). */
#define BAD_TYPE (-2)

static int read_entry(struct tiff *t, size_t ifd, uint64_t i, struct entry *e)
{
	size_t base = ifd + count_size(t) + (size_t)i * entry_size(t);
	size_t inline_max = t->big ? 8 : 4;
	uint64_t voff;

	if (bc_u16(&t->c, base, &e->tag) || bc_u16(&t->c, base + 2, &e->type))
		return -1;
	if (t->big) {
		if (rd_off(t, base + 4, &e->count))
			return -1;
	} else {
		uint32_t c32;
		if (bc_u32(&t->c, base + 4, &c32))
			return -1;
		e->count = c32;
	}
	e->unit = type_size(e->type);
	if (e->unit == 0)
		return BAD_TYPE;
	if (e->count == 0)
		return -1;
	if (e->count > t->c.len / e->unit) {
		x_warn(t->m, "tag 0x%04x: count %" PRIu64 " larger than the EXIF block", e->tag,
		       e->count);
		return -1;
	}
	if ((size_t)e->count * e->unit <= inline_max) {
		e->off = base + (t->big ? 12 : 8);
	} else {
		rd_off(t, base + (t->big ? 12 : 8), &voff);
		if (voff > t->c.len) {
			x_warn(t->m, "tag 0x%04x: value outside the EXIF block", e->tag);
			return -1;
		}
		e->off = (size_t)voff;
	}
	if (!bc_has(&t->c, e->off, (size_t)e->count * e->unit)) {
		x_warn(t->m, "tag 0x%04x: value outside the EXIF block", e->tag);
		return -1;
	}
	return 0;
}

static int get_uint(struct tiff *t, const struct entry *e, uint64_t idx, uint64_t *v)
{
	size_t off = e->off + (size_t)idx * e->unit;
	uint16_t s;
	uint32_t l;
	uint8_t b;

	*v = 0;
	if (idx >= e->count)
		return -1;
	switch (e->type) {
	case 1: case 7:
		if (bc_u8(&t->c, off, &b))
			return -1;
		*v = b;
		return 0;
	case 3: case 8:
		if (bc_u16(&t->c, off, &s))
			return -1;
		*v = s;
		return 0;
	case 4: case 9: case 13:
		if (bc_u32(&t->c, off, &l))
			return -1;
		*v = l;
		return 0;
	case 16: case 17: case 18:
		return rd_off(t, off, v);
	default:
		return -1;
	}
}

static int get_u32(struct tiff *t, const struct entry *e, uint64_t idx, uint32_t *v)
{
	uint64_t w;
	int rc = get_uint(t, e, idx, &w);
	*v = (uint32_t)w;
	return rc == 0 && w <= UINT32_MAX ? 0 : -1;
}

/* RATIONAL/SRATIONAL value idx as a double; -1 for a zero denominator or
 * another type (the caller then leaves the field unknown). */
static int get_rat(struct tiff *t, const struct entry *e, uint64_t idx, double *v)
{
	size_t off = e->off + (size_t)idx * 8u;
	uint32_t num, den;

	*v = 0;
	if (idx >= e->count || (e->type != 5 && e->type != 10))
		return -1;
	if (bc_u32(&t->c, off, &num) || bc_u32(&t->c, off + 4, &den))
		return -1;
	if (den == 0)
		return -1;
	if (e->type == 10)
		*v = (double)(int32_t)num / (double)(int32_t)den;
	else
		*v = (double)num / (double)den;
	return 0;
}

/* The idx-th number written in a text value: an optional sign, digits
 * with an optional fraction, and an optional "/denominator" ("1/250", as
 * some writers store ExposureTime); numbers are separated by anything
 * else.  Up to the first NUL.  -1 when there is no such number, -2 when
 * it is no finite number (a denominator of 0, digits past a double). */
static int text_number(const uint8_t *s, size_t n, uint64_t idx, double *v)
{
	size_t i = 0;
	const uint8_t *z = memchr(s, 0, n);

	if (z)
		n = (size_t)(z - s);
	for (;;) {
		double num = 0, den = 0, scale = 1;
		int neg = 0, digits = 0; /* 0 or 1: any digit seen */

		while (i < n && !(s[i] >= '0' && s[i] <= '9') &&
		       !((s[i] == '-' || s[i] == '+' || s[i] == '.') && i + 1 < n &&
			 s[i + 1] >= '0' && s[i + 1] <= '9'))
			i++;
		if (i == n)
			return -1;
		if (s[i] == '-' || s[i] == '+')
			neg = s[i++] == '-';
		for (; i < n && s[i] >= '0' && s[i] <= '9'; i++, digits = 1)
			num = num * 10 + (s[i] - '0');
		if (i < n && s[i] == '.')
			for (i++; i < n && s[i] >= '0' && s[i] <= '9'; i++, digits = 1)
				num += (s[i] - '0') * (scale /= 10);
		if (i + 1 < n && s[i] == '/' && s[i + 1] >= '0' && s[i + 1] <= '9')
			for (i++; i < n && s[i] >= '0' && s[i] <= '9'; i++)
				den = den * 10 + (s[i] - '0');
		else
			den = 1;
		if (!digits || idx-- > 0)
			continue;
		if (den == 0)
			return -2;
		*v = (neg ? -num : num) / den;
		return isfinite(*v) ? 0 : -2;
	}
}

/* Value idx as a number, whatever type it was stored in: writers put
 * ISO in ASCII, FocalLength in a SHORT, FNumber in a FLOAT, Orientation
 * in a RATIONAL, and exiftool reads each as stored, so do we.  -1 for a
 * zero denominator, a text with no idx-th number, or a type that holds no
 * number (the caller then leaves the field unknown). */
static int get_num(struct tiff *t, const struct entry *e, uint64_t idx, double *v)
{
	size_t off = e->off + (size_t)idx * e->unit;
	uint64_t u;
	uint32_t a;
	uint8_t c;

	*v = 0;
	switch (e->type) {
	case 2:
		return text_number(t->c.p + e->off, (size_t)e->count, idx, v) == 0 ? 0 : -1;
	case 5: case 10:
		return get_rat(t, e, idx, v);
	case 6: /* SBYTE, which get_uint does not read */
		if (idx >= e->count || bc_u8(&t->c, off, &c))
			return -1;
		*v = (int8_t)c;
		return 0;
	case 11: {
		float f;
		if (idx >= e->count || bc_u32(&t->c, off, &a))
			return -1;
		memcpy(&f, &a, sizeof(f));
		*v = f;
		return isfinite(*v) ? 0 : -1;
	}
	case 12: {
		double d;
		if (idx >= e->count || rd_u64(t, off, &u))
			return -1;
		memcpy(&d, &u, sizeof(d));
		*v = d;
		return isfinite(*v) ? 0 : -1;
	}
	default:
		if (get_uint(t, e, idx, &u) != 0)
			return -1;
		/* SSHORT and SLONG come back as their unsigned bits */
		*v = e->type == 8 ? (double)(int16_t)u : e->type == 9 ? (double)(int32_t)u : (double)u;
		return 0;
	}
}

/* A whole number (ISO, Orientation) from any type, within lo..hi; a
 * fraction such as 7/2 is no whole number and leaves the field unknown,
 * with a warning, as does a number out of range. */
static int get_whole(struct tiff *t, const struct entry *e, double lo, double hi, int64_t *v)
{
	double d;

	if (get_num(t, e, 0, &d) != 0)
		return -1;
	if (!(d >= lo && d <= hi) || d != floor(d)) {
		x_warn(t->m, "tag 0x%04x: %g is not a whole number", e->tag, d);
		return -1;
	}
	*v = (int64_t)d;
	return 0;
}

/* A text field; a number stored where text belongs is written as a number
 * (exiftool does the same).  Keeps what an earlier IFD gave. */
static void get_text(struct tiff *t, const struct entry *e, char *dst, size_t cap)
{
	uint64_t v;

	if (dst[0])
		return;
	if (e->type == 2 || e->type == 7) {
		x_copy_text(dst, cap, t->c.p + e->off, (size_t)e->count);
	} else if (get_uint(t, e, 0, &v) == 0) {
		snprintf(dst, cap, "%" PRIu64, v);
	} else {
		x_warn(t->m, "tag 0x%04x: text of type %u ignored", e->tag, e->type);
	}
}

/* Make, Model, LensModel: a text that is not empty takes the field. */
static void set_text(struct tiff *t, const struct entry *e, unsigned bit, char *dst, size_t cap)
{
	char tmp[128] = "";

	if (!may_set(t, bit, dst[0] != '\0'))
		return;
	get_text(t, e, tmp, cap < sizeof(tmp) ? cap : sizeof(tmp));
	if (tmp[0]) {
		memcpy(dst, tmp, strlen(tmp) + 1);
		t->m->exif.own |= bit;
	}
}

/* "YYYY:MM:DD HH:MM:SS" -> "YYYY-MM-DDTHH:MM:SS".  Anything else, including
 * the all-blank form EXIF prescribes for "unknown", leaves the field empty. */
static void get_datetime(struct tiff *t, const struct entry *e)
{
	static const char shape[] = "dddd:dd:dd dd:dd:dd";
	char raw[32] = "";
	size_t i;

	if (!may_set(t, EX_TAKEN, t->m->datetime_original[0] != '\0'))
		return;
	get_text(t, e, raw, sizeof(raw));
	for (i = 0; i < 19; i++) {
		char c = raw[i];
		if (shape[i] == 'd' ? (c < '0' || c > '9') : (c != shape[i] && !(i == 10 && c == 'T')))
			break;
	}
	if (i < 19) {
		if (raw[0] && raw[strspn(raw, " :")] != '\0')
			x_warn(t->m, "DateTimeOriginal '%.19s' not in EXIF form", raw);
		return;
	}
	memcpy(t->m->datetime_original, raw, 19);
	t->m->datetime_original[4] = '-';
	t->m->datetime_original[7] = '-';
	t->m->datetime_original[10] = 'T';
	t->m->datetime_original[19] = '\0';
	t->m->exif.own |= EX_TAKEN;
}

/* OffsetTimeOriginal (strong) or OffsetTime (weak: the offset of
 * ModifyDate's clock, which is usually the same one): "+HH:MM", as EXIF
 * 2.31 writes it; blank means unknown. */
static void get_offset(struct tiff *t, const struct entry *e, int weak)
{
	struct x_meta *m = t->m;
	char raw[16] = "";

	if (m->tz_offset[0] && (weak || !m->tz_weak))
		return;
	get_text(t, e, raw, sizeof(raw));
	if ((raw[0] == '+' || raw[0] == '-') && raw[1] >= '0' && raw[1] <= '1' && raw[2] >= '0' &&
	    raw[2] <= '9' && raw[3] == ':' && raw[4] >= '0' && raw[4] <= '5' && raw[5] >= '0' &&
	    raw[5] <= '9' && raw[6] == '\0' && (raw[1] - '0') * 10 + (raw[2] - '0') <= 14) {
		memcpy(m->tz_offset, raw, 7);
		m->tz_weak = weak;
	} else if (raw[strspn(raw, " :")] != '\0') {
		x_warn(m, "tag 0x%04x: time offset '%.8s' not in EXIF form", e->tag, raw);
	}
}

/* SubSecTimeOriginal: its leading digits (blank or none: unknown). */
static void get_subsec(struct tiff *t, const struct entry *e)
{
	char raw[sizeof(t->m->subsec)] = "";
	size_t n;
	const char *p = raw;

	if (t->m->subsec[0])
		return;
	get_text(t, e, raw, sizeof(raw));
	p += strspn(p, " "); /* a value padded on the left still has its digits */
	n = strspn(p, "0123456789");
	memcpy(t->m->subsec, p, n);
	t->m->subsec[n] = '\0';
}

/* ImageDescription, Artist, Copyright: IFD0's text (where the standard
 * puts them; a thumbnail IFD's copy would add a second creator), up to its
 * first NUL (Copyright's second string, the editor's, is not kept). */
static void get_desc(struct tiff *t, const struct entry *e, int first, enum desc_field f)
{
	const uint8_t *s = t->c.p + e->off, *z;
	size_t n = (size_t)e->count * e->unit;

	if (!first || (e->type != 1 && e->type != 2 && e->type != 7))
		return;
	if ((z = memchr(s, 0, n)) != NULL)
		n = (size_t)(z - s);
	desc_add(t->m, f, DS_EXIF, (const char *)s, n);
}

static void set_num(struct tiff *t, const struct entry *e, unsigned bit, unsigned own,
		    double *dst)
{
	double v;
	if (may_set(t, own, (t->m->have & bit) != 0) && get_num(t, e, 0, &v) == 0) {
		*dst = v;
		t->m->have |= bit;
		t->m->exif.own |= own;
	}
}

static int parse_ifd(struct tiff *t, uint64_t off, enum ifd_kind kind);

static void follow(struct tiff *t, const struct entry *e, enum ifd_kind kind)
{
	uint64_t i, sub;
	for (i = 0; i < e->count && i < 8; i++) {
		/* LONG or IFD as the standard says; SLONG and 8-byte forms seen too */
		if (get_uint(t, e, i, &sub) != 0 || (e->type != 4 && e->type != 9 && e->type != 13 &&
						     e->type != 16 && e->type != 17 && e->type != 18)) {
			x_warn(t->m, "tag 0x%04x: IFD pointer of type %u ignored", e->tag, e->type);
			return;
		}
		parse_ifd(t, sub, kind);
	}
}

static int is_raw_photometric(uint64_t v)
{
	return v == 32803 /* CFA */ || v == 34892 /* LinearRaw */;
}

/* Apple's MakerNote ("Apple iOS", a version, a byte-order mark, then an
 * IFD whose offsets count from the MakerNote's start): tag 0x0011 is the
 * ContentIdentifier a Live Photo's still shares with its movie.  Read
 * through a cursor of its own over the MakerNote's bytes. */
static void apple_makernote(struct tiff *t, const uint8_t *p, size_t n)
{
	struct bc c = bc_make(p, n, 1);
	uint16_t count, i;

	if (t->m->content_id[0] || !bc_is(&c, 0, "Apple iOS\0", 10))
		return;
	if (bc_is(&c, 12, "II", 2))
		c.be = 0;
	else if (!bc_is(&c, 12, "MM", 2))
		return;
	if (bc_u16(&c, 14, &count))
		return;
	for (i = 0; i < count && i < 256; i++) {
		size_t at = 16 + (size_t)i * 12;
		uint16_t tag, type;
		uint32_t len, off;
		if (bc_u16(&c, at, &tag) || bc_u16(&c, at + 2, &type) || bc_u32(&c, at + 4, &len))
			return;
		if (tag != 0x0011 || type != 2)
			continue;
		if (len <= 4)
			off = (uint32_t)(at + 8);
		else if (bc_u32(&c, at + 8, &off))
			return;
		if (!bc_has(&c, off, len)) {
			x_warn(t->m, "Apple MakerNote: ContentIdentifier outside it");
			return;
		}
		x_copy_text(t->m->content_id, sizeof(t->m->content_id), p + off, len);
		return;
	}
}

/* A tag of IFD0, IFD1..., a SubIFD or the Exif IFD.  Like exiftool, one
 * table serves them all (cameras put LensModel in IFD0, Orientation only in
 * IFD1...), and a value met again follows exif.h's rule (may_set); the
 * image size follows its own rule.  first: this is IFD0.
 *
 * Over 150 lines on purpose: one case per tag, a few lines each, kept
 * in one switch so that it reads against exiftool's Exif table. */
static void on_tag(struct tiff *t, const struct entry *e, enum ifd_kind kind, int first,
		   struct image *im)
{
	struct x_meta *m = t->m;
	int image = kind == IFD_MAIN || kind == IFD_SUB;
	uint64_t v;
	int64_t w;
	uint32_t v32;

	switch (e->tag) {
	case 0x00FE:
		if (image && get_u32(t, e, 0, &v32) == 0) {
			im->subfile = v32;
			im->have_subfile = 1;
		}
		break;
	case 0x0100:
	case 0x0101:
		/* Tags come in order and NewSubfileType (0xFE) before the size, so
		 * deciding here reproduces exiftool: IFD0's size, overridden by
		 * each later IFD that says it is the full-resolution image. */
		if (image && (first || (im->have_subfile && im->subfile == 0)) &&
		    get_u32(t, e, 0, &v32) == 0) {
			if (e->tag == 0x0100)
				t->w = v32, t->have_w = 1;
			else
				t->h = v32, t->have_h = 1;
		}
		break;
	case 0x0106:
		if (image && get_uint(t, e, 0, &v) == 0 && is_raw_photometric(v)) {
			t->info->cfa = 1;
			im->raw = 1;
		}
		break;
	case 0x0103:
		if (get_uint(t, e, 0, &v) == 0)
			im->compression = v;
		break;
	case 0x0111:
		if (e->count == 1 && get_uint(t, e, 0, &v) == 0)
			im->strip_off = v;
		break;
	case 0x0117:
		if (e->count == 1 && get_uint(t, e, 0, &v) == 0)
			im->strip_len = v;
		break;
	case 0x010F: set_text(t, e, EX_MAKE, m->make, sizeof(m->make)); break;
	case 0x0110: set_text(t, e, EX_MODEL, m->model, sizeof(m->model)); break;
	case 0x0112:
		if (!(m->have & XM_ORIENTATION) && get_whole(t, e, -32768.0, 65535.0, &w) == 0) {
			m->orientation = (int)w;
			m->have |= XM_ORIENTATION;
		}
		break;
	case 0x014A: follow(t, e, IFD_SUB); break;
	case 0x8769: follow(t, e, IFD_EXIF); break;
	case 0x8825: follow(t, e, IFD_GPS); break;
	case 0x9003:
		get_datetime(t, e);
		if (!t->info->taken[0])
			get_text(t, e, t->info->taken, sizeof(t->info->taken));
		break;
	case 0x0132:
		if (!t->info->modified[0])
			get_text(t, e, t->info->modified, sizeof(t->info->modified));
		break;
	case 0x9010: get_offset(t, e, 1); break;
	case 0x9011: get_offset(t, e, 0); break;
	case 0x9291: get_subsec(t, e); break;
	case 0x829A: set_num(t, e, XM_EXPOSURE, EX_EXPOSURE, &m->exposure_time); break;
	case 0x829D: set_num(t, e, XM_FNUMBER, EX_FNUMBER, &m->f_number); break;
	case 0x920A: set_num(t, e, XM_FOCAL, EX_FOCAL, &m->focal_length); break;
	case 0x8827:
		if (may_set(t, EX_ISO, (m->have & XM_ISO) != 0) &&
		    get_whole(t, e, -2147483648.0, 4294967295.0, &w) == 0) {
			m->iso = w;
			m->have |= XM_ISO;
			m->exif.own |= EX_ISO;
		}
		break;
	case 0xA434: set_text(t, e, EX_LENS, m->lens_model, sizeof(m->lens_model)); break;
	case 0xA002:
		if (!t->info->exif_w)
			get_u32(t, e, 0, &t->info->exif_w);
		break;
	case 0xA003:
		if (!t->info->exif_h)
			get_u32(t, e, 0, &t->info->exif_h);
		break;
	case 0xC612: t->info->dng = 1; break;
	case 0x0201:
	case 0x0202:
		if (get_uint(t, e, 0, &v) != 0)
			break;
		if (e->tag == 0x0201)
			im->jif_off = v;
		else
			im->jif_len = v;
		/* IFD1's JPEG thumbnail: the first one met */
		if (kind == IFD_MAIN && !first) {
			if (e->tag == 0x0201 && !t->info->thumb_off)
				t->info->thumb_off = v;
			else if (e->tag == 0x0202 && !t->info->thumb_len)
				t->info->thumb_len = v;
		}
		break;
	case 0xC634:
		if (first)
			t->info->sony_private = 1;
		break;
	case 0x4746: /* Rating, as Windows writes it beside xmp:Rating */
		if (first && get_uint(t, e, 0, &v) == 0 && v <= 5)
			desc_rating(m, DS_EXIF, (int)v);
		break;
	case 0x010E: get_desc(t, e, first, DF_DESCRIPTION); break;
	case 0x013B: get_desc(t, e, first, DF_CREATOR); break;
	case 0x8298: get_desc(t, e, first, DF_COPYRIGHT); break;
	/* packets a TIFF, DNG or RAW keeps in IFD0; in the EXIF of a JPEG
	 * (which has its own segments for them) exiftool ranks them below
	 * the segments, and so do we by not reading them there */
	case 0x02BC:
		if (first && (t->flags & EXIF_DIMS))
			xmp_parse(t->c.p + e->off, (size_t)e->count * e->unit, m, DS_XMP);
		break;
	case 0x83BB:
		if (first && (t->flags & EXIF_DIMS))
			iptc_parse(t->c.p + e->off, (size_t)e->count * e->unit, m);
		break;
	case 0x8649:
		if (first && (t->flags & EXIF_DIMS))
			iptc_psir(t->c.p + e->off, (size_t)e->count * e->unit, m);
		break;
	case 0x927C:
		if (kind == IFD_EXIF)
			apple_makernote(t, t->c.p + e->off, (size_t)e->count * e->unit);
		break;
	default:
		break;
	}
	/* Panasonic RW2 keeps sensor borders, ISO and the big preview in IFD0 */
	if (first && t->info->magic == 0x55) {
		if (e->tag >= 4 && e->tag <= 7 && get_u32(t, e, 0, &v32) == 0) {
			t->info->border[e->tag - 4] = v32;
			t->info->have_borders |= 1 << (e->tag - 4);
		} else if (e->tag == 0x17 && !(m->have & XM_ISO) && get_uint(t, e, 0, &v) == 0) {
			m->iso = (int64_t)v;
			m->have |= XM_ISO;
		} else if (e->tag == 0x2E && e->off <= UINT32_MAX && e->count <= UINT32_MAX) {
			t->info->jpg_off = (uint32_t)e->off;
			t->info->jpg_len = (uint32_t)e->count;
		}
	}
}

/* Degrees, minutes and seconds, as exiftool reads them whatever their
 * type: the first three numbers there are (fewer: the rest are 0), as
 * RATIONALs, other numbers, or text ("51 30 26.64", "51.5074",
 * "0,7,39"), each taken without its sign (the reference tag gives the
 * hemisphere).  A zero denominator among them (the 0/0 of a receiver
 * without a fix) means no position: -1, as when there is no number. */
static int get_dms(struct tiff *t, const struct entry *e, double dms[3])
{
	uint64_t i, n = e->type == 2 ? 3 : e->count < 3 ? e->count : 3;

	dms[0] = dms[1] = dms[2] = 0;
	for (i = 0; i < n; i++) {
		int r = e->type == 2 ? text_number(t->c.p + e->off, (size_t)e->count, i, &dms[i])
				     : get_num(t, e, i, &dms[i]);
		if (r != 0) {
			dms[i] = 0;
			if (r == -1 && e->type == 2 && i > 0)
				break; /* text with fewer numbers */
			return -1;
		}
		dms[i] = fabs(dms[i]);
	}
	return 0;
}

/* The GPS parts go to x_meta.exif, where a later EXIF block's replace
 * them one by one, as exiftool's tags do; exif_parse combines them. */
static void on_gps(struct tiff *t, const struct entry *e)
{
	struct x_meta *m = t->m;
	char ref[4] = "";
	double dms[3];

	switch (e->tag) {
	case 1:
	case 3:
		get_text(t, e, ref, sizeof(ref));
		if (ref[0] && may_set(t, EX_GPSPART,
				      (e->tag == 1 ? m->exif.lat_ref : m->exif.lon_ref) != 0)) {
			*(e->tag == 1 ? &m->exif.lat_ref : &m->exif.lon_ref) = ref[0];
			m->exif.own |= EX_GPSPART;
		}
		break;
	case 2:
	case 4:
		/* a later coordinate that is no number (0/0: no fix) replaces an
		 * earlier one too: it says the position is not known */
		if (may_set(t, EX_GPSPART, e->tag == 2 ? m->exif.have_lat : m->exif.have_lon)) {
			int ok = get_dms(t, e, dms) == 0;
			memcpy(e->tag == 2 ? m->exif.lat : m->exif.lon, dms, sizeof(dms));
			*(e->tag == 2 ? &m->exif.have_lat : &m->exif.have_lon) = ok;
			m->exif.own |= EX_GPSPART;
		}
		break;
	default: break;
	}
}

/* Parse the IFD at off and, for the main chain, the IFDs linked after it. */
static int parse_ifd(struct tiff *t, uint64_t off, enum ifd_kind kind)
{
	int first = kind == IFD_MAIN && t->nvisited == 0;

	while (off) {
		uint64_t count, i, fit, next;
		struct image im;
		int k, bad;

		for (k = 0; k < t->nvisited; k++) {
			if (t->visited[k] == off) {
				x_warn(t->m, "IFD loop at offset %" PRIu64, off);
				return -1;
			}
		}
		if (t->nvisited == MAX_IFDS) {
			x_warn(t->m, "more than %d IFDs", MAX_IFDS);
			return -1;
		}
		t->visited[t->nvisited++] = off;
		if (off > t->c.len || !bc_has(&t->c, (size_t)off, count_size(t))) {
			x_warn(t->m, "IFD at offset %" PRIu64 " outside the EXIF block", off);
			return -1;
		}
		if (t->big) {
			rd_off(t, (size_t)off, &count);
		} else {
			uint16_t c16;
			bc_u16(&t->c, (size_t)off, &c16);
			count = c16;
		}
		fit = (t->c.len - (size_t)off - count_size(t)) / entry_size(t);
		if (count > fit) {
			x_warn(t->m, "IFD at offset %" PRIu64 ": %" PRIu64 " entries, only %" PRIu64
				     " fit",
			       off, count, fit);
			count = fit;
		}
		memset(&im, 0, sizeof(im));
		for (i = 0, bad = 0; i < count; i++) {
			struct entry e;
			int r = read_entry(t, (size_t)off, i, &e);
			if (r == BAD_TYPE && (i == 0 || ++bad >= MAX_BAD)) {
				/* not a directory (or no longer one): values read from
				 * it would be noise */
				x_warn(t->m, "IFD at offset %" PRIu64 ": entry %" PRIu64
					     " has no valid type; rest ignored",
				       off, i);
				break;
			}
			if (r != 0)
				continue;
			if (kind == IFD_GPS)
				on_gps(t, &e);
			else
				on_tag(t, &e, kind, first, &im);
		}
		/* an embedded JPEG: JPEGInterchangeFormat, or one old-style JPEG
		 * strip of an IFD that is no sensor data (CR2's IFD0, a DNG
		 * preview) */
		if (kind == IFD_MAIN || kind == IFD_SUB) {
			if (im.jif_off && im.jif_len)
				offer_preview(t, im.jif_off, im.jif_len);
			if ((im.compression == 6 || im.compression == 7) && !im.raw && im.strip_len)
				offer_preview(t, im.strip_off, im.strip_len);
		}
		if (kind != IFD_MAIN)
			return 0;
		/* IFD1, IFD2...: the thumbnail, CR2's raw, further pages */
		if (rd_off(t, (size_t)off + count_size(t) + (size_t)count * entry_size(t), &next))
			return 0;
		off = next;
		first = 0;
		t->low = (t->flags & (EXIF_IFD1_LOW | EXIF_FILL_ONLY)) != 0;
	}
	return 0;
}

int exif_parse(const uint8_t *p, size_t n, unsigned flags, struct x_meta *m,
	       struct exif_info *info)
{
	struct tiff t;
	struct exif_info scratch;
	uint16_t magic;
	uint64_t ifd0;
	enum ifd_kind root = IFD_MAIN;

	memset(&t, 0, sizeof(t));
	t.m = m;
	t.flags = flags;
	t.info = info ? info : &scratch;
	memset(t.info, 0, sizeof(*t.info));
	t.c = bc_make(p, n, 0);
	t.low = (flags & EXIF_FILL_ONLY) != 0;
	if (bc_is(&t.c, 0, "MM", 2))
		t.c.be = 1;
	else if (!bc_is(&t.c, 0, "II", 2)) {
		x_warn(m, "EXIF block without TIFF byte-order mark");
		return SL_E_CORRUPT;
	}
	bc_u16(&t.c, 2, &magic);
	t.info->magic = magic;
	if (magic == 43) {
		uint16_t bytesize, zero;
		if (bc_u16(&t.c, 4, &bytesize) || bc_u16(&t.c, 6, &zero) || bytesize != 8 || zero) {
			x_warn(m, "bad BigTIFF header");
			return SL_E_CORRUPT;
		}
		t.big = 1;
		t.info->bigtiff = 1;
		rd_off(&t, 8, &ifd0);
	} else if (magic == 42 || magic == 0x4F52 || magic == 0x5352 || magic == 0x55) {
		/* 42: TIFF; "RO"/"RS": Olympus ORF; 0x55: Panasonic RW2 */
		rd_off(&t, 4, &ifd0);
	} else {
		x_warn(m, "bad TIFF magic %u", magic);
		return SL_E_CORRUPT;
	}
	if (ifd0 < (t.big ? 16u : 8u) || ifd0 >= n) {
		x_warn(m, "IFD0 offset outside the EXIF block");
		return SL_E_CORRUPT;
	}
	if (flags & EXIF_ROOT_IS_EXIF)
		root = IFD_EXIF;
	else if (flags & EXIF_ROOT_IS_GPS)
		root = IFD_GPS;
	parse_ifd(&t, ifd0, root);
	if ((flags & EXIF_DIMS) && !(m->have & XM_DIMS) && (t.have_w || t.have_h)) {
		m->width = t.w;
		m->height = t.h;
		m->have |= XM_DIMS;
	}
	/* without its reference a coordinate has no hemisphere: no position
	 * rather than one a world away (exiftool gives none either) */
	if (!(m->have & XM_GPS) || (m->exif.own & EX_GPS)) {
		const double *a = m->exif.lat, *o = m->exif.lon;
		double lat = a[0] + a[1] / 60.0 + a[2] / 3600.0;
		double lon = o[0] + o[1] / 60.0 + o[2] / 3600.0;
		if (m->exif.have_lat && m->exif.have_lon && m->exif.lat_ref && m->exif.lon_ref &&
		    isfinite(lat) && isfinite(lon)) {
			m->gps_lat = m->exif.lat_ref == 'S' ? -lat : lat;
			m->gps_lon = m->exif.lon_ref == 'W' ? -lon : lon;
			m->have |= XM_GPS;
			m->exif.own |= EX_GPS;
		} else if (m->exif.own & EX_GPS) {
			m->have &= ~XM_GPS; /* a later block's part undid it */
			m->exif.own &= ~EX_GPS;
		}
	}
	return SL_OK;
}

/* iptc.h's, here and not in iptc.c: a TIFF's IFD0 carries Photoshop's
 * resources (tag 0x8649) and a PSD's resources carry a TIFF (0x0422), so
 * the two walks call each other; one file keeps that recursion inside it,
 * and iptc.c (IIM alone) stays below both. */
void iptc_psir(const uint8_t *p, size_t n, struct x_meta *m)
{
	struct bc c = bc_make(p, n, 1);
	size_t off = 0;

	while (off + 12 <= n) {
		uint16_t id;
		uint8_t name_len;
		uint32_t size;
		size_t data;

		if (!bc_is(&c, off, "8BIM", 4)) {
			if (!bc_is(&c, off, "\0\0\0\0", 4)) /* padding ends it quietly */
				x_warn(m, "Photoshop resources: no 8BIM mark at %zu", off);
			return;
		}
		bc_be16(&c, off + 4, &id);
		bc_u8(&c, off + 6, &name_len);
		/* the Pascal name, its length byte included, is padded to even */
		data = off + 6 + (((size_t)name_len + 2) & ~(size_t)1);
		if (bc_be32(&c, data, &size) || !bc_has(&c, data + 4, size)) {
			x_warn(m, "Photoshop resources: resource 0x%04x runs past its block", id);
			return;
		}
		data += 4;
		if (id == 0x0404)
			iptc_parse(p + data, size, m);
		else if (id == 0x0424)
			xmp_parse(p + data, size, m, DS_XMP);
		else if (id == 0x0422 && size >= 8) /* a PSD's EXIF: a TIFF block */
			exif_parse(p + data, size, EXIF_FILL_ONLY, m, NULL);
		off = data + size + (size & 1);
	}
}
