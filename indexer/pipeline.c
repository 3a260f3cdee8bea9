/* pipeline.c - a run (pipeline.h): its state set up with the options'
 * defaults resolved once, the threads started, the caller's thread storing
 * the records, the figures collected.  The readers are pipe_reader.c, the
 * extractors pipe_extract.c, the shared state pipe_int.h (which says what
 * calls what). */
#include "indexer/formats/heif.h"
#include "indexer/pipe_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/strbuf.h"
#include "common/sys.h"

#define QUEUE_CAP 1024
/* files the reader hands the extractors at once, records the extractors
 * hand the store loop (see queue.h), and how long either may wait */
#define XQ_BATCH 4
/* Files from the disk waiting for each extractor past which it leaves
 * perceptual hashes for the next scan (px_opts.phash_defer): the scan
 * then ends at most this many hashes per extractor after its disks (8
 * took 1.07x the time of --no-phash on the emulated disk, 4 took 1.00x:
 * docs/benchmarks.md). */
#define DEFER_BACKLOG 4
#define XQ_LAG 0.002
#define SQ_BATCH 32
#define SQ_LAG 0.02

static void store_one(struct pipe *P, px_sink_fn sink, void *ctx, const struct px_record *r,
		      struct px_stats *st)
{
	struct sl_err e;
	double t = sys_now();
	int rc = sink(ctx, r, &e);

	st->store_s += sys_now() - t;
	if (rc != SL_OK)
		pipe_set_fatal(P, &e);
	else {
		st->files++;
		if (r->err_code)
			st->errors++;
	}
}

/* A file's record, and the same for each file joined with it
 * (ftab_join_links): other names of it, or files whose data is its data,
 * read once.  Each keeps its own identity and times, as the locate pass
 * stat'ed them: no later than the read, so the racy test is made against
 * the start of that pass; except another name of the inode read, whose
 * times are that inode's as checked at the read (same), so that all its
 * names are racy or none (one racy name made the next scan read a file
 * whose other name it had just recorded as settled). */
static void store(struct pipe *P, px_sink_fn sink, void *ctx, struct px_record *r,
		  struct px_stats *st)
{
	const struct ft_file *h = &P->ft->files[r->file];
	/* what was read is what the locate pass joined on: else the others
	 * are read again next scan, on their own if need be */
	int same = r->read && !r->err_code && r->ino == h->ino && r->size == h->size &&
		   r->mtime_ns == h->mtime_ns && r->ctime_ns == h->ctime_ns &&
		   r->btime_ns == h->btime_ns;
	uint32_t k;

	if (!atomic_load(&P->stop))
		store_one(P, sink, ctx, r, st);
	for (k = ftab_link_next(P->ft, r->file); k != FT_NONE && !atomic_load(&P->stop);
	     k = ftab_link_next(P->ft, k)) {
		const struct ft_file *f = &P->ft->files[k];
		struct px_record a = *r;
		if (!same) {
			char *path = pipe_path_of(P, k);
			if (!path) {
				pipe_nomem(P);
				break;
			}
			pipe_fill_error(P->ft, &a, k, path, SL_E_IO,
					"not read: the file it was joined with (same inode or "
					"same extents) changed or failed during the scan");
			store_one(P, sink, ctx, &a, st);
			free(path);
			continue;
		}
		a.file = k;
		a.size = f->size;
		a.ino = f->ino;
		a.mtime_ns = f->mtime_ns;
		a.ctime_ns = f->ctime_ns;
		a.btime_ns = f->btime_ns;
		a.stat_wall_ns = f->dev == h->dev && f->ino == h->ino ? r->stat_wall_ns
								      : P->ft->stat_begin_ns;
		pipe_fill_location(P->ft, &a);
		a.path = pipe_path_of(P, k);
		if (!a.path) {
			pipe_nomem(P);
			break;
		}
		store_one(P, sink, ctx, &a, st);
		free((char *)a.path);
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
	double limit = P->slow_read;
	long long now = (long long)((sys_now() - P->t0) * 1e6);
	size_t i;

	for (i = 0; i < nreaders; i++) {
		struct rslot *s = &P->slots[i];
		long long since = atomic_load(&s->since_us);
		char *path;
		if (!since || since == s->warned_us || (double)(now - since) < limit * 1e6)
			continue;
		s->warned_us = since;
		path = pipe_path_of(P, atomic_load(&s->file));
		P->o->on_slow(P->o->on_slow_ctx, path ? path : "?", P->pl->groups[s->group].name,
			      (double)(now - since) / 1e6);
		free(path);
	}
}

/* A sixteenth of the memory this process may use, from 64 MiB to 512 MiB.
 * On an aged disk the budget is what buys few sweeps (a quarter of it is
 * the sweeps' window): 64 MiB took 19 sweeps over 500 fragmented photos
 * and gained 1.33x over fs order, 512 MiB 3 sweeps and 1.97x
 * (docs/benchmarks.md, "Fragmented disks").  A sixteenth leaves a NAS box
 * of 1 GiB its 64 MiB and costs a desktop of 8 GiB or more 512 MiB at
 * most, and only while a scan holds that much: buffers are allocated as
 * files need them. */
size_t px_default_mem(void)
{
	const uint64_t lo = (uint64_t)64 << 20, hi = (uint64_t)512 << 20;
	uint64_t m = sys_mem_bytes() / 16;

	m = m < lo ? lo : m > hi ? hi : m;
	return m > SIZE_MAX ? SIZE_MAX : (size_t)m;
}

static size_t budget_total(size_t mem_budget)
{
	size_t total = mem_budget ? mem_budget : px_default_mem();
	return total < ((size_t)1 << 20) ? (size_t)1 << 20 : total;
}

/* A streamed file's chunk: what its first item gives the parsers. */
#define DEFAULT_CHUNK ((size_t)4 << 20)

/* Files a sweep keeps open at most.  On an aged disk the photos a window
 * holds at once are this many (256 of 600 KiB in 128 MiB; 64 made the
 * sweeps at --mem 512M twice as many, docs/benchmarks.md). */
#define SWEEP_OPEN 256
/* Descriptors kept for all else: the database, the walk, the readers of
 * groups without a schedule, the extractors' temporary files. */
#define FD_RESERVE 128

void px_mem(size_t mem_budget, struct plan_mem *m)
{
	size_t total = budget_total(mem_budget);
	/* descriptors are raised to the hard limit at start
	 * (sys_raise_fd_limit), often 4096 or more; half of what is left
	 * after the reserve goes to the sweeps, shared by the swept disks */
	size_t fds = sys_fd_limit();

	fds = fds > FD_RESERVE + 16 ? (fds - FD_RESERVE) / 2 : 8;
	m->total = total;
	m->whole_max = total / 4;
	/* held buffers may come from the pool at up to twice their size
	 * (budget.c): a quarter becomes at most a half */
	m->window = total / 4;
	m->grain = POOL_GRAIN;
	m->head = DEFAULT_CHUNK < m->whole_max ? DEFAULT_CHUNK : m->whole_max;
	m->max_open = SWEEP_OPEN;
	m->fds = fds > UINT32_MAX ? UINT32_MAX : (uint32_t)fds;
}

/* The options' defaults, resolved here only. */
static void resolve(struct pipe *P, const struct px_opts *o)
{
	size_t total = budget_total(o->mem_budget);

	budget_init(&P->budget, total);
	P->whole_max = total / 4;
	P->chunk = o->chunk ? o->chunk : DEFAULT_CHUNK;
	if (P->chunk > P->whole_max)
		P->chunk = P->whole_max;
	P->jobs = o->jobs > 0 ? o->jobs : sys_cpu_count();
	/* a batch for every extractor, and as much again ready behind it */
	P->warm_ahead = 2 * XQ_BATCH * (size_t)P->jobs;
	P->defer_backlog = DEFER_BACKLOG * (size_t)P->jobs;
	P->ssd_readers = o->ssd_readers > 0 ? o->ssd_readers : 4;
	P->stop_grace = o->stop_grace > 0 ? o->stop_grace : 10.0;
	P->slow_read = o->slow_read > 0 ? o->slow_read : 30.0;
}

/* The run's state, its groups and queues; *nreaders readers in all.  On
 * the heap: a stop that gives up on a reader stuck in a read leaves it,
 * and the threads waiting behind it, running with this (px_run).  NULL
 * when out of memory. */
static struct pipe *pipe_new(const struct ftab *ft, const struct plan *pl,
			     const struct px_opts *o, size_t *nreaders)
{
	struct pipe *P = calloc(1, sizeof(*P));
	size_t g;

	*nreaders = 0;
	if (!P)
		return NULL;
	P->ft = ft;
	P->pl = pl;
	P->o = o;
	resolve(P, o);
	pthread_mutex_init(&P->order_mu, NULL);
	pthread_cond_init(&P->order_cv, NULL);
	pthread_mutex_init(&P->fatal_mu, NULL);
	pthread_mutex_init(&P->stat_mu, NULL);
	P->t0 = sys_now();
	P->groups = calloc(pl->ngroups ? pl->ngroups : 1, sizeof(*P->groups));
	if (!P->groups || queue_init(&P->xq, QUEUE_CAP, XQ_BATCH, XQ_LAG) ||
	    queue_init(&P->sq, QUEUE_CAP, SQ_BATCH, SQ_LAG))
		return P; /* pipe_free knows a half-made one */
	for (g = 0; g < pl->ngroups; g++) {
		const struct plan_group *pg = &pl->groups[g];
		int n = pg->rotational == 0 ? P->ssd_readers : 1;
		if ((size_t)n > pg->count)
			n = pg->count ? (int)pg->count : 1;
		P->groups[g].P = P;
		P->groups[g].g = pg;
		P->groups[g].sequential = n == 1;
		atomic_init(&P->groups[g].cursor, 0);
		atomic_init(&P->groups[g].files, 0);
		atomic_init(&P->groups[g].bytes, 0);
		atomic_init(&P->groups[g].swept, 0);
		atomic_init(&P->groups[g].unswept, 0);
		atomic_init(&P->groups[g].readers_left, n);
		*nreaders += (size_t)n;
	}
	P->slots = calloc(*nreaders + 1, sizeof(*P->slots));
	atomic_init(&P->readers_left, (int)*nreaders);
	atomic_init(&P->extractors_left, P->jobs);
	return P;
}

static int pipe_whole(const struct pipe *P)
{
	return P->groups && P->xq.items && P->sq.items && P->slots;
}

static void pipe_free(struct pipe *P)
{
	free(P->groups);
	queue_destroy(&P->xq);
	queue_destroy(&P->sq);
	budget_destroy(&P->budget);
	pthread_mutex_destroy(&P->order_mu);
	pthread_cond_destroy(&P->order_cv);
	pthread_mutex_destroy(&P->fatal_mu);
	pthread_mutex_destroy(&P->stat_mu);
	free(P->slots);
	free(P);
}

/* Start the extractors, then the readers, into threads (*nthreads of
 * them).  SL_OK once one extractor runs; a reader that cannot start is a
 * fatal error of the run, as its files would never be read. */
static int start_threads(struct pipe *P, size_t nreaders, pthread_t *threads, size_t *nthreads,
			 struct sl_err *err)
{
	int jobs = P->jobs, e = 0, k, n;
	size_t g, i;

	if (nreaders == 0) {
		P->read_end = P->t0;
		queue_close(&P->xq);
	}
	for (i = 0; i < (size_t)jobs; i++) {
		if ((e = pthread_create(&threads[*nthreads], NULL, pipe_extractor_main, P)) != 0)
			break;
		(*nthreads)++;
	}
	if (*nthreads == 0)
		return SL_FAIL(err, SL_E_RESOURCE, e, "cannot start extractor threads");
	if (*nthreads < (size_t)jobs &&
	    atomic_fetch_sub(&P->extractors_left, jobs - (int)*nthreads) == jobs - (int)*nthreads)
		queue_close(&P->sq);
	for (g = 0; g < P->pl->ngroups && nreaders; g++) {
		n = atomic_load(&P->groups[g].readers_left);
		for (k = 0; k < n; k++) {
			if ((e = pthread_create(&threads[*nthreads], NULL, pipe_reader_main,
						&P->groups[g])) != 0) {
				struct sl_err te;
				SL_FAIL(&te, SL_E_RESOURCE, e, "cannot start reader thread");
				pipe_set_fatal(P, &te);
				pipe_reader_exit(P, &P->groups[g]);
				continue;
			}
			(*nthreads)++;
		}
	}
	/* Groups with no reader (no files) finish at once. */
	for (g = 0; g < P->pl->ngroups; g++)
		if (P->pl->groups[g].count == 0)
			P->groups[g].end = P->t0;
	return SL_OK;
}

/* Entries the walk or locate pass could not use get their record now,
 * straight to the sink: this thread is also the store queue's only
 * consumer, so queueing them could block it against itself. */
static void store_failed(struct pipe *P, px_sink_fn sink, void *ctx, struct px_stats *st)
{
	const struct ftab *ft = P->ft;
	size_t i;

	for (i = 0; i < ft->nfiles; i++) {
		const struct ft_file *f = &ft->files[i];
		struct px_record er;
		struct sl_err se;
		char *path;
		if (!(f->flags & FT_FAILED) || atomic_load(&P->stop))
			continue;
		path = pipe_path_of(P, (uint32_t)i);
		if (!path) {
			pipe_nomem(P);
			break;
		}
		pipe_fill_error(ft, &er, (uint32_t)i, path, SL_E_IO, ftab_str(ft, f->err));
		if (sink(ctx, &er, &se) != SL_OK)
			pipe_set_fatal(P, &se);
		else {
			st->files++;
			st->errors++;
		}
		free(path);
	}
}

/* Store the records as they come until the extractors are done.  Returns
 * 1 when a stop gave up waiting for a read that did not return. */
static int store_loop(struct pipe *P, px_sink_fn sink, void *ctx, struct px_stats *st,
		      size_t nreaders)
{
	const struct px_opts *o = P->o;
	struct px_progress prog;
	struct px_record *r;
	double last_progress = 0, stop_seen = 0;
	size_t g;

	memset(&prog, 0, sizeof(prog));
	prog.files_total = P->pl->n + P->pl->aliases;
	for (g = 0; g < P->pl->ngroups; g++)
		prog.bytes_total += P->pl->groups[g].bytes;
	for (;;) {
		int timed_out;
		r = queue_pop(&P->sq, 0.25, &timed_out);
		if (r)
			store(P, sink, ctx, r, st);
		else if (!timed_out) {
			/* the last line says where the run ended, not where it was
			 * a quarter of a second before */
			if (o->progress) {
				prog.files_done = st->files;
				prog.bytes_done = atomic_load(&P->bytes_read);
				prog.elapsed = sys_now() - P->t0;
				o->progress(o->progress_ctx, &prog);
			}
			return 0;
		}
		if (o->on_slow)
			slow_reads(P, nreaders);
		if (!r && pipe_stopping(P)) {
			/* Stopping waits for the reads in progress; one on a failing
			 * disk may never return.  After the grace, the records
			 * already made are stored and the rest is left behind. */
			if (!stop_seen)
				stop_seen = sys_now();
			else if (sys_now() - stop_seen > P->stop_grace)
				return 1;
		}
		if (o->progress && sys_now() - last_progress >= 0.25) {
			last_progress = sys_now();
			prog.files_done = st->files;
			prog.bytes_done = atomic_load(&P->bytes_read);
			prog.elapsed = last_progress - P->t0;
			o->progress(o->progress_ctx, &prog);
		}
	}
}

/* The run's figures, per group in gstats (st takes it). */
static void collect(struct pipe *P, struct px_stats *st, struct px_group_stats *gstats)
{
	size_t g;

	st->bytes = atomic_load(&P->bytes_read);
	st->read_s = (P->read_end ? P->read_end : sys_now()) - P->t0;
	st->extract_s = P->extract_s;
	st->phash_deferred = atomic_load(&P->phash_deferred);
	st->wall_s = sys_now() - P->t0;
	st->peak_inflight = P->budget.peak;
	for (g = 0; g < P->pl->ngroups; g++) {
		gstats[g].read_s = (P->groups[g].end ? P->groups[g].end : P->read_end) - P->t0;
		gstats[g].files = atomic_load(&P->groups[g].files);
		gstats[g].bytes = atomic_load(&P->groups[g].bytes);
		gstats[g].yield_s = P->groups[g].yield_s;
		gstats[g].pauses = P->groups[g].pauses;
		gstats[g].swept = atomic_load(&P->groups[g].swept);
		gstats[g].unswept = atomic_load(&P->groups[g].unswept);
	}
	st->groups = gstats;
	st->ngroups = P->pl->ngroups;
}

/* How the run ended: its fatal error, the caller's cancel, or SL_OK. */
static int outcome(struct pipe *P, struct sl_err *err)
{
	int rc = SL_OK;

	if (P->fatal) {
		pthread_mutex_lock(&P->fatal_mu);
		*err = P->fatal_err;
		rc = P->fatal;
		pthread_mutex_unlock(&P->fatal_mu);
	} else if (P->o->cancel && atomic_load(P->o->cancel)) {
		rc = SL_FAIL(err, SL_E_CANCELLED, 0,
			     "interrupted; what was read is stored, run again to complete the index");
	}
	return rc;
}

void px_prepare(void)
{
	heif_prepare();
}

int px_run(const struct ftab *ft, const struct plan *pl, const struct px_opts *o,
	   px_sink_fn sink, void *sink_ctx, struct px_stats *st, struct sl_err *err)
{
	struct pipe *P;
	pthread_t *threads = NULL;
	struct px_group_stats *gstats = NULL;
	size_t nthreads = 0, nreaders = 0, g, i;
	int rc;

	memset(st, 0, sizeof(*st));
	/* the decoders' buffers come and go with every picture */
	sys_keep_freed_memory();
	P = pipe_new(ft, pl, o, &nreaders);
	if (!P)
		return SL_FAIL(err, SL_E_NOMEM, 0, "pipeline: out of memory");
	st->jobs = P->jobs;
	gstats = calloc(pl->ngroups ? pl->ngroups : 1, sizeof(*gstats));
	threads = calloc(nreaders + (size_t)P->jobs + 1, sizeof(*threads));
	if (!pipe_whole(P) || !gstats || !threads) {
		rc = SL_FAIL(err, SL_E_NOMEM, 0, "pipeline: out of memory");
		goto out;
	}
	rc = start_threads(P, nreaders, threads, &nthreads, err);
	if (rc != SL_OK)
		goto out;
	store_failed(P, sink, sink_ctx, st);
	st->abandoned = store_loop(P, sink, sink_ctx, st, nreaders);
	for (i = 0; i < nthreads && !st->abandoned; i++)
		pthread_join(threads[i], NULL);
	collect(P, st, gstats);
	gstats = NULL;
	rc = outcome(P, err);
	if (st->abandoned) {
		/* The threads still use P, ft and pl: the caller must end the
		 * process without freeing those (px_stats.abandoned). */
		for (g = 0; g < pl->ngroups; g++)
			if (atomic_load(&P->groups[g].readers_left) > 0)
				snprintf(st->stuck, sizeof(st->stuck), "%s", pl->groups[g].name);
		i = strlen(err->msg);
		snprintf(err->msg + i, sizeof(err->msg) - i,
			 "; a read on %s did not return %.0f s after the stop (a failing disk?)",
			 st->stuck[0] ? st->stuck : "a disk", P->stop_grace);
		free(threads);
		return rc;
	}
out:
	free(threads);
	free(gstats);
	pipe_free(P);
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
