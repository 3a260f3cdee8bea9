/* exif.h - our own EXIF/TIFF reader.
 *
 * Reads a TIFF structure (the payload of a JPEG APP1 "Exif" segment after its
 * 6-byte header, a PNG eXIf or WebP EXIF chunk, or a whole TIFF/TIFF-based
 * RAW file) in either byte order: IFD0, the Exif IFD and the GPS IFD.  Every
 * count, offset and type is checked against the buffer; IFD loops, absurd
 * counts and zero denominators are detected and turn into warnings, never
 * into reads outside the buffer.  Maker notes are not followed.
 */
#ifndef SL_EXIF_H
#define SL_EXIF_H

#include <stddef.h>
#include <stdint.h>

#include "indexer/extract.h"

enum {
	EXIF_DIMS = 1u << 0 /* take width/height from IFD0 (TIFF files) */
};

/* Fill the EXIF fields of *m from the n bytes at p.  Returns SL_OK, or
 * SL_E_CORRUPT when there is no valid TIFF header; damage further in is a
 * warning in m->warnings and the fields read so far are kept. */
int exif_parse(const uint8_t *p, size_t n, unsigned flags, struct x_meta *m);

#endif
