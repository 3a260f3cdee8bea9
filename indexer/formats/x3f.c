/* x3f.c - Sigma and Foveon RAW: header, directory, PROP and JpgFromRaw,
 * held whole or caught while streaming (x3f.h). */
#include "indexer/formats/x3f.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "indexer/formats/cursor.h"
#include "indexer/formats/parsers.h"

/* an IMA2/IMAG header exiftool reads as a JPEG: version 2.0, type 2,
 * format 18, little-endian */
static const uint8_t JPEG_SECI[16] = {'S', 'E', 'C', 'i', 0, 0, 2, 0, 2, 0, 0, 0, 0x12, 0, 0, 0};
#define SECI_HDR 28
#define PROBE 32 /* bytes of a section's header that tell what it is */
#define CAND_MAX 64
#define LOST_MAX 16 /* offsets of sections not kept, remembered */

enum { K_UNDECIDED, K_DIR, K_PROP, K_IMAGE, K_JPEG };

/* One section the catch copies: from its mark on, want bytes. */
struct cand {
	uint64_t off;
	size_t want, len, cap;
	int kind;
	uint8_t *buf;
};

struct x3f_catch {
	uint64_t pos, size;
	uint8_t carry[3]; /* the 3 bytes before pos: a mark may straddle chunks */
	size_t ncarry;
	uint8_t last4[4];
	struct cand cand[CAND_MAX];
	int ncand;
	size_t kept;      /* bytes held by all candidates */
	/* marks of sections we read that were not kept (too many, too big):
	 * a warning only when the directory names one */
	uint64_t lost[LOST_MAX];
	int nlost, lost_more;
	int nomem;
};

static uint32_t le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* How many of the n bytes of a JPEG at p hold its metadata: through the
 * segment that starts its first scan (SOS), or to where its markers stop
 * making sense; X3F_JPEG_HEAD at most; 0 when that is not yet known (more
 * bytes are needed).  A head cut there reads as the whole JPEG does for
 * jpg_parse, which stops at the first scan. */
static size_t jpeg_meta_len(const uint8_t *p, size_t n)
{
	size_t pos = 2;

	while (pos + 4 <= n && pos < X3F_JPEG_HEAD) {
		size_t seg;
		if (p[pos] != 0xff)
			return pos;
		if (p[pos + 1] == 0xff) { /* fill */
			pos++;
			continue;
		}
		if (p[pos + 1] == 0xd9 || (p[pos + 1] >= 0xd0 && p[pos + 1] <= 0xd7) || p[pos + 1] == 0x01) {
			pos += 2;
			continue;
		}
		seg = (size_t)p[pos + 2] << 8 | p[pos + 3];
		if (seg < 2)
			return pos;
		if (p[pos + 1] == 0xda)
			return pos + 2 + seg < X3F_JPEG_HEAD ? pos + 2 + seg : X3F_JPEG_HEAD;
		pos += 2 + seg;
	}
	return pos >= X3F_JPEG_HEAD ? X3F_JPEG_HEAD : 0;
}

/* What a section's first len bytes (len >= PROBE unless the file ends
 * first) say it is, and how many of its bytes are worth keeping: 0 when
 * none (not a section we read, or one over the bounds). */
static size_t section_want(const uint8_t *h, size_t len, int *kind)
{
	*kind = K_UNDECIDED;
	if (len >= 12 && memcmp(h, "SECd", 4) == 0) {
		uint64_t need = 12 + (uint64_t)le32(h + 8) * 12;
		*kind = K_DIR;
		return need <= X3F_KEEP_MAX ? (size_t)need : 0;
	}
	if (len >= 24 && memcmp(h, "SECp", 4) == 0) {
		uint64_t need = 24 + (uint64_t)le32(h + 8) * 8 + (uint64_t)le32(h + 20) * 2;
		*kind = K_PROP;
		return need <= X3F_KEEP_MAX ? (size_t)need : 0;
	}
	if (len >= SECI_HDR && memcmp(h, JPEG_SECI, sizeof(JPEG_SECI)) == 0) {
		if (len >= SECI_HDR + 4 && memcmp(h + SECI_HDR, "\xff\xd8\xff\xe1", 4) == 0) {
			*kind = K_JPEG;
			return SECI_HDR + X3F_JPEG_HEAD;
		}
		*kind = K_IMAGE; /* its header is enough: a preview we do not parse */
		return SECI_HDR;
	}
	return 0;
}

/* ---- reading the sections, from either source ---- */

/* The bytes held from off on (*have of them), or NULL. */
static const uint8_t *held(const struct x3f_catch *c, uint64_t off, size_t *have)
{
	int i;

	*have = 0;
	for (i = 0; i < c->ncand; i++) {
		const struct cand *k = &c->cand[i];
		if (k->off == off && k->kind != K_UNDECIDED && k->buf) {
			*have = k->len;
			return k->buf;
		}
	}
	return NULL;
}

/* UCS-2 text from chars[pos] to its NUL (or the end) as UTF-8. */
static void ucs2_text(const uint8_t *chars, size_t nchars, size_t pos, char *dst, size_t cap)
{
	uint8_t tmp[256];
	size_t o = 0;

	for (; pos < nchars; pos++) {
		unsigned u = (unsigned)chars[2 * pos] | (unsigned)chars[2 * pos + 1] << 8;
		if (u == 0 || o + 3 > sizeof(tmp))
			break;
		if (u < 0x80) {
			tmp[o++] = (uint8_t)u;
		} else if (u < 0x800) {
			tmp[o++] = (uint8_t)(0xc0 | u >> 6);
			tmp[o++] = (uint8_t)(0x80 | (u & 0x3f));
		} else if (u >= 0xd800 && u < 0xe000) {
			tmp[o++] = '?'; /* half a UTF-16 pair: UCS-2 has none */
		} else {
			tmp[o++] = (uint8_t)(0xe0 | u >> 12);
			tmp[o++] = (uint8_t)(0x80 | ((u >> 6) & 0x3f));
			tmp[o++] = (uint8_t)(0x80 | (u & 0x3f));
		}
	}
	x_copy_text(dst, cap, tmp, o);
}

/* A decimal number and nothing else (what exiftool prints as a number). */
static int plain_number(const char *s, double *v)
{
	const char *q = s;
	char *end;

	if (*q == '-' || *q == '+')
		q++;
	if (!(*q >= '0' && *q <= '9'))
		return 0;
	while (*q >= '0' && *q <= '9')
		q++;
	if (*q == '.')
		for (q++; *q >= '0' && *q <= '9'; q++)
			;
	if (*q == 'e' || *q == 'E') {
		q++;
		if (*q == '-' || *q == '+')
			q++;
		if (!(*q >= '0' && *q <= '9'))
			return 0;
		while (*q >= '0' && *q <= '9')
			q++;
	}
	if (*q)
		return 0;
	*v = strtod(s, &end);
	return isfinite(*v);
}

/* One property, where the field is still empty. */
static void property(const char *name, const char *val, struct x_meta *m)
{
	double v;

	if (!val[0])
		return;
	if (strcmp(name, "CAMMANUF") == 0 && !m->make[0]) {
		x_copy_text(m->make, sizeof(m->make), (const uint8_t *)val, strlen(val));
	} else if (strcmp(name, "CAMMODEL") == 0 && !m->model[0]) {
		x_copy_text(m->model, sizeof(m->model), (const uint8_t *)val, strlen(val));
	} else if (strcmp(name, "TIME") == 0) {
		size_t i;
		for (i = 0; val[i] >= '0' && val[i] <= '9'; i++)
			;
		if (!val[i] && i <= 12)
			x_unix_datetime(m, strtoll(val, NULL, 10)); /* unless set */
	} else if (!plain_number(val, &v)) {
		return;
	} else if (strcmp(name, "APERTURE") == 0 && !(m->have & XM_FNUMBER)) {
		m->f_number = v;
		m->have |= XM_FNUMBER;
	} else if (strcmp(name, "SHUTTER") == 0 && !(m->have & XM_EXPOSURE)) {
		m->exposure_time = v;
		m->have |= XM_EXPOSURE;
	} else if (strcmp(name, "FLENGTH") == 0 && !(m->have & XM_FOCAL)) {
		m->focal_length = v;
		m->have |= XM_FOCAL;
	} else if (strcmp(name, "ISO") == 0 && !(m->have & XM_ISO) && v == floor(v) &&
		   fabs(v) < 1e15) {
		m->iso = (int64_t)v;
		m->have |= XM_ISO;
	}
}

/* A PROP section of size bytes (the directory's) whose first have bytes
 * are at p: as ProcessX3FProperties, which checks the size against the
 * character count, not twice it, and reads what characters there are. */
static void prop(const uint8_t *p, size_t have, uint64_t size, struct x_meta *m)
{
	uint32_t entries, fmt, nchars, i;
	uint64_t char_pos, avail, need;

	if (size < 24 || have < 24 || memcmp(p, "SECp", 4) != 0) {
		x_warn(m, "x3f: bad properties header");
		return;
	}
	entries = le32(p + 8);
	fmt = le32(p + 12);
	nchars = le32(p + 20);
	char_pos = 24 + (uint64_t)entries * 8;
	if (size < char_pos + nchars) {
		x_warn(m, "x3f: properties cut short");
		return;
	}
	if (fmt != 0) {
		x_warn(m, "x3f: properties in character format %u", fmt);
		return;
	}
	avail = (size - char_pos) / 2;
	if (avail > nchars)
		avail = nchars;
	need = char_pos + avail * 2;
	/* the catch keeps a section of at most X3F_KEEP_MAX as its header
	 * gives it; a file held whole is read to the same bound */
	if (char_pos + (uint64_t)nchars * 2 > X3F_KEEP_MAX || need > have) {
		x_warn(m, "x3f: properties of %llu bytes not read", (unsigned long long)need);
		return;
	}
	for (i = 0; i < entries; i++) {
		uint32_t np = le32(p + 24 + (size_t)i * 8), vp = le32(p + 28 + (size_t)i * 8);
		char name[32], val[96];
		if (np >= avail || vp >= avail) {
			x_warn(m, "x3f: bad property pointer");
			return;
		}
		ucs2_text(p + char_pos, (size_t)avail, np, name, sizeof(name));
		ucs2_text(p + char_pos, (size_t)avail, vp, val, sizeof(val));
		property(name, val, m);
	}
}

/* The embedded JPEG's metadata, not its format, size or pictures: the
 * first n bytes at p of the len at file offset at. */
static void jpeg(const uint8_t *p, size_t n, uint64_t at, uint64_t len, struct x_meta *m)
{
	char format[sizeof(m->format)];
	uint32_t w = m->width, h = m->height;
	unsigned dims = m->have & XM_DIMS;
	unsigned char pics[sizeof(m->pics)];
	struct sl_err e;

	memcpy(format, m->format, sizeof(format));
	memcpy(pics, &m->pics, sizeof(pics));
	m->pics.whole = 0; /* a head of it, held whole or caught */
	if (jpg_parse(p, n, m, &e) != SL_OK)
		x_warn(m, "x3f: embedded %s", e.msg);
	memcpy(m->format, format, sizeof(format));
	m->width = w;
	m->height = h;
	m->have = (m->have & ~XM_DIMS) | dims;
	memcpy(&m->pics, pics, sizeof(pics));
	if (!m->pics.preview_len) {
		m->pics.preview_off = at;
		m->pics.preview_len = len;
	}
}

/* Is off where a section we read began, one the catch could not keep? */
static int was_lost(const struct x3f_catch *c, uint64_t off)
{
	int i;

	for (i = 0; i < c->nlost; i++)
		if (c->lost[i] == off)
			return 1;
	return c->lost_more;
}

/* The directory and the sections it names, as ProcessX3FDirectory: a
 * section past the file's end stops it there; the JPEGs' EXIF first, as
 * it wins over the properties wherever they lie. */
static void sections(const struct x3f_catch *s, uint32_t dir_off, struct x_meta *m)
{
	const uint8_t *d;
	size_t have;
	uint32_t entries, i, stop;
	int pass;

	if ((uint64_t)dir_off + 12 > s->size) {
		x_warn(m, "x3f: directory at %u, past the end", dir_off);
		return;
	}
	d = held(s, dir_off, &have);
	if (!d || have < 12 || memcmp(d, "SECd", 4) != 0) {
		if (was_lost(s, dir_off))
			x_warn(m, "x3f: the directory at %u is over the catch's bounds", dir_off);
		else
			x_warn(m, "x3f: no directory at %u", dir_off);
		return;
	}
	entries = le32(d + 8);
	if (12 + (uint64_t)entries * 12 > s->size - dir_off) {
		x_warn(m, "x3f: directory cut short");
		return;
	}
	if (12 + (uint64_t)entries * 12 > X3F_KEEP_MAX || 12 + (uint64_t)entries * 12 > have) {
		x_warn(m, "x3f: a directory of %u entries not read", entries);
		return;
	}
	for (stop = 0; stop < entries; stop++) {
		const uint8_t *e = d + 12 + (size_t)stop * 12;
		uint64_t off = le32(e), len = le32(e + 4);
		if (memcmp(e + 8, "PROP", 4) == 0 && off + len > s->size)
			break;
		if (memcmp(e + 8, "IMAG", 4) == 0 || memcmp(e + 8, "IMA2", 4) == 0) {
			const uint8_t *h;
			if (off + SECI_HDR > s->size)
				break;
			h = held(s, off, &have);
			if (h && have >= SECI_HDR && memcmp(h, JPEG_SECI, sizeof(JPEG_SECI)) == 0 &&
			    (len < SECI_HDR || off + len > s->size))
				break;
		}
	}
	if (stop < entries)
		x_warn(m, "x3f: section %u of %u past the end", stop + 1, entries);
	for (pass = 0; pass < 2; pass++) {
		for (i = 0; i < stop; i++) {
			const uint8_t *e = d + 12 + (size_t)i * 12, *q;
			uint64_t off = le32(e), len = le32(e + 4);
			q = held(s, off, &have);
			if (!q && was_lost(s, off) && (memcmp(e + 8, "PROP", 4) == 0 ||
						       memcmp(e + 8, "IMA2", 4) == 0)) {
				if (pass == 0)
					x_warn(m, "x3f: section %u at %llu is over the catch's bounds",
					       i + 1, (unsigned long long)off);
				continue;
			}
			if (pass == 0 && memcmp(e + 8, "IMA2", 4) == 0 && len >= SECI_HDR + 4 &&
			    q && have >= SECI_HDR + 4 &&
			    memcmp(q, JPEG_SECI, sizeof(JPEG_SECI)) == 0 &&
			    memcmp(q + SECI_HDR, "\xff\xd8\xff\xe1", 4) == 0) {
				/* the same head, held whole or caught */
				size_t jl = have - SECI_HDR < X3F_JPEG_HEAD ? have - SECI_HDR : X3F_JPEG_HEAD;
				size_t meta = jpeg_meta_len(q + SECI_HDR, jl);
				if (meta)
					jl = meta;
				if (jl > len - SECI_HDR)
					jl = (size_t)len - SECI_HDR;
				jpeg(q + SECI_HDR, jl, off + SECI_HDR, len - SECI_HDR, m);
			} else if (pass == 1 && memcmp(e + 8, "PROP", 4) == 0) {
				if (!q)
					x_warn(m, "x3f: no properties at %llu", (unsigned long long)off);
				else
					prop(q, have < len ? have : (size_t)len, len, m);
			}
		}
	}
}

/* The header's size: exiftool reads none of the file when a version 2.1
 * or later header is cut short.  Versions compare as exiftool's
 * "major.minor" decimal numbers (2.16 is before 2.2). */
static int header(const uint8_t *p, size_t n, struct x_meta *m, struct sl_err *err)
{
	struct bc c = bc_make(p, n, 0);
	uint32_t ver, w, h;
	unsigned major, minor, scale = 1;
	size_t need = 40, wpos = 28;

	if (bc_le32(&c, 4, &ver) || !bc_has(&c, 0, 40))
		return SL_FAIL(err, SL_E_CORRUPT, 0, "x3f: truncated header");
	major = ver >> 16;
	minor = ver & 0xffff;
	while (scale <= minor)
		scale *= 10;
	if (major >= 4) {
		need = 0x300;
		wpos = 40;
	} else if (major > 2 || (major == 2 && minor > 0)) {
		/* above 2.2: SceneCaptureType; then 160 bytes of extended header */
		need = (major > 2 || (uint64_t)minor * 10 > 2ull * scale ? 104 : 72) + 160;
	}
	if (!bc_has(&c, 0, need))
		return SL_FAIL(err, SL_E_CORRUPT, 0, "x3f: header cut short");
	bc_le32(&c, wpos, &w);
	bc_le32(&c, wpos + 4, &h);
	m->width = w;
	m->height = h;
	m->have |= XM_DIMS;
	return SL_OK;
}

/* ---- the catch ---- */

struct x3f_catch *x3f_catch_new(uint64_t file_size)
{
	struct x3f_catch *c = calloc(1, sizeof(*c));
	if (c)
		c->size = file_size;
	return c;
}

void x3f_catch_free(struct x3f_catch *c)
{
	int i;

	if (!c)
		return;
	for (i = 0; i < c->ncand; i++)
		free(c->cand[i].buf);
	free(c);
}

/* A section we read at off is not kept. */
static void lose(struct x3f_catch *c, uint64_t off)
{
	if (c->nlost < LOST_MAX)
		c->lost[c->nlost++] = off;
	else
		c->lost_more = 1;
}

/* Give up a candidate: not a section we read. */
static void drop(struct x3f_catch *c, struct cand *k)
{
	c->kept -= k->len;
	free(k->buf);
	*k = c->cand[--c->ncand];
}

/* Make room for want bytes in k, doubling (a JPEG's metadata is mostly a
 * few kilobytes of its X3F_JPEG_HEAD). */
static int room(struct x3f_catch *c, struct cand *k, size_t want)
{
	size_t cap = k->cap;
	uint8_t *nb;

	if (want <= cap)
		return 1;
	while (cap < want)
		cap = cap < ((size_t)1 << 30) ? cap * 2 : want;
	nb = realloc(k->buf, cap);
	if (!nb) {
		c->nomem = 1;
		return 0;
	}
	k->buf = nb;
	k->cap = cap;
	return 1;
}

/* Append up to n bytes at p to candidate k; its kind is decided once
 * PROBE bytes are in (or at the end), a JPEG's length once its metadata
 * is.  Returns 0 when k was dropped. */
static int take(struct x3f_catch *c, struct cand *k, const uint8_t *p, size_t n)
{
	for (;;) {
		size_t t = k->want - k->len, want;
		if (t > n)
			t = n;
		if (k->kind == K_JPEG && t > 65536)
			t = 65536; /* then see whether the metadata is complete */
		if (t) {
			if (c->kept + t > X3F_CATCH_MAX) {
				lose(c, k->off);
				drop(c, k);
				return 0;
			}
			if (!room(c, k, k->len + t)) {
				drop(c, k);
				return 0;
			}
			memcpy(k->buf + k->len, p, t);
			k->len += t;
			c->kept += t;
			p += t;
			n -= t;
		}
		if (k->kind == K_JPEG) {
			size_t j = jpeg_meta_len(k->buf + SECI_HDR, k->len - SECI_HDR);
			if (j) {
				k->want = SECI_HDR + j; /* no more to keep */
				if (k->len > k->want) {
					c->kept -= k->len - k->want;
					k->len = k->want;
				}
			}
			if (!n || k->len >= k->want)
				return 1;
			continue;
		}
		if (k->kind != K_UNDECIDED || k->len < PROBE)
			return 1;
		want = section_want(k->buf, k->len, &k->kind);
		if (!want) {
			if (k->kind != K_UNDECIDED)
				lose(c, k->off); /* ours, but over the bounds */
			drop(c, k);
			return 0;
		}
		if (want < k->len) { /* a header shorter than the probe */
			c->kept -= k->len - want;
			k->len = want;
		}
		k->want = want;
	}
}

static struct cand *mark(struct x3f_catch *c, uint64_t off)
{
	struct cand *k;

	if (c->ncand == CAND_MAX) {
		lose(c, off);
		return NULL;
	}
	k = &c->cand[c->ncand];
	memset(k, 0, sizeof(*k));
	k->buf = malloc(PROBE);
	k->cap = PROBE;
	if (!k->buf) {
		c->nomem = 1;
		return NULL;
	}
	k->off = off;
	k->want = PROBE;
	c->ncand++;
	return k;
}

static int is_mark(const uint8_t *q)
{
	return q[0] == 'S' && q[1] == 'E' && q[2] == 'C' && (q[3] == 'd' || q[3] == 'p' || q[3] == 'i');
}

int x3f_catch_feed(struct x3f_catch *c, const uint8_t *p, size_t n)
{
	int i, live = c->ncand;
	size_t j, nc;

	/* the candidates open before this chunk go on */
	for (i = 0; i < live; i++) {
		struct cand *k = &c->cand[i];
		if (k->len < k->want && k->off + k->len == c->pos && !take(c, k, p, n)) {
			live--;
			i--; /* the last one moved here */
		}
	}
	/* marks straddling the previous chunk: byte at of carry + p, the index
	 * tested against nc (at most the carry's size) before it is used */
	nc = c->ncarry < sizeof(c->carry) ? c->ncarry : sizeof(c->carry);
	for (j = 0; j < nc; j++) {
		uint8_t q[4];
		size_t from = nc - j, k;
		struct cand *cd;
		for (k = 0; k < 4; k++) {
			size_t at = j + k;
			q[k] = at < nc ? c->carry[at] : (at - nc < n ? p[at - nc] : 0);
		}
		if (4 - from > n || !is_mark(q))
			continue;
		cd = mark(c, c->pos - from);
		if (cd && take(c, cd, c->carry + j, from))
			take(c, cd, p, n);
	}
	/* marks in this chunk */
	for (j = 0; j + 4 <= n;) {
		/* memchr: MinGW's C library has no memmem */
		const uint8_t *q = memchr(p + j, 'S', n - j - 3);
		struct cand *cd;
		if (!q)
			break;
		j = (size_t)(q - p);
		if (j + 4 <= n && is_mark(q)) {
			cd = mark(c, c->pos + j);
			if (cd)
				take(c, cd, q, n - j);
		}
		j++;
	}
	/* the directory pointer: the file's last four bytes */
	if (c->size >= 4 && c->pos + n > c->size - 4) {
		uint64_t at = c->pos > c->size - 4 ? c->pos : c->size - 4;
		for (; at < c->pos + n && at < c->size; at++)
			c->last4[at - (c->size - 4)] = p[at - c->pos];
	}
	if (n >= 3) {
		memcpy(c->carry, p + n - 3, 3);
		c->ncarry = 3;
	} else {
		size_t keep = c->ncarry + n > 3 ? 3 - n : c->ncarry;
		memmove(c->carry, c->carry + c->ncarry - keep, keep);
		memcpy(c->carry + keep, p, n);
		c->ncarry = keep + n;
	}
	c->pos += n;
	return 1;
}

int x3f_catch_end(struct x3f_catch *c, struct x_meta *m)
{
	int i, rc = SL_OK;

	if (!c)
		return SL_OK;
	/* a section the file ended inside: what its bytes say it is */
	for (i = 0; i < c->ncand; i++) {
		struct cand *k = &c->cand[i];
		if (k->kind == K_UNDECIDED) {
			size_t want = section_want(k->buf, k->len, &k->kind);
			if (!want) {
				drop(c, k);
				i--;
			} else if (want < k->len) {
				k->len = want;
			}
		}
	}
	if (c->pos < c->size || c->size < 4) {
		x_warn(m, "x3f: the file ended before its directory pointer");
	} else {
		sections(c, le32(c->last4), m);
	}
	if (c->nomem)
		rc = SL_E_NOMEM;
	x3f_catch_free(c);
	return rc;
}

int x3f_parse(const uint8_t *p, size_t n, struct x_meta *m, struct sl_err *err)
{
	struct x3f_catch *c;
	int rc;

	snprintf(m->format, sizeof(m->format), "x3f");
	rc = header(p, n, m, err);
	if (rc != SL_OK || !m->pics.whole)
		return rc;
	/* held whole, it goes through the catch as one chunk: the same
	 * sections kept, within the same bounds, as when it is streamed */
	c = x3f_catch_new(n);
	if (!c)
		return SL_FAIL(err, SL_E_NOMEM, 0, "x3f: out of memory");
	x3f_catch_feed(c, p, n);
	if (x3f_catch_end(c, m) != SL_OK)
		return SL_FAIL(err, SL_E_NOMEM, 0, "x3f: out of memory");
	return SL_OK;
}
