/* exif.h - our own EXIF/TIFF reader.
 *
 * Reads a TIFF structure (the payload of a JPEG APP1 "Exif" segment after its
 * 6-byte header, a PNG eXIf chunk, a WebP EXIF chunk, an HEIF Exif item, a
 * CR3 CMT box, or a whole TIFF/BigTIFF/TIFF-based RAW file) in either byte
 * order: IFD0 and the IFDs chained after it (IFD1...), SubIFDs, the Exif IFD
 * and the GPS IFD.  Every count, offset and type is checked against the
 * buffer; IFD loops, absurd counts and zero denominators become warnings,
 * never reads outside the buffer.  Maker notes are not followed.
 *
 * Where several IFDs carry the same tag, the rule is exiftool's: a value
 * read later replaces one an earlier IFD, or an earlier EXIF block of the
 * same file (several calls on one x_meta), gave, except that Orientation,
 * and in a JPEG any tag of IFD1, never replaces one found before it.  That
 * holds for make, model, lens_model, datetime_original, iso,
 * exposure_time, f_number, focal_length and the GPS parts; tz_offset,
 * subsec, content_id and the descriptive text keep the first value met.
 * Only values EXIF itself set are replaced (x_meta.exif.own); another
 * source's are kept.  The image size has its own rule: like exiftool, the
 * last IFD marked as the full-resolution image (NewSubfileType 0) gives
 * it, else IFD0.  That is how a NEF or DNG reports its raw image rather
 * than the thumbnail in IFD0.
 *
 * Descriptive text goes to desc.h as DS_EXIF: ImageDescription, Artist,
 * Copyright (up to the first NUL) and Rating (0x4746) of the main image's
 * IFDs.
 */
#ifndef SL_EXIF_H
#define SL_EXIF_H

#include <stddef.h>
#include <stdint.h>

#include "indexer/formats/fmt.h"

enum {
	EXIF_DIMS = 1u << 0,        /* the TIFF is the file: take width/height from the
				       main image IFD, and the XMP, IPTC and Photoshop
				       packets of IFD0 (tags 0x02BC, 0x83BB, 0x8649) */
	EXIF_ROOT_IS_EXIF = 1u << 1, /* the first IFD is an Exif IFD (CR3 CMT2) */
	EXIF_ROOT_IS_GPS = 1u << 2,  /* the first IFD is a GPS IFD (CR3 CMT4) */
	EXIF_IFD1_LOW = 1u << 3,     /* a JPEG's: IFD1's values (the thumbnail's) never
					replace a value found before them */
	EXIF_FILL_ONLY = 1u << 4     /* no value of this block replaces one found before
					it (a Photoshop resource's copy of the EXIF) */
};

/* What a container needs to know beyond the fields of x_meta. */
struct exif_info {
	int bigtiff;
	uint16_t magic;          /* 42, 43 (BigTIFF), 0x4F52/0x5352 (ORF), 0x55 (RW2) */
	int dng;                 /* DNGVersion present */
	int cfa;                 /* an IFD holds raw sensor data (CFA or LinearRaw) */
	int sony_private;        /* Sony's DNGPrivateData (SR2 private) in IFD0 */
	uint32_t exif_w, exif_h; /* Exif PixelXDimension/PixelYDimension, 0 if absent */
	int have_borders;        /* Panasonic RW2 sensor borders (IFD0 tags 4-7) */
	uint32_t border[4];      /* top, left, bottom, right */
	uint32_t jpg_off;        /* Panasonic JpgFromRaw (IFD0 tag 0x2E), 0 if absent */
	uint32_t jpg_len;
	uint64_t thumb_off;      /* IFD1's JPEG thumbnail (0x0201/0x0202), from the TIFF */
	uint64_t thumb_len;      /* header; 0 if absent */
	uint64_t preview_off;    /* an embedded JPEG preview (RAW files; offer_preview), */
	uint64_t preview_len;    /* within the bytes given; 0 if none */
	char modified[20];       /* IFD0 DateTime (0x0132) as written, "" if absent */
	char taken[20];          /* DateTimeOriginal (0x9003) as written, "" if absent */
};

/* Fill the EXIF fields of *m from the n bytes at p, and *info (may be NULL).
 * Fields already set in *m are kept, but for the rule above.  Returns
 * SL_OK, or SL_E_CORRUPT when there is no valid TIFF header; damage further
 * in is a warning in m->warnings and the fields read so far are kept. */
int exif_parse(const uint8_t *p, size_t n, unsigned flags, struct x_meta *m,
	       struct exif_info *info);

#endif
