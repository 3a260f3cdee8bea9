/* pipeline.h - read -> extract -> store, with bounded memory.
 *
 * Threads: per plan group, one reader on a disk with a seek penalty (reads
 * must follow the plan exactly) or several on one without; one extractor per
 * core; and the caller's thread, which hands finished records to the sink one
 * at a time (the single database writer).  Bytes in flight between readers
 * and extractors are capped by a budget, which also holds the pool their
 * buffers are reused from; a file larger than a quarter of the budget is
 * streamed in chunks, its metadata taken from the first chunk.  Readers make
 * the content hash as they copy (the bytes are in their cache then);
 * extractors parse and make the perceptual hash.  Queues wake their consumer
 * per batch, never later than a bounded lag.  Nothing here waits on I/O while
 * holding memory another stage needs, so the stages always make progress
 * (docs/design.md, "Pipeline").
 */
#ifndef SL_PIPELINE_H
#define SL_PIPELINE_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "common/err.h"
#include "indexer/extract.h"
#include "indexer/record.h"
#include "scanner/ftab.h"
#include "scanner/plan.h"

struct px_progress {
	uint64_t files_done;
	uint64_t files_total;
	uint64_t bytes_done;
	uint64_t bytes_total;
	double elapsed;
};
typedef void (*px_progress_fn)(void *ctx, const struct px_progress *p);

/* A file was read: plan position, start and end (seconds since the run
 * began), bytes.  Called from reader threads, once per file: writing to a
 * slot indexed by `pos` needs no lock. */
typedef void (*px_read_fn)(void *ctx, size_t pos, double t0, double t1, uint64_t bytes);

/* Called by a swept group's reader after each piece of its extent schedule
 * (holes excepted): where the piece lies on the disk and when it arrived,
 * in seconds since px_run began.  Readers of several disks call it at once. */
typedef void (*px_piece_fn)(void *ctx, uint64_t phys, uint64_t len, double t);

/* Holes a file may have before it is read no further (pipe_read.c).  A
 * photo or a movie has none; a virtual disk or a preallocated file may,
 * and an ext4 user can make a 16 TiB one at no cost.  Holes are not read
 * from the disk, but their zeros still pass through the hash (about 0.4 s
 * a GiB here, docs/security.md), so past this a file keeps what its head
 * told, its size, a warning and no content hash, and it is not read again
 * every night. */
#define PX_HOLES_MAX ((uint64_t)16 << 30)

/* What a quick scan reads through rather than skip: a file whose rest
 * past its head and tail is no longer is read whole.  On a hard disk a
 * seek and half a turn cost about 12 ms, in which a 7200 rpm disk reads
 * 1.5 to 2 MB (hddsim's model, docs/hddsim.md); reading through costs no
 * more, and gives the content hash.  (A measured break-even, from seekless
 * bench, is issue 46's next step.) */
#define PX_QUICK_GAP ((uint64_t)2 << 20)


struct px_opts {
	int jobs;            /* extractor threads; 0 = one per CPU */
	int ssd_readers;     /* readers per group without seek penalty; 0 = 4 */
	size_t mem_budget;   /* file bytes in flight; 0 = px_default_mem() */
	size_t chunk;        /* read size for streamed files; 0 = 4 MiB */
	int keep_cache;      /* do not drop the pages this scan brought in */
	int phash;           /* compute perceptual hashes of JPEGs read whole */
	/* while a reader waits for memory to read what the disk serves (the
	 * extractors are behind the disk), the pictures extractors take get
	 * no perceptual hash: their records say none was tried (phash_src
	 * NULL) and the next scan reads them for it.  A file read only for
	 * its hash (FT_REHASH) always gets it.  docs/design.md, "Pending
	 * perceptual hashes". */
	int phash_defer;
	int read_only;       /* read and discard: no hash, no extraction (bench) */
	/* scan --quick (docs/design.md, "Quick scans"): a file that would
	 * be streamed (larger than a quarter of the budget) is read only
	 * where a streamed read takes its metadata from: its first chunk,
	 * what its catch asks for past it (a movie's moov, x_stream_next),
	 * and its last X_QUICK_SPAN bytes for the partial hash.  Its record
	 * is a streamed read's, but for the content hash: pending.  A file
	 * held whole and past its head, its tail and PX_QUICK_GAP is read for
	 * its X_QUICK_HEAD and X_QUICK_SPAN ends when they give what the
	 * whole file gives (x_quick_ok: JPEG so far); its perceptual hash is
	 * pending too unless the head gave it. */
	int quick;
	int background;      /* every thread at idle I/O and CPU priority; readers
				wait while others use their disk (yield.h) */
	px_read_fn on_read;  /* may be NULL */
	void *on_read_ctx;
	px_piece_fn on_piece; /* may be NULL */
	void *on_piece_ctx;
	atomic_int *cancel;  /* when set: stop starting files, store what is done */
	double stop_grace;   /* seconds a stop waits for reads in progress; 0 = 10 */
	/* called from px_run's thread, once per read that has taken more than
	 * slow_read seconds (0 = 30) and not yet returned; may be NULL */
	void (*on_slow)(void *ctx, const char *path, const char *disk, double seconds);
	void *on_slow_ctx;
	double slow_read;
	px_progress_fn progress;
	void *progress_ctx;
};

struct px_group_stats {
	double read_s;       /* wall time until the group's last reader finished */
	uint64_t files;      /* files opened and read (to the end or an error) */
	uint64_t bytes;      /* bytes read */
	double yield_s;      /* background: seconds its readers waited for others */
	uint64_t pauses;     /* background: reads held back */
	int swept;           /* its reader followed the extent schedule */
	uint64_t unswept;    /* of its spread files, read whole after all
				(size changed since the walk, shrank) */
};

struct px_stats {
	uint64_t files;      /* records stored */
	uint64_t bytes;      /* file bytes read */
	uint64_t errors;     /* records carrying a per-file error */
	double read_s;       /* wall time until every reader finished */
	double extract_s;    /* busy time summed over extractor threads */
	uint64_t phash_deferred; /* pictures left without a hash (phash_defer) */
	double store_s;      /* time inside the sink */
	double wall_s;
	uint64_t peak_inflight; /* highest file-buffer bytes held: in flight and pooled */
	int jobs;
	struct px_group_stats *groups; /* plan->ngroups entries; px_stats_free */
	size_t ngroups;
	int abandoned;       /* a stop gave up on a read that did not return */
	char stuck[64];      /* the disk of that read */
};

/* The budget px_run uses when mem_budget is 0: a sixteenth of the memory
 * this process may use (sys_mem_bytes), no less than 64 MiB and no more
 * than 512 MiB. */
size_t px_default_mem(void);

/* Load now what the decoders would load the first time they run
 * (libheif's plugins), so that the process can be confined before it reads
 * (confine.h) and nothing is opened from a library folder afterwards. */
void px_prepare(void);

/* What px_run holds with mem_budget (as px_opts.mem_budget), for the plan's
 * extent schedules (plan_schedule): the files above a quarter of the budget
 * are streamed, and the sweeps together hold a quarter at most.  Why that
 * cannot deadlock: docs/design.md, "The extent schedule". */
void px_mem(size_t mem_budget, struct plan_mem *m);

/* Read every file of the plan and store a record for it, plus one for every
 * entry of ft the walk or locate pass marked failed.  Returns SL_OK when all
 * records were stored (some may carry per-file errors: st->errors);
 * SL_E_CANCELLED when *cancel stopped it; otherwise the fatal error (sink
 * failure, SL_E_RESOURCE, SL_E_NOMEM) that stopped it.  *st is filled either
 * way; release with px_stats_free.
 *
 * A stop (cancel or fatal) waits o->stop_grace seconds for the reads in
 * progress.  If one has not returned by then, the records made are stored
 * and px_run returns with st->abandoned set: threads are still running and
 * use ft, pl and o, so the caller must finish with the index and end the
 * process without freeing them. */
int px_run(const struct ftab *ft, const struct plan *pl, const struct px_opts *o,
	   px_sink_fn sink, void *sink_ctx, struct px_stats *st, struct sl_err *err);
void px_stats_free(struct px_stats *st);

#endif
