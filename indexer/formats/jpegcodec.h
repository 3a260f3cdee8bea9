/* jpegcodec.h - libjpeg as a decoder to RGB and an encoder from RGB, for
 * pictures made for people (thumb.h); the parser's own use of libjpeg is
 * parsers.h's.  Both live in jpeg.c, the one file that lets libjpeg run
 * (its error_exit longjmps there, memory capped, warnings not printed).
 *
 * The input of jpeg_decode_rgb is untrusted: a decode that fails is an
 * error code, never an exit. */
#ifndef SL_JPEGCODEC_H
#define SL_JPEGCODEC_H

#include <stddef.h>
#include <stdint.h>

#include "common/err.h"
#include "common/strbuf.h"

/* Decode the JPEG in the n bytes at p to RGB (3 bytes a pixel, rows top
 * down) at the smallest of libjpeg's scales (1/1 to 1/8) whose longer side
 * still covers box pixels.  *rgb is malloc'ed, *w x *h its size.  Pictures
 * over max_pixels (before scaling) are refused.  Warnings (a file cut short
 * is padded with grey) still give a picture: what a viewer would show.
 * SL_OK; SL_E_CORRUPT, SL_E_UNSUPPORTED (CMYK, too big), SL_E_NOMEM. */
int jpeg_decode_rgb(const uint8_t *p, size_t n, unsigned box, uint64_t max_pixels,
		    unsigned char **rgb, unsigned *w, unsigned *h, struct sl_err *err);

/* Append to out a baseline JPEG of quality 1-100 of the w x h RGB image.
 * SL_OK or SL_E_NOMEM; out keeps what it had on failure. */
int jpeg_encode_rgb(const unsigned char *rgb, unsigned w, unsigned h, int quality,
		    struct strbuf *out, struct sl_err *err);

#endif
