/* headpath.h - the picture of a disk head's path: for each order read, the
 * physical offset of what was read against the time it arrived, one panel
 * per order on a shared scale.  `bench --svg` writes it to a file; the
 * report draws it again from the points bench stores (db/benchruns.h).
 * Prints nothing; the SVG goes into a strbuf (check its oom). */
#ifndef SL_HEADPATH_H
#define SL_HEADPATH_H

#include <stddef.h>
#include <stdint.h>

#include "common/strbuf.h"

/* One order's panel: n dots, each the offset (bytes from the disk's
 * start) of a file or piece and the seconds from the start of the read
 * at which its last byte arrived.  pieces: some dots are pieces of swept
 * groups (the title says so). */
struct hp_panel {
	const char *order;
	double wall;          /* the run's read time, s */
	const double *t;
	const uint64_t *phys;
	size_t n;
	int pieces;
};

/* Past this many dots in a panel, a dot whose 2-pixel cell already holds
 * one is left out: the same picture, a fraction of the bytes. */
#define HP_DOTS_ALL 10000

/* Append one standalone SVG document with a panel per order (xmlns set, a
 * white background), its width HP_WIDTH. */
#define HP_WIDTH 900
void hp_svg(struct strbuf *o, const struct hp_panel *panels, size_t n);

/* Thin n dots (t, phys; the run's read time wall) in place, when more
 * than HP_DOTS_ALL, to the first of each cell of a panel drawn at their
 * own scale: what hp_svg would keep of them alone.  For storing a run's
 * path in the index.  Returns how many are left, or -1 when out of
 * memory (the dots unchanged). */
long hp_thin(double *t, uint64_t *phys, size_t n, double wall);

#endif
