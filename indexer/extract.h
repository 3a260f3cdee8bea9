/* extract.h - from a file's bytes to its record: format, metadata, hash.
 *
 * The format is decided by magic bytes, never by the file name.  Each
 * container has its own parser (jpeg.c, png.c, gif.c, webp.c, bmff.c, x3f.c,
 * eip.c; TIFF and TIFF-based RAW through exif.c); all read through the bounded cursor of
 * cursor.h, so a hostile file can make a parser give up but never read out of
 * bounds.  Parsers run on the bytes the reader already holds (the whole file,
 * or the first chunk of a streamed one) and do no I/O.
 */
#ifndef SL_EXTRACT_H
#define SL_EXTRACT_H

#include <stddef.h>
#include <stdint.h>

#include "common/err.h"

struct desc;

/* x_meta.have */
enum {
	XM_DIMS = 1u << 0,
	XM_ORIENTATION = 1u << 1,
	XM_GPS = 1u << 2,
	XM_EXPOSURE = 1u << 3,
	XM_FNUMBER = 1u << 4,
	XM_ISO = 1u << 5,
	XM_FOCAL = 1u << 6,
	XM_DURATION = 1u << 7,
	XM_EMBEDDED = 1u << 8
};

struct x_meta {
	char format[16];      /* "jpeg", "png", ...; "" when unknown */
	unsigned have;        /* XM_* bits for the numeric fields */
	uint32_t width;
	uint32_t height;
	int orientation;      /* raw EXIF value */
	double gps_lat;       /* signed decimal degrees */
	double gps_lon;
	double exposure_time; /* seconds */
	double f_number;
	double focal_length;  /* mm */
	int64_t iso;
	char make[64];        /* UTF-8, NUL padding and trailing blanks trimmed */
	char model[64];
	char lens_model[96];
	char datetime_original[24]; /* "YYYY-MM-DDTHH:MM:SS" as recorded */
	char tz_offset[8];    /* "+HH:MM" of datetime_original's clock, "" unknown */
	char subsec[16];      /* digits of its fraction of a second (SubSecTimeOriginal) */
	double duration;      /* seconds, of a movie (XM_DURATION) */
	char content_id[64];  /* Apple's ContentIdentifier: a Live Photo's still and movie share it */
	uint64_t embedded_video; /* bytes of a motion photo's appended movie (XM_EMBEDDED) */
	char warnings[256];   /* "; "-separated */
	/* where the parser saw pictures to hash (x_phash), not stored */
	struct {
		uint64_t thumb_off, thumb_len; /* an embedded JPEG thumbnail (EXIF IFD1); 0: none */
		uint64_t preview_off, preview_len; /* a RAW file's JPEG preview; 0: none */
		uint32_t exif_w, exif_h;      /* Exif PixelX/YDimension, 0 if absent */
		int original;                 /* ModifyDate is DateTimeOriginal: as the
						 camera wrote it, not edited since */
		int whole;                    /* the parser holds the whole file */
		uint64_t file_size;           /* of which it may hold only the head */
		int moov_read;                /* a movie's moov box was read whole */
	} pics;
	int tz_weak;          /* tz_offset is OffsetTime's, which OffsetTimeOriginal overrides */
	/* exif.c's bookkeeping across the EXIF blocks of one file: which fields
	 * EXIF set (a later EXIF value may replace them), and the GPS parts */
	struct {
		unsigned own;
		double lat[3], lon[3];
		int have_lat, have_lon;
		char lat_ref, lon_ref;
	} exif;
	struct desc *desc;    /* rating, keywords, captions... (desc.h); NULL: none */
	int desc_oom;         /* a descriptive value was lost for want of memory */
};

/* Free what *m owns (m->desc) and leave it empty.  x_extract overwrites
 * *m: a result that is done with is released first.  Moving a result
 * (struct copy) moves the ownership: clear the source's desc. */
void x_meta_release(struct x_meta *m);

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

/* Sniff the format of the first n bytes; returns a static name or "". */
const char *x_sniff(const uint8_t *p, size_t n);

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
