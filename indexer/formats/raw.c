/* raw.c - TIFF and the camera RAW formats: TIFF-based ones (CR2, NEF, ARW,
 * DNG, ORF, RW2, PEF, SRW), Fujifilm RAF, Canon CRW (CIFF) and Minolta MRW.
 *
 * TIFF-based RAW files are told apart by what they contain, never by their
 * name: DNGVersion makes a DNG; raw sensor data (a CFA or LinearRaw image)
 * or Sony's private IFD0 tag, with the maker's name, makes a NEF, ARW, PEF
 * or SRW; CR2, ORF and RW2 have their own header marks.  A camera TIFF
 * without sensor data stays "tiff".
 *
 * Image size follows exiftool's Composite:ImageSize: the main image IFD,
 * except CR2 (the Exif pixel dimensions), RW2 (the sensor borders), RAF (the
 * cropped raw size in its own directory) and CRW (its ImageInfo record).
 */
#include <stdio.h>
#include <string.h>

#include "indexer/formats/cursor.h"
#include "indexer/formats/exif.h"
#include "indexer/formats/fmt.h"
#include "indexer/formats/parsers.h"

static int starts(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

static const char *tiff_kind(const struct bc *c, const struct exif_info *in, const char *make)
{
	if (in->bigtiff)
		return "bigtiff";
	if (in->magic == 0x55)
		return "rw2";
	if (in->magic == 0x4F52 || in->magic == 0x5352)
		return "orf";
	if (bc_is(c, 8, "CR\x02", 3))
		return "cr2";
	if (in->dng)
		return "dng";
	if (in->cfa || in->sony_private) {
		if (starts(make, "NIKON"))
			return "nef";
		if (starts(make, "SONY"))
			return "arw";
		if (starts(make, "PENTAX") || starts(make, "RICOH"))
			return "pef";
		if (starts(make, "SAMSUNG"))
			return "srw";
	}
	return "tiff";
}

int tiff_parse(const uint8_t *p, size_t n, struct x_meta *m, struct sl_err *err)
{
	struct bc c = bc_make(p, n, 0);
	struct exif_info in;

	if (exif_parse(p, n, EXIF_DIMS, m, &in) != SL_OK)
		return SL_FAIL(err, SL_E_CORRUPT, 0, "tiff: %s", m->warnings);
	snprintf(m->format, sizeof(m->format), "%s", tiff_kind(&c, &in, m->make));
	/* a RAW's embedded JPEG, for the perceptual hash (not a plain TIFF's:
	 * there the image itself is the picture, and is not decoded) */
	if (strcmp(m->format, "tiff") != 0 && strcmp(m->format, "bigtiff") != 0) {
		m->pics.preview_off = in.preview_off;
		m->pics.preview_len = in.preview_len;
		if (in.jpg_off && in.jpg_len && (uint64_t)in.jpg_off + in.jpg_len <= n) {
			m->pics.preview_off = in.jpg_off; /* RW2's JpgFromRaw */
			m->pics.preview_len = in.jpg_len;
		}
	}
	if (strcmp(m->format, "cr2") == 0 && in.exif_w && in.exif_h) {
		m->width = in.exif_w;
		m->height = in.exif_h;
		m->have |= XM_DIMS;
	}
	if (in.magic == 0x55 && in.have_borders == 15 && in.border[3] > in.border[1] &&
	    in.border[2] > in.border[0]) {
		m->width = in.border[3] - in.border[1];
		m->height = in.border[2] - in.border[0];
		m->have |= XM_DIMS;
	}
	return SL_OK;
}

/* Fujifilm RAF: a big-endian header pointing at an embedded JPEG (which
 * carries the EXIF) and at a directory of (tag, size, data) records. */
int raf_parse(const uint8_t *p, size_t n, struct x_meta *m, struct sl_err *err)
{
	struct bc c = bc_make(p, n, 1);
	uint32_t jpg_off, jpg_len, dir_off, dir_len, count, i;
	size_t pos;
	int have_full = 0;
	uint16_t full_w = 0, full_h = 0;

	if (bc_be32(&c, 84, &jpg_off) || bc_be32(&c, 88, &jpg_len) || bc_be32(&c, 92, &dir_off) ||
	    bc_be32(&c, 96, &dir_len))
		return SL_FAIL(err, SL_E_CORRUPT, 0, "raf: truncated header");
	if (jpg_len && bc_has(&c, jpg_off, jpg_len)) {
		struct sl_err je;
		struct x_meta jm;
		memset(&jm, 0, sizeof(jm));
		jpg_parse(p + jpg_off, jpg_len, &jm, &je);
		/* keep the preview's metadata, not its format or (tiny) size;
		 * the preview itself is the picture to hash */
		snprintf(jm.format, sizeof(jm.format), "%s", m->format);
		*m = jm;
		memset(&m->pics, 0, sizeof(m->pics));
		m->pics.preview_off = jpg_off;
		m->pics.preview_len = jpg_len;
	} else {
		x_warn(m, "raf: embedded JPEG outside the file");
	}
	if (bc_be32(&c, dir_off, &count) != 0) {
		x_warn(m, "raf: directory outside the file");
		return SL_OK;
	}
	pos = (size_t)dir_off + 4;
	for (i = 0; i < count && i < 4096; i++) {
		uint16_t tag, size, h, w;
		if (bc_be16(&c, pos, &tag) || bc_be16(&c, pos + 2, &size) ||
		    !bc_has(&c, pos + 4, size))
			break;
		if ((tag == 0x100 || tag == 0x111) && size >= 4) {
			bc_be16(&c, pos + 4, &h);
			bc_be16(&c, pos + 6, &w);
			if (tag == 0x111) { /* RawImageCroppedSize, what exiftool reports */
				m->width = w;
				m->height = h;
				m->have |= XM_DIMS;
				return SL_OK;
			}
			full_w = w, full_h = h, have_full = 1;
		}
		pos += 4u + size;
	}
	if (have_full) { /* RawImageFullSize */
		m->width = full_w;
		m->height = full_h;
		m->have |= XM_DIMS;
	}
	return SL_OK;
}

/* Canon CRW (CIFF): a tree of heaps, each ending with the offset of its
 * record table.  Records we use: ImageInfo (0x1810: width, height),
 * MakeModel (0x080a: "make\0model"), TimeStamp (0x180e: Unix seconds).
 * Sub-heaps may overlap or repeat, so depth alone does not bound the work
 * (1024 records, each naming the same heap, five levels deep); *budget
 * counts the records read in the whole tree.  Real files have about 100. */
#define CIFF_RECORDS 4096

static void ciff_heap(const struct bc *c, size_t start, size_t end, struct x_meta *m, int depth,
		      unsigned *budget)
{
	uint32_t table, i;
	uint16_t count;

	if (depth > 4 || end < start + 4 || !bc_has(c, start, end - start) ||
	    bc_le32(c, end - 4, &table) || (size_t)table > end - start - 4 ||
	    bc_le16(c, start + table, &count))
		return;
	for (i = 0; i < count && i < 1024; i++) {
		size_t rec = start + table + 2 + 10u * i;
		if (*budget == 0)
			return;
		if (--*budget == 0)
			x_warn(m, "crw: stopped after %d records", CIFF_RECORDS);
		uint16_t tag;
		uint32_t size, off;
		size_t data;
		if (bc_le16(c, rec, &tag) || bc_le32(c, rec + 2, &size) || bc_le32(c, rec + 6, &off))
			return;
		if ((tag >> 14) != 0) /* data kept inside the record: nothing we use */
			continue;
		if ((size_t)off > end - start || size > end - start - off)
			continue;
		data = start + off;
		switch (tag & 0x3fff) {
		case 0x2804: case 0x2807: case 0x300a: case 0x300b: case 0x3004: /* sub-heaps */
			ciff_heap(c, data, data + size, m, depth + 1, budget);
			break;
		case 0x1810: {
			uint32_t w, h;
			if (size >= 8 && !bc_le32(c, data, &w) && !bc_le32(c, data + 4, &h)) {
				m->width = w;
				m->height = h;
				m->have |= XM_DIMS;
			}
			break;
		}
		case 0x080a: {
			size_t l = strnlen((const char *)c->p + data, size);
			x_copy_text(m->make, sizeof(m->make), c->p + data, l);
			if (l + 1 < size)
				x_copy_text(m->model, sizeof(m->model), c->p + data + l + 1, size - l - 1);
			break;
		}
		case 0x180e: {
			uint32_t ts;
			if (size >= 4 && !bc_le32(c, data, &ts) && ts)
				x_unix_datetime(m, ts);
			break;
		}
		default:
			break;
		}
	}
}

int crw_parse(const uint8_t *p, size_t n, struct x_meta *m, struct sl_err *err)
{
	struct bc c = bc_make(p, n, 0);
	uint32_t header;
	unsigned budget = CIFF_RECORDS;

	if (bc_le32(&c, 2, &header) || header < 14 || header > n)
		return SL_FAIL(err, SL_E_CORRUPT, 0, "crw: bad header");
	ciff_heap(&c, header, n, m, 0, &budget);
	return SL_OK;
}

/* Minolta MRW: "\0MRM" and a length, then blocks; "\0TTW" holds a TIFF. */
int mrw_parse(const uint8_t *p, size_t n, struct x_meta *m, struct sl_err *err)
{
	struct bc c = bc_make(p, n, 1);
	uint32_t total, len;
	size_t pos = 8, end;

	if (bc_be32(&c, 4, &total))
		return SL_FAIL(err, SL_E_CORRUPT, 0, "mrw: truncated header");
	end = (size_t)total + 8 < n ? (size_t)total + 8 : n;
	while (pos + 8 <= end) {
		bc_be32(&c, pos + 4, &len);
		if (bc_is(&c, pos, "\0TTW", 4) && bc_has(&c, pos + 8, len))
			return exif_parse(p + pos + 8, len, EXIF_DIMS, m, NULL) == SL_OK
				       ? SL_OK
				       : SL_FAIL(err, SL_E_CORRUPT, 0, "mrw: %s", m->warnings);
		if (len > end - pos - 8)
			break;
		pos += 8 + (size_t)len;
	}
	x_warn(m, "mrw: no TIFF block");
	return SL_OK;
}
