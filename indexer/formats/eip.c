/* eip.c - ZIP archives walked member by member, and the image of a
 * Capture One EIP (eip.h). */
#include "indexer/formats/eip.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <zlib.h>

#include "indexer/formats/parsers.h"
#include "indexer/formats/sniff.h"

#define SNIFF 64 /* bytes of a member that tell its format */
/* compressed bytes inflated only to find where members end (sizes after
 * the data): a package's RAW is far less; a streamed backup archive is
 * not inflated whole for a walk */
#define THROUGH_MAX ((uint64_t)256 << 20) /* over the whole archive */
/* a data descriptor: signature, CRC, two sizes of 4 bytes, or of 8 with
 * ZIP64 */
#define DESC_MAX 24

enum { W_HDR, W_NAME, W_DATA, W_DESC, W_DONE };

struct eip_catch {
	uint64_t pos, size;
	uint64_t hdr_at;  /* where the current member's header starts */
	int state;
	/* the member's local header */
	uint8_t hdr[30];
	size_t hlen;
	uint16_t flags, method;
	uint64_t csize, usize;
	int zip64;      /* its extra field has ZIP64 sizes: so has its descriptor */
	size_t name_len, extra_len, var_got;
	char name[256];
	uint8_t extra[1024];
	/* its data */
	uint64_t left;  /* compressed bytes still to pass (sized members) */
	int through;    /* sizes after the data: inflated to the stream's end */
	int blind;      /* stored, sizes after the data: its end is found by
			   its data descriptor (signature, CRC, two sizes that
			   equal the bytes passed) */
	uint64_t blind_len; /* its data bytes passed */
	uint32_t blind_crc; /* and their CRC-32 */
	uint8_t carry[DESC_MAX - 1]; /* the last bytes seen, not yet passed: a descriptor may start there */
	size_t ncarry;
	int capture;    /* its head is wanted */
	size_t want;    /* SNIFF, then EIP_HEAD once it is an image */
	z_stream z;
	int zinit;
	uint64_t inflated_through;
	uint8_t *head;
	size_t hl, hcap;
	/* the data descriptor after it */
	uint8_t desc[4];
	size_t dlen;
	uint64_t dskip;
	/* what the walk found */
	uint8_t *image;
	size_t image_len;
	uint64_t image_size;
	int image_open; /* its member has not ended: image_size is not known yet */
	int eip, nomem;
	char warn[160];
};

static uint16_t le16(const uint8_t *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

static uint32_t le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t le64(const uint8_t *p)
{
	return (uint64_t)le32(p) | (uint64_t)le32(p + 4) << 32;
}

static void stop(struct eip_catch *c, const char *why)
{
	if (why && !c->warn[0])
		snprintf(c->warn, sizeof(c->warn),
			 "zip: %s at byte %llu; the rest is not followed", why,
			 (unsigned long long)c->hdr_at); /* the same however the bytes came */
	c->state = W_DONE;
}

/* A member's head holds a format we read (the image of a package). */
static int is_image(const uint8_t *p, size_t n)
{
	const char *f = x_sniff(p, n);
	return f[0] && strcmp(f, "zip") != 0 && strcmp(f, "xmp") != 0;
}

static int ends_with(const char *s, const char *tail)
{
	size_t a = strlen(s), b = strlen(tail);
	return a >= b && memcmp(s + a - b, tail, b) == 0;
}

static void end_member(struct eip_catch *c);

/* The local header and its name and extra field are in: how to pass its
 * data. */
static void begin_member(struct eip_catch *c)
{
	size_t k, lim;
	int root;

	c->name[c->name_len < sizeof(c->name) ? c->name_len : sizeof(c->name) - 1] = '\0';
	/* The ZIP64 extra field (id 1): its presence, not sizes of 0xFFFFFFFF,
	 * makes the data descriptor's sizes 8 bytes each.  In a local header it
	 * holds both sizes, uncompressed first; a writer that gives only the
	 * one that overflowed is read as such. */
	lim = c->extra_len < sizeof(c->extra) ? c->extra_len : sizeof(c->extra);
	for (k = 0; k + 4 <= lim;) {
		uint16_t id = le16(c->extra + k), len = le16(c->extra + k + 2);
		size_t at = k + 4, end = at + len < lim ? at + len : lim;
		if (id == 1) {
			c->zip64 = 1;
			if (at + 16 <= end) {
				if (c->usize == 0xffffffffu || c->csize == 0xffffffffu) {
					c->usize = le64(c->extra + at);
					c->csize = le64(c->extra + at + 8);
				}
			} else if (at + 8 <= end) {
				if (c->usize == 0xffffffffu)
					c->usize = le64(c->extra + at);
				else if (c->csize == 0xffffffffu)
					c->csize = le64(c->extra + at);
			}
			break;
		}
		k += 4 + (size_t)len;
	}
	if (strncmp(c->name, "CaptureOne/", 11) == 0 &&
	    (ends_with(c->name, ".cos") || ends_with(c->name, ".COS")))
		c->eip = 1;
	root = c->name_len > 0 && c->name_len < sizeof(c->name) && !strchr(c->name, '/');
	c->capture = root && !c->image && !(c->flags & 1) && (c->method == 0 || c->method == 8);
	c->want = SNIFF;
	c->hl = 0;
	c->through = c->blind = 0;
	c->blind_len = 0;
	c->blind_crc = (uint32_t)crc32(0, Z_NULL, 0);
	c->ncarry = 0;
	c->left = c->csize;
	if (c->flags & 8) {
		if (c->method == 8) {
			c->through = 1;
		} else if (c->method == 0) {
			c->blind = 1;
		} else {
			stop(c, "a member whose size follows its data");
			return;
		}
	}
	if (c->method == 8 && (c->capture || c->through)) {
		memset(&c->z, 0, sizeof(c->z));
		if (inflateInit2(&c->z, -MAX_WBITS) != Z_OK) {
			c->nomem = 1;
			stop(c, NULL);
			return;
		}
		c->zinit = 1;
	}
	c->state = W_DATA;
	if (!(c->flags & 8) && c->left == 0)
		end_member(c); /* empty: it ends here, whatever follows */
}

/* Room for the head's next bytes. */
static int head_room(struct eip_catch *c, size_t more)
{
	size_t cap = c->hcap ? c->hcap : 4096;
	uint8_t *nb;

	if (c->hl + more <= c->hcap)
		return 1;
	while (cap < c->hl + more)
		cap *= 2;
	nb = realloc(c->head, cap);
	if (!nb) {
		c->nomem = 1;
		c->capture = 0;
		return 0;
	}
	c->head = nb;
	c->hcap = cap;
	return 1;
}

/* The head has what it wants, or the member ended: an image is kept. */
static void settle_head(struct eip_catch *c, int ended)
{
	if (!c->capture)
		return;
	if (c->hl == 0 && ended) {
		c->capture = 0;
		return;
	}
	if (c->want == SNIFF && (c->hl >= SNIFF || ended)) {
		if (is_image(c->head, c->hl))
			c->want = EIP_HEAD;
		else
			c->capture = 0;
	}
	if (c->capture && c->want == EIP_HEAD && (c->hl >= EIP_HEAD || ended)) {
		c->image = c->head;
		c->image_len = c->hl;
		c->image_size = c->usize > c->hl ? c->usize : c->hl;
		/* sizes after the data: known once the member ends (end_member) */
		c->image_open = !ended;
		c->head = NULL;
		c->hl = c->hcap = 0;
		c->capture = 0;
	}
}

/* The bytes of the member that just ended, uncompressed. */
static uint64_t member_size(const struct eip_catch *c)
{
	if (c->blind)
		return c->blind_len;
	if (c->through && c->zinit)
		return c->z.total_out;
	return c->method == 0 ? c->csize : c->usize;
}

static void end_member(struct eip_catch *c)
{
	settle_head(c, 1);
	if (c->image_open) {
		uint64_t n = member_size(c);
		c->image_size = n > c->image_len ? n : c->image_len;
		c->image_open = 0;
	}
	c->capture = 0;
	if (c->zinit) {
		inflateEnd(&c->z);
		c->zinit = 0;
	}
	c->hlen = 0;
	if (c->blind) {
		c->state = W_HDR; /* its descriptor is passed already */
	} else if (c->flags & 8) {
		c->dlen = 0;
		c->dskip = 0;
		c->state = W_DESC;
	} else {
		c->state = W_HDR;
	}
}

/* n bytes of a stored member's data, into its head while it is wanted
 * (settle_head may raise what it wants: an image). */
static void stored_head(struct eip_catch *c, const uint8_t *p, size_t n)
{
	size_t done = 0;

	while (c->capture && done < n && c->hl < c->want) {
		size_t t = c->want - c->hl < n - done ? c->want - c->hl : n - done;
		if (!head_room(c, t))
			break;
		memcpy(c->head + c->hl, p + done, t);
		c->hl += t;
		done += t;
		settle_head(c, 0);
	}
}

/* Pass n data bytes at p of the current member; returns how many it took
 * (fewer when the member ends inside them). */
static size_t data(struct eip_catch *c, const uint8_t *p, size_t n)
{
	size_t take = n;

	if (!c->through && !c->blind && c->left < take)
		take = (size_t)c->left;
	if (c->method == 0) {
		stored_head(c, p, take);
	} else if (c->zinit && (c->capture || c->through)) {
		uint8_t scratch[16384];
		int zr = Z_OK;
		if (c->through && take > THROUGH_MAX - c->inflated_through)
			take = (size_t)(THROUGH_MAX - c->inflated_through); /* the same byte in every mode */
		c->z.next_in = (Bytef *)p;
		c->z.avail_in = (uInt)(take > 0x40000000 ? 0x40000000 : take);
		take = c->z.avail_in;
		/* a full output buffer may leave output pending with no input left */
		while ((c->z.avail_in || c->z.avail_out == 0) && zr == Z_OK) {
			int into_head = c->capture && c->hl < c->want && head_room(c, 16384);
			if (!into_head && !c->through)
				break; /* the head is done; the rest is passed, not inflated */
			c->z.next_out = into_head ? c->head + c->hl : scratch;
			c->z.avail_out = into_head ? (uInt)((c->want - c->hl) < 16384 ? c->want - c->hl : 16384)
						   : (uInt)sizeof(scratch);
			zr = inflate(&c->z, Z_NO_FLUSH);
			if (zr == Z_MEM_ERROR)
				c->nomem = 1;
			if (into_head)
				c->hl = (size_t)(c->z.next_out - c->head);
			settle_head(c, 0);
		}
		if (c->through) {
			size_t used = take - c->z.avail_in;
			c->inflated_through += used;
			if (zr == Z_STREAM_END) {
				c->pos += used;
				end_member(c);
				c->pos -= used;
				return used;
			}
			if (zr != Z_OK && zr != Z_BUF_ERROR) {
				stop(c, "a member that does not inflate");
				return used;
			}
			if (c->inflated_through >= THROUGH_MAX) {
				stop(c, "too much to inflate to find where members end");
				return used;
			}
			return used;
		}
		if (zr != Z_OK && zr != Z_BUF_ERROR && zr != Z_STREAM_END) {
			c->capture = 0; /* a broken head: what it inflated to is all */
		}
	}
	settle_head(c, 0);
	if (!c->through) {
		c->left -= take;
		if (!c->left) {
			c->pos += take;
			end_member(c);
			c->pos -= take;
		}
	}
	return take;
}

/* n bytes that are a blind member's data. */
static void blind_pass(struct eip_catch *c, const uint8_t *p, size_t n)
{
	stored_head(c, p, n);
	c->blind_len += n;
	c->blind_crc = (uint32_t)crc32(c->blind_crc, p, (uInt)n);
}

/* The length of the member's data descriptor. */
static size_t desc_len(const struct eip_catch *c)
{
	return c->zip64 ? 24 : 16;
}

/* Is there, at q, the data descriptor of a stored member whose data are
 * the at bytes passed, then the n at p?  Its sizes must be those bytes'
 * count (an encrypted member's plain size is 12 less), its CRC theirs (not
 * checked when encrypted: the CRC is of the plain text). */
static int descriptor_at(const struct eip_catch *c, const uint8_t *q, const uint8_t *p, size_t n)
{
	uint64_t at = c->blind_len + n, cs, us;
	int enc = c->flags & 1;

	if (memcmp(q, "PK\7\10", 4) != 0)
		return 0;
	cs = c->zip64 ? le64(q + 8) : le32(q + 8);
	us = c->zip64 ? le64(q + 16) : le32(q + 12);
	if (cs != at || (us != at && !(enc && at >= 12 && us == at - 12)))
		return 0;
	return enc || le32(q + 4) == (uint32_t)crc32(c->blind_crc, p, (uInt)n);
}

/* A blind member's bytes: returns how many of the n at p it took (the
 * rest follow the member).  The last dl - 1 bytes seen wait in the carry
 * until the bytes after them show whether a descriptor starts there. */
static size_t blind(struct eip_catch *c, const uint8_t *p, size_t n)
{
	uint8_t j[2 * (DESC_MAX - 1)];
	size_t dl = desc_len(c), keep = dl - 1, nj, i, had = c->ncarry;
	const uint8_t *q;

	if (n < keep) { /* carry and p together are small: one window */
		memcpy(j, c->carry, had);
		memcpy(j + had, p, n);
		nj = had + n;
		for (i = 0; i + dl <= nj; i++)
			if (descriptor_at(c, j + i, j, i)) {
				blind_pass(c, j, i);
				c->ncarry = 0;
				end_member(c);
				return i + dl - had;
			}
		i = nj > keep ? nj - keep : 0;
		blind_pass(c, j, i);
		c->ncarry = nj - i;
		memcpy(c->carry, j + i, c->ncarry);
		return n;
	}
	/* a descriptor that starts in the carry runs into p's first bytes */
	memcpy(j, c->carry, had);
	memcpy(j + had, p, keep);
	for (i = 0; i < had; i++)
		if (descriptor_at(c, j + i, j, i)) {
			blind_pass(c, j, i);
			c->ncarry = 0;
			end_member(c);
			return i + dl - had;
		}
	blind_pass(c, c->carry, had);
	c->ncarry = 0;
	for (q = p; (size_t)(p + n - q) >= dl && (q = memchr(q, 'P', (size_t)(p + n - keep - q)));
	     q++) {
		if (descriptor_at(c, q, p, (size_t)(q - p))) {
			i = (size_t)(q - p);
			blind_pass(c, p, i);
			end_member(c);
			return i + dl;
		}
	}
	blind_pass(c, p, n - keep);
	memcpy(c->carry, p + n - keep, keep);
	c->ncarry = keep;
	return n;
}

struct eip_catch *eip_catch_new(uint64_t file_size)
{
	struct eip_catch *c = calloc(1, sizeof(*c));
	if (c)
		c->size = file_size;
	return c;
}

void eip_catch_free(struct eip_catch *c)
{
	if (!c)
		return;
	if (c->zinit)
		inflateEnd(&c->z);
	free(c->head);
	free(c->image);
	free(c);
}

int eip_catch_feed(struct eip_catch *c, const uint8_t *p, size_t n)
{
	while (n && c->state != W_DONE) {
		size_t t = 0;
		int before = c->state;
		switch (c->state) {
		case W_HDR:
			if (c->hlen == 0)
				c->hdr_at = c->pos;
			t = 30 - c->hlen < n ? 30 - c->hlen : n;
			memcpy(c->hdr + c->hlen, p, t);
			c->hlen += t;
			if (c->hlen == 30) {
				if (memcmp(c->hdr, "PK\3\4", 4) == 0) {
					c->flags = le16(c->hdr + 6);
					c->method = le16(c->hdr + 8);
					c->csize = le32(c->hdr + 18);
					c->usize = le32(c->hdr + 22);
					c->zip64 = 0; /* begin_member reads the extra field */
					c->name_len = le16(c->hdr + 26);
					c->extra_len = le16(c->hdr + 28);
					c->var_got = 0;
					c->state = W_NAME;
					if (!c->name_len && !c->extra_len)
						begin_member(c);
				} else if (memcmp(c->hdr, "PK\1\2", 4) == 0 || memcmp(c->hdr, "PK\5\6", 4) == 0 ||
					   memcmp(c->hdr, "PK\6\6", 4) == 0) {
					stop(c, NULL); /* the central directory: the members are done */
				} else {
					stop(c, "no member header");
				}
			}
			break;
		case W_NAME: {
			size_t total = c->name_len + c->extra_len, k;
			t = total - c->var_got < n ? total - c->var_got : n;
			for (k = 0; k < t; k++) {
				size_t i = c->var_got + k;
				if (i < c->name_len) {
					if (i < sizeof(c->name) - 1)
						c->name[i] = (char)p[k];
				} else if (i - c->name_len < sizeof(c->extra)) {
					c->extra[i - c->name_len] = p[k];
				}
			}
			c->var_got += t;
			if (c->var_got == total)
				begin_member(c);
			break;
		}
		case W_DATA:
			t = c->blind ? blind(c, p, n) : data(c, p, n);
			break;
		case W_DESC:
			if (c->dlen < 4) {
				t = 4 - c->dlen < n ? 4 - c->dlen : n;
				memcpy(c->desc + c->dlen, p, t);
				c->dlen += t;
				if (c->dlen == 4) /* signature optional; then CRC and two sizes */
					c->dskip = (memcmp(c->desc, "PK\7\10", 4) == 0 ? 12 : 8) +
						   (c->zip64 ? 8 : 0);
				break;
			}
			t = c->dskip < n ? (size_t)c->dskip : n;
			c->dskip -= t;
			if (!c->dskip) {
				c->hlen = 0;
				c->state = W_HDR;
			}
			break;
		}
		if (!t && c->state == before)
			break; /* nothing taken and nothing changed: never spin */
		p += t;
		n -= t;
		c->pos += t;
	}
	return c->state != W_DONE;
}

int eip_catch_end(struct eip_catch *c, struct x_meta *m)
{
	int rc = SL_OK;

	if (!c)
		return SL_OK;
	if (c->state == W_DATA) { /* the file ends inside a member */
		int had = c->image != NULL;
		if (c->blind)
			blind_pass(c, c->carry, c->ncarry);
		settle_head(c, 1);
		/* an image cut short is the head of something longer */
		if (c->image && (!had || c->image_open)) {
			uint64_t n = (uint64_t)c->image_len + 1;
			c->image_size = c->usize > n ? c->usize : n;
			c->image_open = 0;
		}
		snprintf(c->warn, sizeof(c->warn), "zip: the file ends inside a member");
	} else if (c->state != W_DONE && !(c->state == W_HDR && c->hlen == 0)) {
		snprintf(c->warn, sizeof(c->warn), "zip: the file ends inside a member's header");
	}
	snprintf(m->format, sizeof(m->format), "%s", c->eip ? "eip" : "zip");
	if (c->warn[0])
		x_warn(m, "%s", c->warn);
	if (c->eip && c->image && m->read_nested) {
		struct x_meta sub;
		struct sl_err e;
		char warn[sizeof(m->warnings)];
		int whole = m->pics.whole;
		uint64_t size = m->pics.file_size;
		x_read_fn nested = m->read_nested;
		if (nested(c->image, c->image_len, c->image_size, &sub, &e) != SL_OK)
			x_warn(&sub, "eip: its image: %s", e.msg);
		memcpy(warn, m->warnings, sizeof(warn));
		x_meta_release(m); /* a ZIP has no descriptive values of its own */
		*m = sub; /* the image's fields and descriptive values (moved) */
		snprintf(m->format, sizeof(m->format), "eip");
		memset(&m->pics, 0, sizeof(m->pics));
		m->pics.whole = whole;
		m->pics.file_size = size;
		m->read_nested = nested;
		m->embedded_video = 0; /* a motion photo's length is of its own file */
		m->have &= ~XM_EMBEDDED;
		memcpy(m->warnings, warn, sizeof(warn));
		if (sub.warnings[0])
			x_warn(m, "%s", sub.warnings);
		if (m->desc_oom)
			rc = SL_E_NOMEM;
	} else if (c->eip && !c->image) {
		x_warn(m, "eip: no image in its root");
	}
	if (c->nomem)
		rc = SL_E_NOMEM;
	eip_catch_free(c);
	return rc;
}

int zip_parse(const uint8_t *p, size_t n, struct x_meta *m, struct sl_err *err)
{
	struct eip_catch *c;
	int rc;

	snprintf(m->format, sizeof(m->format), "zip");
	if (!m->pics.whole)
		return SL_OK; /* the catch walks it (x_stream_new) */
	c = eip_catch_new(n);
	if (!c)
		return SL_FAIL(err, SL_E_NOMEM, 0, "zip: out of memory");
	eip_catch_feed(c, p, n);
	rc = eip_catch_end(c, m);
	if (rc != SL_OK)
		return SL_FAIL(err, rc, 0, "zip: out of memory");
	return SL_OK;
}
