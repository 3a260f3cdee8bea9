/* pipe_sweep.c - the reader of a group that has an extent schedule
 * (scanner/sched.h, plan_group.ops): op after op, one piece of a file read
 * at its logical offset, in the order the pieces lie on the disk.
 *
 * A whole file's buffer is taken at its first op, filled at each and
 * queued at its last.  A streamed file gathers its head (the first chunk,
 * what the extractors parse) the same way; past the head its pieces are
 * queued in logical order as the hash needs them: read in place (SO_READ),
 * kept until their turn (SO_AHEAD), or read when the schedule comes back
 * for them (SO_BACK).  What it holds is what the schedule counted, so the
 * budget cannot run dry under it: docs/design.md, "The extent schedule".
 *
 * The schedule was made from the walk's sizes.  A file whose size changed
 * since, or that shrinks while read, is read whole instead, or ends with
 * an error when part of it was queued already; nothing is ever hashed from
 * bytes out of their place. */
#include "indexer/pipe_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/strbuf.h"
#include "common/sys.h"
#include "indexer/yield.h"

/* How far the sweep looks ahead: the next ops' files are opened and their
 * pieces asked of the kernel, so the disk has the sweep's next requests
 * queued, in its order.  As many as read_sequential's files, for the same
 * reason: more would only put more requests in flight on a drive that
 * serves them one at a time. */
#define LOOK_OPS 4
#define LOOK_BYTES ((uint64_t)16 << 20)

struct kept {
	uint64_t off;
	uint8_t *buf;
	size_t len, charge;
};

/* A file of the sweep, from its open (maybe ahead) to its last op. */
struct sf {
	struct opened o;     /* path until a job takes it; handle to the end */
	int started;         /* its first op came */
	int streamed;
	int random;          /* rd_advise_random given */
	int started_spread;  /* started by a piece, not read whole at once */
	double t_start;
	uint8_t *buf;        /* whole: the file; streamed: its head until queued */
	size_t charge;
	uint64_t size;       /* at the open, equal to the walk's */
	uint64_t filled;     /* of buf */
	uint64_t head;       /* streamed: the head's size */
	struct job *job;     /* streamed from its first op; whole at its end */
	struct tail *tail;
	struct item *spare;
	struct x_hash *hs;
	struct x_quick *qa;  /* streamed: its partial hash */
	uint64_t hashed;     /* streamed: queued so far, in logical order */
	int seq;
	struct kept *kept;
	size_t nkept, capkept;
};

struct sweep {
	struct pipe *P;
	struct rgroup *g;
	struct yd *y;
	const struct plan_group *pg;
	struct sf **act; /* opened and not finished */
	size_t nact, capact;
};

static struct sf *find(const struct sweep *s, uint32_t file)
{
	size_t i, pos = s->pg->first + file;
	for (i = 0; i < s->nact; i++)
		if (s->act[i]->o.pos == pos)
			return s->act[i];
	return NULL;
}

/* Pieces out of logical order from now on (once per file). */
static void go_random(struct sf *f)
{
	if (!f->random)
		rd_advise_random(f->o.rf);
	f->random = 1;
}

/* Open the file of op.file now.  NULL when out of memory. */
static struct sf *sf_open(struct sweep *s, uint32_t file)
{
	struct sf *f;

	if (sl_grow(&s->act, &s->capact, s->nact + 1, sizeof(*s->act)) != 0)
		return NULL;
	f = calloc(1, sizeof(*f));
	if (!f)
		return NULL;
	pipe_open(s->P, s->pg->first + file, &f->o);
	if (!f->o.path) {
		rd_close(f->o.rf, s->P->o->keep_cache);
		free(f);
		return NULL;
	}
	s->act[s->nact++] = f;
	return f;
}

static void forget(struct sweep *s, struct sf *f)
{
	size_t i;
	for (i = 0; i < s->nact; i++)
		if (s->act[i] == f) {
			s->act[i] = s->act[--s->nact];
			break;
		}
	free(f->kept);
	free(f);
}

static void drop_buffers(struct sweep *s, struct sf *f)
{
	size_t i;
	if (f->buf)
		budget_release(&s->P->budget, f->buf, f->charge);
	f->buf = NULL;
	for (i = 0; i < f->nkept; i++)
		budget_release(&s->P->budget, f->kept[i].buf, f->kept[i].charge);
	f->nkept = 0;
}

/* Let go of a file without a record: the run is stopping. */
static void cancel(struct sweep *s, struct sf *f)
{
	drop_buffers(s, f);
	if (f->job && f->seq > 0) {
		/* the job belongs to the extractors: a cancelled last item
		 * ends it there (pipe_read_whole's way) */
		f->tail->cancelled = 1;
		pipe_push_prepared(s->P, f->spare, f->job, NULL, 0, 0, f->seq, f->tail);
	} else if (f->job) {
		free(f->job->path);
		free(f->job);
		free(f->tail);
		free(f->spare);
	}
	free(f->o.path);
	x_hash_free(f->hs);
	x_quick_free(f->qa);
	rd_close(f->o.rf, s->P->o->keep_cache);
	forget(s, f);
}

/* The file is complete (or ended with its error queued). */
static void done(struct sweep *s, struct sf *f)
{
	struct pipe *P = s->P;

	atomic_fetch_add(&s->g->files, 1);
	if (P->o->on_read)
		P->o->on_read(P->o->on_read_ctx, f->o.pos, f->t_start, sys_now() - P->t0,
			      f->streamed ? f->hashed : f->filled);
	free(f->spare);
	x_hash_free(f->hs);
	x_quick_free(f->qa);
	rd_close(f->o.rf, P->o->keep_cache);
	forget(s, f);
}

/* End the file with an error record (the next scan reads it again).
 * 1: ended; -1: out of memory (f is still there). */
static int fail(struct sweep *s, struct sf *f, int code, const char *msg)
{
	if (!f->job && !(f->job = pipe_job_new(s->P, &f->o, &f->tail, &f->spare)))
		return -1;
	drop_buffers(s, f);
	f->tail->err_code = code;
	snprintf(f->tail->error, sizeof(f->tail->error), "%s", msg);
	pipe_push_prepared(s->P, f->spare, f->job, NULL, 0, 0, f->seq, f->tail);
	f->spare = NULL;
	done(s, f);
	return 1;
}

/* Read the file whole after all, as without a schedule.  Returns 1 (the
 * file ended). */
static int fall_back(struct sweep *s, struct sf *f)
{
	drop_buffers(s, f);
	if (f->started_spread)
		atomic_fetch_add(&s->g->unswept, 1);
	pipe_read_whole(s->P, s->g, &f->o, s->y); /* takes path and handle */
	forget(s, f);
	return 1;
}

/* A streamed file's next bytes in logical order: hashed and queued, the
 * last with the tail.  -1 when out of memory (buf given back). */
static int queue_next(struct sweep *s, struct sf *f, uint8_t *buf, size_t len, size_t charge)
{
	struct pipe *P = s->P;
	int last = f->hashed + len >= f->size;

	if (f->hs)
		x_hash_update(f->hs, buf, len);
	if (f->qa)
		x_quick_feed(f->qa, f->hashed, buf, len);
	f->hashed += len;
	if (last) {
		f->job->got = f->hashed;
		pipe_check_after(f->o.rf, &f->o.info, f->tail);
		if (f->hs)
			x_hash_hex(f->hs, f->tail->hex);
		if (f->qa && f->hashed == f->size)
			x_quick_hex(f->qa, f->tail->qhex);
	}
	if (pipe_push(P, f->job, buf, len, charge, f->seq, last ? f->tail : NULL) != 0) {
		budget_release(&P->budget, buf, charge);
		return -1;
	}
	f->seq++;
	return 0;
}

/* Kept pieces that come next now are queued. */
static int hand_on(struct sweep *s, struct sf *f)
{
	size_t i = 0;
	while (i < f->nkept) {
		struct kept k = f->kept[i];
		if (k.off != f->hashed) {
			i++;
			continue;
		}
		f->kept[i] = f->kept[--f->nkept];
		if (queue_next(s, f, k.buf, k.len, k.charge) != 0)
			return -1;
		i = 0;
	}
	return 0;
}

/* After a piece in logical order: what was kept for after it is queued,
 * and the file ends if that was all.  As whole_piece. */
static int complete(struct sweep *s, struct sf *f)
{
	if (hand_on(s, f) != 0)
		return -1;
	if (f->hashed < f->size)
		return 0;
	done(s, f);
	return 1;
}

static int keep(struct sf *f, uint64_t off, uint8_t *buf, size_t len, size_t charge)
{
	if (sl_grow(&f->kept, &f->capkept, f->nkept + 1, sizeof(*f->kept)) != 0)
		return -1;
	f->kept[f->nkept].off = off;
	f->kept[f->nkept].buf = buf;
	f->kept[f->nkept].len = len;
	f->kept[f->nkept].charge = charge;
	f->nkept++;
	return 0;
}

/* The file's first op: read it whole now if the schedule cannot be
 * followed for it, else take its buffers.  1: handled whole (or its open
 * failed, recorded); 0: go on with the op; -1: out of memory. */
static int start(struct sweep *s, struct sf *f, const struct sched_op *op)
{
	struct pipe *P = s->P;
	const struct ft_file *ff = &P->ft->files[f->o.file];

	f->started = 1;
	f->started_spread = op->kind != SO_WHOLE && f->o.rc == SL_OK;
	if (f->o.rc != SL_OK || op->kind == SO_WHOLE || f->o.info.size != ff->size)
		return fall_back(s, f);
	f->t_start = sys_now() - P->t0;
	f->size = f->o.info.size;
	f->streamed = f->size > P->whole_max;
	go_random(f);
	if (f->streamed) {
		f->job = pipe_job_new(P, &f->o, &f->tail, &f->spare);
		if (!f->job || (!P->o->read_only && (x_hash_new(&f->hs) != SL_OK ||
						      !(f->qa = x_quick_new(f->size)))))
			return -1;
		f->head = P->chunk < f->size ? P->chunk : f->size;
		f->buf = budget_alloc(&P->budget, f->head, &f->charge, &P->xq, 1);
	} else {
		f->buf = budget_alloc(&P->budget, f->size, &f->charge, &P->xq, 1);
	}
	return f->buf ? 0 : -1;
}

/* A whole file's piece; queued with its last.  0: the file goes on; 1: it
 * ended; -1: out of memory (f is still there). */
static int whole_piece(struct sweep *s, struct sf *f, const struct sched_op *op)
{
	struct pipe *P = s->P;
	struct sl_err e;
	size_t got = 0;
	int rc;

	rc = pipe_rd(P, s->g, f->o.file, f->o.rf, f->buf + op->off, op->len, op->off, &got, &e);
	if (rc != SL_OK)
		return fail(s, f, rc, e.msg);
	if (got < op->len)
		return fall_back(s, f); /* shrank: its own read says how */
	f->filled += got;
	if (!op->last)
		return 0;
	if (f->filled != f->size) /* not what the schedule promised */
		return fall_back(s, f);
	f->job = pipe_job_new(P, &f->o, &f->tail, &f->spare);
	if (!f->job)
		return -1;
	f->job->got = f->size;
	pipe_check_after(f->o.rf, &f->o.info, f->tail);
	if (!P->o->read_only) {
		x_hash_once(f->buf, f->size, f->tail->hex);
		x_quick_once(f->buf, f->size, f->tail->qhex);
	}
	if (pipe_push(P, f->job, f->buf, f->size, f->charge, 0, f->tail) != 0)
		return -1; /* the buffer is still f's: cancel() gives it back */
	f->buf = NULL;
	f->seq = 1;
	done(s, f);
	return 1;
}

/* A streamed file shrank under the sweep (a read came short).  As
 * pipe_read_whole does: stored with what was read in order, with a
 * warning, so the next scan reads it again; before anything was queued it
 * is simply read whole now.  As whole_piece. */
static int shrank(struct sweep *s, struct sf *f)
{
	struct pipe *P = s->P;
	uint8_t *end;

	if (f->seq == 0) {
		f->o.path = f->job->path; /* back from the job: read it whole */
		free(f->job);
		free(f->tail);
		free(f->spare);
		f->job = NULL;
		f->tail = NULL;
		f->spare = NULL;
		return fall_back(s, f);
	}
	drop_buffers(s, f);
	end = malloc(1); /* an empty last item: a buffer, as an empty file's */
	if (!end)
		return -1;
	snprintf(f->tail->warn, sizeof(f->tail->warn), "shrank while being read (%llu of %llu bytes)",
		 (unsigned long long)f->hashed, (unsigned long long)f->size);
	f->job->got = f->hashed;
	if (f->hs)
		x_hash_hex(f->hs, f->tail->hex);
	pipe_push_prepared(P, f->spare, f->job, end, 0, 0, f->seq, f->tail);
	f->spare = NULL;
	done(s, f);
	return 1;
}

/* A streamed file's piece, by the op's kind: as whole_piece. */
static int stream_piece(struct sweep *s, struct sf *f, const struct sched_op *op)
{
	struct pipe *P = s->P;
	uint64_t at = op->off, end = op->off + op->len;
	struct sl_err e;
	size_t got = 0, charge;
	uint8_t *buf;
	int rc;

	if (op->off < f->head) {
		if (end > f->head || !f->buf)
			return fail(s, f, SL_E_IO, "extent schedule: a piece across the head");
		rc = pipe_rd(P, s->g, f->o.file, f->o.rf, f->buf + at, op->len, at, &got, &e);
		if (rc != SL_OK)
			return fail(s, f, rc, e.msg);
		if (got < op->len)
			return shrank(s, f);
		f->filled += got;
		if (f->filled < f->head)
			return 0;
		buf = f->buf;
		f->buf = NULL;
		if (queue_next(s, f, buf, f->head, f->charge) != 0)
			return -1;
		return complete(s, f);
	}
	if (op->kind == SO_AHEAD) {
		buf = budget_alloc(&P->budget, op->len, &charge, &P->xq, 1);
		if (!buf)
			return -1;
		rc = pipe_rd(P, s->g, f->o.file, f->o.rf, buf, op->len, at, &got, &e);
		if (rc == SL_OK && got == op->len && keep(f, at, buf, op->len, charge) == 0)
			return 0;
		budget_release(&P->budget, buf, charge);
		if (rc != SL_OK)
			return fail(s, f, rc, e.msg);
		return got < op->len ? shrank(s, f) : -1;
	}
	if (f->buf || at != f->hashed)
		return fail(s, f, SL_E_IO, "extent schedule: a piece out of logical order");
	while (at < end) {
		size_t want = (size_t)(end - at < P->chunk ? end - at : P->chunk);
		if (end - at > want) /* the piece's next chunk, while this one is copied */
			rd_advise_range(f->o.rf, at + want,
					end - at - want < P->chunk ? end - at - want : P->chunk);
		buf = budget_alloc(&P->budget, want, &charge, &P->xq, 1);
		if (!buf)
			return -1;
		rc = pipe_rd(P, s->g, f->o.file, f->o.rf, buf, want, at, &got, &e);
		if (rc != SL_OK || got < want) {
			budget_release(&P->budget, buf, charge);
			return rc != SL_OK ? fail(s, f, rc, e.msg) : shrank(s, f);
		}
		if (queue_next(s, f, buf, want, charge) != 0)
			return -1;
		at += want;
		if (at < end && pipe_stopping(P))
			return 0; /* the sweep's stop cancels it */
	}
	return complete(s, f);
}

/* Open the file of op ahead of its turn and ask the kernel for the
 * piece.  -1: out of memory. */
static int look(struct sweep *s, const struct sched_op *op)
{
	struct sf *f = find(s, op->file);

	if (!f) {
		if (!op->first)
			return 0; /* ended early (read whole, failed): skipped */
		if (!(f = sf_open(s, op->file)))
			return -1;
	}
	if (f->o.rc != SL_OK)
		return 0;
	if (op->kind == SO_WHOLE) {
		/* big files are streamed with FADV_SEQUENTIAL instead */
		if (f->o.info.size <= s->P->whole_max)
			rd_advise_willneed(f->o.rf);
		return 0;
	}
	go_random(f);
	rd_advise_range(f->o.rf, op->off, op->len < LOOK_BYTES ? op->len : LOOK_BYTES);
	return 0;
}

static uint64_t look_cost(const struct sched_op *op)
{
	return op->len < LOOK_BYTES ? op->len : LOOK_BYTES;
}

void pipe_sweep(struct pipe *P, struct rgroup *g, struct yd *y)
{
	struct sweep s;
	const struct sched_op *ops = g->g->ops;
	size_t n = g->g->nops, i, adv = 0;
	uint64_t ahead = 0; /* look_cost of ops [i, adv) */
	int oom = 0;

	memset(&s, 0, sizeof(s));
	atomic_store(&g->swept, 1);
	s.P = P;
	s.g = g;
	s.y = y;
	s.pg = g->g;
	for (i = 0; i < n && !oom && !pipe_stopping(P); i++) {
		const struct sched_op *op = &ops[i];
		struct sf *f;
		int r;

		if (y)
			yd_wait(y, pipe_stop_cb, P);
		while (adv < n && adv <= i + LOOK_OPS && (adv == i || ahead < LOOK_BYTES)) {
			if (adv > i && look(&s, &ops[adv]) != 0) {
				oom = 1;
				break;
			}
			ahead += look_cost(&ops[adv]);
			adv++;
		}
		if (oom)
			break;
		ahead -= look_cost(op);
		f = find(&s, op->file);
		if (!f) {
			if (!op->first)
				continue;
			if (!(f = sf_open(&s, op->file))) {
				oom = 1;
				break;
			}
		}
		r = f->started ? 0 : start(&s, f, op);
		if (r == 0 && (op->off > f->size || op->len > f->size - op->off))
			r = fail(&s, f, SL_E_IO, "extent schedule: a piece past the end");
		if (r == 0)
			r = f->streamed ? stream_piece(&s, f, op) : whole_piece(&s, f, op);
		if (r == 0 && !op->hole && P->o->on_piece)
			P->o->on_piece(P->o->on_piece_ctx, op->phys, op->len, sys_now() - P->t0);
		if (r < 0) { /* f is still there */
			cancel(&s, f);
			oom = 1;
		}
	}
	if (oom)
		pipe_nomem(P);
	/* stopped early; or, were the schedule wrong, files it left unfinished:
	 * an error each, so the next scan reads them again */
	while (s.nact > 0) {
		struct sf *f = s.act[s.nact - 1];
		if (pipe_stopping(P) || !f->started ||
		    fail(&s, f, SL_E_IO, "extent schedule: left unfinished") < 0)
			cancel(&s, f);
	}
	free(s.act);
}
