/* pipe_int.h - inside the pipeline (pipeline.h): the state its threads
 * share and the helpers they call.  The files call one another one way
 * only, each down to the ones below it (tools/dev/callgraph.py checks):
 *   pipeline.c      sets up a run and is its store loop; starts
 *   pipe_reader.c   the reader threads, which follow the plan directly or
 *   pipe_sweep.c    by an extent schedule, and both read each file with
 *   pipe_read.c     (opened, read whole or in chunks, hashed, queued);
 *   pipe_extract.c  the extractors (parse, perceptual hash, the streamed
 *                   catch, the record), started by pipeline.c;
 *   pipe_core.c     below all of them: the fatal error, the stop, paths,
 *                   an unreadable file's record.
 * Only these files include it. */
#ifndef SL_PIPE_INT_H
#define SL_PIPE_INT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "indexer/budget.h"
#include "indexer/pipeline.h"
#include "indexer/queue.h"
#include "indexer/reader.h"

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
	int phash_deferred;     /* left for the next scan (px_opts.phash_defer) */
	int quick;              /* read in part (px_opts.quick): one item, its
				   head (as a streamed file's first chunk); the
				   catch comes with its tail */
	int from_disk;          /* not all in the page cache when opened */
	uint64_t phash;
	const char *phash_src;
	uint64_t got;
};

/* The last item of a file carries how its reading ended. */
struct tail {
	int err_code;
	char error[384];
	char warn[160];
	int cancelled;
	char hex[33]; /* the content hash, made by the reader; "" read in part */
	char qhex[33]; /* the partial hash (x_quick_hex) */
	struct x_stream *follow; /* a quick job's catch, fed by its reader */
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
	atomic_int swept;           /* pipe_sweep followed its schedule */
	atomic_ullong unswept;      /* files it read whole after all */
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
	/* o's settings, defaults resolved once (resolve() in pipeline.c) */
	size_t whole_max, chunk;   /* files above whole_max stream in chunks */
	int jobs, ssd_readers;
	size_t warm_ahead; /* items a reader of cached files stays ahead by */
	size_t defer_backlog; /* items waiting past which hashes are deferred */
	double stop_grace, slow_read;
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
	atomic_ullong phash_deferred;
	struct rgroup *groups;
	struct rslot *slots; /* one per reader thread */
	atomic_int nslots;
};

/* pipe_core.c.  The run's first fatal error wins; every thread then stops. */
void pipe_set_fatal(struct pipe *P, const struct sl_err *e);
void pipe_nomem(struct pipe *P);
/* A fatal error, or the caller's cancel. */
int pipe_stopping(struct pipe *P);
/* The file's path, malloc'd; NULL when out of memory. */
char *pipe_path_of(struct pipe *P, uint32_t file);
/* For yd_wait: whether the run is stopping. */
int pipe_stop_cb(void *ctx);
/* Where the locate pass found the file. */
void pipe_fill_location(const struct ftab *ft, struct px_record *r);
/* Fill *r for a file that could not be opened or read, from what the
 * locate pass knew of it.  Takes path. */
void pipe_fill_error(const struct ftab *ft, struct px_record *r, uint32_t file, char *path,
		     int code, const char *msg);

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

struct yd;

/* pipe_read.c.  Whether a quick scan may read a file of size that a full
 * read holds whole for its ends only (read_head_only): a reader then asks
 * the kernel ahead for those ends, not for the whole file. */
int pipe_quick_part(const struct pipe *P, uint64_t size);

/* One file read (pipe_read.c).  The calling thread's slot (pipeline.h's
 * slow-read warning), taken once by each reader thread before it reads. */
void pipe_reader_slot(struct pipe *P, struct rgroup *g);
/* Open the file at plan position pos: o->rc says
 * how it went, o->path is NULL when out of memory. */
void pipe_open(struct pipe *P, size_t pos, struct opened *o);
/* Read an opened file and queue its bytes: whole when small, else chunk by
 * chunk; a failed open is recorded (or fatal).  Takes o's path and handle. */
void pipe_read_whole(struct pipe *P, struct rgroup *g, struct opened *o, struct yd *y);
/* A job for o's file, its tail and the spare item that ends it if memory
 * runs out once items are queued; takes o's path.  NULL when out of memory
 * (then nothing is taken). */
struct job *pipe_job_new(struct pipe *P, struct opened *o, struct tail **tail,
			 struct item **spare);
/* rd_read, counted and watched by the slow-read warning. */
int pipe_rd(struct pipe *P, struct rgroup *g, uint32_t file, struct rd_file *rf, uint8_t *buf,
	    size_t len, uint64_t off, size_t *got, struct sl_err *e);
/* After a file's last byte: a warning in tail if it changed since info. */
void pipe_check_after(struct rd_file *rf, const struct rd_info *info, struct tail *tail);
/* Queue an item for the extractors (it malloc'ed here: -1 when out of
 * memory, nothing queued; or given). */
int pipe_push(struct pipe *P, struct job *job, uint8_t *buf, size_t len, size_t charge, int seq,
	      struct tail *tail);
void pipe_push_prepared(struct pipe *P, struct item *it, struct job *job, uint8_t *buf,
			size_t len, size_t charge, int seq, struct tail *tail);
/* A one-reader group's files by its extent schedule (pipe_sweep.c). */
void pipe_sweep(struct pipe *P, struct rgroup *g, struct yd *y);

/* Thread bodies: a reader of group arg (a struct rgroup; pipe_reader.c),
 * an extractor of pipe arg (pipe_extract.c). */
void *pipe_reader_main(void *arg);
void *pipe_extractor_main(void *arg);
/* pipe_reader.c.  Bookkeeping when a reader ends (or stands in for one that never ran):
 * the last one of a group stamps its time, the last one overall closes the
 * extractors' queue. */
void pipe_reader_exit(struct pipe *P, struct rgroup *g);

#endif
