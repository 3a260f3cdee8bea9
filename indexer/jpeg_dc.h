/* jpeg_dc.h - a progressive JPEG's picture at 1/8, from its first DC scan.
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
 * It takes only what it understands: a frame libjpeg has read the header
 * of (the caller's part), in YCbCr or grey, whose luma has the largest
 * sampling factors; Huffman coding; every code within 16 bits, every
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

/* The grey picture at 1/8 of the progressive JPEG in the n bytes at p: a
 * new plane of *w x *h bytes (malloc; the caller frees it), *w and *h the
 * frame's size divided by 8, rounded up.  Returns SL_OK; SL_E_UNSUPPORTED
 * (not a case this decoder takes: above); SL_E_NOMEM. */
int jdc_grey(const uint8_t *p, size_t n, uint8_t **out, uint32_t *w, uint32_t *h,
	     struct sl_err *err);

#endif
