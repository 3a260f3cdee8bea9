/* headpath.c - the head's path as SVG (headpath.h).  Coordinates are
 * printed to a tenth of a pixel; thinning works on the printed value, so
 * the cell a reader of the picture sees is the cell tested. */
#include <math.h>
#include <stdlib.h>

#include "app/headpath.h"

#define PH 200.0  /* a panel's height */
#define ML 70.0
#define MR 20.0
#define MT 30.0
#define GAP 45.0
#define PW ((double)HP_WIDTH - ML - MR)

static size_t cells(void)
{
	return ((size_t)PW / 2 + 1) * ((size_t)PH / 2 + 1);
}

/* The cell of (x, y) inside a panel, as printed. */
static size_t cell_of(double *x, double *y)
{
	size_t px, py;

	*x = floor(*x * 10 + 0.5) / 10;
	*y = floor(*y * 10 + 0.5) / 10;
	px = (size_t)(*x < 0 ? 0 : *x > PW ? PW : *x) / 2; /* cells of 2 px: a dot is 2.6 px */
	py = (size_t)(*y < 0 ? 0 : *y > PH ? PH : *y) / 2;
	return py * ((size_t)PW / 2 + 1) + px;
}

static void dot(struct strbuf *o, unsigned char *seen, double left, double top, double x,
		double y)
{
	size_t at = cell_of(&x, &y);

	if (seen) {
		if (seen[at])
			return;
		seen[at] = 1;
	}
	sb_addf(o, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"1.3\"/>\n", left + x, top + y);
}

void hp_svg(struct strbuf *o, const struct hp_panel *pn, size_t n)
{
	double tmax = 0, ymin = -1, ymax = 0;
	size_t k, i;

	for (k = 0; k < n; k++) {
		if (pn[k].wall > tmax)
			tmax = pn[k].wall;
		for (i = 0; i < pn[k].n; i++) {
			double y = (double)pn[k].phys[i];
			if (y > ymax)
				ymax = y;
			if (ymin < 0 || y < ymin)
				ymin = y;
		}
	}
	if (tmax <= 0)
		tmax = 1;
	if (ymin < 0)
		ymin = 0;
	if (ymax <= ymin)
		ymax = ymin + 1;
	sb_addf(o, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%.0f\" "
		   "font-family=\"sans-serif\" font-size=\"12\">\n",
		HP_WIDTH, MT + (double)n * (PH + GAP));
	sb_adds(o, "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n");
	for (k = 0; k < n; k++) {
		double top = MT + (double)k * (PH + GAP);
		unsigned char *seen;
		int t;

		sb_addf(o, "<text x=\"%.0f\" y=\"%.0f\" font-weight=\"bold\">order %s: %.2f s "
			   "(first run; physical offset of each %s against the time it arrived)"
			   "</text>\n",
			ML, top - 8, pn[k].order, pn[k].wall,
			pn[k].pieces ? "file or piece of a sweep" : "file");
		sb_addf(o, "<rect x=\"%.0f\" y=\"%.0f\" width=\"%.0f\" height=\"%.0f\" fill=\"none\" "
			   "stroke=\"#999\"/>\n",
			ML, top, PW, PH);
		for (t = 0; t <= 4; t++) {
			double x = ML + PW * t / 4, y = top + PH * t / 4;
			sb_addf(o, "<text x=\"%.1f\" y=\"%.0f\" text-anchor=\"middle\">%.1f s</text>\n", x,
				top + PH + 15, tmax * t / 4);
			sb_addf(o, "<text x=\"%.0f\" y=\"%.1f\" text-anchor=\"end\">%.2f GB</text>\n",
				ML - 5, y + 4, (ymin + (ymax - ymin) * (4 - t) / 4) / 1e9);
		}
		/* 22,345 files in two orders made a picture of 1.8 MB that looks
		 * the same thinned, at 0.6 MB (a drive of 100,000 photos: 8 MB) */
		seen = pn[k].n > HP_DOTS_ALL ? calloc(cells(), 1) : NULL;
		sb_adds(o, "<g fill=\"#c0392b\">\n");
		for (i = 0; i < pn[k].n; i++)
			dot(o, seen, ML, top, PW * pn[k].t[i] / tmax,
			    PH - PH * ((double)pn[k].phys[i] - ymin) / (ymax - ymin));
		sb_adds(o, "</g>\n");
		free(seen);
	}
	sb_adds(o, "</svg>\n");
}

long hp_thin(double *t, uint64_t *phys, size_t n, double wall)
{
	uint64_t lo = UINT64_MAX, hi = 0;
	unsigned char *seen;
	size_t i, kept = 0;

	if (n <= HP_DOTS_ALL)
		return (long)n;
	if (wall <= 0)
		wall = 1;
	for (i = 0; i < n; i++) {
		if (phys[i] < lo)
			lo = phys[i];
		if (phys[i] > hi)
			hi = phys[i];
	}
	if (hi <= lo)
		hi = lo + 1;
	seen = calloc(cells(), 1);
	if (!seen)
		return -1;
	for (i = 0; i < n; i++) {
		double x = PW * t[i] / wall, y = PH - PH * (double)(phys[i] - lo) / (double)(hi - lo);
		size_t at = cell_of(&x, &y);
		if (seen[at])
			continue;
		seen[at] = 1;
		t[kept] = t[i];
		phys[kept++] = phys[i];
	}
	free(seen);
	return (long)kept;
}
