/* extract.h - from a file's bytes to its record: format, metadata, hash.
 *
 * The format is decided by magic bytes (formats/sniff.h), never by the file
 * name.  Each container has its own parser in indexer/formats/ (jpeg.c,
 * png.c, gif.c, webp.c, bmff.c, x3f.c, eip.c; TIFF and TIFF-based RAW
 * through exif.c), which sees only formats/fmt.h; all read through the
 * bounded cursor of cursor.h, so a hostile file can make a parser give up
 * but never read out of bounds.  Parsers run on the bytes the reader
 * already holds (the whole file, or the first chunk of a streamed one) and
 * do no I/O.
 */
#ifndef SL_EXTRACT_H
#define SL_EXTRACT_H

#include <stddef.h>
#include <stdint.h>

#include "common/err.h"
#include "indexer/formats/fmt.h"
#include "indexer/formats/sniff.h"

/* The version of what the extractors read.  A record keeps the version
 * that made it (files.meta_version); when a new version reads more from a
 * format, an unchanged file of that format whose record is older is read
 * again by the next scan, or the index would never get the new fields
 * (docs/schema.md).  Each bump adds its line to X_META_STALE_SQL:
 *   1: tz_offset and subsec from EXIF (every format that carries EXIF; the
 *      ISO media family too, whose meta box may hold an Exif item);
 *   2: movies: duration, size, date, place, camera, content_id (qt.h); the
 *      families 3g2 and m4v, ftyp-less QuickTime and AVI (avi.c), which
 *      had no format before;
 *   3: rating, label, keywords, title, description, creator, copyright
 *      (desc.h) from XMP, IPTC and EXIF text, in every format that can
 *      carry one of them; PSD, which had no parser before; XMP sidecars
 *      (format xmp), which had no format before;
 *   4: content_id from Apple's MakerNote (a Live Photo's still, JPEG or
 *      HEIC) and embedded_video (a motion photo's movie: Google's and
 *      Samsung's XMP) in the formats that carry them;
 *   5: EXIF as writers store it (exif.h): numbers of any type or written
 *      as text, GPS as text or fewer than three parts, a later EXIF block
 *      or IFD replacing an earlier one's values as exiftool does, no
 *      position without its hemisphere; every format whose EXIF is read
 *      (the list of version 1, and psd);
 *   6: Sigma X3F (x3f.h), ZIP and Capture One EIP (eip.h), which had no
 *      format before. */
#define X_META_VERSION 6
#define X_META_STALE_SQL                                                                 \
	"(error IS NULL AND (coalesce(meta_version, 0) < 1 AND format IN"                \
	" ('jpeg', 'mpo', 'exv', 'png', 'webp', 'tiff', 'bigtiff', 'cr2', 'nef', 'arw',"  \
	"  'dng', 'orf', 'rw2', 'pef', 'srw', 'raf', 'mrw', 'heic', 'heif', 'avif',"     \
	"  'cr3', 'jp2', 'mp4', 'mov', '3gp')"                                           \
	" OR coalesce(meta_version, 0) < 2 AND (format IN ('mp4', 'mov', '3gp', '3g2', 'm4v', 'avi')" \
	"  OR format IS NULL AND content_hash IS NOT NULL)"                               \
	" OR coalesce(meta_version, 0) < 3 AND format IN"                                 \
	" ('jpeg', 'mpo', 'exv', 'png', 'webp', 'gif', 'tiff', 'bigtiff', 'cr2', 'nef',"  \
	"  'arw', 'dng', 'orf', 'rw2', 'pef', 'srw', 'raf', 'mrw', 'heic', 'heif', 'avif'," \
	"  'cr3', 'jp2', 'mp4', 'mov', '3gp', '3g2', 'm4v', 'avi', 'psd', 'xmp')"         \
	"  OR coalesce(meta_version, 0) < 3 AND format IS NULL AND content_hash IS NOT NULL" \
	" OR coalesce(meta_version, 0) < 4 AND format IN ('jpeg', 'mpo', 'heic', 'heif', 'avif')" \
	" OR coalesce(meta_version, 0) < 5 AND format IN"                                 \
	" ('jpeg', 'mpo', 'exv', 'png', 'webp', 'tiff', 'bigtiff', 'cr2', 'nef', 'arw',"  \
	"  'dng', 'orf', 'rw2', 'pef', 'srw', 'raf', 'mrw', 'heic', 'heif', 'avif',"     \
	"  'cr3', 'jp2', 'mp4', 'mov', '3gp', 'psd')"                                      \
	" OR coalesce(meta_version, 0) < 6 AND format IS NULL AND content_hash IS NOT NULL))"

/* A streamed file's metadata that lies past its first chunk: a movie's moov
 * box, which cameras and phones write after the media data, at the end of a
 * file of gigabytes; an X3F's sections and directory (x3f.h); a ZIP's
 * members (eip.h).  Every byte passes through the reader anyway for the
 * content hash, so the box is caught on its way (qt.h): no second read, no
 * seek back.  After x_extract on the first chunk, x_stream_new says whether
 * the rest is wanted (*out NULL: no); feed it every chunk in order from the
 * first, until x_stream_feed returns 0; x_stream_end adds what was found to
 * *m and frees the state.  x_stream_free frees it unused (a read that
 * failed).  What it keeps is bounded (qt.h).  x_stream_new and x_stream_end
 * return SL_OK or SL_E_NOMEM (the record would lack fields for want of
 * memory: an error, so the next scan reads the file again). */
struct x_stream;
int x_stream_new(const struct x_meta *m, uint64_t file_size, struct x_stream **out);
int x_stream_feed(struct x_stream *s, const uint8_t *p, size_t n);
int x_stream_end(struct x_stream *s, struct x_meta *m);
void x_stream_free(struct x_stream *s);
/* For a reader that reads only what the catch wants (scan --quick): the
 * offset of the next byte wanted (bytes before it need not be read;
 * UINT64_MAX: nothing more), and a feed of n bytes at off, which may skip
 * up to that offset (x_stream_feed is x_stream_feed_at without gaps).  A
 * movie's catch skips its media data and sample tables (qt.h); X3F's and
 * ZIP's want every byte. */
uint64_t x_stream_next(const struct x_stream *s);
int x_stream_feed_at(struct x_stream *s, uint64_t off, const uint8_t *p, size_t n);

/* Fill *m from the first n bytes of a file of file_size bytes (n may be
 * smaller for streamed files).  Returns SL_OK, or SL_E_CORRUPT when the file
 * is not readable as the format its magic claims (err says why); whatever was
 * read safely before is kept in *m either way. */
int x_extract(const uint8_t *p, size_t n, uint64_t file_size, struct x_meta *m,
	      struct sl_err *err);

/* Content hash: XXH3-128, as 32 lowercase hex digits (the canonical form
 * `xxhsum -H2` prints). */
struct x_hash;
int x_hash_new(struct x_hash **h);
void x_hash_update(struct x_hash *h, const void *p, size_t n);
void x_hash_hex(struct x_hash *h, char out[33]);
void x_hash_free(struct x_hash *h);
void x_hash_once(const void *p, size_t n, char out[33]);

/* Whether the record x_extract made from a file's first bytes (m, from a
 * head of QUICK_HEAD bytes) is the one the whole file gives, given its
 * last tn bytes at tail (scan --quick reads no more of such a file): so
 * far JPEG (jpg_quick_ok); every other format is read whole.  With tail
 * NULL: whether the head alone passes, so that the tail is worth a read. */
#define X_QUICK_HEAD ((size_t)256 << 10)
int x_quick_ok(const struct x_meta *m, const uint8_t *tail, size_t tn);

/* The partial hash (files.quick_hash): XXH3-128, as x_hash_hex writes it,
 * of the file's size as 8 bytes little-endian, its first X_QUICK_SPAN bytes
 * (all of a smaller file), and its bytes from x_quick_tail(size) to the
 * end (the last X_QUICK_SPAN, none of them twice):
 *   (size as 8 bytes; head -c 65536 F; tail -c +$((x_quick_tail + 1)) F) | xxh128sum
 * It tells files of one size apart before either is read whole: a quick
 * scan reads only these ends and the metadata, and every read makes it.
 * Fed as a file is read, in order of offset (x_quick_feed takes any
 * range, keeps what lies in the two ends, and ignores bytes fed before);
 * x_quick_hex gives it once every byte of both ends came, else "".
 * x_quick_new returns NULL when out of memory. */
#define X_QUICK_SPAN ((uint64_t)64 << 10)
uint64_t x_quick_tail(uint64_t size);
struct x_quick;
struct x_quick *x_quick_new(uint64_t size);
void x_quick_feed(struct x_quick *q, uint64_t off, const void *p, size_t n);
void x_quick_hex(struct x_quick *q, char out[33]);
void x_quick_free(struct x_quick *q);
/* The partial hash of a file held whole; "" when out of memory. */
void x_quick_once(const void *p, uint64_t size, char out[33]);

/* Whether files of this format get a perceptual hash (X_PHASH_FORMATS_SQL
 * is the same list for SQL): JPEGs, and RAW files through their embedded
 * JPEG preview, HEIF pictures (heif.h), PNG and WebP (raster.h). */
int x_phashable(const char *format);
#define X_PHASH_FORMATS_SQL                                                              \
	"('jpeg', 'mpo', 'cr2', 'nef', 'arw', 'dng', 'orf', 'rw2', 'pef', 'srw', 'raf', 'cr3',"    \
	" 'heic', 'heif', 'avif', 'png', 'webp', 'x3f')"

/* The perceptual hash of a file whose first n bytes are at p (all of it
 * when whole) and whose metadata is m: from a RAW's embedded preview, a
 * JPEG by jpg_phash or a HEIF picture by heif_phash (only when whole).  *src says from what ("preview",
 * or jpg_phash's).  Returns SL_OK; SL_E_UNSUPPORTED when there is no
 * picture to hash (none in the bytes given); else as jpg_phash. */
int x_phash(const uint8_t *p, size_t n, int whole, const struct x_meta *m, uint64_t *out,
	    const char **src, struct sl_err *err);

#endif
