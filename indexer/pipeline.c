#include "indexer/pipeline.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/strbuf.h"
#include "common/sys.h"
#include "indexer/reader.h"
#include "indexer/yield.h"

#define QUEUE_CAP 1024
/* files the reader hands the extractors at once, records the extractors
 * hand the store loop (see struct queue), and how long either may wait */
#define XQ_BATCH 4
#define XQ_LAG 0.002
#define SQ_BATCH 32
#define SQ_LAG 0.02

/* ---- bounded queue of pointers --------------------------------------- */

/* Waking a thread costs more than handing it a file: on the dev VM a
 * futex wake-up and the sleep before it were a tenth of a warm scan, one
 * of each per file and per queue.  So a queue may wake its consumer only
 * once `batch` items wait, and the consumer, when it finds the queue
 * empty, sleeps at most `lag` seconds, so that an item never waits longer
 * than that when the producer stalls (a slow disk).  When a whole `lag`
 * passes with nothing queued, the producer is slower than the consumers:
 * the queue then wakes one at every item, as a plain queue, until a
 * consumer finds a batch waiting again.  A producer about to wait for the
 * budget wakes them first (q_kick): what it queued must not wait for a
 * timer, and timers on the wall clock stretch when it steps back. */
struct queue {
	pthread_mutex_t mu;
	pthread_cond_t not_empty, not_full;
	void **items;
	size_t cap, head, count;
	size_t batch;
	double lag;
	int eager; /* consumers wait for single items: wake one at every push */
	int closed;
};

static int q_init(struct queue *q, size_t cap, size_t batch, double lag)
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
	return 0;
}

static void q_destroy(struct queue *q)
{
	if (!q->items)
		return;
	pthread_mutex_destroy(&q->mu);
	pthread_cond_destroy(&q->not_empty);
	pthread_cond_destroy(&q->not_full);
	free(q->items);
	q->items = NULL;
}

static void q_push(struct queue *q, void *item)
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

/* Next item; NULL when closed and drained, or (with timeout > 0) when
 * nothing arrived for that many seconds (*timed_out is then set). */
static void *q_pop(struct queue *q, double timeout, int *timed_out)
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
	}
	pthread_mutex_unlock(&q->mu);
	return item;
}

/* Wakes a consumer for whatever is queued, batch or not. */
static void q_kick(struct queue *q)
{
	pthread_mutex_lock(&q->mu);
	if (q->count)
		pthread_cond_signal(&q->not_empty);
	pthread_mutex_unlock(&q->mu);
}

static void q_close(struct queue *q)
{
	pthread_mutex_lock(&q->mu);
	q->closed = 1;
	pthread_cond_broadcast(&q->not_empty);
	pthread_mutex_unlock(&q->mu);
}

/* ---- memory budget and buffer pool -------------------------------- */

/* Every file buffer is charged to the budget while it exists, in flight
 * or kept for reuse, so the bytes held never exceed `total`.  Reuse is
 * the point: a fresh buffer costs a page fault and a zeroed page per
 * 4 KiB while the kernel copies into it (a tenth of a warm scan's profile),
 * a reused one costs nothing.  Buffers are sized in POOL_GRAIN steps so
 * that files of similar size share them; the pool is dropped first
 * whenever a new buffer would not fit. */
#define POOL_GRAIN ((size_t)64 << 10)
#define POOL_SLOTS 16

struct budget {
	pthread_mutex_t mu;
	pthread_cond_t freed;
	size_t total, used, peak; /* used, and its peak: in flight + pooled */
	size_t pooled;
	size_t npool;
	struct {
		uint8_t *buf;
		size_t cap;
	} pool[POOL_SLOTS];
};

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

/* A buffer of at least `want` bytes, charged *charge (0 for want 0);
 * waits while the budget is spent, after waking kick's consumers for what
 * is queued there (they free the memory).  NULL when out of memory. */
static uint8_t *budget_alloc(struct budget *b, size_t want, size_t *charge, struct queue *kick)
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
		for (i = 0; i < b->npool; i++) /* the smallest that fits, at most twice the size */
			if (b->pool[i].cap >= want && b->pool[i].cap <= 2 * cap &&
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
			q_kick(kick); /* the budget before the queue, always */
			pthread_cond_wait(&b->freed, &b->mu);
		}
	}
	if (b->used > b->peak)
		b->peak = b->used;
	pthread_mutex_unlock(&b->mu);
	return buf;
}

/* Gives back a buffer from budget_alloc: kept for reuse while the pool
 * has room (a quarter of the budget), else freed. */
static void budget_release(struct budget *b, uint8_t *buf, size_t charge)
{
	if (charge == 0) {
		free(buf);
		return;
	}
	pthread_mutex_lock(&b->mu);
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

static void budget_destroy(struct budget *b)
{
	while (pool_drop_one(b))
		;
	pthread_mutex_destroy(&b->mu);
	pthread_cond_destroy(&b->freed);
}

/* ---- jobs and items -------------------------------------------------- */

/* One file in flight.  Written by its reader before the first item is
 * queued; afterwards only by the extractor holding its current chunk. */
struct job {
	uint32_t file;
	char *path;
	struct rd_info info;
	int64_t opened_ns;
	int streamed;
	int next_seq;           /* streamed: chunk the next extractor may take */
	struct x_meta meta;
	struct x_stream *follow; /* streamed: its metadata past the first chunk */
	int meta_rc;
	char meta_err[384];
	int have_phash;
	uint64_t phash;
	const char *phash_src;
	uint64_t got;
	char early_warn[160];   /* known at open: identity changed since the walk */
};

/* The last item of a file carries how its reading ended. */
struct tail {
	int err_code;
	char error[384];
	char warn[160];
	int cancelled;
	char hex[33]; /* the content hash, made by the reader */
};

struct item {
	struct job *job;
	uint8_t *buf;
	size_t len;
	size_t charge;
	int seq;
	struct tail *tail; /* non-NULL on the last item only */
};

struct pipe;

struct rgroup {
	struct pipe *P;
	const struct plan_group *g;
	atomic_size_t cursor;
	atomic_int readers_left;
	int sequential;             /* one reader, following the plan strictly */
	atomic_ullong files, bytes; /* actually read */
	double end;
	double yield_s;             /* summed over its readers, under stat_mu */
	uint64_t pauses;
};

/* What a reader is reading, for the store loop's slow-read warning. */
struct rslot {
	atomic_llong since_us; /* when the read in progress began (from t0); 0: none */
	atomic_uint file;
	uint32_t group;
	long long warned_us;   /* the read already warned about (store loop only) */
};

struct pipe {
	const struct ftab *ft;
	const struct plan *pl;
	const struct px_opts *o;
	size_t whole_max, chunk;
	struct queue xq; /* items for extractors */
	struct queue sq; /* records for the store loop */
	struct budget budget;
	pthread_mutex_t order_mu; /* chunk order of streamed files */
	pthread_cond_t order_cv;
	atomic_int readers_left;
	atomic_int extractors_left;
	atomic_int stop;
	pthread_mutex_t fatal_mu;
	int fatal;
	struct sl_err fatal_err;
	double t0, read_end;
	pthread_mutex_t stat_mu;
	double extract_s;
	atomic_ullong bytes_read;
	struct rgroup *groups;
	struct rslot *slots; /* one per reader thread */
	atomic_int nslots;
};

static _Thread_local struct rslot *my_slot;

static void set_fatal(struct pipe *P, const struct sl_err *e)
{
	pthread_mutex_lock(&P->fatal_mu);
	if (!P->fatal) {
		P->fatal = e->code ? e->code : SL_E_IO;
		P->fatal_err = *e;
	}
	pthread_mutex_unlock(&P->fatal_mu);
	atomic_store(&P->stop, 1);
}

static int stopping(struct pipe *P)
{
	return atomic_load(&P->stop) || (P->o->cancel && atomic_load(P->o->cancel));
}

static int stop_cb(void *ctx)
{
	return stopping(ctx);
}

/* A reader in background mode lowers its priority and watches its disk. */
static struct yd *reader_begin(struct pipe *P, struct rgroup *g, struct yd *y)
{
	char how[160];

	if (!P->o->background)
		return NULL;
	sys_background(how, sizeof(how));
	yd_init(y, g->g->name);
	return y;
}

static void reader_end(struct pipe *P, struct rgroup *g, const struct yd *y)
{
	if (!y)
		return;
	pthread_mutex_lock(&P->stat_mu);
	g->yield_s += y->waited;
	g->pauses += y->pauses;
	pthread_mutex_unlock(&P->stat_mu);
}

/* Bookkeeping when a reader ends (or stands in for one that never ran):
 * the last one of a group stamps its time, the last one overall closes the
 * extractors' queue. */
static void reader_exit(struct pipe *P, struct rgroup *g)
{
	if (atomic_fetch_sub(&g->readers_left, 1) == 1)
		g->end = sys_now();
	if (atomic_fetch_sub(&P->readers_left, 1) == 1) {
		P->read_end = sys_now();
		q_close(&P->xq);
	}
}

static void fill_location(const struct ftab *ft, struct px_record *r)
{
	const struct ft_file *f = &ft->files[r->file];
	r->phys = f->phys;
	r->fragments = f->fragments;
	r->ext_flags = f->flags;
	r->devi = f->dev;
}

/* Fill *r for a file that could not be opened or read, from what the
 * locate pass knew of it.  Takes path. */
static void fill_error(const struct ftab *ft, struct px_record *r, uint32_t file, char *path,
		       int code, const char *msg)
{
	const struct ft_file *f = &ft->files[file];

	memset(r, 0, sizeof(*r));
	r->file = file;
	r->path = path;
	r->dev = ft->devs[f->dev].st_dev;
	r->ino = f->ino;
	r->size = f->size;
	r->mtime_ns = f->mtime_ns;
	r->ctime_ns = f->ctime_ns;
	fill_location(ft, r);
	r->is_dir = (f->flags & FT_DIR) != 0;
	r->err_code = code;
	snprintf(r->error, sizeof(r->error), "%s", msg);
}

static void nomem(struct pipe *P);

/* Queue an error record for the store loop (reader threads). */
static void emit_error(struct pipe *P, uint32_t file, char *path, int code, const char *msg)
{
	struct px_record *r = malloc(sizeof(*r));

	if (!r) {
		free(path);
		nomem(P);
		return;
	}
	fill_error(P->ft, r, file, path, code, msg);
	q_push(&P->sq, r);
}

static char *path_of(struct pipe *P, uint32_t file)
{
	struct strbuf sb = STRBUF_INIT;
	if (ftab_path(P->ft, file, &sb) != 0) {
		sb_free(&sb);
		return NULL;
	}
	return sb.p;
}

static void push_prepared(struct pipe *P, struct item *it, struct job *job, uint8_t *buf,
			  size_t len, size_t charge, int seq, struct tail *tail)
{
	it->job = job;
	it->buf = buf;
	it->len = len;
	it->charge = charge;
	it->seq = seq;
	it->tail = tail;
	q_push(&P->xq, it);
}

static int push_item(struct pipe *P, struct job *job, uint8_t *buf, size_t len, size_t charge,
		     int seq, struct tail *tail)
{
	struct item *it = malloc(sizeof(*it));
	if (!it)
		return -1;
	push_prepared(P, it, job, buf, len, charge, seq, tail);
	return 0;
}

static void nomem(struct pipe *P)
{
	struct sl_err e;
	SL_FAIL(&e, SL_E_NOMEM, 0, "pipeline: out of memory");
	set_fatal(P, &e);
}

/* A file opened, possibly ahead of its turn. */
struct opened {
	size_t pos;        /* in the plan */
	uint32_t file;
	char *path;
	struct rd_file *rf;
	struct rd_info info;
	int64_t opened_ns;      /* wall clock right after the open's stat */
	int rc;
	struct sl_err e;
};

static void open_file(struct pipe *P, size_t pos, struct opened *o)
{
	uint32_t file = P->pl->seq[pos];
	memset(o, 0, sizeof(*o));
	o->pos = pos;
	o->file = file;
	o->path = path_of(P, file);
	if (!o->path) {
		o->rc = SL_E_NOMEM;
		SL_FAIL(&o->e, SL_E_NOMEM, 0, "pipeline: out of memory");
		return;
	}
	o->rc = rd_open(o->path, &o->rf, &o->info, &o->e);
	o->opened_ns = sys_wall_ns();
}

/* Read an opened file and queue its bytes: whole when small, else chunk
 * by chunk.  Takes o's path and handle. */
static void read_file(struct pipe *P, struct rgroup *g, struct opened *o, struct yd *y)
{
	uint32_t file = o->file;
	const struct ft_file *f = &P->ft->files[file];
	struct rd_file *rf = o->rf;
	struct rd_info info = o->info, after;
	struct job *job = NULL;
	struct tail *tail = NULL;
	struct item *spare = NULL; /* ends the job if memory runs out mid-file */
	struct x_hash *hs = NULL;  /* a streamed file's content hash so far */
	struct sl_err e;
	char *path = o->path;
	uint64_t off = 0, size;
	int seq = 0, rc = o->rc;
	double t_start = sys_now() - P->t0;

	if (!path) {
		nomem(P);
		return;
	}
	if (rc != SL_OK) {
		if (sl_code_is_fatal(rc)) {
			struct sl_err fe;
			SL_FAIL(&fe, rc, 0, "%s: %s", path, o->e.msg);
			fe.sys = o->e.sys;
			set_fatal(P, &fe);
			free(path);
		} else {
			emit_error(P, file, path, rc, o->e.msg);
		}
		return;
	}
	job = calloc(1, sizeof(*job));
	tail = calloc(1, sizeof(*tail));
	spare = malloc(sizeof(*spare));
	if (!job || !tail || !spare)
		goto oom;
	job->file = file;
	job->path = path;
	path = NULL;
	job->info = info;
	job->opened_ns = o->opened_ns;
	if (info.ino != f->ino || info.dev != P->ft->devs[f->dev].st_dev)
		snprintf(job->early_warn, sizeof(job->early_warn), "replaced since the walk");
	size = info.size;
	job->streamed = size > P->whole_max;
	if (job->streamed) {
		rd_advise_sequential(rf);
		if (!P->o->read_only && x_hash_new(&hs) != SL_OK)
			goto oom;
	}
	for (;;) {
		size_t want = (size_t)(job->streamed ? (size - off < P->chunk ? size - off : P->chunk)
						     : size);
		uint8_t *buf;
		size_t got = 0, charge;
		int last;

		if (y && seq > 0)
			yd_wait(y, stop_cb, P);
		buf = budget_alloc(&P->budget, want, &charge, &P->xq);
		if (!buf)
			goto oom;
		if (my_slot) {
			atomic_store(&my_slot->file, file);
			atomic_store(&my_slot->since_us,
				     (long long)((sys_now() - P->t0) * 1e6) + 1);
		}
		rc = want ? rd_read(rf, buf, want, off, &got, &e) : SL_OK;
		if (my_slot)
			atomic_store(&my_slot->since_us, 0);
		off += got;
		atomic_fetch_add(&P->bytes_read, got);
		atomic_fetch_add(&g->bytes, got);
		last = rc != SL_OK || got < want || off >= size;
		if (!last && stopping(P)) {
			tail->cancelled = 1;
			last = 1;
		}
		if (last) {
			if (rc != SL_OK) {
				tail->err_code = rc;
				snprintf(tail->error, sizeof(tail->error), "%s", e.msg);
			} else if (off < size) {
				snprintf(tail->warn, sizeof(tail->warn),
					 "shrank while being read (%llu of %llu bytes)",
					 (unsigned long long)off, (unsigned long long)size);
			} else if (rd_stat(rf, &after, &e) == SL_OK &&
				   (after.mtime_ns != info.mtime_ns || after.size != size ||
				    after.ctime_ns != info.ctime_ns)) {
				snprintf(tail->warn, sizeof(tail->warn), "modified while being read");
			}
			job->got = off;
		}
		/* The reader hashes what it has just copied, while it is in its
		 * own cache; on another core the extractor would fetch every
		 * line again (the hash was half of its time in a warm scan). */
		if (!P->o->read_only) {
			if (hs) {
				x_hash_update(hs, buf, got);
				if (last)
					x_hash_hex(hs, tail->hex);
			} else if (last) {
				x_hash_once(buf, got, tail->hex);
			}
		}
		if (push_item(P, job, buf, got, charge, seq, last ? tail : NULL) != 0) {
			budget_release(&P->budget, buf, charge);
			goto oom;
		}
		seq++;
		if (last)
			break;
	}
	atomic_fetch_add(&g->files, 1);
	if (P->o->on_read)
		P->o->on_read(P->o->on_read_ctx, o->pos, t_start, sys_now() - P->t0, off);
	free(spare);
	x_hash_free(hs);
	rd_close(rf, P->o->keep_cache);
	return;
oom:
	/* Once an item is queued the job belongs to the extractors: a last,
	 * empty and cancelled item ends it there, so they free it (nothing is
	 * stored; the run stops anyway). */
	if (job && seq > 0) {
		tail->cancelled = 1;
		push_prepared(P, spare, job, NULL, 0, 0, seq, tail);
	} else if (job) {
		free(job->path);
		free(job);
		free(tail);
		free(spare);
	} else {
		free(tail);
		free(spare);
	}
	free(path);
	x_hash_free(hs);
	rd_close(rf, P->o->keep_cache);
	nomem(P);
}

/* How far a sequential reader looks ahead: the next files are opened and
 * the kernel asked to fetch them (POSIX_FADV_WILLNEED), so the disk always
 * has the next requests of the plan queued, in order, instead of idling
 * between one file's last read and the next one's first.  Four are enough
 * to keep it busy; more only puts more requests in flight at once, and a
 * drive that serves them one at a time in arrival order (a USB bridge
 * without UAS) then seeks between them: 16 took 4.7 s (~380 seeks) where 4
 * take 1.95 s (5 seeks) on the emulated disk at --depth 1, the same 1.95 s
 * as 16 with command queueing, and no difference on this VM's virtio disk
 * (docs/benchmarks.md). */
#define AHEAD_FILES 4
#define AHEAD_BYTES ((uint64_t)16 << 20)

static void read_sequential(struct pipe *P, struct rgroup *g, struct yd *y)
{
	struct opened ring[AHEAD_FILES];
	size_t head = 0, n = 0, next = 0;
	uint64_t ahead = 0;

	while (!stopping(P)) {
		struct opened *o;
		/* before queueing more read-ahead: that is what competes with
		 * someone else's I/O */
		if (y)
			yd_wait(y, stop_cb, P);
		while (n < AHEAD_FILES && next < g->g->count && (n == 0 || ahead < AHEAD_BYTES)) {
			o = &ring[(head + n) % AHEAD_FILES];
			open_file(P, g->g->first + next, o);
			next++;
			n++;
			/* big files are streamed with FADV_SEQUENTIAL instead */
			if (o->rc == SL_OK && o->info.size <= P->whole_max) {
				rd_advise_willneed(o->rf);
				ahead += o->info.size;
			}
		}
		if (n == 0)
			break;
		o = &ring[head];
		head = (head + 1) % AHEAD_FILES;
		n--;
		if (o->rc == SL_OK && o->info.size <= P->whole_max)
			ahead -= o->info.size;
		read_file(P, g, o, y);
	}
	while (n > 0) { /* stopped early: let go of what was opened ahead */
		struct opened *o = &ring[head];
		head = (head + 1) % AHEAD_FILES;
		n--;
		rd_close(o->rf, P->o->keep_cache);
		free(o->path);
	}
}

static void *reader_main(void *arg)
{
	struct rgroup *g = arg;
	struct pipe *P = g->P;
	struct yd ys, *y = reader_begin(P, g, &ys);

	my_slot = &P->slots[atomic_fetch_add(&P->nslots, 1)];
	my_slot->group = (uint32_t)(g - P->groups);

	if (g->sequential) {
		read_sequential(P, g, y);
	} else {
		while (!stopping(P)) {
			struct opened o;
			size_t i;
			if (y)
				yd_wait(y, stop_cb, P);
			i = atomic_fetch_add(&g->cursor, 1);
			if (i >= g->g->count)
				break;
			open_file(P, g->g->first + i, &o);
			read_file(P, g, &o, y);
		}
	}
	reader_end(P, g, y);
	reader_exit(P, g);
	return NULL;
}

/* ---- extraction ------------------------------------------------------ */

static void finish_job(struct pipe *P, struct job *job, struct tail *tail)
{
	struct px_record *r;
	const struct ft_file *f = &P->ft->files[job->file];

	if (tail->cancelled) {
		free(job->path);
		x_meta_release(&job->meta);
		return;
	}
	r = calloc(1, sizeof(*r));
	if (!r) {
		free(job->path);
		x_meta_release(&job->meta);
		nomem(P);
		return;
	}
	r->file = job->file;
	r->path = job->path;
	r->dev = job->info.dev;
	r->ino = job->info.ino;
	r->mtime_ns = job->info.mtime_ns;
	r->ctime_ns = job->info.ctime_ns;
	r->stat_wall_ns = job->opened_ns;
	fill_location(P->ft, r);
	r->is_dir = (f->flags & FT_DIR) != 0;
	if (tail->err_code) {
		r->size = job->info.size;
		r->err_code = tail->err_code;
		snprintf(r->error, sizeof(r->error), "%s", tail->error);
		x_meta_release(&job->meta);
	} else {
		r->size = job->got;
		r->read = 1;
		r->meta = job->meta; /* with its desc: the record's now */
		job->meta.desc = NULL;
		memcpy(r->hash, tail->hex, sizeof(r->hash));
		r->have_phash = job->have_phash;
		r->phash = job->phash;
		r->phash_src = job->phash_src;
		if (job->meta_rc != SL_OK) {
			r->err_code = job->meta_rc;
			snprintf(r->error, sizeof(r->error), "%s", job->meta_err);
		}
		if (job->early_warn[0])
			x_warn(&r->meta, "%s", job->early_warn);
		if (tail->warn[0])
			x_warn(&r->meta, "%s", tail->warn);
	}
	q_push(&P->sq, r);
}

static void phash(struct job *job, const struct item *it)
{
	struct sl_err e;
	const char *src = NULL;
	int rc = x_phash(it->buf, it->len, !job->streamed, &job->meta, &job->phash, &src, &e);

	if (rc == SL_OK) {
		job->have_phash = 1;
		job->phash_src = src;
	} else if (rc == SL_E_NOMEM) {
		/* an error, not a warning: the next scan reads the file again */
		job->meta_rc = rc;
		snprintf(job->meta_err, sizeof(job->meta_err), "%s", e.msg);
	} else if (!job->streamed || job->meta.pics.preview_len) {
		x_warn(&job->meta, "%s", e.msg);
	}
}

/* An error, not a warning: the next scan reads the file again. */
static void stream_nomem(struct job *job)
{
	job->meta_rc = SL_E_NOMEM;
	snprintf(job->meta_err, sizeof(job->meta_err), "movie: out of memory for its moov box");
}

static void process(struct pipe *P, struct item *it)
{
	struct job *job = it->job;
	struct sl_err e;

	if (job->streamed) {
		pthread_mutex_lock(&P->order_mu);
		while (job->next_seq != it->seq)
			pthread_cond_wait(&P->order_cv, &P->order_mu);
		pthread_mutex_unlock(&P->order_mu);
	}
	if (!P->o->read_only && !(it->tail && (it->tail->err_code || it->tail->cancelled))) {
		if (it->seq == 0) {
			job->meta_rc = x_extract(it->buf, it->len, job->info.size, &job->meta, &e);
			if (job->meta_rc != SL_OK)
				snprintf(job->meta_err, sizeof(job->meta_err), "%s", e.msg);
			else if (P->o->phash && x_phashable(job->meta.format))
				phash(job, it); /* a streamed file: from what its first chunk holds */
			if (P->o->phash && !job->have_phash && x_phashable(job->meta.format))
				job->phash_src = "none"; /* tried, or streamed: not again */
			if (job->streamed && job->meta_rc == SL_OK &&
			    x_stream_new(&job->meta, job->info.size, &job->follow) != SL_OK)
				stream_nomem(job);
		}
		/* chunks come here in order (next_seq), so the catch sees the
		 * file's bytes as they lie; it lets go once it has what it wants */
		if (job->follow && (!x_stream_feed(job->follow, it->buf, it->len) || it->tail)) {
			if (x_stream_end(job->follow, &job->meta) != SL_OK)
				stream_nomem(job);
			job->follow = NULL;
		}
	}
	budget_release(&P->budget, it->buf, it->charge);
	if (it->tail) {
		x_stream_free(job->follow); /* a read that failed or was cancelled */
		job->follow = NULL;
		finish_job(P, job, it->tail);
		free(job);
		free(it->tail);
	} else {
		pthread_mutex_lock(&P->order_mu);
		job->next_seq++;
		pthread_cond_broadcast(&P->order_cv);
		pthread_mutex_unlock(&P->order_mu);
	}
	free(it);
}

static void *extractor_main(void *arg)
{
	struct pipe *P = arg;
	struct item *it;
	double busy = 0;

	if (P->o->background) {
		char how[160];
		sys_background(how, sizeof(how));
	}
	while ((it = q_pop(&P->xq, 0, NULL)) != NULL) {
		double t = sys_now();
		process(P, it);
		busy += sys_now() - t;
	}
	pthread_mutex_lock(&P->stat_mu);
	P->extract_s += busy;
	pthread_mutex_unlock(&P->stat_mu);
	if (atomic_fetch_sub(&P->extractors_left, 1) == 1)
		q_close(&P->sq);
	return NULL;
}

/* ---- the run --------------------------------------------------------- */

static void store(struct pipe *P, px_sink_fn sink, void *ctx, struct px_record *r,
		  struct px_stats *st)
{
	struct sl_err e;

	if (!atomic_load(&P->stop)) {
		double t = sys_now();
		int rc = sink(ctx, r, &e);
		st->store_s += sys_now() - t;
		if (rc != SL_OK)
			set_fatal(P, &e);
		else {
			st->files++;
			if (r->err_code)
				st->errors++;
		}
	}
	free((char *)r->path);
	x_meta_release(&r->meta);
	free(r);
}

/* Tell the caller, once per read, about reads that have taken longer than
 * o->slow_read: on a failing disk one read can take minutes (or never
 * return), and until then nothing else on that disk moves. */
static void slow_reads(struct pipe *P, size_t nreaders)
{
	double limit = P->o->slow_read > 0 ? P->o->slow_read : 30.0;
	long long now = (long long)((sys_now() - P->t0) * 1e6);
	size_t i;

	for (i = 0; i < nreaders; i++) {
		struct rslot *s = &P->slots[i];
		long long since = atomic_load(&s->since_us);
		char *path;
		if (!since || since == s->warned_us || (double)(now - since) < limit * 1e6)
			continue;
		s->warned_us = since;
		path = path_of(P, atomic_load(&s->file));
		P->o->on_slow(P->o->on_slow_ctx, path ? path : "?", P->pl->groups[s->group].name,
			      (double)(now - since) / 1e6);
		free(path);
	}
}

int px_run(const struct ftab *ft, const struct plan *pl, const struct px_opts *o,
	   px_sink_fn sink, void *sink_ctx, struct px_stats *st, struct sl_err *err)
{
	struct pipe *P;
	pthread_t *threads = NULL;
	size_t nthreads = 0, nreaders = 0, g, i;
	struct px_group_stats *gstats = NULL;
	struct px_progress prog;
	struct px_record *r;
	double last_progress = 0, stop_seen = 0;
	int jobs, e = 0, rc = SL_OK, abandoned = 0;

	memset(st, 0, sizeof(*st));
	/* On the heap: a stop that gives up on a reader stuck in a read leaves
	 * it, and the threads waiting behind it, running with this (below). */
	P = calloc(1, sizeof(*P));
	if (!P)
		return SL_FAIL(err, SL_E_NOMEM, 0, "pipeline: out of memory");
	P->ft = ft;
	P->pl = pl;
	P->o = o;
	P->budget.total = o->mem_budget ? o->mem_budget : (size_t)64 << 20;
	if (P->budget.total < ((size_t)1 << 20))
		P->budget.total = (size_t)1 << 20;
	P->whole_max = P->budget.total / 4;
	P->chunk = o->chunk ? o->chunk : (size_t)4 << 20;
	if (P->chunk > P->whole_max)
		P->chunk = P->whole_max;
	jobs = o->jobs > 0 ? o->jobs : sys_cpu_count();
	st->jobs = jobs;
	pthread_mutex_init(&P->budget.mu, NULL);
	pthread_cond_init(&P->budget.freed, NULL);
	pthread_mutex_init(&P->order_mu, NULL);
	pthread_cond_init(&P->order_cv, NULL);
	pthread_mutex_init(&P->fatal_mu, NULL);
	pthread_mutex_init(&P->stat_mu, NULL);
	P->t0 = sys_now();

	P->groups = calloc(pl->ngroups ? pl->ngroups : 1, sizeof(*P->groups));
	gstats = calloc(pl->ngroups ? pl->ngroups : 1, sizeof(*gstats));
	if (!P->groups || !gstats || q_init(&P->xq, QUEUE_CAP, XQ_BATCH, XQ_LAG) ||
	    q_init(&P->sq, QUEUE_CAP, SQ_BATCH, SQ_LAG)) {
		rc = SL_FAIL(err, SL_E_NOMEM, 0, "pipeline: out of memory");
		goto out;
	}
	for (g = 0; g < pl->ngroups; g++) {
		const struct plan_group *pg = &pl->groups[g];
		int n = pg->rotational == 0 ? (o->ssd_readers > 0 ? o->ssd_readers : 4) : 1;
		if ((size_t)n > pg->count)
			n = pg->count ? (int)pg->count : 1;
		P->groups[g].P = P;
		P->groups[g].g = pg;
		P->groups[g].sequential = n == 1;
		atomic_init(&P->groups[g].cursor, 0);
		atomic_init(&P->groups[g].files, 0);
		atomic_init(&P->groups[g].bytes, 0);
		atomic_init(&P->groups[g].readers_left, n);
		nreaders += (size_t)n;
	}
	threads = calloc(nreaders + (size_t)jobs + 1, sizeof(*threads));
	P->slots = calloc(nreaders + 1, sizeof(*P->slots));
	if (!threads || !P->slots) {
		rc = SL_FAIL(err, SL_E_NOMEM, 0, "pipeline: out of memory");
		goto out;
	}
	atomic_init(&P->readers_left, (int)nreaders);
	atomic_init(&P->extractors_left, jobs);
	if (nreaders == 0) {
		P->read_end = P->t0;
		q_close(&P->xq);
	}
	for (i = 0; i < (size_t)jobs; i++) {
		if ((e = pthread_create(&threads[nthreads], NULL, extractor_main, P)) != 0)
			break;
		nthreads++;
	}
	if (nthreads == 0) {
		rc = SL_FAIL(err, SL_E_RESOURCE, e, "cannot start extractor threads");
		goto out;
	}
	if (nthreads < (size_t)jobs &&
	    atomic_fetch_sub(&P->extractors_left, jobs - (int)nthreads) == jobs - (int)nthreads)
		q_close(&P->sq);
	for (g = 0; g < pl->ngroups && nreaders; g++) {
		int n = atomic_load(&P->groups[g].readers_left), k;
		for (k = 0; k < n; k++) {
			if ((e = pthread_create(&threads[nthreads], NULL, reader_main, &P->groups[g])) !=
			    0) {
				struct sl_err te;
				SL_FAIL(&te, SL_E_RESOURCE, e, "cannot start reader thread");
				set_fatal(P, &te);
				reader_exit(P, &P->groups[g]);
				continue;
			}
			nthreads++;
		}
	}
	/* Groups with no reader (no files) finish at once. */
	for (g = 0; g < pl->ngroups; g++)
		if (pl->groups[g].count == 0)
			P->groups[g].end = P->t0;

	/* Entries the walk or locate pass could not use get their record now,
	 * straight to the sink: this thread is also the store queue's only
	 * consumer, so queueing them could block it against itself. */
	for (i = 0; i < ft->nfiles; i++) {
		const struct ft_file *f = &ft->files[i];
		struct px_record er;
		struct sl_err se;
		char *path;
		if (!(f->flags & FT_FAILED) || atomic_load(&P->stop))
			continue;
		path = path_of(P, (uint32_t)i);
		if (!path) {
			nomem(P);
			break;
		}
		fill_error(ft, &er, (uint32_t)i, path, SL_E_IO, ftab_str(ft, f->err));
		if (sink(sink_ctx, &er, &se) != SL_OK)
			set_fatal(P, &se);
		else {
			st->files++;
			st->errors++;
		}
		free(path);
	}

	memset(&prog, 0, sizeof(prog));
	prog.files_total = pl->n;
	for (g = 0; g < pl->ngroups; g++)
		prog.bytes_total += pl->groups[g].bytes;
	for (;;) {
		int timed_out;
		r = q_pop(&P->sq, 0.25, &timed_out);
		if (r)
			store(P, sink, sink_ctx, r, st);
		else if (!timed_out)
			break;
		if (o->on_slow)
			slow_reads(P, nreaders);
		if (!r && stopping(P)) {
			/* Stopping waits for the reads in progress; one on a failing
			 * disk may never return.  After the grace, the records
			 * already made are stored and the rest is left behind. */
			if (!stop_seen)
				stop_seen = sys_now();
			else if (sys_now() - stop_seen > (o->stop_grace > 0 ? o->stop_grace : 10.0)) {
				abandoned = 1;
				break;
			}
		}
		if (o->progress && sys_now() - last_progress >= 0.25) {
			last_progress = sys_now();
			prog.files_done = st->files;
			prog.bytes_done = atomic_load(&P->bytes_read);
			prog.elapsed = last_progress - P->t0;
			o->progress(o->progress_ctx, &prog);
		}
	}
	for (i = 0; i < nthreads && !abandoned; i++)
		pthread_join(threads[i], NULL);

	st->bytes = atomic_load(&P->bytes_read);
	st->read_s = (P->read_end ? P->read_end : sys_now()) - P->t0;
	st->extract_s = P->extract_s;
	st->wall_s = sys_now() - P->t0;
	st->peak_inflight = P->budget.peak;
	for (g = 0; g < pl->ngroups; g++) {
		gstats[g].read_s = (P->groups[g].end ? P->groups[g].end : P->read_end) - P->t0;
		gstats[g].files = atomic_load(&P->groups[g].files);
		gstats[g].bytes = atomic_load(&P->groups[g].bytes);
		gstats[g].yield_s = P->groups[g].yield_s;
		gstats[g].pauses = P->groups[g].pauses;
	}
	st->groups = gstats;
	st->ngroups = pl->ngroups;
	gstats = NULL;
	if (rc == SL_OK && P->fatal) {
		pthread_mutex_lock(&P->fatal_mu);
		*err = P->fatal_err;
		rc = P->fatal;
		pthread_mutex_unlock(&P->fatal_mu);
	} else if (rc == SL_OK && o->cancel && atomic_load(o->cancel)) {
		rc = SL_FAIL(err, SL_E_CANCELLED, 0,
			     "interrupted; what was read is stored, run again to complete the index");
	}
	if (abandoned) {
		/* The threads still use P, ft and pl: the caller must end the
		 * process without freeing those (px_stats.abandoned). */
		st->abandoned = 1;
		for (g = 0; g < pl->ngroups; g++)
			if (atomic_load(&P->groups[g].readers_left) > 0)
				snprintf(st->stuck, sizeof(st->stuck), "%s", pl->groups[g].name);
		i = strlen(err->msg);
		snprintf(err->msg + i, sizeof(err->msg) - i,
			 "; a read on %s did not return %.0f s after the stop (a failing disk?)",
			 st->stuck[0] ? st->stuck : "a disk", o->stop_grace > 0 ? o->stop_grace : 10.0);
		return rc;
	}
out:
	free(threads);
	free(gstats);
	free(P->groups);
	q_destroy(&P->xq);
	q_destroy(&P->sq);
	budget_destroy(&P->budget);
	pthread_mutex_destroy(&P->order_mu);
	pthread_cond_destroy(&P->order_cv);
	pthread_mutex_destroy(&P->fatal_mu);
	pthread_mutex_destroy(&P->stat_mu);
	free(P->slots);
	free(P);
	return rc;
}

void px_stats_free(struct px_stats *st)
{
	if (!st)
		return;
	free(st->groups);
	st->groups = NULL;
	st->ngroups = 0;
}
