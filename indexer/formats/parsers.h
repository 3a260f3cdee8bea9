/* parsers.h - inside extraction (extract.h): the format parsers
 * x_extract dispatches to from its table of formats.  Only the dispatcher,
 * the formats themselves, the unit tests, the fuzz targets and the
 * development tools include it; the rest of the program sees extract.h.
 * What every parser may call is fmt.h, which this includes. */
#ifndef SL_PARSERS_H
#define SL_PARSERS_H

#include <stddef.h>
#include <stdint.h>

#include "common/err.h"
#include "indexer/formats/fmt.h"

/* Container parsers, called by x_extract after sniffing: each fills what it
 * finds in *m (m->format holds the sniffed family and may be refined) and
 * returns SL_OK, or SL_E_CORRUPT when the file is not readable as that
 * format.  jpeg.c, png.c, gif.c, webp.c, bmff.c (with JPEG 2000; movies
 * through qt.h), avi.c, raw.c, bmp.c, psd.c, xmp.c. */
int jpg_parse(const uint8_t *p, size_t n, struct x_meta *m, struct sl_err *err);
int png_parse(const uint8_t *p, size_t n, struct x_meta *m, struct sl_err *err);
int gif_parse(const uint8_t *p, size_t n, struct x_meta *m, struct sl_err *err);
int webp_parse(const uint8_t *p, size_t n, struct x_meta *m, struct sl_err *err);
int bmff_parse(const uint8_t *p, size_t n, struct x_meta *m, struct sl_err *err);
int jp2_parse(const uint8_t *p, size_t n, struct x_meta *m, struct sl_err *err);
int tiff_parse(const uint8_t *p, size_t n, struct x_meta *m, struct sl_err *err);
int raf_parse(const uint8_t *p, size_t n, struct x_meta *m, struct sl_err *err);
int crw_parse(const uint8_t *p, size_t n, struct x_meta *m, struct sl_err *err);
int mrw_parse(const uint8_t *p, size_t n, struct x_meta *m, struct sl_err *err);
int avi_parse(const uint8_t *p, size_t n, struct x_meta *m, struct sl_err *err);
int bmp_parse(const uint8_t *p, size_t n, struct x_meta *m, struct sl_err *err);
int psd_parse(const uint8_t *p, size_t n, struct x_meta *m, struct sl_err *err);
/* An XMP file (xmp.c): never SL_E_CORRUPT, m->desc_oom when out of memory. */
int xmp_file_parse(const uint8_t *p, size_t n, struct x_meta *m, struct sl_err *err);
/* Whether a JPEG held whole reaches its end-of-image marker: its first
 * image's markers are stepped through up to its first scan; a file that
 * ends with FF D9 there is whole (the entropy-coded data cannot hold it),
 * else the scans are stepped through (a memchr for each 0xFF, a fifth of a
 * warm scan's time) to an end marker before trailing data; a warning when
 * they run out first.  A copy
 * cut short shows a camera's thumbnail whole, so the hash may not notice. */
void jpg_check_end(const uint8_t *p, size_t n, struct x_meta *m);
/* Whether a JPEG whose head jpg_parse read (m) and whose last tn bytes are
 * at tail gives, read whole, exactly the record its head gives (scan
 * --quick): its parse ended at the first scan (pics.head_done) and the
 * file ends with the end-of-image marker (no AFCP trailer, no motion
 * photo's movie, nothing jpg_check_end would warn about). */
int jpg_quick_ok(const struct x_meta *m, const uint8_t *tail, size_t tn);
/* jpg_phash from the head of a file (n bytes, jpg_parse's m with
 * pics.head_done): its EXIF thumbnail's hash when jpg_phash would take it
 * from the whole file, judged on the same rows, which must lie in the
 * head; else SL_E_UNSUPPORTED (a read of the whole file decides). */
int jpg_phash_head(const uint8_t *p, size_t n, const struct x_meta *m, int orientation,
		   uint64_t *out, const char **src, struct sl_err *err);
/* 64-bit perceptual hash (phash.h) of a JPEG as it is displayed (after
 * its EXIF orientation, 1-8; 0 = as stored): from its EXIF thumbnail when m
 * (what jpg_parse found; may be NULL) has one that shows the same picture,
 * else from a decode at 1/8 (of only the first scan of a progressive
 * image).  *src names where it came from ("exif-thumbnail", "image-dc",
 * "image"), for the record.  Near copies (re-encoded, resized, rotated,
 * without their orientation tag) are a few bits apart (ph_distance).
 * Returns SL_OK, SL_E_CORRUPT (undecodable), SL_E_UNSUPPORTED (CMYK) or
 * SL_E_NOMEM. */
int jpg_phash(const uint8_t *p, size_t n, const struct x_meta *m, int orientation, uint64_t *out,
	      const char **src, struct sl_err *err);

/* A HEIF item that is made from others (a grid of tiles, an overlay) has
 * a canvas of its own size, which libheif allocates and fills before it
 * decodes a tile: 16383x16383 is 800 MB and 5 s for a 695-byte file (the
 * fuzz target heif found it), while the item's ispe may say 64x64.  For
 * item id of the file in the n bytes at p: 0 and the canvas's declared
 * size when it is such an item, 1 when it is not (or is not found), -1
 * when it is one whose size cannot be read, -2 when out of memory. */
int bmff_canvas(const uint8_t *p, size_t n, uint32_t id, uint32_t *w, uint32_t *h);

/* The ISO BMFF family ("heic", "avif", "cr3", "mp4"...) of a file starting
 * with an ftyp box, named from its major brand as exiftool does; or NULL. */
const char *bmff_brand(const uint8_t *p, size_t n);

#endif
