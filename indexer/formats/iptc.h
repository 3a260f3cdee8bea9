/* iptc.h - IPTC IIM, and Photoshop's image resources that carry it.
 *
 * IIM is a list of datasets (0x1C, record, dataset, a 16-bit length or an
 * extended one), read through the bounded cursor.  What is read, to desc.h
 * as DS_IPTC: 2:05 ObjectName (title), 2:25 Keywords, 2:80 By-line
 * (creator), 2:116 CopyrightNotice, 2:120 Caption-Abstract (description).
 *
 * Text is UTF-8 when record 1:90 (CodedCharacterSet) says so (ESC % G).
 * Without it IIM says nothing of the encoding: a value that is valid UTF-8
 * is taken as UTF-8 (what current software writes, with or without 1:90),
 * anything else as Windows-1252 (the Latin text of older software; that is
 * exiftool's default for every value, docs/extraction.md).
 *
 * Photoshop image resources ("8BIM" blocks: JPEG APP13 after
 * "Photoshop 3.0", TIFF tag 34377, a PSD's resource section): resource
 * 0x0404 is IIM, 0x0424 an XMP packet (xmp.h), 0x0422 (in PSD files) an
 * EXIF TIFF block (exif.h). */
#ifndef SL_IPTC_H
#define SL_IPTC_H

#include <stddef.h>
#include <stdint.h>

#include "indexer/formats/fmt.h"

/* The APP13 header before a JPEG's image resources (14 bytes with NUL). */
#define IPTC_JPEG_SIG "Photoshop 3.0"

/* Read IIM datasets from the n bytes at p into m.  Damage is a warning;
 * the datasets before it are kept. */
void iptc_parse(const uint8_t *p, size_t n, struct x_meta *m);

/* Walk Photoshop image resources in the n bytes at p: IIM and XMP.
 * Defined in exif.c, whose TIFF walk and this one call each other. */
void iptc_psir(const uint8_t *p, size_t n, struct x_meta *m);

#endif
