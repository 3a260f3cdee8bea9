/* x3f.h - Sigma and Foveon RAW (X3F): its header, held or streamed
 * sections, and the directory at the file's end.
 *
 * An X3F file is a header ("FOVb", a version, the image's size), then
 * sections, then a directory ("SECd": offset, length and a four-letter
 * type per section) whose offset is the file's last four bytes.  What is
 * read, as exiftool reads it (SigmaRaw.pm):
 *  - the header: width and height (at 28 and 32 before version 4, at 40
 *    and 44 from version 4 on);
 *  - PROP sections ("SECp": name/value pairs of UCS-2 text): CAMMANUF
 *    (make), CAMMODEL (model), TIME (Unix seconds: UTC, as exiftool
 *    converts it), APERTURE, SHUTTER, ISO, FLENGTH.  Like exiftool's
 *    priority 0, a property never replaces a value already found: the
 *    EXIF of the embedded JPEG wins over it, and of a property given
 *    twice the first counts;
 *  - IMA2 sections holding a JPEG ("SECi", version 2.0, type 2, format
 *    18) that begins with an Exif APP1 (exiftool's JpgFromRaw, written by
 *    every camera since the SD14): its EXIF, XMP and IPTC, through
 *    jpg_parse, the later JPEG's values over the earlier's.  The first is
 *    the picture for the perceptual hash.
 * The size stays the header's: exiftool's Composite:ImageSize takes the
 * JpgFromRaw's instead (docs/extraction.md).  The header's Rotation is not
 * an EXIF orientation and is not read.  A section the directory names
 * past the file's end stops the reading of the directory there, as in
 * exiftool.
 *
 * The directory lies at the end of a file of tens of megabytes.  A file
 * held whole is read directly.  A streamed one gets its sections caught
 * on their way, as a movie's moov is (qt.h): sections announce themselves
 * ("SECd", "SECp", "SECi" and their headers), so the catch copies every
 * one of the three kinds it reads wherever it begins, and at the end the
 * directory says which of them count.  What it keeps is bounded: a PROP
 * or directory section up to X3F_KEEP_MAX, a JPEG's first X3F_JPEG_HEAD
 * bytes (its EXIF is in its first segments), X3F_CATCH_MAX in all, and
 * CAND_MAX sections at once.  A file held whole goes through the same
 * catch as one chunk, so both ways give the same record.  A section the
 * directory names that was over those bounds is said in a warning; one
 * that only looked like a section (its mark in the image data) is not. */
#ifndef SL_X3F_H
#define SL_X3F_H

#include <stddef.h>
#include <stdint.h>

#include "common/err.h"
#include "indexer/formats/fmt.h"

#define X3F_KEEP_MAX ((size_t)1 << 20)
#define X3F_JPEG_HEAD ((size_t)512 << 10)
#define X3F_CATCH_MAX ((size_t)8 << 20)

/* The header, and the sections when the n bytes at p are the whole file
 * (m->pics.whole); else only the header (the rest comes from the catch).
 * SL_E_CORRUPT when the header is cut short. */
int x3f_parse(const uint8_t *p, size_t n, struct x_meta *m, struct sl_err *err);

/* The streamed catch, fed every chunk in order from the file's first byte
 * (x3f_catch_feed returns 1: it wants every byte, up to the last four);
 * x3f_catch_end reads the sections caught into *m, warns of what it could
 * not keep, frees, and returns SL_OK or SL_E_NOMEM.  x3f_catch_new returns
 * NULL when out of memory; x3f_catch_free(NULL) is a no-op. */
struct x3f_catch;
struct x3f_catch *x3f_catch_new(uint64_t file_size);
int x3f_catch_feed(struct x3f_catch *c, const uint8_t *p, size_t n);
int x3f_catch_end(struct x3f_catch *c, struct x_meta *m);
void x3f_catch_free(struct x3f_catch *c);

#endif
