/* desc.h - what people wrote about a picture: rating, label, keywords,
 * title, caption, creator, copyright.
 *
 * The same field can come from several places in one file: XMP (xmp.h),
 * IPTC IIM (iptc.h) and EXIF's own text tags, and, from step 5 of issue 16,
 * an XMP sidecar beside it.  Parsers add every value they find, tagged with
 * where it came from; the record takes, for each field, the values of the
 * best source that has any (DS_* in ascending order of precedence: a
 * sidecar over XMP over IPTC over EXIF), except that keywords merge XMP's
 * dc:subject with IPTC's Keywords (docs/extraction.md).  Values are UTF-8
 * (parsers convert), trimmed, never empty.
 *
 * The values live in one allocation hung off x_meta (m->desc, NULL while
 * there are none), bounded by DESC_MAX_BYTES and DESC_MAX_VALUES: a file
 * that holds more gets a warning and the rest is dropped, so a hostile file
 * cannot make a record large.  x_meta_release frees it. */
#ifndef SL_DESC_H
#define SL_DESC_H

#include <stddef.h>

#include "indexer/formats/fmt.h"

enum desc_src { DS_EXIF, DS_IPTC, DS_XMP, DS_SIDECAR, DS_N };

enum desc_field {
	DF_TITLE,       /* dc:title; IPTC ObjectName */
	DF_DESCRIPTION, /* dc:description; IPTC Caption-Abstract; EXIF ImageDescription */
	DF_CREATOR,     /* dc:creator (a list); IPTC By-line; EXIF Artist */
	DF_COPYRIGHT,   /* dc:rights; IPTC CopyrightNotice; EXIF Copyright */
	DF_LABEL,       /* xmp:Label */
	DF_KEYWORD,     /* dc:subject; IPTC Keywords (a list) */
	DF_HIER,        /* lr:hierarchicalSubject, digiKam:TagsList, as "A|B|C" (a list) */
	DF_N
};

#define DESC_MAX_BYTES (64u * 1024u)
#define DESC_MAX_VALUES 1024u

/* Add a value of field f from src: n bytes of UTF-8 (bytes that are not
 * become '?'; control characters other than tab and newline are dropped;
 * leading and trailing white space trimmed; nothing left: nothing added).
 * Returns SL_OK or SL_E_NOMEM, which also sets m->desc_oom: x_extract
 * then fails the record, which would otherwise look complete without the
 * value, so parsers need not pass the status up. */
int desc_add(struct x_meta *m, enum desc_field f, enum desc_src src, const char *s, size_t n);

/* A rating from src (-1..5, as xmp:Rating); the best source's first wins. */
int desc_rating(struct x_meta *m, enum desc_src src, int rating);

/* The record's values of f, in order, duplicates removed: up to cap
 * pointers into m's storage (valid until m changes); returns how many
 * there are in all.  For single-valued fields, at most one. */
size_t desc_list(const struct x_meta *m, enum desc_field f, const char **out, size_t cap);

/* The record's rating: 1 and *r, or 0 when none. */
int desc_get_rating(const struct x_meta *m, int *r);

/* Free m->desc. */
void desc_free(struct x_meta *m);

#endif
