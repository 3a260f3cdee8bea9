/* pipe_extract.c - the extractors (pipe_int.h): a file's first bytes
 * parsed and hashed, a streamed file's later chunks fed in order to its
 * catch, and the record made when its last chunk is in. */
#include "indexer/pipe_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/sys.h"
#include "indexer/formats/parsers.h"

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
		pipe_nomem(P);
		return;
	}
	r->file = job->file;
	r->path = job->path;
	r->dev = job->info.dev;
	r->ino = job->info.ino;
	r->mtime_ns = job->info.mtime_ns;
	r->ctime_ns = job->info.ctime_ns;
	r->btime_ns = job->info.btime_ns;
	r->stat_wall_ns = job->opened_ns;
	pipe_fill_location(P->ft, r);
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
		memcpy(r->quick_hash, tail->qhex, sizeof(r->quick_hash));
		r->have_phash = job->have_phash;
		r->phash = job->phash;
		r->phash_src = job->phash_src;
		if (job->meta_rc != SL_OK) {
			r->err_code = job->meta_rc;
			snprintf(r->error, sizeof(r->error), "%s", job->meta_err);
		}
		if (tail->warn[0])
			x_warn(&r->meta, "%s", tail->warn);
	}
	queue_push(&P->sq, r);
}

/* pending: read in part, of a file a full read holds whole (scan
 * --quick): a hash its head cannot give is left, without a warning, to the
 * read that completes the file */
static void phash(struct job *job, const struct item *it, int pending)
{
	struct sl_err e;
	const char *src = NULL;
	int rc = x_phash(it->buf, it->len, !job->streamed && !job->quick, &job->meta, &job->phash,
			 &src, &e);

	if (rc == SL_OK) {
		job->have_phash = 1;
		job->phash_src = src;
	} else if (rc == SL_E_NOMEM) {
		/* an error, not a warning: the next scan reads the file again */
		job->meta_rc = rc;
		snprintf(job->meta_err, sizeof(job->meta_err), "%s", e.msg);
	} else if (!pending && (!(job->streamed || job->quick) || job->meta.pics.preview_len)) {
		x_warn(&job->meta, "%s", e.msg);
	}
}

/* Whether to leave job's perceptual hash for the next scan: the disk is
 * ahead of the extractors (more files it served wait than defer_backlog,
 * or a reader waits for memory to read more), so a hash made now delays
 * the scan's end, or the disk itself.  A hash is most of a picture's
 * extraction (a PNG or WebP decoded whole, a JPEG without a usable
 * thumbnail: 2 to 40 ms against 20 to 100 us for its metadata); leaving
 * it lets the extractor catch up at once, and it hashes again as soon as
 * it has.  Files from the page cache cost the disk nothing (a warm scan
 * hashes all), and a file read only for its hash is never left: leaving
 * it would gain nothing. */
static int defer(struct pipe *P, const struct job *job)
{
	if (!P->o->phash_defer || !job->from_disk ||
	    (P->ft->files[job->file].flags & FT_REHASH))
		return 0;
	if (queue_len(&P->xq) <= P->defer_backlog && !budget_starved(&P->budget))
		return 0;
	atomic_fetch_add(&P->phash_deferred, 1);
	return 1;
}

/* An error, not a warning: the next scan reads the file again. */
static void stream_nomem(struct job *job)
{
	job->meta_rc = SL_E_NOMEM;
	snprintf(job->meta_err, sizeof(job->meta_err), "out of memory for the sections caught while streaming");
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
			else if (P->o->phash && x_phashable(job->meta.format) && defer(P, job))
				job->phash_deferred = 1;
			else if (P->o->phash && x_phashable(job->meta.format))
				/* a streamed file: from what its first chunk holds */
				phash(job, it, job->quick && job->info.size <= P->whole_max);
			/* "none": tried, or streamed, not again; NULL: pending */
			if (P->o->phash && !job->have_phash && !job->phash_deferred &&
			    x_phashable(job->meta.format))
				job->phash_src = job->quick && job->info.size <= P->whole_max
							 ? NULL
							 : "none";
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
	/* a quick job's catch, fed by its reader */
	if (it->tail && it->tail->follow && !P->o->read_only && job->meta_rc == SL_OK &&
	    !it->tail->err_code && !it->tail->cancelled) {
		if (x_stream_end(it->tail->follow, &job->meta) != SL_OK)
			stream_nomem(job);
		it->tail->follow = NULL;
	}
	budget_release(&P->budget, it->buf, it->charge);
	if (it->tail) {
		x_stream_free(job->follow); /* a read that failed or was cancelled */
		job->follow = NULL;
		x_stream_free(it->tail->follow);
		it->tail->follow = NULL;
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

void *pipe_extractor_main(void *arg)
{
	struct pipe *P = arg;
	struct item *it;
	double busy = 0;

	if (P->o->background) {
		char how[160];
		sys_background(how, sizeof(how));
	}
	while ((it = queue_pop(&P->xq, 0, NULL)) != NULL) {
		double t = sys_now();
		process(P, it);
		busy += sys_now() - t;
	}
	pthread_mutex_lock(&P->stat_mu);
	P->extract_s += busy;
	pthread_mutex_unlock(&P->stat_mu);
	if (atomic_fetch_sub(&P->extractors_left, 1) == 1)
		queue_close(&P->sq);
	return NULL;
}
