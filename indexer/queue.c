/* queue.c - the bounded queue (queue.h). */
#include "indexer/queue.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/sys.h"

int queue_init(struct queue *q, size_t cap, size_t batch, double lag)
{
	memset(q, 0, sizeof(*q));
	q->items = malloc(cap * sizeof(*q->items));
	if (!q->items)
		return -1;
	q->cap = cap;
	q->batch = batch > 1 && batch < cap ? batch : 1;
	q->lag = lag;
	pthread_mutex_init(&q->mu, NULL);
	pthread_cond_init(&q->not_empty, NULL);
	pthread_cond_init(&q->not_full, NULL);
	pthread_cond_init(&q->low, NULL);
	return 0;
}

void queue_destroy(struct queue *q)
{
	if (!q->items)
		return;
	pthread_mutex_destroy(&q->mu);
	pthread_cond_destroy(&q->not_empty);
	pthread_cond_destroy(&q->not_full);
	pthread_cond_destroy(&q->low);
	free(q->items);
	q->items = NULL;
}

void queue_push(struct queue *q, void *item)
{
	pthread_mutex_lock(&q->mu);
	while (q->count == q->cap)
		pthread_cond_wait(&q->not_full, &q->mu);
	q->items[(q->head + q->count) % q->cap] = item;
	q->count++;
	if (q->count >= q->batch || q->eager)
		pthread_cond_signal(&q->not_empty);
	pthread_mutex_unlock(&q->mu);
}

/* Waits on cv until the wall-clock deadline (ns); 1 when it passed. */
static int wait_until(pthread_cond_t *cv, pthread_mutex_t *mu, int64_t at)
{
	/* pthread_cond_timedwait's deadline is on CLOCK_REALTIME */
	struct timespec ts;
	ts.tv_sec = (time_t)(at / 1000000000);
	ts.tv_nsec = (long)(at % 1000000000);
	return pthread_cond_timedwait(cv, mu, &ts) == ETIMEDOUT;
}

void *queue_pop(struct queue *q, double timeout, int *timed_out)
{
	void *item = NULL;
	int64_t now = sys_wall_ns(), give_up = timeout > 0 ? now + (int64_t)(timeout * 1e9) : 0;

	if (timed_out)
		*timed_out = 0;
	pthread_mutex_lock(&q->mu);
	while (q->count == 0 && !q->closed) {
		if (q->batch > 1 && !q->eager) {
			int64_t at = now + (int64_t)(q->lag * 1e9);
			if (give_up && give_up < at)
				at = give_up;
			if (wait_until(&q->not_empty, &q->mu, at) && q->count == 0)
				q->eager = 1; /* a whole lag with nothing: wake me at the next */
		} else if (give_up) {
			wait_until(&q->not_empty, &q->mu, give_up);
		} else {
			pthread_cond_wait(&q->not_empty, &q->mu);
		}
		now = sys_wall_ns();
		if (give_up && now >= give_up && q->count == 0) {
			if (timed_out)
				*timed_out = !q->closed;
			break;
		}
	}
	if (q->count) {
		if (q->count >= q->batch)
			q->eager = 0; /* the producer is ahead again: batches */
		item = q->items[q->head];
		q->head = (q->head + 1) % q->cap;
		q->count--;
		pthread_cond_signal(&q->not_full);
		if (q->low_waiters)
			pthread_cond_broadcast(&q->low);
	}
	pthread_mutex_unlock(&q->mu);
	return item;
}

size_t queue_len(struct queue *q)
{
	size_t n;

	pthread_mutex_lock(&q->mu);
	n = q->count;
	pthread_mutex_unlock(&q->mu);
	return n;
}

void queue_wait_below(struct queue *q, size_t n)
{
	pthread_mutex_lock(&q->mu);
	while (q->count >= n && !q->closed) {
		if (q->count >= q->batch)
			pthread_cond_signal(&q->not_empty); /* what waits is to be taken */
		q->low_waiters++;
		pthread_cond_wait(&q->low, &q->mu);
		q->low_waiters--;
	}
	pthread_mutex_unlock(&q->mu);
}

void queue_kick(struct queue *q)
{
	pthread_mutex_lock(&q->mu);
	if (q->count)
		pthread_cond_signal(&q->not_empty);
	pthread_mutex_unlock(&q->mu);
}

void queue_close(struct queue *q)
{
	pthread_mutex_lock(&q->mu);
	q->closed = 1;
	pthread_cond_broadcast(&q->not_empty);
	pthread_cond_broadcast(&q->low);
	pthread_mutex_unlock(&q->mu);
}
