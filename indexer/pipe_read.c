/* pipe_read.c - one file read (pipe_int.h): opened and checked against
 * what the locate pass saw, read whole or in chunks into budgeted
 * buffers, hashed as its bytes come and queued for the extractors.  The
 * reader threads (pipe_reader.c) and the sweep (pipe_sweep.c) call it. */
#include "indexer/pipe_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/strbuf.h"
#include "common/sys.h"
#include "indexer/yield.h"

static _Thread_local struct rslot *my_slot;

/* Queue an error record for the store loop (reader threads). */
static void emit_error(struct pipe *P, uint32_t file, char *path, int code, const char *msg)
{
	struct px_record *r = malloc(sizeof(*r));

	if (!r) {
		free(path);
		pipe_nomem(P);
		return;
	}
	pipe_fill_error(P->ft, r, file, path, code, msg);
	queue_push(&P->sq, r);
}

void pipe_push_prepared(struct pipe *P, struct item *it, struct job *job, uint8_t *buf,
			  size_t len, size_t charge, int seq, struct tail *tail)
{
	it->job = job;
	it->buf = buf;
	it->len = len;
	it->charge = charge;
	it->seq = seq;
	it->tail = tail;
	queue_push(&P->xq, it);
}

int pipe_push(struct pipe *P, struct job *job, uint8_t *buf, size_t len, size_t charge,
		     int seq, struct tail *tail)
{
	struct item *it = malloc(sizeof(*it));
	if (!it)
		return -1;
	pipe_push_prepared(P, it, job, buf, len, charge, seq, tail);
	return 0;
}

/* Whether what was opened is the file the locate pass saw and the diff
 * judged: the same device and inode, and birth time where both know one. */
static int same_file(const struct ftab *ft, uint32_t file, const struct rd_info *info)
{
	const struct ft_file *f = &ft->files[file];
	return info->ino == f->ino && info->dev == ft->devs[f->dev].st_dev &&
	       !(info->btime_ns && f->btime_ns && info->btime_ns != f->btime_ns);
}

void pipe_open(struct pipe *P, size_t pos, struct opened *o)
{
	uint32_t file = P->pl->seq[pos];
	struct strbuf rel = STRBUF_INIT;
	const struct anchor *a;

	memset(o, 0, sizeof(*o));
	o->pos = pos;
	o->file = file;
	o->path = pipe_path_of(P, file);
	/* opened below its root's anchor, never by its path; a pool's file on
	 * its branch (ftab.via), its record keeping the pool's path */
	a = ftab_read_at(P->ft, file, &rel);
	if (!o->path || rel.oom) {
		free(o->path);
		o->path = NULL;
		sb_free(&rel);
		o->rc = SL_E_NOMEM;
		SL_FAIL(&o->e, SL_E_NOMEM, 0, "pipeline: out of memory");
		return;
	}
	o->rc = a ? rd_open(a, rel.p, &o->rf, &o->info, &o->e)
		  : SL_FAIL(&o->e, SL_E_IO, 0, "open: its root is not held open (not walked)");
	sb_free(&rel);
	o->opened_ns = sys_wall_ns();
	/* before a byte is read: another file at that name since the walk is
	 * an error (docs/security.md), and the next scan looks again */
	if (o->rc == SL_OK && (P->ft->files[file].flags & FT_STATED) &&
	    !same_file(P->ft, file, &o->info)) {
		rd_close(o->rf, 1);
		o->rf = NULL;
		o->rc = SL_FAIL(&o->e, SL_E_IO, 0, "open: replaced since the walk");
	}
}

struct job *pipe_job_new(struct pipe *P, struct opened *o, struct tail **tail,
			 struct item **spare)
{
	struct job *job = calloc(1, sizeof(*job));

	*tail = calloc(1, sizeof(**tail));
	*spare = malloc(sizeof(**spare));
	if (!job || !*tail || !*spare) {
		free(job);
		free(*tail);
		free(*spare);
		*tail = NULL;
		*spare = NULL;
		return NULL;
	}
	job->file = o->file;
	job->path = o->path;
	o->path = NULL;
	job->info = o->info;
	job->opened_ns = o->opened_ns;
	job->streamed = o->info.size > P->whole_max;
	job->from_disk = !o->rf || rd_cached(o->rf) <= 0; /* -1: judged on the first read */
	return job;
}

int pipe_rd(struct pipe *P, struct rgroup *g, uint32_t file, struct rd_file *rf, uint8_t *buf,
	    size_t len, uint64_t off, size_t *got, struct sl_err *e)
{
	int rc;

	if (my_slot) {
		atomic_store(&my_slot->file, file);
		atomic_store(&my_slot->since_us, (long long)((sys_now() - P->t0) * 1e6) + 1);
	}
	rc = rd_read(rf, buf, len, off, got, e);
	if (my_slot)
		atomic_store(&my_slot->since_us, 0);
	atomic_fetch_add(&P->bytes_read, *got);
	atomic_fetch_add(&g->bytes, *got);
	return rc;
}

void pipe_check_after(struct rd_file *rf, const struct rd_info *info, struct tail *tail)
{
	struct rd_info after;
	struct sl_err e;

	if (rd_stat(rf, &after, &e) == SL_OK &&
	    (after.mtime_ns != info->mtime_ns || after.size != info->size ||
	     after.ctime_ns != info->ctime_ns))
		snprintf(tail->warn, sizeof(tail->warn), "modified while being read");
}

/* Where rd_cached cannot tell (-1), a first read of at least
 * CACHE_JUDGED_MIN bytes that came at CACHE_SPEED or more was the page
 * cache's: no disk a photo drive sits on gives 1 GB/s, memory gives ten. */
#define CACHE_JUDGED_MIN ((size_t)64 << 10)
#define CACHE_SPEED 1e9

/* A file a full read holds whole, read in part when its head holds all
 * that the whole file gives its record (x_quick_ok): its first
 * X_QUICK_HEAD bytes, then its last X_QUICK_SPAN (for the partial hash and
 * the check of its end).  Returns 1 when read so (its head queued as the
 * file's one item), 0 when it is to be read whole, as by any scan: a head
 * that is not enough, or anything unusual (an error, a file that shrank or
 * changed) that the whole read will record as it always does; nothing of
 * o is taken then.  The head is still in the page cache for that read. */
static int read_head_only(struct pipe *P, struct rgroup *g, struct opened *o)
{
	struct rd_info info = o->info;
	uint64_t size = info.size;
	size_t got = 0, tgot = 0, charge = 0;
	uint8_t *buf = NULL, *tbuf = NULL;
	struct x_quick *qa = NULL;
	struct tail *tail = NULL;
	struct item *spare = NULL;
	struct job *job;
	struct x_meta m;
	struct sl_err e;
	double t_start = sys_now() - P->t0, t_rd;
	int from_disk, rc, ret = 0;

	memset(&m, 0, sizeof(m));
	if (!(buf = budget_alloc(&P->budget, X_QUICK_HEAD, &charge, &P->xq, rd_cached(o->rf) <= 0)))
		goto oom;
	t_rd = sys_now();
	rc = pipe_rd(P, g, o->file, o->rf, buf, X_QUICK_HEAD, 0, &got, &e);
	from_disk = rd_cached(o->rf) == 0 ||
		    (rd_cached(o->rf) < 0 && (got < CACHE_JUDGED_MIN ||
					      (double)got / (sys_now() - t_rd + 1e-9) < CACHE_SPEED));
	if (rc != SL_OK || got < X_QUICK_HEAD || x_extract(buf, got, size, &m, &e) != SL_OK ||
	    !x_quick_ok(&m, NULL, 0))
		goto whole;
	/* outside the budget: a reader never waits for budget while holding
	 * some (several readers holding heads would wait for one another) */
	if (!(tbuf = malloc(X_QUICK_SPAN)))
		goto oom;
	rc = pipe_rd(P, g, o->file, o->rf, tbuf, X_QUICK_SPAN, size - X_QUICK_SPAN, &tgot, &e);
	if (rc != SL_OK || tgot < X_QUICK_SPAN || !x_quick_ok(&m, tbuf, tgot))
		goto whole;
	if (!(qa = x_quick_new(size)) || !(job = pipe_job_new(P, o, &tail, &spare)))
		goto oom;
	pipe_check_after(o->rf, &info, tail);
	if (tail->warn[0]) { /* changed while read: read whole, which says so */
		o->path = job->path;
		free(job);
		free(tail);
		free(spare);
		goto whole;
	}
	x_quick_feed(qa, 0, buf, got);
	x_quick_feed(qa, size - X_QUICK_SPAN, tbuf, tgot);
	x_quick_hex(qa, tail->qhex);
	x_quick_free(qa);
	free(tbuf);
	x_meta_release(&m);
	job->quick = 1;
	job->streamed = 0;
	job->from_disk = from_disk;
	job->got = size;
	if (pipe_push(P, job, buf, got, charge, 0, tail) != 0) {
		/* nothing queued: the job is still ours */
		budget_release(&P->budget, buf, charge);
		free(job->path);
		free(job);
		free(tail);
		free(spare);
		rd_close(o->rf, P->o->keep_cache);
		pipe_nomem(P);
		return 1;
	}
	free(spare);
	atomic_fetch_add(&g->files, 1);
	if (P->o->on_read)
		P->o->on_read(P->o->on_read_ctx, o->pos, t_start, sys_now() - P->t0, got + tgot);
	rd_close(o->rf, P->o->keep_cache);
	return 1;
oom:
	ret = -1;
whole:
	if (buf)
		budget_release(&P->budget, buf, charge);
	free(tbuf);
	x_quick_free(qa);
	x_meta_release(&m);
	return ret;
}

int pipe_quick_part(const struct pipe *P, uint64_t size)
{
	/* past its head and tail, a file worth a seek (PX_QUICK_GAP) */
	return P->o->quick && !P->o->read_only && size <= P->whole_max &&
	       size > X_QUICK_HEAD + X_QUICK_SPAN + PX_QUICK_GAP;
}

/* The catch a quick read follows: what the head's format reads past it
 * (x_stream_new), fed the head.  NULL when it needs nothing more, or the
 * head does not parse (the extractor says why). */
static struct x_stream *catch_of(const uint8_t *head, size_t n, uint64_t size, int *more,
				 int *nomem)
{
	struct x_meta m;
	struct x_stream *s = NULL;
	struct sl_err e;

	memset(&m, 0, sizeof(m));
	if (x_extract(head, n, size, &m, &e) == SL_OK && x_stream_new(&m, size, &s) != SL_OK)
		*nomem = 1;
	x_meta_release(&m);
	/* a catch that has all it wants from the head still goes on to the
	 * extractor, which takes what it caught */
	*more = s && x_stream_feed(s, head, n);
	return s;
}

/* The bytes read_quick reads at a time past the head: what the catch
 * asks for comes in pieces (it takes any split), and the tail fits. */
#define QUICK_SCRATCH ((size_t)256 << 10)

/* A file read in part (px_opts.quick): its head, then what the catch
 * asks for past it, in order of offset (a movie's moov behind its media
 * data), then its last X_QUICK_SPAN bytes for the partial hash.  One
 * item goes to the extractors: the head, with the catch in its tail. */
static void read_quick(struct pipe *P, struct rgroup *g, struct opened *o, struct yd *y)
{
	uint32_t file = o->file;
	struct rd_file *rf = o->rf;
	struct rd_info info = o->info;
	uint64_t size = info.size, at, reached;
	size_t hlen = (size_t)(size < P->chunk ? size : P->chunk), got = 0, charge;
	struct tail *tail = NULL;
	struct item *spare = NULL;
	struct job *job = pipe_job_new(P, o, &tail, &spare);
	struct x_quick *qa = x_quick_new(size);
	struct x_stream *s = NULL;
	uint8_t *buf = NULL, *cbuf = NULL;
	struct sl_err e;
	double t_start = sys_now() - P->t0, t_rd;
	int rc, nomem = 0, more;

	if (!job || !qa)
		goto oom;
	job->quick = 1;
	job->streamed = 0; /* one item: nothing to keep in order */
	buf = budget_alloc(&P->budget, hlen, &charge, &P->xq, rd_cached(rf) <= 0);
	if (!buf)
		goto oom;
	t_rd = sys_now();
	rc = pipe_rd(P, g, file, rf, buf, hlen, 0, &got, &e);
	if (rd_cached(rf) < 0)
		job->from_disk = got < CACHE_JUDGED_MIN ||
				 (double)got / (sys_now() - t_rd + 1e-9) < CACHE_SPEED;
	x_quick_feed(qa, 0, buf, got);
	reached = got;
	more = 0;
	if (rc == SL_OK && got == hlen)
		s = catch_of(buf, got, size, &more, &nomem);
	if (nomem)
		goto oom;
	/* what the catch asks for, then the tail; a chunk's buffer reused */
	while (rc == SL_OK && got == hlen && !pipe_stopping(P)) {
		size_t want, cgot = 0;

		at = more ? x_stream_next(s) : UINT64_MAX;
		/* what the catch wants in the last X_QUICK_SPAN: read from
		 * where that begins, for the partial hash (the catch skips
		 * what it does not want) */
		if (at < size && at > x_quick_tail(size))
			at = x_quick_tail(size) > reached ? x_quick_tail(size) : reached;
		if (at >= size) {
			more = 0;
			at = x_quick_tail(size);
			if (at < reached)
				at = reached; /* read already, in part or whole */
			if (at >= size)
				break;
		}
		want = (size_t)(size - at < QUICK_SCRATCH ? size - at : QUICK_SCRATCH);
		/* outside the budget, as read_head_only's tail */
		if (!cbuf && !(cbuf = malloc(QUICK_SCRATCH)))
			goto oom;
		if (y)
			yd_wait(y, pipe_stop_cb, P);
		rc = pipe_rd(P, g, file, rf, cbuf, want, at, &cgot, &e);
		x_quick_feed(qa, at, cbuf, cgot);
		if (at + cgot > reached)
			reached = at + cgot;
		if (rc == SL_OK && cgot < want) {
			snprintf(tail->warn, sizeof(tail->warn),
				 "shrank while being read (%llu of %llu bytes)",
				 (unsigned long long)(at + cgot), (unsigned long long)size);
			break;
		}
		if (!more)
			break;
		more = x_stream_feed_at(s, at, cbuf, cgot);
	}
	free(cbuf);
	cbuf = NULL;
	if (rc != SL_OK) {
		tail->err_code = rc;
		snprintf(tail->error, sizeof(tail->error), "%s", e.msg);
	} else if (got < hlen) {
		snprintf(tail->warn, sizeof(tail->warn), "shrank while being read (%zu of %llu bytes)",
			 got, (unsigned long long)size);
	} else if (pipe_stopping(P)) {
		tail->cancelled = 1;
	} else if (!tail->warn[0]) {
		pipe_check_after(rf, &info, tail);
	}
	if (!tail->err_code && !tail->warn[0])
		x_quick_hex(qa, tail->qhex);
	tail->follow = s;
	s = NULL;
	job->got = size;
	if (pipe_push(P, job, buf, got, charge, 0, tail) != 0) {
		budget_release(&P->budget, buf, charge);
		buf = NULL;
		goto oom; /* which frees the catch in the tail */
	}
	atomic_fetch_add(&g->files, 1);
	if (P->o->on_read)
		P->o->on_read(P->o->on_read_ctx, o->pos, t_start, sys_now() - P->t0, got);
	free(spare);
	x_quick_free(qa);
	rd_close(rf, P->o->keep_cache);
	return;
oom:
	if (buf)
		budget_release(&P->budget, buf, charge);
	free(cbuf);
	x_stream_free(s);
	if (job) {
		x_stream_free(tail->follow);
		free(job->path);
		free(job);
	} else {
		free(o->path);
	}
	free(tail);
	free(spare);
	x_quick_free(qa);
	rd_close(rf, P->o->keep_cache);
	pipe_nomem(P);
}

void pipe_read_whole(struct pipe *P, struct rgroup *g, struct opened *o, struct yd *y)
{
	uint32_t file = o->file;
	struct rd_file *rf = o->rf;
	struct rd_info info = o->info;
	struct job *job = NULL;
	struct tail *tail = NULL;
	struct item *spare = NULL; /* ends the job if memory runs out mid-file */
	struct x_hash *hs = NULL;  /* a streamed file's content hash so far */
	struct x_quick *qa = NULL; /* the partial hash, for every file read */
	struct sl_err e;
	char *path = o->path;
	uint64_t off = 0, size;
	int seq = 0, rc = o->rc, hs_dropped = 0;
	double t_start = sys_now() - P->t0, t_rd;

	if (!path) {
		pipe_nomem(P);
		return;
	}
	if (rc != SL_OK) {
		if (sl_code_is_fatal(rc)) {
			struct sl_err fe;
			SL_FAIL(&fe, rc, 0, "%s: %s", path, o->e.msg);
			fe.sys = o->e.sys;
			pipe_set_fatal(P, &fe);
			free(path);
		} else {
			emit_error(P, file, path, rc, o->e.msg);
		}
		return;
	}
	/* A file the page cache holds asks nothing of the disk: reading it
	 * far ahead of the extractors only spreads the bytes in flight over
	 * fresh memory (issue 41: 85 page faults a file on a warm scan).  The
	 * reader waits for them then, and only then: for a file the disk
	 * serves it never waits. */
	if (rd_cached(rf) > 0)
		queue_wait_below(&P->xq, P->warm_ahead);
	if (P->o->quick && !P->o->read_only && info.size > P->whole_max) {
		read_quick(P, g, o, y);
		return;
	}
	if (pipe_quick_part(P, info.size)) {
		int done = read_head_only(P, g, o);
		if (done < 0)
			goto oom;
		if (done)
			return;
	}
	job = pipe_job_new(P, o, &tail, &spare);
	if (!job)
		goto oom;
	path = NULL;
	size = info.size;
	if (!P->o->read_only && !(qa = x_quick_new(size)))
		goto oom;
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
			yd_wait(y, pipe_stop_cb, P);
		buf = budget_alloc(&P->budget, want, &charge, &P->xq, rd_cached(rf) <= 0);
		if (!buf)
			goto oom;
		t_rd = sys_now();
		rc = want ? pipe_rd(P, g, file, rf, buf, want, off, &got, &e) : SL_OK;
		/* Where the page cache cannot be asked, bytes that came faster
		 * than any disk serves them were in memory (the pending hash,
		 * pipe_extract.c, is for files the disk serves) */
		if (seq == 0 && rd_cached(rf) < 0)
			job->from_disk = got < CACHE_JUDGED_MIN ||
					 (double)got / (sys_now() - t_rd + 1e-9) < CACHE_SPEED;
		off += got;
		last = rc != SL_OK || got < want || off >= size;
		if (!last && pipe_stopping(P)) {
			tail->cancelled = 1;
			last = 1;
		}
		/* past PX_HOLES_MAX of holes: what the head said is kept, and no
		 * content hash, rather than zeros hashed for minutes (a 16 TiB
		 * sparse file costs an ext4 user nothing to make) */
		if (!last && rd_holes(rf) > PX_HOLES_MAX) {
			hs_dropped = 1;
			last = 1;
		}
		if (last) {
			if (rc != SL_OK) {
				tail->err_code = rc;
				snprintf(tail->error, sizeof(tail->error), "%s", e.msg);
			} else if (hs_dropped) {
				snprintf(tail->warn, sizeof(tail->warn),
					 "sparse: more than %llu MiB of holes; read no further, "
					 "no content hash", (unsigned long long)(PX_HOLES_MAX >> 20));
			} else if (off < size) {
				snprintf(tail->warn, sizeof(tail->warn),
					 "shrank while being read (%llu of %llu bytes)",
					 (unsigned long long)off, (unsigned long long)size);
			} else {
				pipe_check_after(rf, &info, tail);
			}
			/* the size is the file's, read to its end or not */
			job->got = hs_dropped ? size : off;
		}
		/* The reader hashes what it has just copied, while it is in its
		 * own cache; on another core the extractor would fetch every
		 * line again (the hash was half of its time in a warm scan). */
		if (qa) {
			x_quick_feed(qa, off - got, buf, got);
			if (last && !tail->err_code && !hs_dropped && off == size)
				x_quick_hex(qa, tail->qhex);
		}
		if (!P->o->read_only) {
			if (hs) {
				x_hash_update(hs, buf, got);
				if (last && !hs_dropped)
					x_hash_hex(hs, tail->hex);
			} else if (last) {
				x_hash_once(buf, got, tail->hex);
			}
		}
		if (pipe_push(P, job, buf, got, charge, seq, last ? tail : NULL) != 0) {
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
	x_quick_free(qa);
	rd_close(rf, P->o->keep_cache);
	return;
oom:
	/* Once an item is queued the job belongs to the extractors: a last,
	 * empty and cancelled item ends it there, so they free it (nothing is
	 * stored; the run stops anyway). */
	if (job && seq > 0) {
		tail->cancelled = 1;
		pipe_push_prepared(P, spare, job, NULL, 0, 0, seq, tail);
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
	x_quick_free(qa);
	rd_close(rf, P->o->keep_cache);
	pipe_nomem(P);
}

void pipe_reader_slot(struct pipe *P, struct rgroup *g)
{
	my_slot = &P->slots[atomic_fetch_add(&P->nslots, 1)];
	my_slot->group = (uint32_t)(g - P->groups);
}
