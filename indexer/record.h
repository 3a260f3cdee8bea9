/* record.h - one file's outcome, as the pipeline hands it to the store
 * (pipeline.h's sink; db.h's db_put).  Its own header so that the index
 * does not include the threaded pipeline for one type. */
#ifndef SL_RECORD_H
#define SL_RECORD_H

#include <stdint.h>

#include "common/err.h"
#include "indexer/extract.h"

/* One file's outcome, handed to the sink.  Valid only during the call. */
struct px_record {
	uint32_t file;       /* ftab index */
	const char *path;
	uint64_t dev;
	uint64_t ino;
	uint64_t size;       /* bytes read (the stat size when not read) */
	int64_t mtime_ns;
	int64_t ctime_ns;    /* as stat'ed before the read; 0 when not known */
	int64_t btime_ns;    /* birth time; 0 when not known */
	int64_t stat_wall_ns; /* wall clock right after the stat the times come from */
	uint64_t phys;       /* meaningful with FT_LOCATED in ext_flags */
	uint32_t fragments;
	uint16_t ext_flags;  /* FT_* flags of the file */
	uint16_t devi;       /* its ftab device index */
	int is_dir;          /* an unlistable directory, not a file */
	int read;            /* content was read: hash and meta are valid */
	char hash[33];       /* "" when read in part (scan --quick): pending */
	char quick_hash[33]; /* x_quick_hash; "" when not made */
	int have_phash;      /* phash is the picture's perceptual hash */
	uint64_t phash;
	const char *phash_src; /* the picture it came from (jpg_phash), static */
	struct x_meta meta;
	int err_code;        /* SL_OK, or the per-file error class */
	char error[384];
};

/* Store one record.  A non-OK return stops the run (the error is reported as
 * the run's fatal error). */
typedef int (*px_sink_fn)(void *ctx, const struct px_record *r, struct sl_err *err);

#endif
