/* jpeg_dc.h - a JPEG's picture at 1/8, from its DC terms alone.
 *
 * The perceptual hash of a JPEG is made from the picture at 1/8 scale,
 * where each 8x8 block is one pixel, its DC term.  In a progressive JPEG
 * the DC terms come first, in a scan of their own, often a tenth of the
 * file.  libjpeg can stop there (buffered-image mode), but it first sets
 * up coefficient buffers for the whole frame, 128 bytes a block, and
 * zeroes them: 44 MB of page faults and memset for a 15-megapixel export,
 * ten times the time the scan itself takes.  This decoder reads the DC
 * terms of the luma (or the only) component and nothing else, into a plane
 * of one byte a block, computed exactly as libjpeg's 1/8 output is
 * (dequantised, descaled by 8, its range limit), so the hash is the same.
 *
 * A sequential (baseline) file holds each block's AC terms right after its
 * DC: they are passed over, often two at one table look-up, never stored
 * (libjpeg-turbo decodes and stores each); the decode stops at the rows
 * asked for.
 *
 * It takes only what it understands: a frame of one component (grey) or
 * three libjpeg reads as YCbCr (not named 'R', 'G', 'B', no Adobe segment
 * saying RGB), whose luma has the largest sampling factors; Huffman coding, baseline, extended sequential or
 * progressive; every code within 16 bits, every
 * restart marker where the interval says, no marker before the scan's
 * end.  Anything else (arithmetic coding, a cut-off or damaged scan) is
 * SL_E_UNSUPPORTED, and the caller asks libjpeg, whose way with damage
 * decides then, as before.
 */
#ifndef SL_JPEG_DC_H
#define SL_JPEG_DC_H

#include <stddef.h>
#include <stdint.h>

#include "common/err.h"

/* The grey picture at 1/8 of the JPEG in the n bytes at p: a new plane of
 * *w x *h bytes (malloc; the caller frees it), *w and *h the frame's size
 * divided by 8, rounded up; with max_rows (0: all), only the first rows
 * are sure to be decoded (the rest may be left 0).  Returns SL_OK;
 * SL_E_UNSUPPORTED (not a case this decoder takes: above); SL_E_NOMEM. */
int jdc_grey(const uint8_t *p, size_t n, uint32_t max_rows, uint8_t **out, uint32_t *w,
	     uint32_t *h, struct sl_err *err);

#endif
