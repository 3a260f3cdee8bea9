#include "tools/mkcorpus/exifw.h"

#include <string.h>

#define MAX_ENTRIES 16
#define MAX_DATA 64

struct ent {
	uint16_t tag, type;
	uint32_t count;
	uint8_t data[MAX_DATA];
	size_t len;
};

struct ifd {
	struct ent e[MAX_ENTRIES];
	int n;
};

static int be;

static void put16(uint8_t *p, uint16_t v)
{
	if (be) {
		p[0] = (uint8_t)(v >> 8);
		p[1] = (uint8_t)v;
	} else {
		p[0] = (uint8_t)v;
		p[1] = (uint8_t)(v >> 8);
	}
}

static void put32(uint8_t *p, uint32_t v)
{
	if (be) {
		p[0] = (uint8_t)(v >> 24);
		p[1] = (uint8_t)(v >> 16);
		p[2] = (uint8_t)(v >> 8);
		p[3] = (uint8_t)v;
	} else {
		p[0] = (uint8_t)v;
		p[1] = (uint8_t)(v >> 8);
		p[2] = (uint8_t)(v >> 16);
		p[3] = (uint8_t)(v >> 24);
	}
}

static struct ent *add(struct ifd *d, uint16_t tag, uint16_t type, uint32_t count, size_t len)
{
	struct ent *e = &d->e[d->n++];
	memset(e, 0, sizeof(*e));
	e->tag = tag;
	e->type = type;
	e->count = count;
	e->len = len;
	return e;
}

static void add_ascii(struct ifd *d, uint16_t tag, const char *s)
{
	size_t n = strlen(s) + 1;
	struct ent *e;
	if (n > MAX_DATA)
		n = MAX_DATA;
	e = add(d, tag, 2, (uint32_t)n, n);
	memcpy(e->data, s, n - 1);
}

static void add_short(struct ifd *d, uint16_t tag, uint16_t v)
{
	put16(add(d, tag, 3, 1, 2)->data, v);
}

static void add_long(struct ifd *d, uint16_t tag, uint32_t v)
{
	put32(add(d, tag, 4, 1, 4)->data, v);
}

static void add_rationals(struct ifd *d, uint16_t tag, const uint32_t (*r)[2], uint32_t n)
{
	struct ent *e = add(d, tag, 5, n, 8u * n);
	uint32_t i;
	for (i = 0; i < n; i++) {
		put32(e->data + 8 * i, r[i][0]);
		put32(e->data + 8 * i + 4, r[i][1]);
	}
}

static void add_rational(struct ifd *d, uint16_t tag, uint32_t num, uint32_t den)
{
	const uint32_t r[1][2] = {{num, den}};
	add_rationals(d, tag, r, 1);
}

/* n single-byte values of type BYTE (1) or UNDEFINED (7). */
static void add_bytes(struct ifd *d, uint16_t tag, uint16_t type, const void *bytes, uint32_t n)
{
	memcpy(add(d, tag, type, n, n)->data, bytes, n);
}

static size_t ifd_size(const struct ifd *d)
{
	size_t s = 2 + 12u * (size_t)d->n + 4;
	int i;
	for (i = 0; i < d->n; i++)
		if (d->e[i].len > 4)
			s += d->e[i].len + (d->e[i].len & 1);
	return s;
}

/* Serialise d, which starts at TIFF offset base, into p. */
static void ifd_write(uint8_t *p, const struct ifd *d, uint32_t base, uint32_t next)
{
	uint32_t data = base + 2 + 12u * (uint32_t)d->n + 4;
	uint8_t *q = p + 2;
	int i;

	put16(p, (uint16_t)d->n);
	for (i = 0; i < d->n; i++, q += 12) {
		const struct ent *e = &d->e[i];
		put16(q, e->tag);
		put16(q + 2, e->type);
		put32(q + 4, e->count);
		if (e->len <= 4) {
			memcpy(q + 8, e->data, e->len);
		} else {
			put32(q + 8, data);
			memcpy(p + (data - base), e->data, e->len);
			data += (uint32_t)(e->len + (e->len & 1));
		}
	}
	put32(q, next);
}

/* Find an entry to patch a pointer value into once the layout is known. */
static struct ent *find(struct ifd *d, uint16_t tag)
{
	int i;
	for (i = 0; i < d->n; i++)
		if (d->e[i].tag == tag)
			return &d->e[i];
	return NULL;
}

int exifw_build(const struct exifw_in *in, struct strbuf *out)
{
	struct ifd ifd0, exif, gps, ifd1;
	uint32_t off0 = 8, offx, offg, off1, offt, total;
	size_t start = out->len;
	uint8_t *p;
	static const uint32_t res[1][2] = {{72, 1}};

	be = in->big_endian;
	memset(&ifd0, 0, sizeof(ifd0));
	memset(&exif, 0, sizeof(exif));
	memset(&gps, 0, sizeof(gps));
	memset(&ifd1, 0, sizeof(ifd1));

	add_ascii(&ifd0, 0x010F, in->make);
	add_ascii(&ifd0, 0x0110, in->model);
	add_short(&ifd0, 0x0112, (uint16_t)in->orientation);
	add_rationals(&ifd0, 0x011A, res, 1);
	add_rationals(&ifd0, 0x011B, res, 1);
	add_short(&ifd0, 0x0128, 2);
	if (in->software)
		add_ascii(&ifd0, 0x0131, in->software);
	add_ascii(&ifd0, 0x0132, in->modified ? in->modified : in->datetime);
	add_long(&ifd0, 0x8769, 0);
	if (in->has_gps)
		add_long(&ifd0, 0x8825, 0);

	add_rational(&exif, 0x829A, in->exp_num, in->exp_den);
	add_rational(&exif, 0x829D, in->fnum_num, in->fnum_den);
	add_short(&exif, 0x8827, (uint16_t)in->iso);
	add_bytes(&exif, 0x9000, 7, "0232", 4);
	add_ascii(&exif, 0x9003, in->datetime);
	add_ascii(&exif, 0x9004, in->datetime);
	if (in->offset)
		add_ascii(&exif, 0x9010, in->offset);
	if (in->offset_original)
		add_ascii(&exif, 0x9011, in->offset_original);
	add_rational(&exif, 0x920A, in->focal_num, in->focal_den);
	if (in->subsec_original)
		add_ascii(&exif, 0x9291, in->subsec_original);
	add_long(&exif, 0xA002, in->pixel_w);
	add_long(&exif, 0xA003, in->pixel_h);
	if (in->lens_model)
		add_ascii(&exif, 0xA434, in->lens_model);

	if (in->has_gps) {
		char ref[2] = {0, 0};
		add_bytes(&gps, 0x0000, 1, "\2\3\0\0", 4);
		ref[0] = in->lat_ref;
		add_ascii(&gps, 0x0001, ref);
		add_rationals(&gps, 0x0002, (const uint32_t(*)[2])in->lat, 3);
		ref[0] = in->lon_ref;
		add_ascii(&gps, 0x0003, ref);
		add_rationals(&gps, 0x0004, (const uint32_t(*)[2])in->lon, 3);
	}
	if (in->thumb) {
		add_short(&ifd1, 0x0103, 6);
		add_long(&ifd1, 0x0201, 0);
		add_long(&ifd1, 0x0202, (uint32_t)in->thumb_len);
	}

	offx = off0 + (uint32_t)ifd_size(&ifd0);
	offg = offx + (uint32_t)ifd_size(&exif);
	off1 = offg + (in->has_gps ? (uint32_t)ifd_size(&gps) : 0);
	offt = off1 + (in->thumb ? (uint32_t)ifd_size(&ifd1) : 0);
	total = offt + (in->thumb ? (uint32_t)in->thumb_len : 0);
	put32(find(&ifd0, 0x8769)->data, offx);
	if (in->has_gps)
		put32(find(&ifd0, 0x8825)->data, offg);
	if (in->thumb)
		put32(find(&ifd1, 0x0201)->data, offt);

	if (sl_grow(&out->p, &out->cap, start + total + 1, 1) != 0)
		return -1;
	p = (uint8_t *)out->p + start;
	memset(p, 0, total);
	memcpy(p, be ? "MM\0*" : "II*\0", 4);
	put32(p + 4, off0);
	ifd_write(p + off0, &ifd0, off0, in->thumb ? off1 : 0);
	ifd_write(p + offx, &exif, offx, 0);
	if (in->has_gps)
		ifd_write(p + offg, &gps, offg, 0);
	if (in->thumb) {
		ifd_write(p + off1, &ifd1, off1, 0);
		memcpy(p + offt, in->thumb, in->thumb_len);
	}
	out->len = start + total;
	out->p[out->len] = '\0';
	return 0;
}
