#include "indexer/exif.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "indexer/cursor.h"

enum ifd_kind { IFD_0, IFD_EXIF, IFD_GPS };

#define MAX_IFDS 16

struct tiff {
	struct bc c;
	struct x_meta *m;
	unsigned flags;
	uint32_t visited[MAX_IFDS];
	int nvisited;
	/* GPS parts, combined once the GPS IFD is read */
	double lat[3], lon[3];
	int have_lat, have_lon;
	char lat_ref, lon_ref;
};

struct entry {
	uint16_t tag;
	uint16_t type;
	uint32_t count;
	size_t off;  /* where the value lies in the TIFF block */
	size_t unit; /* bytes per value */
};

static size_t type_size(uint16_t t)
{
	switch (t) {
	case 1: case 2: case 6: case 7: return 1;
	case 3: case 8: return 2;
	case 4: case 9: case 11: case 13: return 4;
	case 5: case 10: case 12: return 8;
	default: return 0;
	}
}

/* Entry i of the IFD at ifd; 0 on success, -1 when it cannot be used. */
static int read_entry(struct tiff *t, size_t ifd, uint32_t i, struct entry *e)
{
	size_t base = ifd + 2 + 12u * i;
	uint32_t voff;

	if (bc_u16(&t->c, base, &e->tag) || bc_u16(&t->c, base + 2, &e->type) ||
	    bc_u32(&t->c, base + 4, &e->count))
		return -1;
	e->unit = type_size(e->type);
	if (e->unit == 0 || e->count == 0)
		return -1;
	if (e->count > t->c.len / e->unit) {
		x_warn(t->m, "tag 0x%04x: count %u larger than the EXIF block", e->tag, e->count);
		return -1;
	}
	if ((size_t)e->count * e->unit <= 4) {
		e->off = base + 8;
	} else {
		bc_u32(&t->c, base + 8, &voff);
		e->off = voff;
	}
	if (!bc_has(&t->c, e->off, (size_t)e->count * e->unit)) {
		x_warn(t->m, "tag 0x%04x: value outside the EXIF block", e->tag);
		return -1;
	}
	return 0;
}

static int get_uint(struct tiff *t, const struct entry *e, uint32_t idx, uint32_t *v)
{
	size_t off = e->off + (size_t)idx * e->unit;
	uint16_t s;
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
		return bc_u32(&t->c, off, v);
	default:
		return -1;
	}
}

/* RATIONAL/SRATIONAL value idx as a double; -1 for a zero denominator or
 * another type (the caller then leaves the field unknown). */
static int get_rat(struct tiff *t, const struct entry *e, uint32_t idx, double *v)
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

static void get_text(struct tiff *t, const struct entry *e, char *dst, size_t cap)
{
	if (e->type != 2 && e->type != 7 && e->type != 1) {
		x_warn(t->m, "tag 0x%04x: text of type %u ignored", e->tag, e->type);
		return;
	}
	x_copy_text(dst, cap, t->c.p + e->off, e->count);
}

/* "YYYY:MM:DD HH:MM:SS" -> "YYYY-MM-DDTHH:MM:SS"; anything else is dropped
 * with a warning rather than stored half-understood. */
static void get_datetime(struct tiff *t, const struct entry *e)
{
	static const char shape[] = "dddd:dd:dd dd:dd:dd";
	char raw[32];
	size_t i;

	get_text(t, e, raw, sizeof(raw));
	for (i = 0; i < 19; i++) {
		char c = raw[i];
		if (shape[i] == 'd' ? (c < '0' || c > '9') : (c != shape[i] && !(i == 10 && c == 'T')))
			break;
	}
	if (i < 19) {
		if (raw[0])
			x_warn(t->m, "DateTimeOriginal '%.19s' not in EXIF form", raw);
		return;
	}
	memcpy(t->m->datetime_original, raw, 19);
	t->m->datetime_original[4] = '-';
	t->m->datetime_original[7] = '-';
	t->m->datetime_original[10] = 'T';
	t->m->datetime_original[19] = '\0';
}

static int parse_ifd(struct tiff *t, uint32_t off, enum ifd_kind kind);

static void follow(struct tiff *t, const struct entry *e, enum ifd_kind kind)
{
	uint32_t sub;
	if (get_uint(t, e, 0, &sub) != 0) {
		x_warn(t->m, "tag 0x%04x: IFD pointer of type %u ignored", e->tag, e->type);
		return;
	}
	parse_ifd(t, sub, kind);
}

static void on_ifd0(struct tiff *t, const struct entry *e)
{
	struct x_meta *m = t->m;
	uint32_t v;

	switch (e->tag) {
	case 0x010F: get_text(t, e, m->make, sizeof(m->make)); break;
	case 0x0110: get_text(t, e, m->model, sizeof(m->model)); break;
	case 0x0112:
		if (get_uint(t, e, 0, &v) == 0) {
			m->orientation = (int)v;
			m->have |= XM_ORIENTATION;
		}
		break;
	case 0x0100:
		if ((t->flags & EXIF_DIMS) && get_uint(t, e, 0, &v) == 0)
			m->width = v;
		break;
	case 0x0101:
		if ((t->flags & EXIF_DIMS) && get_uint(t, e, 0, &v) == 0)
			m->height = v;
		break;
	case 0x8769: follow(t, e, IFD_EXIF); break;
	case 0x8825: follow(t, e, IFD_GPS); break;
	default: break;
	}
}

static void on_exif(struct tiff *t, const struct entry *e)
{
	struct x_meta *m = t->m;
	uint32_t v;

	switch (e->tag) {
	case 0x9003: get_datetime(t, e); break;
	case 0x829A:
		if (get_rat(t, e, 0, &m->exposure_time) == 0)
			m->have |= XM_EXPOSURE;
		break;
	case 0x829D:
		if (get_rat(t, e, 0, &m->f_number) == 0)
			m->have |= XM_FNUMBER;
		break;
	case 0x8827:
		if (get_uint(t, e, 0, &v) == 0) {
			m->iso = v;
			m->have |= XM_ISO;
		}
		break;
	case 0x920A:
		if (get_rat(t, e, 0, &m->focal_length) == 0)
			m->have |= XM_FOCAL;
		break;
	case 0xA434: get_text(t, e, m->lens_model, sizeof(m->lens_model)); break;
	default: break;
	}
}

static int get_dms(struct tiff *t, const struct entry *e, double dms[3])
{
	int i;
	if (e->count < 3)
		return -1;
	for (i = 0; i < 3; i++)
		if (get_rat(t, e, (uint32_t)i, &dms[i]) != 0)
			return -1;
	return 0;
}

static void on_gps(struct tiff *t, const struct entry *e)
{
	char ref[4];

	switch (e->tag) {
	case 1:
		get_text(t, e, ref, sizeof(ref));
		t->lat_ref = ref[0];
		break;
	case 2: t->have_lat = get_dms(t, e, t->lat) == 0; break;
	case 3:
		get_text(t, e, ref, sizeof(ref));
		t->lon_ref = ref[0];
		break;
	case 4: t->have_lon = get_dms(t, e, t->lon) == 0; break;
	default: break;
	}
}

static int parse_ifd(struct tiff *t, uint32_t off, enum ifd_kind kind)
{
	uint16_t count;
	uint32_t i, fit;
	int k;

	for (k = 0; k < t->nvisited; k++) {
		if (t->visited[k] == off) {
			x_warn(t->m, "IFD loop at offset %u", off);
			return -1;
		}
	}
	if (t->nvisited == MAX_IFDS) {
		x_warn(t->m, "more than %d IFDs", MAX_IFDS);
		return -1;
	}
	t->visited[t->nvisited++] = off;
	if (bc_u16(&t->c, off, &count) != 0) {
		x_warn(t->m, "IFD at offset %u outside the EXIF block", off);
		return -1;
	}
	fit = (uint32_t)((t->c.len - off - 2) / 12);
	if (count > fit) {
		x_warn(t->m, "IFD at offset %u: %u entries, only %u fit", off, count, fit);
		count = (uint16_t)fit;
	}
	for (i = 0; i < count; i++) {
		struct entry e;
		if (read_entry(t, off, i, &e) != 0)
			continue;
		if (kind == IFD_0)
			on_ifd0(t, &e);
		else if (kind == IFD_EXIF)
			on_exif(t, &e);
		else
			on_gps(t, &e);
	}
	return 0;
}

int exif_parse(const uint8_t *p, size_t n, unsigned flags, struct x_meta *m)
{
	struct tiff t;
	uint16_t magic;
	uint32_t ifd0;

	memset(&t, 0, sizeof(t));
	t.m = m;
	t.flags = flags;
	t.c = bc_make(p, n, 0);
	if (bc_is(&t.c, 0, "MM", 2))
		t.c.be = 1;
	else if (!bc_is(&t.c, 0, "II", 2)) {
		x_warn(m, "EXIF block without TIFF byte-order mark");
		return SL_E_CORRUPT;
	}
	bc_u16(&t.c, 2, &magic);
	/* 42: TIFF; 0x4F52/0x5352 ("RO"/"RS"): Olympus ORF; 0x55: Panasonic RW2 */
	if (magic != 42 && magic != 0x4F52 && magic != 0x5352 && magic != 0x55) {
		x_warn(m, magic == 43 ? "BigTIFF not supported" : "bad TIFF magic %u", magic);
		return SL_E_CORRUPT;
	}
	if (bc_u32(&t.c, 4, &ifd0) != 0 || ifd0 < 8 || ifd0 >= n) {
		x_warn(m, "IFD0 offset outside the EXIF block");
		return SL_E_CORRUPT;
	}
	parse_ifd(&t, ifd0, IFD_0);
	if ((flags & EXIF_DIMS) && m->width && m->height)
		m->have |= XM_DIMS;
	if (t.have_lat && t.have_lon) {
		double lat = t.lat[0] + t.lat[1] / 60.0 + t.lat[2] / 3600.0;
		double lon = t.lon[0] + t.lon[1] / 60.0 + t.lon[2] / 3600.0;
		if (isfinite(lat) && isfinite(lon)) {
			m->gps_lat = t.lat_ref == 'S' ? -lat : lat;
			m->gps_lon = t.lon_ref == 'W' ? -lon : lon;
			m->have |= XM_GPS;
		}
	}
	return SL_OK;
}
