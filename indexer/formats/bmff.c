/* bmff.c - box-structured files: ISO BMFF (HEIC, HEIF, AVIF, CR3, MP4/MOV)
 * and JPEG 2000 (JP2), which uses the same box layout.
 *
 * HEIF/AVIF: the meta box lists items (iinf), where their bytes are (iloc),
 * their properties (iprp: ipco + ipma) and which item is the picture (pitm).
 * The size is the primary item's 'ispe' property; the EXIF is the item of
 * type 'Exif' (a 4-byte offset, then a TIFF block).  CR3 keeps its TIFF
 * blocks in moov/uuid(Canon)/CMT1 (IFD0), CMT2 (Exif IFD), CMT4 (GPS IFD).
 * JP2: the size is in jp2h/ihdr, EXIF in a 'uuid' box "JpgTiffExif->JP2".
 * XMP: a HEIF 'mime' item of type application/rdf+xml; Adobe's top-level
 * uuid box (xmp_uuid) in the others.
 *
 * Every box is checked against its parent; nesting depth and item counts
 * are bounded.  The family comes from the major brand of 'ftyp', as exiftool
 * names it.
 */
#include <stdlib.h>
#include <string.h>

#include "indexer/formats/box.h"
#include "indexer/formats/cursor.h"
#include "indexer/formats/exif.h"
#include "indexer/formats/fmt.h"
#include "indexer/formats/parsers.h"
#include "indexer/formats/qt.h"
#include "indexer/formats/xmp.h"

#define MAX_DEPTH 8
#define MAX_ITEMS 4096
#define MAX_PROPS 1024

static const struct {
	char brand[5];
	const char *name;
} brands[] = {
	{"heic", "heic"}, {"heix", "heif"}, {"heim", "heic"}, {"heis", "heic"},
	{"hevc", "heic"}, {"hevx", "heif"}, {"mif1", "heif"}, {"msf1", "heif"},
	{"avif", "avif"}, {"avis", "avif"}, {"crx ", "cr3"},  {"qt  ", "mov"},
	{"3gp4", "3gp"},  {"3gp5", "3gp"},  {"3gp6", "3gp"},  {"3gp7", "3gp"},
	{"3ge6", "3gp"},  {"3ge7", "3gp"},  {"3gg6", "3gp"},  {"3g2a", "3g2"},
	{"3g2b", "3g2"},  {"3g2c", "3g2"},  {"M4V ", "m4v"},  {"M4VH", "m4v"},
	{"M4VP", "m4v"},  {"jp2 ", "jp2"},
};

const char *bmff_brand(const uint8_t *p, size_t n)
{
	struct bc c = bc_make(p, n, 1);
	size_t i;

	if (!bc_has(&c, 0, 12) || !bc_is(&c, 4, "ftyp", 4))
		return NULL;
	for (i = 0; i < sizeof(brands) / sizeof(brands[0]); i++)
		if (memcmp(p + 8, brands[i].brand, 4) == 0)
			return brands[i].name;
	return "mp4"; /* any other ftyp: the generic ISO media family */
}

/* ---- HEIF items ---------------------------------------------------------- */

struct item {
	uint32_t id;
	char type[5];
	int method;        /* iloc construction method: 0 file offset, 1 idat */
	uint64_t offset;   /* first extent */
	uint64_t length;
	int located;
	int xmp;           /* a 'mime' item of content type application/rdf+xml */
};

struct heif {
	const struct bc *c;
	struct x_meta *m;
	uint32_t primary;
	int have_primary;
	struct item items[64]; /* the first 64 items: pictures have a handful */
	size_t nitems;
	size_t idat_body, idat_end;
	int have_idat;
	/* ipco: offset of each property box, in order (index 1..) */
	size_t props[MAX_PROPS];
	size_t nprops;
	size_t ipma_body, ipma_end;
	int have_ipma;
};

static struct item *item_get(struct heif *h, uint32_t id, int add)
{
	size_t i;
	for (i = 0; i < h->nitems; i++)
		if (h->items[i].id == id)
			return &h->items[i];
	if (!add || h->nitems == sizeof(h->items) / sizeof(h->items[0]))
		return NULL;
	memset(&h->items[h->nitems], 0, sizeof(h->items[0]));
	h->items[h->nitems].id = id;
	return &h->items[h->nitems++];
}

static int read_sized(const struct bc *c, size_t at, unsigned size, uint64_t *v)
{
	uint32_t v32;
	uint16_t v16;
	*v = 0;
	switch (size) {
	case 0: return 0;
	case 2:
		if (bc_be16(c, at, &v16))
			return -1;
		*v = v16;
		return 0;
	case 4:
		if (bc_be32(c, at, &v32))
			return -1;
		*v = v32;
		return 0;
	case 8: return bc_be64(c, at, v);
	default: return -1;
	}
}

/* A field that is 16 bits wide in early box versions and 32 in later ones;
 * advances *pos.  0 on success. */
static int read_var(const struct bc *c, size_t *pos, int wide, uint32_t *v)
{
	uint16_t v16;
	if (wide) {
		if (bc_be32(c, *pos, v))
			return -1;
		*pos += 4;
		return 0;
	}
	if (bc_be16(c, *pos, &v16))
		return -1;
	*v = v16;
	*pos += 2;
	return 0;
}

/* The 'ispe' property box at off; 0 when it is one. */
static int read_ispe(const struct bc *c, size_t off, uint32_t *w, uint32_t *h)
{
	struct box p;
	if (box_at(c, off, c->len, &p) != 0 || strcmp(p.type, "ispe") != 0)
		return -1;
	return bc_be32(c, p.body + 4, w) || bc_be32(c, p.body + 8, h) ? -1 : 0;
}

static void parse_iloc(struct heif *h, const struct box *b)
{
	const struct bc *c = h->c;
	uint8_t version, sizes, sizes2;
	unsigned off_size, len_size, base_size, idx_size;
	uint32_t count, i;
	size_t pos = b->body + 4;

	if (bc_u8(c, b->body, &version) || bc_u8(c, pos, &sizes) || bc_u8(c, pos + 1, &sizes2))
		return;
	off_size = sizes >> 4;
	len_size = sizes & 15;
	base_size = sizes2 >> 4;
	idx_size = (version == 1 || version == 2) ? (sizes2 & 15) : 0;
	pos += 2;
	if (read_var(c, &pos, version >= 2, &count))
		return;
	for (i = 0; i < count && i < MAX_ITEMS && pos < b->end; i++) {
		uint32_t id;
		uint16_t method = 0, extents;
		uint64_t base, eo, off = 0, len = 0;
		size_t stride;
		struct item *it;

		if (read_var(c, &pos, version >= 2, &id))
			return;
		if (version == 1 || version == 2) {
			if (bc_be16(c, pos, &method))
				return;
			method &= 15;
			pos += 2;
		}
		pos += 2; /* data_reference_index */
		if (read_sized(c, pos, base_size, &base))
			return;
		pos += base_size;
		if (bc_be16(c, pos, &extents))
			return;
		pos += 2;
		/* Only the first extent is used.  The rest are skipped in one step:
		 * with zero-width fields a loop over 65535 extents of each of
		 * thousands of items would cost seconds for a few kilobytes. */
		stride = idx_size + off_size + len_size;
		if (extents > 0) {
			if (read_sized(c, pos + idx_size, off_size, &eo) ||
			    read_sized(c, pos + idx_size + off_size, len_size, &len))
				return;
			off = base + eo;
		}
		if ((uint64_t)extents * stride > b->end - (pos < b->end ? pos : b->end))
			return; /* the extents run past the box */
		pos += (size_t)extents * stride;
		it = item_get(h, id, 1);
		if (it && extents) {
			it->method = method;
			it->offset = off;
			it->length = len;
			it->located = 1;
		}
	}
}

/* After a 'mime' infe's type: item_name, then content_type, both
 * NUL-terminated inside the box. */
static int is_xmp_mime(const struct bc *c, size_t at, size_t end)
{
	static const char xmp_type[] = "application/rdf+xml";
	const uint8_t *z;

	if (at >= end || end > c->len || !(z = memchr(c->p + at, 0, end - at)))
		return 0;
	at = (size_t)(z - c->p) + 1;
	return end - at >= sizeof(xmp_type) && memcmp(c->p + at, xmp_type, sizeof(xmp_type)) == 0;
}

static void parse_iinf(struct heif *h, const struct box *b)
{
	const struct bc *c = h->c;
	uint8_t version;
	size_t pos;
	struct box e;

	if (bc_u8(c, b->body, &version))
		return;
	pos = b->body + 4 + (version == 0 ? 2 : 4);
	while (box_at(c, pos, b->end, &e) == 0) {
		uint8_t v;
		if (strcmp(e.type, "infe") == 0 && bc_u8(c, e.body, &v) == 0 && v >= 2) {
			uint32_t id;
			size_t t = e.body + 4;
			if (read_var(c, &t, v > 2, &id))
				break;
			t += 2; /* item_protection_index */
			if (bc_has(c, t, 4) && t + 4 <= e.end) {
				struct item *it = item_get(h, id, 1);
				if (it) {
					memcpy(it->type, c->p + t, 4);
					it->type[4] = '\0';
					if (strcmp(it->type, "mime") == 0)
						it->xmp = is_xmp_mime(c, t + 4, e.end);
				}
			}
		}
		pos = e.end;
	}
}

static void parse_iprp(struct heif *h, const struct box *b)
{
	const struct bc *c = h->c;
	size_t pos = b->body;
	struct box e, p;

	while (box_at(c, pos, b->end, &e) == 0) {
		if (strcmp(e.type, "ipco") == 0) {
			size_t q = e.body;
			while (box_at(c, q, e.end, &p) == 0 && h->nprops < MAX_PROPS) {
				h->props[h->nprops++] = q;
				q = p.end;
			}
		} else if (strcmp(e.type, "ipma") == 0 && !h->have_ipma) {
			h->ipma_body = e.body;
			h->ipma_end = e.end;
			h->have_ipma = 1;
		}
		pos = e.end;
	}
}

/* The 'ispe' associated with item id, through ipma; 0 when found. */
static int item_size(struct heif *h, uint32_t id, uint32_t *w, uint32_t *ht)
{
	const struct bc *c = h->c;
	uint8_t version, flags3;
	uint32_t count, i;
	size_t pos;

	if (!h->have_ipma || bc_u8(c, h->ipma_body, &version) ||
	    bc_u8(c, h->ipma_body + 3, &flags3) || bc_be32(c, h->ipma_body + 4, &count))
		return -1;
	pos = h->ipma_body + 8;
	for (i = 0; i < count && i < MAX_ITEMS && pos < h->ipma_end; i++) {
		uint32_t item;
		uint8_t n, k;
		if (read_var(c, &pos, version >= 1, &item) || bc_u8(c, pos++, &n))
			return -1;
		for (k = 0; k < n; k++) {
			uint16_t index;
			uint8_t b8;
			if (flags3 & 1) {
				if (bc_be16(c, pos, &index))
					return -1;
				index &= 0x7fff;
				pos += 2;
			} else {
				if (bc_u8(c, pos, &b8))
					return -1;
				index = b8 & 0x7f;
				pos += 1;
			}
			if (item == id && index >= 1 && index <= h->nprops &&
			    read_ispe(c, h->props[index - 1], w, ht) == 0)
				return 0;
		}
	}
	return -1;
}

/* Where an item's bytes start in the buffer: at a file offset (iloc
 * construction method 0) or inside idat (1); -1 for any other method, or
 * an idat item without idat or longer than it. */
static int item_start(const struct heif *h, const struct item *it, uint64_t *start)
{
	if (!it->located)
		return -1;
	*start = it->offset;
	if (it->method == 0)
		return 0;
	if (it->method != 1 || !h->have_idat || it->length > h->idat_end - h->idat_body)
		return -1;
	*start += h->idat_body;
	return 0;
}

/* The Exif item: a big-endian offset to the TIFF header, then the bytes. */
static void item_exif(struct heif *h, const struct item *it)
{
	const struct bc *c = h->c;
	uint64_t start, len = it->length;
	uint32_t skip;
	size_t i;

	if (item_start(h, it, &start) != 0)
		return;
	if (start > c->len || len < 8 || !bc_has(c, (size_t)start, (size_t)len)) {
		x_warn(h->m, "heif: Exif item outside the bytes read");
		return;
	}
	if (bc_be32(c, (size_t)start, &skip) == 0 && skip < len - 4 &&
	    (bc_is(c, (size_t)start + 4 + skip, "II", 2) || bc_is(c, (size_t)start + 4 + skip, "MM", 2))) {
		exif_parse(c->p + start + 4 + skip, (size_t)(len - 4 - skip), 0, h->m, NULL);
		return;
	}
	/* writers disagree on the offset: look for the header nearby */
	for (i = 4; i + 8 <= len && i < 64; i++) {
		if (bc_is(c, (size_t)start + i, "II*\0", 4) || bc_is(c, (size_t)start + i, "MM\0*", 4)) {
			exif_parse(c->p + start + i, (size_t)(len - i), 0, h->m, NULL);
			return;
		}
	}
	x_warn(h->m, "heif: Exif item without a TIFF header");
}

static void item_xmp(struct heif *h, const struct item *it)
{
	const struct bc *c = h->c;
	uint64_t start;

	if (item_start(h, it, &start) != 0 || start > c->len ||
	    !bc_has(c, (size_t)start, (size_t)it->length)) {
		x_warn(h->m, "heif: XMP item outside the bytes read");
		return;
	}
	xmp_parse(c->p + start, (size_t)it->length, h->m, DS_XMP);
}

/* The item tables of a meta box: pitm, iloc, iinf, iprp, idat. */
static void parse_items(struct heif *h, const struct box *meta)
{
	const struct bc *c = h->c;
	size_t pos = meta->body + 4; /* full box */
	struct box b;

	while (box_at(c, pos, meta->end, &b) == 0) {
		uint8_t v;
		if (strcmp(b.type, "pitm") == 0 && bc_u8(c, b.body, &v) == 0) {
			size_t at = b.body + 4;
			h->have_primary = read_var(c, &at, v != 0, &h->primary) == 0;
		} else if (strcmp(b.type, "iloc") == 0) {
			parse_iloc(h, &b);
		} else if (strcmp(b.type, "iinf") == 0) {
			parse_iinf(h, &b);
		} else if (strcmp(b.type, "iprp") == 0) {
			parse_iprp(h, &b);
		} else if (strcmp(b.type, "idat") == 0) {
			h->idat_body = b.body;
			h->idat_end = b.end;
			h->have_idat = 1;
		}
		pos = b.end;
	}
}

static void parse_meta(struct heif *h, const struct box *meta)
{
	const struct bc *c = h->c;
	size_t i;
	uint32_t w, ht;

	parse_items(h, meta);
	if (h->have_primary && item_size(h, h->primary, &w, &ht) == 0) {
		h->m->width = w;
		h->m->height = ht;
		h->m->have |= XM_DIMS;
	} else {
		/* no primary item, or no size for it: the first size given */
		for (i = 0; i < h->nprops; i++) {
			if (read_ispe(c, h->props[i], &w, &ht) == 0) {
				h->m->width = w;
				h->m->height = ht;
				h->m->have |= XM_DIMS;
				break;
			}
		}
	}
	for (i = 0; i < h->nitems; i++)
		if (strcmp(h->items[i].type, "Exif") == 0) {
			item_exif(h, &h->items[i]);
			break;
		}
	for (i = 0; i < h->nitems; i++)
		if (h->items[i].xmp) {
			item_xmp(h, &h->items[i]);
			break;
		}
}

/* Adobe's XMP box, a uuid at the top level of MP4, CR3 and JP2 files. */
static const uint8_t xmp_uuid[16] = {0xbe, 0x7a, 0xcf, 0xcb, 0x97, 0xa9, 0x42, 0xe8,
				     0x9c, 0x71, 0x99, 0x94, 0x91, 0xe3, 0xaf, 0xac};

static int xmp_box(const struct bc *c, const struct box *b, struct x_meta *m)
{
	if (strcmp(b->type, "uuid") != 0 || b->end < b->body + 16 || !bc_is(c, b->body, xmp_uuid, 16))
		return 0;
	xmp_parse(c->p + b->body + 16, b->end - b->body - 16, m, DS_XMP);
	return 1;
}

int bmff_canvas(const uint8_t *p, size_t n, uint32_t id, uint32_t *w, uint32_t *ht)
{
	struct bc c = bc_make(p, n, 1);
	struct heif *h = calloc(1, sizeof(*h));
	struct box b;
	size_t pos = 0, i, at;
	uint64_t start;
	const struct item *it = NULL;
	uint8_t flags;
	uint32_t v32;
	uint16_t v16;
	int rc = -1, wide, found_meta = 0;

	*w = *ht = 0;
	if (!h)
		return -2;
	h->c = &c;
	while (!found_meta && box_at(&c, pos, n, &b) == 0) {
		if (strcmp(b.type, "meta") == 0) {
			parse_items(h, &b);
			found_meta = 1;
		}
		pos = b.end;
	}
	for (i = 0; i < h->nitems; i++)
		if (h->items[i].id == id)
			it = &h->items[i];
	if (!it || (strcmp(it->type, "grid") != 0 && strcmp(it->type, "iovl") != 0)) {
		rc = 1;
		goto out;
	}
	if (item_start(h, it, &start) != 0 || start > n)
		goto out;
	at = (size_t)start;
	if (!bc_has(&c, at, 2) || bc_u8(&c, at + 1, &flags))
		goto out;
	/* after version and flags: grid, rows and columns (1 byte each); iovl,
	 * the fill colour (4 x 16 bits); then the output size, 32 bits each
	 * when flags bit 0, else 16 */
	at += strcmp(it->type, "grid") == 0 ? 4 : 10;
	wide = flags & 1;
	if (wide ? bc_be32(&c, at, &v32) : bc_be16(&c, at, &v16))
		goto out;
	*w = wide ? v32 : v16;
	if (wide ? bc_be32(&c, at + 4, &v32) : bc_be16(&c, at + 2, &v16))
		goto out;
	*ht = wide ? v32 : v16;
	rc = 0;
out:
	free(h);
	return rc;
}

/* ---- CR3 ----------------------------------------------------------------- */

static const uint8_t canon_uuid[16] = {0x85, 0xc0, 0xb6, 0x87, 0x82, 0x0f, 0x11, 0xe0,
				       0x81, 0x11, 0xf4, 0xce, 0x46, 0x2b, 0x6a, 0x48};

static void parse_cr3_moov(const struct bc *c, const struct box *moov, struct x_meta *m)
{
	size_t pos = moov->body;
	struct box b, t;

	while (box_at(c, pos, moov->end, &b) == 0) {
		if (strcmp(b.type, "uuid") == 0 && bc_is(c, b.body, canon_uuid, 16)) {
			size_t q = b.body + 16;
			while (box_at(c, q, b.end, &t) == 0) {
				size_t len = t.end - t.body;
				if (strcmp(t.type, "CMT1") == 0)
					exif_parse(c->p + t.body, len, EXIF_DIMS, m, NULL);
				else if (strcmp(t.type, "CMT2") == 0)
					exif_parse(c->p + t.body, len, EXIF_ROOT_IS_EXIF, m, NULL);
				else if (strcmp(t.type, "CMT4") == 0)
					exif_parse(c->p + t.body, len, EXIF_ROOT_IS_GPS, m, NULL);
				q = t.end;
			}
		}
		pos = b.end;
	}
}

/* Canon's preview box, a top-level uuid holding PRVW: after its header 4
 * unknown bytes, 2 more, width and height (16 bits each), 2 more, the
 * JPEG's length (32 bits), then the JPEG (1620x1080 on every EOS R).  The
 * perceptual hash comes from it (x_phash), as from other RAWs' previews;
 * it lies in the first few hundred kB, before the raw data. */
static const uint8_t canon_preview_uuid[16] = {0xea, 0xf4, 0x2b, 0x5e, 0x1c, 0x98, 0x4b, 0x88,
					       0xb9, 0xfb, 0xb7, 0xdc, 0x40, 0x6e, 0x4d, 0x16};

static void parse_cr3_preview(const struct bc *c, const struct box *u, struct x_meta *m)
{
	struct box t;
	uint32_t len;

	if (box_at(c, u->body + 16 + 8, u->end, &t) != 0 || strcmp(t.type, "PRVW") != 0 ||
	    bc_be32(c, t.body + 12, &len) != 0 || len < 128 || !bc_has(c, t.body + 16, len) ||
	    t.body + 16 + (size_t)len > t.end || !bc_is(c, t.body + 16, "\xff\xd8", 2))
		return; /* not there, or past the bytes we hold (a streamed file's first chunk) */
	m->pics.preview_off = t.body + 16;
	m->pics.preview_len = len;
}

int bmff_parse(const uint8_t *p, size_t n, struct x_meta *m, struct sl_err *err)
{
	struct bc c = bc_make(p, n, 1);
	struct heif *h;
	struct box b;
	size_t pos = 0;
	int boxes = 0;

	h = calloc(1, sizeof(*h));
	if (!h)
		return SL_FAIL(err, SL_E_NOMEM, 0, "bmff: out of memory");
	h->c = &c;
	h->m = m;
	if (qt_movie(m->format))
		qt_parse(p, n, m);
	while (box_at(&c, pos, n, &b) == 0) {
		boxes++;
		if (strcmp(b.type, "meta") == 0)
			parse_meta(h, &b);
		else if (strcmp(b.type, "moov") == 0 && strcmp(m->format, "cr3") == 0)
			parse_cr3_moov(&c, &b, m);
		else if (strcmp(b.type, "uuid") == 0 && strcmp(m->format, "cr3") == 0 &&
			 bc_is(&c, b.body, canon_preview_uuid, 16))
			parse_cr3_preview(&c, &b, m);
		else if (!b.truncated)
			xmp_box(&c, &b, m);
		if (b.truncated)
			break;
		pos = b.end;
	}
	free(h);
	if (boxes == 0)
		return SL_FAIL(err, SL_E_CORRUPT, 0, "bmff: no boxes");
	return SL_OK;
}

/* ---- JPEG 2000 ----------------------------------------------------------- */

static const char jp2_exif_uuid[] = "JpgTiffExif->JP2";

int jp2_parse(const uint8_t *p, size_t n, struct x_meta *m, struct sl_err *err)
{
	struct bc c = bc_make(p, n, 1);
	struct box b, h;
	size_t pos = 0;

	while (box_at(&c, pos, n, &b) == 0) {
		if (strcmp(b.type, "jp2h") == 0) {
			size_t q = b.body;
			while (box_at(&c, q, b.end, &h) == 0) {
				uint32_t hh, ww;
				if (strcmp(h.type, "ihdr") == 0 && bc_be32(&c, h.body, &hh) == 0 &&
				    bc_be32(&c, h.body + 4, &ww) == 0) {
					m->width = ww;
					m->height = hh;
					m->have |= XM_DIMS;
				}
				q = h.end;
			}
		} else if (strcmp(b.type, "uuid") == 0 && bc_is(&c, b.body, jp2_exif_uuid, 16)) {
			size_t at = b.body + 16;
			if (bc_is(&c, at, "Exif\0\0", 6))
				at += 6;
			if (at < b.end)
				exif_parse(p + at, b.end - at, 0, m, NULL);
		} else if (!b.truncated) {
			xmp_box(&c, &b, m);
		}
		if (b.truncated)
			break;
		pos = b.end;
	}
	if (!(m->have & XM_DIMS))
		return SL_FAIL(err, SL_E_CORRUPT, 0, "jp2: no image header");
	return SL_OK;
}
