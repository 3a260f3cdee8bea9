/* jpeg_dc.c - the first DC scan of a progressive JPEG (jpeg_dc.h).
 *
 * The entropy-coded data is read through a bounded bit reader; every
 * length, count and table index from the file is checked before use, and
 * anything out of the ordinary ends the attempt (SL_E_UNSUPPORTED) rather
 * than being guessed at: libjpeg then decodes the file as before. */
#include "indexer/jpeg_dc.h"

#include <stdlib.h>
#include <string.h>

#include "indexer/cursor.h"

#define MAX_COMPS 4

struct htab {
	int defined;
	uint8_t val[256];
	int32_t mincode[17], maxcode[17];
	int valptr[17];
	uint16_t look[256]; /* by the next 8 bits: length << 8 | symbol of a
			       code of 8 bits or fewer, 0 for a longer one */
};

struct comp {
	uint8_t id, h, v, tq;
};

struct dec {
	struct bc c;
	size_t pos;       /* the next byte of entropy-coded data */
	uint32_t acc;     /* bits not used yet, the next at the top of nbits */
	int nbits;
	int stopped;      /* a marker or the end came where data was wanted */
	struct htab dc[4];
	uint16_t q0[4];   /* each quantisation table's DC entry */
	int qdef[4];
	struct comp comp[MAX_COMPS];
	int ncomp, hmax, vmax, progressive;
	uint16_t w, h, ri;
};

static int unsupported(struct sl_err *err, const char *why)
{
	return SL_FAIL(err, SL_E_UNSUPPORTED, 0, "jpeg dc: %s", why);
}

/* ---- bits ---- */

/* One more byte into the accumulator; 0 when there is none to take (the
 * end, or a marker: 0xFF not followed by a stuffed 0x00). */
static int fill(struct dec *d)
{
	uint8_t b, nx;

	if (bc_u8(&d->c, d->pos, &b) != 0)
		return 0;
	if (b == 0xFF) {
		if (bc_u8(&d->c, d->pos + 1, &nx) != 0 || nx != 0x00)
			return 0;
		d->pos += 2;
	} else {
		d->pos++;
	}
	d->acc = (d->acc << 8) | b;
	d->nbits += 8;
	return 1;
}

/* At least n (1-16) bits in the accumulator, unless the data stops first:
 * whether there are. */
static int want(struct dec *d, int n)
{
	while (d->nbits < n)
		if (!fill(d))
			return 0;
	return 1;
}

/* The next n bits (1-16) as a number, or -1 when the data stopped. */
static int32_t bits(struct dec *d, int n)
{
	if (!want(d, n)) {
		d->stopped = 1;
		return -1;
	}
	d->nbits -= n;
	return (int32_t)((d->acc >> d->nbits) & ((1u << n) - 1));
}

/* One Huffman symbol, or -1 (data stopped, or no code within 16 bits). */
static int huff(struct dec *d, const struct htab *t)
{
	int32_t code = 0;
	int l;

	if (want(d, 8)) {
		uint16_t e = t->look[(d->acc >> (d->nbits - 8)) & 0xFF];
		if (e) {
			d->nbits -= e >> 8;
			return e & 0xFF;
		}
	}
	for (l = 1; l <= 16; l++) {
		int32_t b = bits(d, 1);
		if (b < 0)
			return -1;
		code = (code << 1) | b;
		if (t->maxcode[l] >= 0 && code <= t->maxcode[l])
			return t->val[t->valptr[l] + code - t->mincode[l]];
	}
	return -1;
}

/* ---- markers ---- */

/* A DHT segment's tables (body at off, len bytes): the DC ones kept. */
static int read_dht(struct dec *d, size_t off, size_t len)
{
	size_t end = off + len;

	while (off < end) {
		uint8_t tc_th, counts[17];
		size_t total = 0;
		int l, i;

		if (bc_u8(&d->c, off, &tc_th) != 0 || (tc_th & 0x0F) > 3 || (tc_th >> 4) > 1)
			return -1;
		for (l = 1; l <= 16; l++) {
			if (bc_u8(&d->c, off + (size_t)l, &counts[l]) != 0)
				return -1;
			total += counts[l];
		}
		if (total > 256 || !bc_has(&d->c, off + 17, total) || off + 17 + total > end)
			return -1;
		if ((tc_th >> 4) == 0) {
			struct htab *t = &d->dc[tc_th & 0x0F];
			int32_t code = 0;
			int k = 0;
			memcpy(t->val, d->c.p + off + 17, total);
			for (l = 1; l <= 16; l++) {
				t->valptr[l] = k;
				t->mincode[l] = code;
				code += counts[l];
				k += counts[l];
				t->maxcode[l] = counts[l] ? code - 1 : -1;
				/* as libjpeg: more codes than l bits hold is no table */
				if (code > (1L << l))
					return -1;
				code <<= 1;
			}
			for (i = 0; i < (int)total; i++)
				if (t->val[i] > 15) /* a DC difference has 15 bits at most */
					return -1;
			memset(t->look, 0, sizeof(t->look));
			for (l = 1, k = 0, code = 0; l <= 8; l++, code <<= 1) {
				for (i = 0; i < counts[l]; i++, k++, code++) {
					int span = 1 << (8 - l), x;
					for (x = 0; x < span; x++)
						t->look[(code << (8 - l)) | x] =
							(uint16_t)(l << 8 | t->val[k]);
				}
			}
			t->defined = 1;
		}
		off += 17 + total;
	}
	return 0;
}

static int read_dqt(struct dec *d, size_t off, size_t len)
{
	size_t end = off + len;

	while (off < end) {
		uint8_t pq_tq, b8;
		uint16_t b16;
		int wide;

		if (bc_u8(&d->c, off, &pq_tq) != 0 || (pq_tq & 0x0F) > 3 || (pq_tq >> 4) > 1)
			return -1;
		wide = pq_tq >> 4;
		if (off + 1 + (wide ? 128u : 64u) > end)
			return -1;
		if (wide ? bc_be16(&d->c, off + 1, &b16) : bc_u8(&d->c, off + 1, &b8))
			return -1;
		d->q0[pq_tq & 0x0F] = wide ? b16 : b8;
		d->qdef[pq_tq & 0x0F] = 1;
		off += 1 + (wide ? 128u : 64u);
	}
	return 0;
}

static int read_sof(struct dec *d, size_t off, size_t len)
{
	uint8_t prec, n;
	int i;

	if (bc_u8(&d->c, off, &prec) || bc_be16(&d->c, off + 1, &d->h) ||
	    bc_be16(&d->c, off + 3, &d->w) || bc_u8(&d->c, off + 5, &n))
		return -1;
	if (prec != 8 || n < 1 || n > MAX_COMPS || len < 6 + 3u * n || !d->w || !d->h)
		return -1;
	d->ncomp = n;
	d->hmax = d->vmax = 1;
	for (i = 0; i < n; i++) {
		uint8_t hv;
		if (bc_u8(&d->c, off + 6 + 3 * (size_t)i, &d->comp[i].id) ||
		    bc_u8(&d->c, off + 7 + 3 * (size_t)i, &hv) ||
		    bc_u8(&d->c, off + 8 + 3 * (size_t)i, &d->comp[i].tq))
			return -1;
		d->comp[i].h = hv >> 4;
		d->comp[i].v = hv & 0x0F;
		if (d->comp[i].h < 1 || d->comp[i].h > 4 || d->comp[i].v < 1 || d->comp[i].v > 4 ||
		    d->comp[i].tq > 3)
			return -1;
		if (d->comp[i].h > d->hmax)
			d->hmax = d->comp[i].h;
		if (d->comp[i].v > d->vmax)
			d->vmax = d->comp[i].v;
	}
	return 0;
}

/* Past the entropy-coded data of a scan not ours: to the next marker that
 * is neither a stuffed 0xFF nor a restart. */
static size_t skip_scan(const struct dec *d, size_t pos)
{
	while (pos + 1 < d->c.len) {
		if (d->c.p[pos] == 0xFF && d->c.p[pos + 1] != 0x00 &&
		    !(d->c.p[pos + 1] >= 0xD0 && d->c.p[pos + 1] <= 0xD7) && d->c.p[pos + 1] != 0xFF)
			return pos;
		pos++;
	}
	return d->c.len;
}

/* libjpeg's 1/8 output of a block whose DC coefficient is coef (jidctred.c
 * jpeg_idct_1x1: dequantised, descaled by 8 with rounding, then its range
 * limit table, indexed with RANGE_MASK, whose wrapping is kept). */
static uint8_t dc_sample(int16_t coef, uint16_t q)
{
	int32_t v = (int32_t)coef * q;
	int32_t x = v + 4 >= 0 ? (v + 4) / 8 : -((-(v + 4) + 7) / 8);
	unsigned i = (unsigned)x & 1023u;

	if (i < 128)
		return (uint8_t)(i + 128);
	if (i < 512)
		return 255;
	if (i < 896)
		return 0;
	return (uint8_t)(i - 896);
}

/* ---- the scan ---- */

struct scan {
	int n;
	int ci[MAX_COMPS];  /* frame component of each scan component */
	int td[MAX_COMPS];  /* its DC table */
	int al;
};

static int restart(struct dec *d, unsigned *next)
{
	uint8_t a, b;

	d->nbits = 0;
	d->acc = 0;
	d->stopped = 0;
	if (bc_u8(&d->c, d->pos, &a) || bc_u8(&d->c, d->pos + 1, &b) || a != 0xFF ||
	    b != 0xD0 + (*next & 7))
		return -1;
	d->pos += 2;
	(*next)++;
	return 0;
}

static int decode(struct dec *d, const struct scan *s, uint8_t *out, uint32_t ow, uint32_t oh,
		  struct sl_err *err)
{
	const struct comp *y = &d->comp[0];
	uint32_t mcux, mcuy, mx, my;
	int32_t pred[MAX_COMPS] = {0};
	unsigned togo = d->ri, next = 0;
	int k;

	if (s->n == 1) {
		mcux = ow; /* the component's own blocks, luma's being the frame's */
		mcuy = oh;
	} else {
		mcux = (d->w + 8u * (uint32_t)d->hmax - 1) / (8u * (uint32_t)d->hmax);
		mcuy = (d->h + 8u * (uint32_t)d->vmax - 1) / (8u * (uint32_t)d->vmax);
	}
	for (my = 0; my < mcuy; my++) {
		for (mx = 0; mx < mcux; mx++) {
			if (d->ri) {
				if (togo == 0) {
					if (restart(d, &next) != 0)
						return unsupported(err, "a restart marker out of place");
					memset(pred, 0, sizeof(pred));
					togo = d->ri;
				}
				togo--;
			}
			for (k = 0; k < s->n; k++) {
				const struct comp *c = &d->comp[s->ci[k]];
				int bh = s->n > 1 ? c->h : 1, bv = s->n > 1 ? c->v : 1, bx, by;
				for (by = 0; by < bv; by++) {
					for (bx = 0; bx < bh; bx++) {
						int sym = huff(d, &d->dc[s->td[k]]);
						int32_t diff = 0;
						uint32_t px, py;
						if (sym < 0)
							return unsupported(err, "damaged or cut-off data");
						if (sym) {
							int32_t r = bits(d, sym);
							if (r < 0)
								return unsupported(err, "cut-off data");
							diff = r < (1 << (sym - 1)) ? r - (1 << sym) + 1 : r;
						}
						pred[k] = (int32_t)((uint32_t)pred[k] + (uint32_t)diff);
						if (s->ci[k] != 0)
							continue;
						px = s->n > 1 ? mx * (uint32_t)y->h + (uint32_t)bx : mx;
						py = s->n > 1 ? my * (uint32_t)y->v + (uint32_t)by : my;
						if (px < ow && py < oh)
							out[(size_t)py * ow + px] = dc_sample(
								(int16_t)(uint16_t)((uint32_t)pred[k] << s->al),
								d->q0[y->tq]);
					}
				}
			}
		}
	}
	return SL_OK;
}

/* The SOS at off (body, len bytes): ours when it holds the luma's first
 * DC pass.  1 ours, 0 not, -1 malformed. */
static int read_sos(struct dec *d, size_t off, size_t len, struct scan *s)
{
	uint8_t n, ss, se, ahal;
	int i, j, ours = 0;

	if (bc_u8(&d->c, off, &n) || n < 1 || n > MAX_COMPS || len < 4 + 2u * n)
		return -1;
	s->n = n;
	for (i = 0; i < n; i++) {
		uint8_t id, t;
		if (bc_u8(&d->c, off + 1 + 2 * (size_t)i, &id) ||
		    bc_u8(&d->c, off + 2 + 2 * (size_t)i, &t))
			return -1;
		s->ci[i] = -1;
		for (j = 0; j < d->ncomp; j++)
			if (d->comp[j].id == id)
				s->ci[i] = j;
		if (s->ci[i] < 0 || (t >> 4) > 3)
			return -1;
		s->td[i] = t >> 4;
		ours |= s->ci[i] == 0;
	}
	if (bc_u8(&d->c, off + 1 + 2 * (size_t)n, &ss) || bc_u8(&d->c, off + 2 + 2 * (size_t)n, &se) ||
	    bc_u8(&d->c, off + 3 + 2 * (size_t)n, &ahal))
		return -1;
	s->al = ahal & 0x0F;
	if (!ours || ss != 0)
		return 0;
	if (se != 0 || (ahal >> 4) != 0 || s->al > 13)
		return -1; /* luma's DC after its first pass?  not ours to judge */
	return 1;
}

int jdc_grey(const uint8_t *p, size_t n, uint8_t **out, uint32_t *w, uint32_t *h,
	     struct sl_err *err)
{
	struct dec *d = calloc(1, sizeof(*d));
	struct scan s;
	size_t pos = 2;
	int rc = SL_E_UNSUPPORTED, k;

	*out = NULL;
	*w = *h = 0;
	if (!d)
		return SL_FAIL(err, SL_E_NOMEM, 0, "jpeg dc: out of memory");
	d->c = bc_make(p, n, 1);
	if (n < 4 || p[0] != 0xFF || p[1] != 0xD8) {
		rc = unsupported(err, "no SOI");
		goto done;
	}
	for (;;) {
		uint8_t mk;
		uint16_t len;
		int r;

		while (pos < n && p[pos] == 0xFF && pos + 1 < n && p[pos + 1] == 0xFF)
			pos++; /* fill bytes */
		if (pos + 4 > n || p[pos] != 0xFF) {
			rc = unsupported(err, "no marker where one belongs");
			goto done;
		}
		mk = p[pos + 1];
		if (mk == 0xD9 || bc_be16(&d->c, pos + 2, &len) || len < 2 ||
		    !bc_has(&d->c, pos + 4, (size_t)len - 2)) {
			rc = unsupported(err, "no luma DC scan");
			goto done;
		}
		switch (mk) {
		case 0xC2:
			r = d->ncomp ? -1 : read_sof(d, pos + 4, (size_t)len - 2);
			d->progressive = 1;
			break;
		case 0xC4:
			r = read_dht(d, pos + 4, (size_t)len - 2);
			break;
		case 0xDB:
			r = read_dqt(d, pos + 4, (size_t)len - 2);
			break;
		case 0xDD:
			r = len == 4 ? bc_be16(&d->c, pos + 4, &d->ri) : -1;
			break;
		case 0xDA:
			if (!d->progressive) {
				r = -1;
				break;
			}
			r = read_sos(d, pos + 4, (size_t)len - 2, &s);
			if (r == 0) { /* another component's pass: skipped */
				pos = skip_scan(d, pos + 2 + len);
				continue;
			}
			break;
		default:
			/* other frame types (baseline, lossless, arithmetic) and
			 * arithmetic tables are not ours; the rest is skipped */
			r = (mk >= 0xC0 && mk <= 0xCF && mk != 0xC4) ? -1 : 0;
			break;
		}
		if (r < 0) {
			rc = unsupported(err, "a segment this decoder does not take");
			goto done;
		}
		if (mk == 0xDA)
			break;
		pos += 2 + (size_t)len;
	}
	/* the scan: luma with the largest sampling (its blocks are the
	 * output's), its tables there */
	if (d->comp[0].h != d->hmax || d->comp[0].v != d->vmax || !d->qdef[d->comp[0].tq]) {
		rc = unsupported(err, "luma is not the largest component");
		goto done;
	}
	for (k = 0; k < s.n; k++)
		if (!d->dc[s.td[k]].defined) {
			rc = unsupported(err, "a Huffman table is missing");
			goto done;
		}
	*w = (d->w + 7u) / 8u;
	*h = (d->h + 7u) / 8u;
	/* every block's DC takes a bit at least: more blocks than 8 a byte is
	 * a small file declaring a big frame (jpeg.c refuses it the same way) */
	if ((uint64_t)*w * *h > 8u * (uint64_t)n + 4096) {
		rc = unsupported(err, "more blocks than the bytes can hold");
		goto done;
	}
	*out = calloc((size_t)*w * *h, 1);
	if (!*out) {
		rc = SL_FAIL(err, SL_E_NOMEM, 0, "jpeg dc: out of memory");
		goto done;
	}
	d->pos = pos + 2 + ((size_t)p[pos + 2] << 8 | p[pos + 3]);
	rc = decode(d, &s, *out, *w, *h, err);
done:
	if (rc != SL_OK) {
		free(*out);
		*out = NULL;
		*w = *h = 0;
	}
	free(d);
	return rc;
}
