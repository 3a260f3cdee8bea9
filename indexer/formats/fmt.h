/* fmt.h - the formats' whole view of the world: the record a parser fills
 * (struct x_meta) and the calls every parser may make on it.
 *
 * Everything in indexer/formats/ is below this header and nothing else of
 * the program: a parser reads bytes through the bounded cursor
 * (cursor.h), fills the record, and says what it could not read with
 * x_warn.  It never includes extract.h, never calls the dispatcher that
 * calls it (extract.c), nor the pipeline above that: the dispatcher may
 * change how it finds, orders or hashes files without a parser knowing.
 * Names keep their x_ prefix, the record's since before the formats had a
 * folder of their own (the index, the tests and the tools use them). */
#ifndef SL_FMT_H
#define SL_FMT_H

#include <stddef.h>
#include <stdint.h>

#include "common/err.h"

struct desc;
struct x_meta;

/* How a parser reads a file that its file holds (a Capture One package's
 * image, eip.h): fill *m from the n bytes at p of a file of file_size, as
 * the dispatcher reads any file (extract.h's x_extract, the same
 * contract).  The dispatcher puts itself in each record it begins
 * (x_meta.read_nested): a parser reaches it through the record, without
 * knowing it, so that nothing below the dispatcher calls it back. */
typedef int (*x_read_fn)(const uint8_t *p, size_t n, uint64_t file_size, struct x_meta *m,
			 struct sl_err *err);

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
		int head_done;                /* all the parser reads of the file lay in
						 the bytes it was given, but its end
						 (jpg_quick_ok judges that) */
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
	x_read_fn read_nested; /* see x_read_fn; NULL: files inside are not read.
				  Not stored */
};

/* Free what *m owns (m->desc) and leave it empty.  x_extract overwrites
 * *m: a result that is done with is released first.  Moving a result
 * (struct copy) moves the ownership: clear the source's desc. */
/* (desc.c, whose values are all a record owns.) */
void x_meta_release(struct x_meta *m);

/* Append a warning to m->warnings (silently truncated when full). */
void x_warn(struct x_meta *m, const char *fmt, ...) SL_PRINTF(2, 3);

/* Copy an untrusted string of at most n bytes: stops at NUL, trims trailing
 * blanks, keeps valid UTF-8, writes '?' for bytes that are not (EXIF does
 * not say which encoding it used) and drops control characters.  Always
 * NUL-terminates dst, never cutting a character in half. */
void x_copy_text(char *dst, size_t cap, const uint8_t *s, size_t n);

/* Set datetime_original from Unix seconds (UTC) unless already set. */
void x_unix_datetime(struct x_meta *m, int64_t t);

#endif
