/* reader.h - reading one file's bytes, the platform seam of the indexer.
 *
 * The pipeline (pipeline.h) decides what to read and when; this module only
 * knows how: open without updating atime where allowed, read with short reads
 * and interruptions resumed, hint the kernel, and after reading drop from the
 * page cache what the scan itself brought in, so a nightly scan leaves the
 * user's cache as it found it.  No mmap: an I/O error or a file truncated
 * under us must be an error code, not SIGBUS.
 *
 * Implementations: reader_posix.c (pread), reader_win.c (ReadFile).
 */
#ifndef SL_READER_H
#define SL_READER_H

#include <stddef.h>
#include <stdint.h>

#include "common/anchor.h"
#include "common/err.h"

struct rd_file;

struct rd_info {
	uint64_t dev;
	uint64_t ino;
	uint64_t size;
	int64_t mtime_ns;
	int64_t ctime_ns; /* 0: not known */
	int64_t btime_ns; /* birth time; 0: not known */
};

/* Open the regular file rel below a for reading (anchor.h: no link
 * followed on the way, nothing but a regular file ever opened).  Returns
 * SL_OK; SL_E_IO for per-file failures (vanished, permission, not a regular
 * file, a link on its way); SL_E_RESOURCE when descriptors or memory ran
 * out.  *out is NULL on failure. */
int rd_open(const struct anchor *a, const char *rel, struct rd_file **out, struct rd_info *info,
	    struct sl_err *err);

/* Read up to len bytes at off into buf.  Short reads and interruptions are
 * resumed, so *got < len only at end of file (as the size was at the
 * open).  A sparse file's holes are given as zeros without being read
 * (POSIX: SEEK_DATA/SEEK_HOLE; Windows reads them), counted by rd_holes.
 * Returns SL_OK or SL_E_IO (*got then says how much arrived before the
 * error). */
int rd_read(struct rd_file *f, void *buf, size_t len, uint64_t off, size_t *got,
	    struct sl_err *err);

/* Whether all of the file was in the page cache when it was opened:
 * reading it then asks nothing of the disk.  1 yes, 0 no, -1 where that
 * cannot be asked (Windows): the pipeline then judges by how fast the
 * bytes came (pipe_read.c). */
int rd_cached(const struct rd_file *f);

/* Bytes of holes rd_read has given as zeros so far. */
uint64_t rd_holes(const struct rd_file *f);

/* Current identity and size, to notice a file modified while being read. */
int rd_stat(struct rd_file *f, struct rd_info *info, struct sl_err *err);

/* Tell the kernel the whole file will be read front to back now. */
void rd_advise_sequential(struct rd_file *f);

/* Ask the kernel to start fetching the whole file into the page cache, so
 * the disk queue holds it before it is read. */
void rd_advise_willneed(struct rd_file *f);

/* A file read piece by piece out of logical order (the extent schedule):
 * no read-ahead past what is asked, which would fetch the logically next
 * bytes from wherever they lie on the disk. */
void rd_advise_random(struct rd_file *f);

/* Ask the kernel to start fetching len bytes at off (as
 * rd_advise_willneed, for a piece). */
void rd_advise_range(struct rd_file *f, uint64_t off, uint64_t len);

/* Drop the pages of the file rel below a from the page cache (for
 * cold-cache benchmarks).  Returns SL_OK or SL_E_IO. */
int rd_evict(const struct anchor *a, const char *rel, struct sl_err *err);

/* Close; unless keep_cache, first drop the file's pages from the page cache
 * when they were not cached before rd_open.  rd_close(NULL) is a no-op. */
void rd_close(struct rd_file *f, int keep_cache);

/* Fault injection for tests: the (skip+1)-th next call of op fails as
 * described, once.  RD_FAULT_NONE clears.  Not for production use. */
enum rd_op { RD_OP_OPEN, RD_OP_READ, RD_OP_CACHESTAT, RD_NOPS };
/* RD_FAULT_ENOSYS, for RD_OP_CACHESTAT: the kernel has no cachestat(2)
 * (before Linux 6.5, as Debian 12's own kernel), so the page cache is asked
 * the older way */
enum rd_fault { RD_FAULT_NONE, RD_FAULT_EIO, RD_FAULT_EINTR, RD_FAULT_SHORT, RD_FAULT_EMFILE,
		RD_FAULT_EACCES, RD_FAULT_ENOMEM, RD_FAULT_ENOSYS };
void rd_inject(enum rd_op op, enum rd_fault fault, int skip);
/* For reader_*.c: the fault to simulate now for op, or RD_FAULT_NONE. */
int rd_take_fault(enum rd_op op);

#endif
