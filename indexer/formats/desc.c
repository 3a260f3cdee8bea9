#include "indexer/formats/desc.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/strbuf.h"
#include "indexer/formats/parsers.h"

struct desc_val {
	uint32_t off, len;
	uint8_t field, src;
};

struct desc {
	int rating, rating_src; /* rating_src < 0: none */
	struct desc_val *val;
	size_t nval, capval;
	char *buf; /* NUL-terminated values, back to back */
	size_t len, cap;
	int full;  /* a value was dropped for the bounds: warned once */
};

static struct desc *get(struct x_meta *m)
{
	if (!m->desc) {
		m->desc = calloc(1, sizeof(*m->desc));
		if (m->desc)
			m->desc->rating_src = -1;
	}
	return m->desc;
}

static int oom(struct x_meta *m)
{
	m->desc_oom = 1;
	return SL_E_NOMEM;
}

/* The length of a valid UTF-8 sequence starting at s[0] (n bytes left),
 * or 0. */
static size_t utf8_len(const unsigned char *s, size_t n)
{
	unsigned char ch = s[0];
	size_t need = ch < 0x80 ? 1 : ch >= 0xf0 ? 4 : ch >= 0xe0 ? 3 : ch >= 0xc2 ? 2 : 0, k;

	if (need > n)
		return 0;
	for (k = 1; k < need; k++)
		if ((s[k] & 0xc0) != 0x80)
			return 0;
	if (need == 4 && (ch > 0xf4 || (ch == 0xf0 && s[1] < 0x90) || (ch == 0xf4 && s[1] >= 0x90)))
		return 0;
	if (need == 3 && ((ch == 0xe0 && s[1] < 0xa0) || (ch == 0xed && s[1] >= 0xa0)))
		return 0;
	return need;
}

static int blank(char c)
{
	return c == ' ' || c == '\t' || c == '\n';
}

int desc_add(struct x_meta *m, enum desc_field f, enum desc_src src, const char *s, size_t n)
{
	const unsigned char *u = (const unsigned char *)s;
	struct desc *d;
	size_t i = 0, start, o;

	while (i < n && (blank(s[i]) || s[i] == '\r'))
		i++;
	if (i == n)
		return SL_OK;
	if (!(d = get(m)))
		return oom(m);
	if (d->nval >= DESC_MAX_VALUES || d->len + (n - i) + 1 > DESC_MAX_BYTES) {
		if (!d->full)
			x_warn(m, "descriptive metadata over %u values or %u KiB: the rest dropped",
			       DESC_MAX_VALUES, DESC_MAX_BYTES / 1024);
		d->full = 1;
		return SL_OK;
	}
	if (sl_grow(&d->buf, &d->cap, d->len + (n - i) + 1, 1) ||
	    sl_grow(&d->val, &d->capval, d->nval + 1, sizeof(*d->val)))
		return oom(m);
	start = o = d->len;
	while (i < n) {
		size_t k;
		if (u[i] == '\r') { /* CR LF and a lone CR (IPTC's line end) are one LF */
			if (i + 1 >= n || u[i + 1] != '\n')
				d->buf[o++] = '\n';
			i++;
			continue;
		}
		if ((u[i] < 0x20 && u[i] != '\t' && u[i] != '\n') || u[i] == 0x7f) {
			i++;
			continue;
		}
		k = utf8_len(u + i, n - i);
		if (!k) {
			d->buf[o++] = '?';
			i++;
			continue;
		}
		memcpy(d->buf + o, u + i, k);
		o += k;
		i += k;
	}
	while (o > start && blank(d->buf[o - 1]))
		o--;
	if (o == start)
		return SL_OK;
	d->buf[o] = '\0';
	d->val[d->nval].off = (uint32_t)start;
	d->val[d->nval].len = (uint32_t)(o - start);
	d->val[d->nval].field = (uint8_t)f;
	d->val[d->nval].src = (uint8_t)src;
	d->nval++;
	d->len = o + 1;
	return SL_OK;
}

int desc_rating(struct x_meta *m, enum desc_src src, int rating)
{
	struct desc *d = get(m);

	if (!d)
		return oom(m);
	if (d->rating_src < (int)src) {
		d->rating = rating;
		d->rating_src = (int)src;
	}
	return SL_OK;
}

int desc_get_rating(const struct x_meta *m, int *r)
{
	if (!m->desc || m->desc->rating_src < 0)
		return 0;
	*r = m->desc->rating;
	return 1;
}

static int best_src(const struct desc *d, enum desc_field f)
{
	int best = -1;
	size_t i;

	for (i = 0; i < d->nval; i++)
		if (d->val[i].field == f && d->val[i].src > best)
			best = d->val[i].src;
	return best;
}

/* Which sources a field's list is made of, given the best one present:
 * keywords merge XMP with IPTC (the two are written together, and tools
 * that write one often drop the other's new words); a sidecar stands alone. */
static int takes(enum desc_field f, int best, int src)
{
	if (f == DF_KEYWORD && best == DS_XMP)
		return src == DS_XMP || src == DS_IPTC;
	return src == best;
}

size_t desc_list(const struct x_meta *m, enum desc_field f, const char **out, size_t cap)
{
	const struct desc *d = m->desc;
	int single = f != DF_KEYWORD && f != DF_HIER && f != DF_CREATOR, best;
	size_t i, j, count = 0;
	int pass;

	if (!d || (best = best_src(d, f)) < 0)
		return 0;
	/* XMP's values before IPTC's, each in the order found */
	for (pass = DS_N - 1; pass >= 0; pass--) {
		if (!takes(f, best, pass))
			continue;
		for (i = 0; i < d->nval; i++) {
			const struct desc_val *v = &d->val[i];
			const char *s = d->buf + v->off;
			int dup = 0;
			if (v->field != f || v->src != pass)
				continue;
			/* emitted before: an equal value of a better source, or of
			 * this one earlier in the file */
			for (j = 0; j < d->nval && !dup; j++) {
				const struct desc_val *w = &d->val[j];
				dup = w->field == f && takes(f, best, w->src) &&
				      (w->src > pass || (w->src == pass && j < i)) &&
				      w->len == v->len && memcmp(d->buf + w->off, s, v->len) == 0;
			}
			if (dup)
				continue;
			if (count < cap)
				out[count] = s;
			count++;
			if (single)
				return count;
		}
	}
	return count;
}

void desc_free(struct x_meta *m)
{
	if (!m->desc)
		return;
	free(m->desc->val);
	free(m->desc->buf);
	free(m->desc);
	m->desc = NULL;
}

void x_meta_release(struct x_meta *m)
{
	desc_free(m);
}
