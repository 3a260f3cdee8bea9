/* phash.c - perceptual hashes (phash.h). */
#include "indexer/formats/phash.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

void ph_grid_init(struct ph_grid *g, uint32_t w, uint32_t h)
{
	uint64_t W;
	int c;

	memset(g, 0, sizeof(*g));
	g->w = w ? w : 1;
	g->h = h ? h : 1;
	/* the outer PH_MARGIN of each side is left out: a copy cropped by a
	 * few percent then covers nearly the same picture */
	g->x0 = (uint32_t)((uint64_t)g->w * PH_MARGIN / 1000);
	g->y0 = (uint32_t)((uint64_t)g->h * PH_MARGIN / 1000);
	g->x1 = g->w - g->x0;
	g->y1 = g->h - g->y0;
	/* In units of 1/PH_N pixel, window pixel x spans [x*PH_N, (x+1)*PH_N)
	 * and grid column c spans [c*W, (c+1)*W), W the window's width: each
	 * column's first and last pixel, and how much of each it covers; the
	 * pixels between count whole (PH_N).  Computed once, so that a row
	 * costs one pass of additions. */
	W = g->x1 - g->x0;
	for (c = 0; c < PH_N; c++) {
		uint64_t lo = (uint64_t)c * W, hi = (uint64_t)(c + 1) * W;
		uint64_t a = lo / PH_N, b = (hi - 1) / PH_N;
		g->xa[c] = (uint32_t)a;
		g->xb[c] = (uint32_t)b;
		if (a == b) {
			g->wa[c] = (uint32_t)(hi - lo);
			g->wb[c] = 0;
		} else {
			g->wa[c] = (uint32_t)((a + 1) * PH_N - lo);
			g->wb[c] = (uint32_t)(hi - b * PH_N);
		}
	}
}

void ph_grid_row(struct ph_grid *g, uint32_t y, const uint8_t *row)
{
	uint64_t colsum[PH_N];
	uint64_t H = g->y1 - g->y0, yy, r;
	const uint8_t *p = row + g->x0;
	int c;

	if (y < g->y0 || y >= g->y1 || !H || g->x1 <= g->x0)
		return;
	/* sums of samples times overlaps, in integers: at most 255 * PH_N per
	 * pixel, 65535 pixels a row, PH_N a row's share of a cell, 65535 rows:
	 * below 2^64 */
	for (c = 0; c < PH_N; c++) {
		uint32_t a = g->xa[c], b = g->xb[c], x;
		uint64_t inner = 0;
		colsum[c] = (uint64_t)p[a] * g->wa[c];
		if (b > a) {
			for (x = a + 1; x < b; x++)
				inner += p[x];
			colsum[c] += inner * PH_N + (uint64_t)p[b] * g->wb[c];
		}
	}
	yy = y - g->y0;
	for (r = yy * PH_N / H; r < PH_N && r * H < (yy + 1) * PH_N; r++) {
		uint64_t lo = yy * PH_N > r * H ? yy * PH_N : r * H;
		uint64_t hi = (yy + 1) * PH_N < (r + 1) * H ? (yy + 1) * PH_N : (r + 1) * H;
		if (hi <= lo)
			continue;
		for (c = 0; c < PH_N; c++)
			g->sum[r * PH_N + c] += colsum[c] * (hi - lo);
		g->rowwt[r] += hi - lo;
	}
}

/* The displayed grid from the stored one, for each EXIF orientation. */
static float oriented(const float *s, int o, int x, int y)
{
	const int n = PH_N - 1;
	switch (o) {
	case 2: return s[y * PH_N + (n - x)];
	case 3: return s[(n - y) * PH_N + (n - x)];
	case 4: return s[(n - y) * PH_N + x];
	case 5: return s[x * PH_N + y];
	case 6: return s[(n - x) * PH_N + y];
	case 7: return s[(n - x) * PH_N + (n - y)];
	case 8: return s[x * PH_N + (n - y)];
	default: return s[y * PH_N + x];
	}
}

/* the DCT-II basis for the 8 lowest frequencies, computed once */
static float cosines[8][PH_N];
static pthread_once_t cos_once = PTHREAD_ONCE_INIT;

static void fill_cosines(void)
{
	int u, x;
	for (u = 0; u < 8; u++)
		for (x = 0; x < PH_N; x++)
			cosines[u][x] = (float)cos((2 * x + 1) * u * 3.14159265358979 / (2 * PH_N));
}

uint64_t ph_hash(const struct ph_grid *g, int orientation)
{
	float stored[PH_N * PH_N], shown[PH_N * PH_N], rows[PH_N][8];
	uint64_t h = 0;
	int u, v, x, y;

	/* every grid column gathers W units of width from each source row
	 * (its share, exactly: the walk covers [0, PH_N * W)) */
	for (y = 0; y < PH_N; y++)
		for (x = 0; x < PH_N; x++) {
			double wt = (double)g->rowwt[y] * (double)(g->x1 - g->x0);
			stored[y * PH_N + x] = wt > 0 ? (float)((double)g->sum[y * PH_N + x] / wt) : 0.0f;
		}
	for (y = 0; y < PH_N; y++)
		for (x = 0; x < PH_N; x++)
			shown[y * PH_N + x] = oriented(stored, orientation, x, y);
	pthread_once(&cos_once, fill_cosines);
	for (y = 0; y < PH_N; y++)
		for (u = 0; u < 8; u++) {
			float s = 0;
			for (x = 0; x < PH_N; x++)
				s += shown[y * PH_N + x] * cosines[u][x];
			rows[y][u] = s;
		}
	for (v = 0; v < 8; v++)
		for (u = 0; u < 8; u++) {
			float s = 0;
			if (u == 0 && v == 0)
				continue;
			for (y = 0; y < PH_N; y++)
				s += rows[y][u] * cosines[v][y];
			if (s > 0)
				h |= (uint64_t)1 << (u + 8 * v);
		}
	return h;
}

/* bits whose horizontal (u) or vertical (v) frequency is odd */
#define ODD_U 0xAAAAAAAAAAAAAAAAull
#define ODD_V 0xFF00FF00FF00FF00ull

/* Bit u + 8v to bit v + 8u, as three swaps of ever larger squares across
 * the diagonal (2x2 within 2x2 tiles, then 2x2 tiles, then 4x4 ones):
 * a few instructions, where near groups ask for millions. */
static uint64_t transpose(uint64_t h)
{
	uint64_t t;
	t = (h ^ (h >> 7)) & 0x00AA00AA00AA00AAull;
	h ^= t ^ (t << 7);
	t = (h ^ (h >> 14)) & 0x0000CCCC0000CCCCull;
	h ^= t ^ (t << 14);
	t = (h ^ (h >> 28)) & 0x00000000F0F0F0F0ull;
	h ^= t ^ (t << 28);
	return h;
}

uint64_t ph_variant(uint64_t h, int k)
{
	if (k & 4)
		h = transpose(h);
	if (k & 2)
		h ^= ODD_V;
	if (k & 1)
		h ^= ODD_U;
	return h;
}

int ph_distance(uint64_t a, uint64_t b)
{
	int k, best = 64;
	for (k = 0; k < 8; k++) {
		int d = ph_bits(a ^ ph_variant(b, k));
		if (d < best)
			best = d;
	}
	return best;
}

/* A line of samples is a bar when it is dark all along: JPEG ringing at
 * the edge of a bar stays below 48, and the mean of a bar below 14. */
static int dark(const uint8_t *p, uint32_t n, size_t stride)
{
	uint32_t i, sum = 0;
	for (i = 0; i < n; i++) {
		uint8_t s = p[i * stride];
		if (s > 48)
			return 0;
		sum += s;
	}
	return sum <= 14u * n;
}

int ph_bars(const uint8_t *img, uint32_t w, uint32_t h, uint32_t *top, uint32_t *bottom,
	    uint32_t *left, uint32_t *right)
{
	uint32_t t = 0, b = 0, l = 0, r = 0;
	while (t < h / 3 && dark(img + (size_t)t * w, w, 1))
		t++;
	while (b < h / 3 && dark(img + (size_t)(h - 1 - b) * w, w, 1))
		b++;
	while (l < w / 3 && dark(img + l, h, w))
		l++;
	while (r < w / 3 && dark(img + (w - 1 - r), h, w))
		r++;
	*top = t;
	*bottom = b;
	*left = l;
	*right = r;
	return t || b || l || r;
}

int ph_hash_plane(const uint8_t *plane, uint32_t w, uint32_t h, size_t stride, int orientation,
		  uint64_t *out)
{
	struct ph_grid *g = malloc(sizeof(*g)); /* 8 kB of sums: not for the stack */
	uint32_t y;

	if (!g)
		return -1;
	ph_grid_init(g, w, h);
	for (y = 0; y < h; y++)
		ph_grid_row(g, y, plane + (size_t)y * stride);
	*out = ph_hash(g, orientation);
	free(g);
	return 0;
}
