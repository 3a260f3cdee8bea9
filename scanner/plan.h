/* plan.h - the read plan: which order each disk is read in, and why.
 *
 * Files are grouped by the disk they live on (all partitions of a disk form
 * one group; storage without a block device forms a group per file system).
 * Each group is read by its own reader, so different disks work in parallel
 * while one disk is never asked for two places at once.
 *
 * Orders: physical (first physical offset, disk-absolute; a fragmented
 * file's extents in their places by the extent schedule, plan_schedule),
 * first-extent (the same without the schedule), inode, fs (enumeration
 * order), path (bytewise), random (seeded).  auto picks per
 * group: fs on disks without a seek penalty, physical where the file system
 * has an extent map (or FIBMAP, extents.h), inode where it has not.  A
 * physical request on a group without either falls back to inode; the
 * reason says so, and says when running with CAP_SYS_RAWIO (as root, as the
 * service does) would have placed the files.  In physical
 * order, files without a position (inline, delayed allocation, compressed,
 * empty, or on a file system without extent maps) follow the located ones in
 * inode order.
 */
#ifndef SL_PLAN_H
#define SL_PLAN_H

#include <stddef.h>
#include <stdint.h>

#include "common/err.h"
#include "scanner/device.h"
#include "scanner/ftab.h"
#include "scanner/sched.h"

/* PLAN_FIRST ("first-extent") is physical order without the extent
 * schedule: each file read whole from its first extent, as before the
 * schedule, for benchmarks to compare (last: the names are stored). */
enum plan_order {
	PLAN_AUTO,
	PLAN_PHYSICAL,
	PLAN_INODE,
	PLAN_FS,
	PLAN_PATH,
	PLAN_RANDOM,
	PLAN_FIRST,
	PLAN_NORDERS
};

struct plan_group {
	char name[64];     /* disk name ("sda", "loop3") or "fs 0:39" */
	int rotational;    /* 1, 0, -1 unknown */
	int extents;       /* 1 when some file system in the group has an extent map */
	int order;         /* order used, never PLAN_AUTO */
	char reason[384];
	size_t first;      /* slice of plan.seq */
	size_t count;
	size_t located;    /* files placed by physical offset */
	size_t written_back; /* of them, files written back alone first to be
				placed: their data had no blocks yet (extents.h) */
	int synced_fs;       /* and then a whole file system, for the rest */
	double writeback_s;  /* what writing them back took */
	uint64_t bytes;
	/* the extent schedule (sched.h; plan_schedule): op.file indexes this
	 * group's slice of seq.  NULL when the group's files are read one
	 * after another in seq order. */
	struct sched_op *ops;
	size_t nops;
	struct sched_stats sched;
	uint64_t window;   /* its share of plan_mem.window */
};

struct plan {
	uint32_t *seq;        /* ftab file indices, group after group, in read order */
	size_t n;
	struct plan_group *groups;
	size_t ngroups;
	uint16_t *dev_group;  /* ftab device index -> group index */
	int requested;
	uint64_t seed;        /* used by PLAN_RANDOM */
	uint64_t whole_max;   /* the schedules' (plan_mem.whole_max, .head): the */
	uint64_t head;        /* pipeline follows them only if its own agree */
	uint64_t mem;         /* plan_mem.total of the schedules, 0 before */
	size_t aliases;       /* files not in seq: other names of files in it
				 (FT_LINK_ALIAS), recorded when those are read */
};

/* What the pipeline will hold, for the schedules (pipeline.h, px_mem). */
struct plan_mem {
	uint64_t whole_max; /* files above it are streamed in chunks */
	uint64_t window;    /* bytes all swept groups may hold at once, shared */
	uint64_t grain;     /* the budget's allocation unit */
	uint64_t head;      /* a streamed file's first chunk (what is parsed) */
	uint32_t max_open;  /* files a sweep keeps open at most */
	uint32_t fds;       /* descriptors all sweeps together may hold */
	uint64_t total;     /* the budget these come from (shown by plan) */
};

/* The extent schedule for each group read in physical order by one reader
 * (a disk with a seek penalty, or one not known to have none: the pipeline
 * gives those one reader) where some file is in more than one piece; the
 * window is shared evenly by those groups.  Returns SL_OK or SL_E_NOMEM
 * (the plan is unchanged then). */
int plan_schedule(struct plan *p, const struct ftab *ft, const struct dev_info *devs,
		  const struct plan_mem *m, struct sl_err *err);

/* Build the plan for every file of ft to read (not failed, not FT_SKIP).  devs has one
 * entry per ft->devs (from locate_all).  Returns SL_OK or SL_E_NOMEM; *out is
 * zeroed on failure.  Release with plan_free. */
int plan_build(const struct ftab *ft, const struct dev_info *devs, int order, uint64_t seed,
	       struct plan *out, struct sl_err *err);
void plan_free(struct plan *p);

/* What is known of a group's storage, for plan_decide. */
struct plan_facts {
	int rotational;     /* 1, 0, -1 unknown */
	const char *how;    /* how rotational was decided */
	int extents;        /* 1 files can be placed, 0 not */
	int by;             /* with extents: FT_BY_MAP, or FT_BY_BMAP when only
			       FIBMAP places them */
	const char *fstype;
	int ext_errno;      /* without extents: why no extent map (0: unknown) */
	int bmap_errno;     /* without extents: why FIBMAP did not stand in
			       (0: not asked); EPERM means it needs CAP_SYS_RAWIO */
};

/* The order used for a group and the reason, from what is known about it.
 * Returns the order (never PLAN_AUTO). */
int plan_decide(int requested, const struct plan_facts *f, char *reason, size_t cap);

const char *plan_order_name(int order);
/* Parse "auto", "physical", ... Returns 0 or -1. */
int plan_order_parse(const char *s, int *order);

#endif
