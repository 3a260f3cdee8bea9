/* phash.h - perceptual hashes: the same picture, whatever its size,
 * encoding and orientation, gets hashes a few bits apart.
 *
 * A picture is reduced to a 32x32 grey grid of cell means (every source
 * pixel weighted by the share of its area in each cell, so a 160x120 EXIF
 * thumbnail, a 1/8-scale decode of the full image and a 40x30 icon give the
 * same grid, up to noise).  The hash is the signs of the 63 lowest 2-D DCT
 * frequencies of that grid (u, v < 8, the DC term left out: brightness and
 * contrast do not change a sign), bit u + 8v; bit 0 is always 0.
 *
 * Signs, not the usual "above the median", because then the eight
 * orientations of a picture are exact bit operations on its hash: a
 * horizontal flip negates the terms with odd u, a vertical one those with
 * odd v, a transposition swaps u and v.  So a copy that lost its EXIF
 * orientation (stored pixels the same, shown otherwise) or one rotated on
 * disk is found by comparing against the eight variants (ph_distance).
 *
 * Hashes are of the picture as displayed (its EXIF orientation applied).
 * Everything here is arithmetic on memory: no I/O, no libraries.
 */
#ifndef SL_PHASH_H
#define SL_PHASH_H

#include <stddef.h>
#include <stdint.h>

#define PH_N 32
#define PH_MARGIN 50 /* per mille of each side left out */

/* A source image of w x h grey samples being reduced to the grid. */
struct ph_grid {
	uint32_t w, h;
	uint32_t x0, x1, y0, y1; /* the window of the source the grid covers */
	uint64_t sum[PH_N * PH_N]; /* samples times overlaps, exact */
	uint64_t rowwt[PH_N];      /* each grid row's share of the source rows */
	uint32_t xa[PH_N], xb[PH_N]; /* each grid column's first and last window pixel */
	uint32_t wa[PH_N], wb[PH_N]; /* and how much of them it covers */
};

/* Start reducing a w x h image (both > 0). */
void ph_grid_init(struct ph_grid *g, uint32_t w, uint32_t h);

/* Add source row y (0 <= y < h) of w samples, in any order. */
void ph_grid_row(struct ph_grid *g, uint32_t y, const uint8_t *row);

/* The hash of the reduced image as displayed with EXIF orientation o
 * (1-8; anything else counts as 1). */
uint64_t ph_hash(const struct ph_grid *g, int orientation);

/* The hash of a whole w x h grey picture held in memory (rows stride
 * bytes apart), as displayed with orientation: 0, or -1 when the grid's
 * memory cannot be had. */
int ph_hash_plane(const uint8_t *plane, uint32_t w, uint32_t h, size_t stride, int orientation,
		  uint64_t *out);

/* The hash the same picture gets in orientation k of the eight (k = 0: as
 * is; 1: mirrored left-right; 2: upside down; 3: mirrored top-bottom;
 * 4: transposed; 5: turned 90 degrees clockwise; 6: transverse;
 * 7: turned 90 degrees counter-clockwise). */
uint64_t ph_variant(uint64_t h, int k);

/* Hamming distance of a to the nearest of b's eight variants. */
int ph_distance(uint64_t a, uint64_t b);

/* The bits set in x: the distance of two hashes as stored is
 * ph_bits(a ^ b).  Inline: the near-duplicate search calls it per pair. */
static inline int ph_bits(uint64_t x)
{
#if defined(__GNUC__)
	return __builtin_popcountll(x);
#else
	int n = 0;
	for (; x; x &= x - 1)
		n++;
	return n;
#endif
}

/* Bars of near-black rows and columns round an image (a thumbnail
 * letterboxed to 4:3): how many at each side, so that the rest is the
 * picture.  img is w x h grey, row after row.  Returns 0 when it found none
 * (every count 0). */
int ph_bars(const uint8_t *img, uint32_t w, uint32_t h, uint32_t *top, uint32_t *bottom,
	    uint32_t *left, uint32_t *right);

#endif
