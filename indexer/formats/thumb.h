/* thumb.h - a small JPEG picture of a JPEG, for people to look at (the
 * report's near-duplicate groups).
 *
 * The input is untrusted (a file from a scanned tree, or the thumbnail
 * inside one): libjpeg decodes it with its memory capped and its errors
 * caught in jpeg.c (jpegcodec.h; a decode that fails is an error code,
 * never an exit),
 * at the smallest of libjpeg's scales that still covers the box; the
 * result is averaged down to fit the box, turned as its EXIF orientation
 * says, and encoded again.  The bytes handed back are this module's own
 * encoding, never the input's, so nothing of the file but its pixels
 * reaches the page.
 */
#ifndef SL_THUMB_H
#define SL_THUMB_H

#include <stddef.h>
#include <stdint.h>

#include "common/err.h"
#include "common/strbuf.h"

/* Pictures over this many pixels are not decoded (cost is per pixel). */
#define THUMB_MAX_PIXELS (120u * 1000u * 1000u)

/* Append to out a baseline JPEG at most box pixels on its longer side of
 * the JPEG in the n bytes at p, turned by orientation (EXIF 1-8; 0 or 1:
 * as stored).  Returns SL_OK; SL_E_CORRUPT (not a JPEG libjpeg can
 * decode), SL_E_UNSUPPORTED (CMYK, too big), SL_E_NOMEM.  out keeps what it
 * had on failure. */
int thumb_jpeg(const uint8_t *p, size_t n, int orientation, unsigned box, struct strbuf *out,
	       struct sl_err *err);

#endif
