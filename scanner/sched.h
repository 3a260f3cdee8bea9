/* sched.h - the extent schedule: one sweep of a disk's head over the
 * extents of the files it reads, instead of one file after another.
 *
 * Reading a fragmented file whole, from its first extent, sends the head to
 * each of its other extents and back: on an aged disk physical order then
 * gains little over directory order.  The schedule instead lists every
 * piece of every file of a group (its extents, and the holes between them)
 * by disk position and reads them in that order, through the file, at
 * their logical offsets: a wrong position costs time, never a wrong byte.
 *
 * What makes it hard is memory.  A file read into one buffer (not larger
 * than the pipeline's whole-file limit) holds that buffer from its first
 * piece to its last; a file streamed in chunks (larger) is hashed in logical
 * order, so a piece reached before its predecessors must be kept until they
 * come.  The schedule is built greedily against a window, the bytes a group
 * may hold that way, and a number of files it may keep open:
 *   - a whole file is opened at its first piece if its size fits in the
 *     window, and then filled at each piece's place in the sweep; if it does
 *     not fit, it is read whole right there, as without a schedule
 *     (SO_WHOLE);
 *   - a streamed file's head (its first `head` bytes: what the extractors
 *     parse as its first chunk, so it must come as one buffer) is gathered
 *     the same way: its buffer is held from the file's first op, whatever
 *     the piece, until the head's last piece is read in its place; pieces
 *     are cut at the head's end, so an op lies wholly in it or after it;
 *   - past the head, a streamed file's piece that comes in logical order
 *     (the head complete) is read (SO_READ), then its successors already
 *     kept are handed on, and those passed over earlier are read at once,
 *     out of sweep order (SO_BACK), up to the first that lies ahead; a piece out of order is kept if it fits in half the
 *     window (SO_AHEAD), else passed over, to be read by SO_BACK once its
 *     predecessor is.  Half: kept pieces wait for a predecessor that may lie
 *     at the far end of the disk, and would otherwise take the whole window
 *     from the photos for the rest of the sweep.
 * The bytes held never exceed the window (struct sched_stats.peak_held says
 * what this schedule holds at most), and every file is complete at the end
 * of the list: there is nothing to wait for that the sweep will not bring,
 * so a reader that follows it cannot deadlock as long as its window plus one
 * in-flight buffer fits in the pipeline's budget (pipeline.c sizes it so).
 *
 * Pure computation over a group's files: no I/O, deterministic, so `plan
 * --json` shows exactly what a scan will do.
 */
#ifndef SL_SCHED_H
#define SL_SCHED_H

#include <stddef.h>
#include <stdint.h>

#include "common/err.h"
#include "scanner/ftab.h"

struct sched_file {
	uint64_t size;
	uint64_t phys;                /* first byte's position, with placed */
	int placed;                   /* 0: no position; read whole, after the placed ones */
	int streamed;                 /* read in chunks and hashed as it comes */
	const struct ft_run *runs; /* logical order, non-overlapping, phys
				      disk-absolute; NULL: one run at phys
				      over the whole file */
	uint32_t nruns;
};

enum sched_kind {
	SO_WHOLE, /* the whole file now, in logical order, as without a schedule */
	SO_READ,  /* a piece in its place in the sweep (for a streamed file, in
		     logical order too: hashed now) */
	SO_AHEAD, /* a streamed file's piece before its predecessors: kept */
	SO_BACK   /* a streamed file's piece passed over: read now, out of sweep order */
};

struct sched_op {
	uint64_t off, len; /* logical range of the file */
	uint64_t phys;     /* where the range lies (for the plan and the picture) */
	uint32_t file;     /* index into the files given to sched_build */
	uint8_t kind;      /* enum sched_kind */
	uint8_t first;     /* the file's first op: open it */
	uint8_t last;      /* the file's last op: it is complete after it */
	uint8_t hole;      /* no run lies under the range (a hole, a tail the map
			      left out): reading it costs no seek */
};

struct sched_limits {
	uint64_t window;   /* bytes held by unfinished files at most */
	uint32_t max_open; /* unfinished files at most (descriptors) */
	uint64_t grain;    /* each held buffer counts as its size rounded up to
			      this (the budget's allocation unit); 0: exact */
	uint64_t head;     /* a spread streamed file's head (the pipeline's
			      chunk); 0: none, its pieces hashed as they come */
};

struct sched_stats {
	size_t ops, pieces;
	size_t whole;       /* files read whole (SO_WHOLE) */
	size_t spread;      /* files read in more than one op */
	size_t ahead, back; /* SO_AHEAD and SO_BACK ops */
	uint64_t peak_held; /* bytes held at most */
	uint32_t peak_open;
	uint32_t passes;    /* ascending sweeps over the disk */
};

/* The schedule for files (n of them, in the group's plan order).  *ops
 * (malloc'ed, *nops entries; free it) lists every file at least once, in
 * read order.  Returns SL_OK or SL_E_NOMEM (then *ops is NULL). */
int sched_build(const struct sched_file *files, size_t n, const struct sched_limits *lim,
		struct sched_op **ops, size_t *nops, struct sched_stats *st, struct sl_err *err);

/* Whether any file of the n would be read in more than one piece: without
 * one the schedule is the plan's file order, and is not built. */
int sched_needed(const struct sched_file *files, size_t n);

const char *sched_kind_name(int kind);

#endif
