/* jpeg_dc.c - a JPEG's DC terms, from a progressive file's first DC scan or
 * a sequential file's scan, its AC terms decoded only to be passed over
 * (jpeg_dc.h).
 *
 * The entropy-coded data is read through a bounded bit reader; every
 * length, count and table index from the file is checked before use, and
 * anything out of the ordinary ends the attempt (SL_E_UNSUPPORTED) rather
 * than being guessed at: libjpeg then decodes the file as before. */
#include "indexer/formats/jpeg_dc.h"

#include <stdlib.h>
#include <string.h>

#include "indexer/formats/cursor.h"

#define MAX_COMPS 4

/* Codes of up to LOOK bits are found by one look-up of the next LOOK
 * bits; longer ones (rare: the table puts the frequent symbols first) bit
 * by bit. */
#define LOOK 10
#define PAIR 11

/* A pair entry: the first term's bits (code and value; 0: no code within
 * PAIR bits) and advance (0 for the end of the block); then the bits and
 * advance of the first and, when its code too is within PAIR bits and the
 * first did not end the block, the second; whether the last of those
 * ended the block. */
#define P_LEN1(e) ((e) & 63u)
#define P_ADV1(e) (((e) >> 6) & 31u)
#define P_LEN(e) (((e) >> 11) & 63u)
#define P_ADV(e) (((e) >> 17) & 63u)
#define P_EOB 0x800000u

struct htab {
	int defined;
	uint8_t val[256];
	int32_t mincode[17], maxcode[17];
	int valptr[17];
	/* by the next LOOK bits, 0 for a longer code; else for a DC table
	 * length << 8 | symbol, for an AC table what passing over the term
	 * takes: advance << 8 | the code's and the value's bits, advance
	 * being how far the term moves along the block (run + 1; 16 for
	 * sixteen zeros; 0 for the end of the block) */
	uint16_t look[1 << LOOK];
	/* an AC table's next PAIR bits, what passing over up to two terms
	 * takes (pair_build) */
	uint32_t pair[1 << PAIR];
	int paired;
};

struct comp {
	uint8_t id, h, v, tq;
};

struct dec {
	struct bc c;
	size_t pos;       /* the next byte of entropy-coded data */
	uint64_t acc;     /* bits not used yet, the next at the top of nbits */
	int nbits;
	int pad;          /* of those, how many (the last) are zeros put in at a
			     marker or the end: the data stopped there, and
			     nbits < pad means a block took some of them */
	struct htab dc[4], ac[4];
	uint16_t q0[4];   /* each quantisation table's DC entry */
	int qdef[4];
	struct comp comp[MAX_COMPS];
	int ncomp, hmax, vmax, progressive, sequential;
	uint16_t w, h, ri;
};

static int unsupported(struct sl_err *err, const char *why)
{
	return SL_FAIL(err, SL_E_UNSUPPORTED, 0, "jpeg dc: %s", why);
}

/* ---- bits ---- */

/* The eight bytes at p, the first the most significant. */
static inline uint64_t load_be64(const uint8_t *p)
{
	return (uint64_t)p[0] << 56 | (uint64_t)p[1] << 48 | (uint64_t)p[2] << 40 |
	       (uint64_t)p[3] << 32 | (uint64_t)p[4] << 24 | (uint64_t)p[5] << 16 |
	       (uint64_t)p[6] << 8 | (uint64_t)p[7];
}

/* Whether any of v's eight bytes is 0xFF (a marker, or a stuffed byte). */
static int has_ff(uint64_t v)
{
	uint64_t x = ~v;
	return ((x - 0x0101010101010101ull) & ~x & 0x8080808080808080ull) != 0;
}

/* The accumulator filled to more than 32 bits: eight bytes at a time
 * where none is 0xFF, else byte by byte, a stuffed 0xFF 0x00 taken as
 * 0xFF; at a marker or the end, zeros (pad) and pos stays put. */
static void refill(struct dec *d)
{
	const uint8_t *p = d->c.p;
	size_t n = d->c.len;

	if (!d->pad && d->pos <= n && n - d->pos >= 8) {
		uint64_t v = load_be64(p + d->pos);
		int k;
		if (!has_ff(v)) {
			k = (63 - d->nbits) >> 3; /* whole bytes that fit: 4 to 7 */
			d->acc = d->acc << (8 * k) | v >> (64 - 8 * k);
			d->nbits += 8 * k;
			d->pos += (size_t)k;
			return;
		}
	}
	while (d->nbits <= 56) {
		uint8_t b = 0;
		if (d->pad || d->pos >= n) {
			d->pad += 8;
		} else if (p[d->pos] != 0xFF) {
			b = p[d->pos++];
		} else if (d->pos + 1 < n && p[d->pos + 1] == 0x00) {
			b = 0xFF;
			d->pos += 2;
		} else {
			d->pad += 8; /* a marker */
		}
		d->acc = d->acc << 8 | b;
		d->nbits += 8;
	}
}

/* The next n bits (0-16), left in place; needs nbits >= n. */
static uint32_t peek(const struct dec *d, int n)
{
	return (uint32_t)(d->acc >> (d->nbits - n)) & ((1u << n) - 1);
}

/* The next n bits (0-16) as a number; needs nbits >= n. */
static int32_t take(struct dec *d, int n)
{
	int32_t v = (int32_t)peek(d, n);
	d->nbits -= n;
	return v;
}

/* One Huffman symbol, its code taken, or -1 (no code within 16 bits);
 * needs nbits >= 16. */
static int huff(struct dec *d, const struct htab *t)
{
	int l;

	for (l = LOOK + 1; l <= 16; l++) {
		int32_t code = (int32_t)peek(d, l);
		if (t->maxcode[l] >= 0 && code <= t->maxcode[l]) {
			d->nbits -= l;
			return t->val[t->valptr[l] + code - t->mincode[l]];
		}
	}
	return -1;
}

/* One DC symbol (a difference's size), its code taken, or -1; needs
 * nbits >= 16. */
static int huff_dc(struct dec *d, const struct htab *t)
{
	uint16_t e = t->look[peek(d, LOOK)];

	if (e) {
		d->nbits -= e >> 8;
		return e & 0xFF;
	}
	return huff(d, t);
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
		{
			int ac = (tc_th >> 4) == 1;
			struct htab *t = ac ? &d->ac[tc_th & 0x0F] : &d->dc[tc_th & 0x0F];
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
			/* a DC difference has 15 bits at most (libjpeg refuses
			 * more); an AC symbol is any byte */
			for (i = 0; !ac && i < (int)total; i++)
				if (t->val[i] > 15)
					return -1;
			memset(t->look, 0, sizeof(t->look));
			for (l = 1, k = 0, code = 0; l <= LOOK; l++, code <<= 1) {
				for (i = 0; i < counts[l]; i++, k++, code++) {
					int span = 1 << (LOOK - l), x, v = t->val[k], e;
					if (!ac)
						e = l << 8 | v;
					else if (v & 15)
						e = ((v >> 4) + 1) << 8 | (l + (v & 15));
					else
						e = (v == 0xF0 ? 16 : 0) << 8 | l;
					for (x = 0; x < span; x++)
						t->look[(code << (LOOK - l)) | x] = (uint16_t)e;
				}
			}
			t->defined = 1;
			t->paired = 0;
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
	/* one component is grey, three YCbCr; two or four (CMYK, YCCK) are
	 * not a grey picture's luma */
	if (prec != 8 || (n != 1 && n != 3) || n > MAX_COMPS || len < 6 + 3u * n || !d->w ||
	    !d->h)
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
	/* libjpeg takes three components named 'R', 'G', 'B' for RGB when
	 * no JFIF or Adobe segment says otherwise; refused whatever they say */
	if (n == 3 && d->comp[0].id == 'R' && d->comp[1].id == 'G' && d->comp[2].id == 'B')
		return -1;
	return 0;
}

/* An Adobe segment (APP14) whose transform flag says 0 makes libjpeg take
 * three components for RGB, not YCbCr: -1 then.  libjpeg heeds the last
 * such segment before the scan; refusing on any one errs on libjpeg's
 * side. */
static int read_app14(struct dec *d, size_t off, size_t len)
{
	static const uint8_t adobe[5] = {'A', 'd', 'o', 'b', 'e'};
	uint8_t b;
	size_t i;

	if (len < 12)
		return 0;
	for (i = 0; i < sizeof(adobe); i++)
		if (bc_u8(&d->c, off + i, &b) || b != adobe[i])
			return 0;
	return bc_u8(&d->c, off + 11, &b) || b == 0 ? -1 : 0;
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
	int ta[MAX_COMPS];  /* its AC table (sequential) */
	int al;
	int ac;             /* sequential: each block's AC terms follow its DC */
};

/* How far an AC symbol moves along the block: run + 1; 16 for sixteen
 * zeros; 0 for the end of the block. */
static unsigned advance(unsigned rs)
{
	if (rs & 15)
		return (rs >> 4) + 1;
	return rs == 0xF0 ? 16 : 0;
}

/* t->pair from t's codes: every PAIR-bit pattern, decoded as far as it
 * goes, up to two terms. */
static void pair_build(struct htab *t)
{
	uint8_t len[1 << PAIR], sym[1 << PAIR];
	int l, i, k = 0;
	uint32_t code = 0;

	memset(len, 0, sizeof(len));
	for (l = 1; l <= PAIR; l++, code <<= 1) {
		int count = t->maxcode[l] >= 0 ? t->maxcode[l] - t->mincode[l] + 1 : 0;
		k = t->valptr[l];
		for (i = 0; i < count; i++, code++) {
			uint32_t x, span = 1u << (PAIR - l);
			for (x = 0; x < span; x++) {
				len[(code << (PAIR - l)) | x] = (uint8_t)l;
				sym[(code << (PAIR - l)) | x] = t->val[k + i];
			}
		}
	}
	for (i = 0; i < (1 << PAIR); i++) {
		unsigned used, adv, all, alladv, eob, e = 0;
		if (len[i]) {
			used = all = len[i] + (sym[i] & 15u);
			adv = alladv = advance(sym[i]);
			eob = !adv;
			if (adv && used < PAIR) {
				unsigned j = ((unsigned)i << used) & ((1u << PAIR) - 1);
				if (len[j] && len[j] <= PAIR - used) {
					all += len[j] + (sym[j] & 15u);
					alladv += advance(sym[j]);
					eob = !advance(sym[j]);
				}
			}
			e = used | adv << 6 | all << 11 | alladv << 17 | (eob ? P_EOB : 0);
		}
		t->pair[i] = e;
	}
	t->paired = 1;
}

/* Past one block's AC terms (libjpeg's decode_mcu: run/size symbols until
 * the end of the block, 16 zeros at a time), their values unread: 0, or
 * -1 (no code within 16 bits).  Most of a sequential file's bits are
 * these: the accumulator is held in locals here, and eight bytes without
 * a 0xFF are taken at once without refill()'s care. */
static int skip_ac(struct dec *d, const struct htab *t)
{
	const uint8_t *p = d->c.p;
	/* eight bytes can be read from pos while pos < end (never past the
	 * data, a pad means the data stopped) */
	size_t end = d->pad || d->c.len < 8 ? 0 : d->c.len - 7, pos = d->pos;
	uint64_t acc = d->acc, v;
	int nbits = d->nbits, k = 1;

	while (k < 64) {
		uint32_t e;
		if (nbits < 32) { /* a code and its value: 31 bits at most; two
				     in the pair table: 26 */
			if (pos < end && (v = load_be64(p + pos), !has_ff(v))) {
				int b = (63 - nbits) >> 3;
				acc = acc << (8 * b) | v >> (64 - 8 * b);
				nbits += 8 * b;
				pos += (size_t)b;
			} else {
				d->acc = acc;
				d->nbits = nbits;
				d->pos = pos;
				refill(d);
				acc = d->acc;
				nbits = d->nbits;
				pos = d->pos;
				end = d->pad ? 0 : end;
			}
		}
		e = t->pair[(uint32_t)(acc >> (nbits - PAIR)) & ((1u << PAIR) - 1)];
		if (e) {
			/* the first term reaching the block's end, the second is
			 * the next block's (rare: a term at position 63) */
			if (k + (int)P_ADV1(e) >= 64) {
				nbits -= (int)P_LEN1(e);
				break;
			}
			nbits -= (int)P_LEN(e);
			k += (int)P_ADV(e);
			if (e & P_EOB)
				break;
		} else {
			int rs, sz;
			d->acc = acc;
			d->nbits = nbits;
			rs = huff(d, t);
			nbits = d->nbits;
			if (rs < 0)
				return -1;
			sz = rs & 15;
			if (sz) {
				nbits -= sz;
				k += (rs >> 4) + 1;
			} else if (rs >> 4 == 15) {
				k += 16;
			} else {
				break;
			}
		}
	}
	d->acc = acc;
	d->nbits = nbits;
	d->pos = pos;
	return 0;
}

static int restart(struct dec *d, unsigned *next)
{
	uint8_t a, b;

	d->nbits = 0;
	d->acc = 0;
	d->pad = 0;
	if (bc_u8(&d->c, d->pos, &a) || bc_u8(&d->c, d->pos + 1, &b) || a != 0xFF ||
	    b != 0xD0 + (*next & 7))
		return -1;
	d->pos += 2;
	(*next)++;
	return 0;
}

static int decode(struct dec *d, const struct scan *s, uint8_t *out, uint32_t ow, uint32_t oh,
		  uint32_t max_rows, struct sl_err *err)
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
	for (k = 0; s->ac && k < s->n; k++)
		if (!d->ac[s->ta[k]].paired)
			pair_build(&d->ac[s->ta[k]]);
	for (my = 0; my < mcuy; my++) {
		/* the rows asked for are in: the rest is not decoded */
		if (max_rows && my * (s->n > 1 ? (uint32_t)y->v : 1u) >= max_rows)
			break;
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
						int sym;
						int32_t diff = 0;
						uint32_t px, py;
						if (d->nbits < 32)
							refill(d);
						sym = huff_dc(d, &d->dc[s->td[k]]);
						if (sym < 0)
							return unsupported(err, "damaged data");
						if (sym) {
							int32_t r = take(d, sym);
							diff = r < (1 << (sym - 1)) ? r - (1 << sym) + 1 : r;
						}
						pred[k] = (int32_t)((uint32_t)pred[k] + (uint32_t)diff);
						if (s->ac && skip_ac(d, &d->ac[s->ta[k]]) != 0)
							return unsupported(err, "damaged data");
						if (d->nbits < d->pad)
							return unsupported(err, "cut-off data");
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

/* The SOS at off (body, len bytes): ours when it holds the luma's DC
 * terms, its first pass in a progressive frame, its only one in a
 * sequential frame.  1 ours, 0 not, -1 malformed (or not a case taken). */
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
		if (s->ci[i] < 0 || (t >> 4) > 3 || (t & 0x0F) > 3)
			return -1;
		s->td[i] = t >> 4;
		s->ta[i] = t & 0x0F;
		ours |= s->ci[i] == 0;
	}
	if (bc_u8(&d->c, off + 1 + 2 * (size_t)n, &ss) || bc_u8(&d->c, off + 2 + 2 * (size_t)n, &se) ||
	    bc_u8(&d->c, off + 3 + 2 * (size_t)n, &ahal))
		return -1;
	s->al = ahal & 0x0F;
	if (d->sequential) {
		/* every scan of a sequential frame holds all 64 terms */
		if (ss != 0 || se != 63 || ahal != 0)
			return -1;
		s->ac = 1;
		for (i = 0; ours && i < n; i++)
			if (!d->ac[s->ta[i]].defined)
				return -1;
		return ours;
	}
	s->ac = 0;
	if (!ours || ss != 0)
		return 0;
	if (se != 0 || (ahal >> 4) != 0 || s->al > 13)
		return -1; /* luma's DC after its first pass?  not ours to judge */
	return 1;
}

int jdc_grey(const uint8_t *p, size_t n, uint32_t max_rows, uint8_t **out, uint32_t *w,
	     uint32_t *h, struct sl_err *err)
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
		case 0xC0: /* baseline */
		case 0xC1: /* extended sequential, Huffman */
		case 0xC2: /* progressive, Huffman */
			r = d->ncomp ? -1 : read_sof(d, pos + 4, (size_t)len - 2);
			d->progressive = mk == 0xC2;
			d->sequential = mk != 0xC2;
			break;
		case 0xC4:
			r = read_dht(d, pos + 4, (size_t)len - 2);
			break;
		case 0xDB:
			r = read_dqt(d, pos + 4, (size_t)len - 2);
			break;
		case 0xEE:
			r = read_app14(d, pos + 4, (size_t)len - 2);
			break;
		case 0xDD:
			r = len == 4 ? bc_be16(&d->c, pos + 4, &d->ri) : -1;
			break;
		case 0xDA:
			if (!d->ncomp) {
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
			/* other frame types (lossless, hierarchical, arithmetic)
			 * and arithmetic tables are not ours; the rest is skipped */
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
	rc = decode(d, &s, *out, *w, *h, max_rows, err);
done:
	if (rc != SL_OK) {
		free(*out);
		*out = NULL;
		*w = *h = 0;
	}
	free(d);
	return rc;
}
