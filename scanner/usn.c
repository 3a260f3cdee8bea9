/* usn.c - see usn.h. */
#include "scanner/usn.h"

#include <stdlib.h>
#include <string.h>

#include "common/strbuf.h"

static uint16_t le16(const unsigned char *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

static uint32_t le32(const unsigned char *p)
{
	return (uint32_t)le16(p) | (uint32_t)le16(p + 2) << 16;
}

static uint64_t le64(const unsigned char *p)
{
	return (uint64_t)le32(p) | (uint64_t)le32(p + 4) << 32;
}

static int64_t le64s(const unsigned char *p)
{
	uint64_t v = le64(p);
	int64_t s;
	memcpy(&s, &v, sizeof(s));
	return s;
}

enum usn_kind usn_kind(uint32_t reason)
{
	if (reason & USN_R_FILE_DELETE)
		return USN_DELETED;
	if (reason & USN_R_FILE_CREATE)
		return USN_CREATED;
	if (reason & (USN_R_RENAME_OLD_NAME | USN_R_RENAME_NEW_NAME | USN_R_HARD_LINK_CHANGE))
		return USN_RENAMED;
	if (reason & (USN_R_DATA_OVERWRITE | USN_R_DATA_EXTEND | USN_R_DATA_TRUNCATION))
		return USN_CHANGED;
	return USN_OTHER;
}

int usn_utf16le_to_utf8(const unsigned char *p, size_t n, struct strbuf *out)
{
	size_t i;

	for (i = 0; i < n; i++) {
		uint32_t c = le16(p + 2 * i);
		char u[4];
		size_t k;

		if (c >= 0xD800 && c <= 0xDBFF && i + 1 < n) {
			uint32_t d = le16(p + 2 * (i + 1));
			if (d >= 0xDC00 && d <= 0xDFFF) {
				c = 0x10000 + ((c - 0xD800) << 10) + (d - 0xDC00);
				i++;
			} else {
				c = 0xFFFD;
			}
		} else if (c >= 0xD800 && c <= 0xDFFF) {
			c = 0xFFFD;
		}
		if (c < 0x80) {
			u[0] = (char)c;
			k = 1;
		} else if (c < 0x800) {
			u[0] = (char)(0xC0 | c >> 6);
			u[1] = (char)(0x80 | (c & 0x3F));
			k = 2;
		} else if (c < 0x10000) {
			u[0] = (char)(0xE0 | c >> 12);
			u[1] = (char)(0x80 | ((c >> 6) & 0x3F));
			u[2] = (char)(0x80 | (c & 0x3F));
			k = 3;
		} else {
			u[0] = (char)(0xF0 | c >> 18);
			u[1] = (char)(0x80 | ((c >> 12) & 0x3F));
			u[2] = (char)(0x80 | ((c >> 6) & 0x3F));
			u[3] = (char)(0x80 | (c & 0x3F));
			k = 4;
		}
		if (sb_add(out, u, k) != 0)
			return -1;
	}
	return 0;
}

/* Byte layouts: where each field sits in versions 2 and 3. */
struct layout {
	size_t fixed, ref, ref_size, parent, usn, time, reason, attrs, name_len, name_off;
};
static const struct layout V2 = {60, 8, 8, 16, 24, 32, 40, 52, 56, 58};
static const struct layout V3 = {76, 8, 16, 24, 40, 48, 56, 68, 72, 74};

int usn_parse(const unsigned char *buf, size_t len, int64_t *next_usn, usn_fn fn, void *ctx,
	      size_t *bad_at)
{
	struct strbuf name = STRBUF_INIT;
	size_t at = 8;
	int rc = 0;

	*bad_at = 0;
	if (len < 8)
		return -1;
	*next_usn = le64s(buf);
	while (at < len) {
		const unsigned char *p = buf + at;
		const struct layout *l;
		struct usn_rec r;
		uint32_t rlen;
		size_t nlen, noff;

		if (len - at < 8)
			goto bad;
		rlen = le32(p);
		/* records are 8-byte aligned, hold at least their header */
		if (rlen < 8 || rlen % 8 != 0 || rlen > len - at)
			goto bad;
		memset(&r, 0, sizeof(r));
		r.major = le16(p + 4);
		if (r.major == 4) {
			at += rlen;
			continue;
		}
		if (r.major != 2 && r.major != 3)
			goto bad;
		l = r.major == 2 ? &V2 : &V3;
		if (rlen < l->fixed)
			goto bad;
		nlen = le16(p + l->name_len);
		noff = le16(p + l->name_off);
		if (nlen % 2 != 0 || noff < l->fixed || noff > rlen || nlen > rlen - noff)
			goto bad;
		r.file_ref[0] = le64(p + l->ref);
		r.parent_ref[0] = le64(p + l->parent);
		if (l->ref_size == 16) {
			r.file_ref[1] = le64(p + l->ref + 8);
			r.parent_ref[1] = le64(p + l->parent + 8);
		}
		r.usn = le64s(p + l->usn);
		r.timestamp = le64s(p + l->time);
		r.reason = le32(p + l->reason);
		r.attrs = le32(p + l->attrs);
		sb_reset(&name);
		if (usn_utf16le_to_utf8(p + noff, nlen / 2, &name) != 0 || sb_adds(&name, "") != 0) {
			rc = -2;
			break;
		}
		r.name = name.p ? name.p : "";
		r.name_len = name.len;
		rc = fn(&r, ctx);
		if (rc)
			break;
		at += rlen;
	}
	sb_free(&name);
	return rc;
bad:
	sb_free(&name);
	*bad_at = at;
	return -1;
}

struct tally_ctx {
	struct usn_tally *t;
	const uint64_t *ignore;
	size_t n;
};

static void collect(struct usn_tally *t, const struct usn_rec *r)
{
	size_t i;

	if (!t->max_ids || (r->attrs & USN_ATTR_DIRECTORY))
		return;
	/* a file's records come in runs (create, extend, close): compare with
	 * the last few before adding */
	for (i = t->nids; i > 0 && i + 8 > t->nids; i--)
		if (t->ids[i - 1].lo == r->file_ref[0] && t->ids[i - 1].hi == r->file_ref[1])
			return;
	if (t->nids >= t->max_ids) {
		t->overflow = 1;
		return;
	}
	if (sl_grow(&t->ids, &t->cap_ids, t->nids + 1, sizeof(*t->ids)) != 0) {
		t->nomem = 1;
		t->overflow = 1;
		return;
	}
	t->ids[t->nids].lo = r->file_ref[0];
	t->ids[t->nids++].hi = r->file_ref[1];
}

static int tally_one(const struct usn_rec *r, void *ctx)
{
	struct tally_ctx *c = ctx;
	enum usn_kind kind;
	size_t i;

	c->t->records++;
	for (i = 0; i < c->n; i++) {
		if (fileid_fold(r->parent_ref[0], r->parent_ref[1]) == c->ignore[i]) {
			c->t->ignored++;
			return 0;
		}
	}
	kind = usn_kind(r->reason);
	if ((kind == USN_CREATED || kind == USN_CHANGED) && (r->attrs & USN_ATTR_REMOTE)) {
		c->t->remote++;
		return 0;
	}
	switch (kind) {
	case USN_CREATED:
		c->t->created++;
		collect(c->t, r);
		break;
	case USN_CHANGED:
		c->t->changed++;
		collect(c->t, r);
		break;
	case USN_RENAMED: c->t->renamed++; break;
	case USN_DELETED: c->t->deleted++; break;
	default: c->t->other++; break;
	}
	return 0;
}

int usn_tally(const unsigned char *buf, size_t len, const uint64_t *ignore_dirs, size_t n,
	      struct usn_tally *t, int64_t *next_usn, size_t *bad_at)
{
	struct tally_ctx c = {t, ignore_dirs, n};
	return usn_parse(buf, len, next_usn, tally_one, &c, bad_at);
}

int usn_quiet(const struct usn_tally *t)
{
	return t->created + t->changed + t->renamed + t->deleted == 0;
}

static int cmp_id(const void *a, const void *b)
{
	const struct fileid *x = a, *y = b;

	if (x->hi != y->hi)
		return x->hi < y->hi ? -1 : 1;
	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

int usn_listable(const struct usn_tally *t)
{
	return t->max_ids && !t->overflow && t->renamed == 0 && t->deleted == 0;
}

void usn_tally_free(struct usn_tally *t)
{
	free(t->ids);
	t->ids = NULL;
	t->nids = t->cap_ids = 0;
}

void usn_ids_unique(struct usn_tally *t)
{
	size_t i, o = 0;

	if (!t->nids)
		return;
	qsort(t->ids, t->nids, sizeof(*t->ids), cmp_id);
	for (i = 0; i < t->nids; i++)
		if (o == 0 || cmp_id(&t->ids[o - 1], &t->ids[i]) != 0)
			t->ids[o++] = t->ids[i];
	t->nids = o;
}
