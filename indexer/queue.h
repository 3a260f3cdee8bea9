/* queue.h - a bounded queue of pointers between threads (the pipeline's
 * reader -> extractor and extractor -> store hand-offs).
 *
 * Waking a thread costs more than handing it a file: on the dev VM a
 * futex wake-up and the sleep before it were a tenth of a warm scan, one
 * of each per file and per queue.  So a queue may wake its consumer only
 * once `batch` items wait, and the consumer, when it finds the queue
 * empty, sleeps at most `lag` seconds, so that an item never waits longer
 * than that when the producer stalls (a slow disk).  When a whole `lag`
 * passes with nothing queued, the producer is slower than the consumers:
 * the queue then wakes one at every item, as a plain queue, until a
 * consumer finds a batch waiting again.  A producer about to wait for the
 * budget wakes them first (queue_kick): what it queued must not wait for a
 * timer, and timers on the wall clock stretch when it steps back. */
#ifndef SL_QUEUE_H
#define SL_QUEUE_H

#include <pthread.h>
#include <stddef.h>

struct queue {
	pthread_mutex_t mu;
	pthread_cond_t not_empty, not_full, low;
	int low_waiters;
	void **items;
	size_t cap, head, count;
	size_t batch;
	double lag;
	int eager; /* consumers wait for single items: wake one at every push */
	int closed;
};

/* An empty queue of cap slots that wakes its consumer once batch items
 * wait, or after lag seconds.  0, or -1 when out of memory. */
int queue_init(struct queue *q, size_t cap, size_t batch, double lag);
/* Frees the slots (of a queue queue_init made, or zeroed). */
void queue_destroy(struct queue *q);
/* Appends item, waiting while the queue is full. */
void queue_push(struct queue *q, void *item);
/* Next item; NULL when closed and drained, or (with timeout > 0) when
 * nothing arrived for that many seconds (*timed_out, when not NULL, is then
 * set). */
void *queue_pop(struct queue *q, double timeout, int *timed_out);
/* How many items wait now. */
size_t queue_len(struct queue *q);
/* Returns once fewer than n items wait (or the queue is closed). */
void queue_wait_below(struct queue *q, size_t n);
/* Wakes a consumer for whatever is queued, batch or not. */
void queue_kick(struct queue *q);
/* No more items: consumers drain what is queued, then get NULL. */
void queue_close(struct queue *q);

#endif
