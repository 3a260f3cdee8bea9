/* budget.c - the memory budget and buffer pool (budget.h). */
#include "indexer/budget.h"

#include <stdlib.h>
#include <string.h>

void budget_init(struct budget *b, size_t total)
{
	memset(b, 0, sizeof(*b));
	b->total = total;
	pthread_mutex_init(&b->mu, NULL);
	pthread_cond_init(&b->freed, NULL);
}

/* Drops the largest pooled buffer; 0 when the pool is empty. */
static int pool_drop_one(struct budget *b)
{
	size_t i, big = 0;

	if (b->npool == 0)
		return 0;
	for (i = 1; i < b->npool; i++)
		if (b->pool[i].cap > b->pool[big].cap)
			big = i;
	free(b->pool[big].buf);
	b->used -= b->pool[big].cap;
	b->pooled -= b->pool[big].cap;
	b->pool[big] = b->pool[--b->npool];
	return 1;
}

uint8_t *budget_alloc(struct budget *b, size_t want, size_t *charge, struct queue *kick,
		      int disk)
{
	size_t cap = (want + POOL_GRAIN - 1) / POOL_GRAIN * POOL_GRAIN, i, best = SIZE_MAX;
	uint8_t *buf;

	*charge = 0;
	if (want == 0)
		return malloc(1);
	if (cap > b->total)
		cap = b->total; /* want <= total / 4 always: rounding never starves it */
	pthread_mutex_lock(&b->mu);
	for (;;) {
		/* the smallest that fits: a bigger one's pages cost nothing more
		 * than a fresh one's, which would be faulted in page by page */
		for (i = 0; i < b->npool; i++)
			if (b->pool[i].cap >= want &&
			    (best == SIZE_MAX || b->pool[i].cap < b->pool[best].cap))
				best = i;
		if (best != SIZE_MAX) {
			buf = b->pool[best].buf;
			*charge = b->pool[best].cap;
			b->pooled -= *charge;
			b->pool[best] = b->pool[--b->npool];
			break;
		}
		if (b->used + cap <= b->total) {
			buf = malloc(cap);
			if (!buf) {
				pthread_mutex_unlock(&b->mu);
				return NULL;
			}
			*charge = cap;
			b->used += cap;
			break;
		}
		if (!pool_drop_one(b)) {
			queue_kick(kick); /* the budget before the queue, always */
			if (disk)
				atomic_fetch_add(&b->starved, 1);
			pthread_cond_wait(&b->freed, &b->mu);
			if (disk)
				atomic_fetch_sub(&b->starved, 1);
		}
	}
	if (b->used > b->peak)
		b->peak = b->used;
	pthread_mutex_unlock(&b->mu);
	return buf;
}

int budget_starved(struct budget *b)
{
	return atomic_load(&b->starved) > 0;
}

void budget_release(struct budget *b, uint8_t *buf, size_t charge)
{
	if (charge == 0) {
		free(buf);
		return;
	}
	pthread_mutex_lock(&b->mu);
	/* a full pool keeps the bigger buffers: any of them serves any
	 * smaller file, whose pages are then mapped already */
	if (b->npool == POOL_SLOTS) {
		size_t i, small = 0;
		for (i = 1; i < b->npool; i++)
			if (b->pool[i].cap < b->pool[small].cap)
				small = i;
		if (b->pool[small].cap < charge) {
			free(b->pool[small].buf);
			b->used -= b->pool[small].cap;
			b->pooled -= b->pool[small].cap;
			b->pool[small] = b->pool[--b->npool];
		}
	}
	if (b->npool < POOL_SLOTS && b->pooled + charge <= b->total / 4) {
		b->pool[b->npool].buf = buf;
		b->pool[b->npool].cap = charge;
		b->npool++;
		b->pooled += charge;
	} else {
		free(buf);
		b->used -= charge;
	}
	pthread_cond_broadcast(&b->freed);
	pthread_mutex_unlock(&b->mu);
}

void budget_destroy(struct budget *b)
{
	while (pool_drop_one(b))
		;
	pthread_mutex_destroy(&b->mu);
	pthread_cond_destroy(&b->freed);
}
