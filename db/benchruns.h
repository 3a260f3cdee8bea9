/* benchruns.h - `seekless bench`'s results kept in the index (tables
 * benches and bench_orders, docs/schema.md), for the report: the medians
 * per order and the first run's head path (headpath.h's points, thinned).
 * Each run is also a row of scans (command 'bench'), from first_scan to
 * last_scan. */
#ifndef SL_DB_BENCHRUNS_H
#define SL_DB_BENCHRUNS_H

#include <stddef.h>
#include <stdint.h>

#include "common/err.h"

struct db;

struct db_bench_order {
	const char *order;
	double wall_s, metadata_s, mb_per_s, files_per_s;
	double speedup;       /* over fs order; <= 0: none measured */
	const double *t;      /* the head path: n dots, seconds and offsets */
	const uint64_t *phys;
	size_t n;
	int pieces;           /* some dots are pieces of swept groups */
};

struct db_bench {
	int64_t id;           /* set by db_bench_list */
	const char *started_at; /* db_bench_list's; db_bench_put stores now */
	const char *roots;    /* a JSON array of text, as scans.roots */
	int64_t files, bytes;
	int runs, caches_dropped;
	int64_t first_scan, last_scan;
	const struct db_bench_order *orders;
	size_t norders;
};

/* Store one bench (b->id and started_at are ignored), in one transaction.
 * Returns SL_OK, SL_E_DB or SL_E_NOMEM. */
int db_bench_put(struct db *db, const struct db_bench *b, struct sl_err *err);

/* The last `limit` benches, newest first, each handed to fn whole
 * (valid during the call; fn returns 0, or -1 to stop: SL_E_IO).  *total
 * gets how many the index holds.  Returns SL_OK, SL_E_DB, SL_E_NOMEM,
 * SL_E_IO. */
int db_bench_list(struct db *db, int limit, int (*fn)(void *ctx, const struct db_bench *b),
		  void *ctx, int64_t *total, struct sl_err *err);

#endif
