/* budget.h - the file bytes the pipeline holds at once, and the pool its
 * buffers are reused from.
 *
 * Every file buffer is charged to the budget while it exists, in flight
 * or kept for reuse, so the bytes held never exceed `total`.  Reuse is
 * the point: a fresh buffer costs a page fault and a zeroed page per
 * 4 KiB while the kernel copies into it (a tenth of a warm scan's profile),
 * a reused one costs nothing.  A file takes the smallest pooled buffer it
 * fits in, whatever its size, and a full pool keeps its biggest buffers,
 * so that after the first few files every file finds one (issue 41: 85
 * page faults a file on real camera files, most of them here).  Buffers
 * are sized in POOL_GRAIN steps; the pool is dropped first whenever a new
 * buffer would not fit. */
#ifndef SL_BUDGET_H
#define SL_BUDGET_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "indexer/queue.h"

#define POOL_GRAIN ((size_t)64 << 10)
#define POOL_SLOTS 64

struct budget {
	pthread_mutex_t mu;
	pthread_cond_t freed;
	size_t total, used, peak; /* used, and its peak: in flight + pooled */
	size_t pooled;
	size_t npool;
	atomic_int starved; /* readers waiting for a file the disk serves */
	struct {
		uint8_t *buf;
		size_t cap;
	} pool[POOL_SLOTS];
};

/* A budget of total bytes, nothing held. */
void budget_init(struct budget *b, size_t total);
/* A buffer of at least `want` bytes, charged *charge (0 for want 0);
 * waits while the budget is spent, after waking kick's consumers for what
 * is queued there (they free the memory).  `disk`: the bytes are to come
 * from the disk, not the page cache, so a wait here is the disk waiting
 * for the consumers (budget_starved).  NULL when out of memory. */
uint8_t *budget_alloc(struct budget *b, size_t want, size_t *charge, struct queue *kick,
		      int disk);
/* Whether a reader is waiting in budget_alloc for bytes the disk would
 * serve: the consumers are behind the disk. */
int budget_starved(struct budget *b);
/* Gives back a buffer from budget_alloc: kept for reuse while the pool
 * has room (POOL_SLOTS buffers, a quarter of the budget), in place of a
 * smaller one when it is full; else freed. */
void budget_release(struct budget *b, uint8_t *buf, size_t charge);
/* Frees the pool; every buffer must have been given back. */
void budget_destroy(struct budget *b);

#endif
