/* ftab.h - the compact table of what the walk found.
 *
 * A photo drive may hold a million files, so the table stores no full paths:
 * each directory is (parent, name) and each file (dir, name), with all names
 * in one arena.  One file costs sizeof(struct ft_file) (72 bytes) plus its
 * name; docs/benchmarks.md measures the whole plan at 1M entries.
 *
 * Files are appended in enumeration order, so a file's index is its position
 * in "fs" order.  The walk fills dir/name/ino/dev; the locate pass (locate.h)
 * fills the rest.  Not thread-safe for writing; readers may share it once the
 * walk and locate passes are over.
 */
#ifndef SL_FTAB_H
#define SL_FTAB_H

#include <stddef.h>
#include <stdint.h>

#include "common/anchor.h"
#include "common/err.h"
#include "common/strbuf.h"

#define FT_NONE UINT32_MAX

/* ft_file.flags */
enum {
	FT_STATED = 1u << 0,   /* size/mtime/ino come from fstat */
	FT_LOCATED = 1u << 1,  /* phys is the first physical byte of the data */
	FT_INLINE = 1u << 2,   /* data lives in the inode/metadata */
	FT_UNKNOWN = 1u << 3,  /* location unknown (delayed allocation...) */
	FT_ENCODED = 1u << 4,  /* compressed/encrypted extents */
	FT_EMPTY = 1u << 5,    /* no data extents (empty or all holes) */
	FT_NOEXT = 1u << 6,    /* the file system has no extent map (FIEMAP) */
	FT_FAILED = 1u << 7,   /* err holds why it cannot be read */
	FT_DIR = 1u << 8,      /* entry is a directory that could not be listed */
	FT_SKIP = 1u << 9,     /* not to be read: unchanged, or only moved (diff) */
	FT_NEW = 1u << 10,     /* not in the index before this scan (diff) */
	FT_CTIME = 1u << 11,   /* read again only because its ctime moved (diff) */
	FT_REPLACED = 1u << 12, /* another file than its path's record knew (diff) */
	FT_CHANGED = 1u << 13, /* its path's record's file, with another size or mtime (diff) */
	FT_REHASH = 1u << 14,  /* unchanged, read for its perceptual hash (diff) */
	FT_UPGRADE = 1u << 15  /* unchanged, read again for what a newer extractor reads (diff) */
};

/* ft_file.links */
enum {
	FT_LINK_MANY = 1u << 0,  /* its inode has other names (st_nlink > 1) */
	FT_LINK_ALIAS = 1u << 1, /* another name of a file read under an earlier
				    one this scan, or a file whose data is that
				    file's (ftab_join_links) */
	FT_LINK_SHARED = 1u << 2, /* all its data is shared with some file
				    (reflinks, deduplication); runs kept */
	FT_LINK_ALONE = 1u << 3  /* its record holds an error: read on its own,
				    never joined (diff), so that a first file
				    that keeps failing cannot fail it too */
};

/* How a file's position was found (ft_file.by, ft_dev.by). */
enum { FT_BY_NONE, FT_BY_MAP, FT_BY_BMAP };

struct ft_dir {
	uint32_t parent; /* FT_NONE for a root; its name is then the absolute path */
	uint32_t name;   /* offset in the name arena */
};

struct ft_file {
	uint64_t ino;
	uint64_t size;
	int64_t mtime_ns;
	int64_t ctime_ns;   /* inode change time; 0 when the platform has none */
	int64_t btime_ns;   /* birth time: an inode number given out again
			       (sys_posix.h); 0 when not known */
	uint64_t phys;      /* first physical byte offset on its file system */
	uint32_t dir;
	uint32_t name;
	uint32_t fragments; /* physically discontiguous runs of extents */
	uint32_t err;       /* offset of an error message in the arena, 0 = none */
	uint16_t dev;       /* index into ftab.devs */
	uint16_t flags;
	uint8_t by;         /* FT_BY_MAP: the extent map (FIEMAP, retrieval
			       pointers); FT_BY_BMAP: FIBMAP, block by block */
	uint8_t frag_min;   /* 1: fragments is a lower bound (FIBMAP's
			       bisection ran out of its budget, extents.h) */
	uint8_t links;      /* FT_LINK_* */
};

/* A physically contiguous run of a file's data: bytes [logical, logical +
 * len) of the file lie at phys on its file system (disk-absolute once the
 * plan adds the partition's start). */
struct ft_run {
	uint64_t logical;
	uint64_t phys;
	uint64_t len;
};

/* One file system seen by the walk. */
struct ft_dev {
	uint64_t st_dev;
	int extents;       /* 1 files can be placed, 0 they cannot, -1 not tried yet */
	int by;            /* with extents 1: FT_BY_MAP or FT_BY_BMAP */
	int extents_errno; /* why no extent map, when extents == 0 */
	int bmap_errno;    /* why FIBMAP did not stand in, when extents == 0
			      (0: not asked, as on storage without a block device) */
	int pool;          /* 1 a pool (mergerfs) whose files are on branches
			      (ftab.via), 0 not, -1 not asked yet */
	int logical;       /* 0: phys is an offset on the file system's device;
			      else (btrfs) a logical address, CM_* says why it was
			      not mapped (chunkmap.h) */
	uint32_t written_back; /* files whose data had no blocks yet (delayed
				  allocation), written back alone to be placed */
	double writeback_s;    /* what writing them back took */
	int synced;            /* its whole file system was written back once */
	uint32_t dir;      /* the first directory walked on it (FT_NONE: none), so
			      that a file system whose files are all gone is still
			      known for what it is (its records are deleted, not
			      "unavailable") */
};

struct ftab {
	struct ft_file *files;
	size_t nfiles, cap_files;
	struct ft_dir *dirs;
	size_t ndirs, cap_dirs;
	char *names;
	size_t names_len, names_cap;
	struct ft_dev *devs;
	size_t ndevs, cap_devs;
	/* wall clock when locate_stat began: every stat since is later */
	int64_t stat_begin_ns;
	/* directories already walked, as (dev, ino): loops and overlapping roots */
	uint64_t *seen;
	size_t seen_cap, seen_used;
	/* what files are opened relative to (anchor.h): one reference each
	 * to the roots' anchors and the pools' branches'; dir_anchor[d] is 1 +
	 * the index in anchors[] of root directory d's, 0 for none */
	struct anchor **anchors;
	size_t nanchors, anchors_cap;
	uint32_t *dir_anchor;
	size_t dir_anchor_cap;
	/* files of a pool (mergerfs) are read where they really are: via[i]
	 * is file i's path on its branch (arena offsets of the whole path and
	 * of its names below the branch, and the branch's index in anchors[]),
	 * path 0 for none; NULL until a pool is seen, so that other trees pay
	 * nothing */
	struct ft_via {
		uint32_t path, rel, anchor;
	} *via;
	size_t via_cap;
	/* a fragmented file's runs (extents.h), for the extent schedule
	 * (sched.h): run_at[i] is (first, count) in runs[], count 0 for none;
	 * NULL until a fragmented file is seen */
	struct ft_run *runs;
	size_t nruns, runs_cap;
	struct {
		uint32_t first, count;
	} *run_at;
	size_t run_at_cap;
	/* names of one file (hard links) to be read this scan: link_next[i]
	 * is the next name after i of i's file, FT_NONE after the last; the
	 * first name is read, the others (FT_LINK_ALIAS) get its record.
	 * NULL while no two are joined (ftab_join_links) */
	uint32_t *link_next;
	size_t link_cap;
};

void ftab_init(struct ftab *ft);
void ftab_free(struct ftab *ft);

/* Add a directory; root directories pass parent FT_NONE and their absolute
 * path as name.  Returns SL_OK or SL_E_NOMEM; *id is the new directory. */
int ftab_add_dir(struct ftab *ft, uint32_t parent, const char *name, size_t len, uint32_t *id,
		 struct sl_err *err);

/* Add a file known by its path below a root directory instead of found by a
 * walk (the change journal's list): rel is "a/b/name.jpg" relative to
 * root_dir; its folder becomes one directory entry named "a/b" under
 * root_dir, shared by the files added after it with the same folder.
 * Returns SL_OK or SL_E_NOMEM. */
int ftab_add_path(struct ftab *ft, uint32_t root_dir, const char *rel, uint64_t ino,
		  uint16_t dev, uint32_t *id, struct sl_err *err);

/* Add a regular file found in dir.  Returns SL_OK or SL_E_NOMEM. */
int ftab_add_file(struct ftab *ft, uint32_t dir, const char *name, size_t len, uint64_t ino,
		  uint16_t dev, uint32_t *id, struct sl_err *err);

/* Index of the device with this st_dev, adding it on first sight.
 * Returns SL_OK, SL_E_NOMEM, or SL_E_UNSUPPORTED beyond 65535 devices. */
int ftab_dev(struct ftab *ft, uint64_t st_dev, uint16_t *idx, struct sl_err *err);

/* Remember dir as a directory on device idx, unless one is known. */
void ftab_dev_dir(struct ftab *ft, uint16_t idx, uint32_t dir);

/* Mark a file failed with a message (copied).  Returns SL_OK or SL_E_NOMEM. */
int ftab_fail(struct ftab *ft, uint32_t file, const char *msg, struct sl_err *err);

/* Hold a as the anchor of root directory dir (a reference is taken):
 * every file below dir is opened relative to it.  Returns SL_OK or
 * SL_E_NOMEM. */
int ftab_set_anchor(struct ftab *ft, uint32_t dir, struct anchor *a, struct sl_err *err);

/* Open root directory dir's own name (its absolute path) as its anchor now
 * (anchor_open with flags), for roots entered by name rather than walked
 * (--files-from, the change journal's list, tests).  Returns SL_OK, or
 * anchor_open's error. */
int ftab_anchor_root(struct ftab *ft, uint32_t dir, unsigned flags, struct sl_err *err);

/* Where file is opened: the anchor of its root, with its names below it
 * appended to rel.  NULL when its root has none (every open of it then
 * fails: nothing is opened by full path) or memory ran out (rel->oom). */
const struct anchor *ftab_at(const struct ftab *ft, uint32_t file, struct strbuf *rel);

/* Where directory dir is, as ftab_at says of a file ("" for a root). */
const struct anchor *ftab_dir_at(const struct ftab *ft, uint32_t dir, struct strbuf *rel);

/* The anchor of root directory dir, or NULL. */
const struct anchor *ftab_at_dir(const struct ftab *ft, uint32_t dir);

/* Where file is really read: on its pool's branch when it has one
 * (ftab_set_via), else as ftab_at. */
const struct anchor *ftab_read_at(const struct ftab *ft, uint32_t file, struct strbuf *rel);

/* Read file on a pool's branch: rel below branch (a reference is taken);
 * its whole path is the branch's path and rel.  Returns SL_OK or
 * SL_E_NOMEM. */
int ftab_set_via(struct ftab *ft, uint32_t file, struct anchor *branch, const char *rel,
		 struct sl_err *err);
/* The whole path of file on its pool's branch, or NULL. */
const char *ftab_via(const struct ftab *ft, uint32_t file);

/* A fragmented file's runs, in logical order (copied; n of them, replacing
 * any earlier ones), or (ftab_runs) NULL with *n 0 when none are known: the
 * file is then read whole from its first position.  ftab_set_runs returns
 * SL_OK or SL_E_NOMEM. */
int ftab_set_runs(struct ftab *ft, uint32_t file, const struct ft_run *runs, size_t n,
		  struct sl_err *err);
const struct ft_run *ftab_runs(const struct ftab *ft, uint32_t file, size_t *n);
/* The same runs, to change their positions in place (btrfs's chunk map). */
struct ft_run *ftab_runs_mut(struct ftab *ft, uint32_t file, size_t *n);

/* Join the files to be read (not failed, not skipped by the diff) whose
 * bytes are known to be the same without reading them, so that they are
 * read once: the first in table order is read, the others are marked
 * FT_LINK_ALIAS and chained behind it (link_next), to get its record.
 *   - Names of one file (hard links, FT_LINK_MANY): device, inode, size,
 *     mtime and ctime all agree, as stat'ed by the locate pass.
 *   - Files whose data is all shared (FT_LINK_SHARED: reflink copies,
 *     deduplicated files): same device and size, and the same runs, every
 *     logical offset at the same physical one, so the same bytes.
 * Files marked FT_LINK_ALONE take no part.
 * Only flagged files are looked at, so a tree with neither costs one pass
 * over the table.  *joined: the aliases.  Returns SL_OK or SL_E_NOMEM
 * (nothing joined). */
int ftab_join_links(struct ftab *ft, size_t *joined, struct sl_err *err);
/* The next name of file's file after file, FT_NONE for none. */
uint32_t ftab_link_next(const struct ftab *ft, uint32_t file);

/* Record that directory (dev, ino) is being walked.  Returns 1 if it was
 * already walked (a loop or an overlapping root), 0 if new, -1 on no memory. */
int ftab_seen_dir(struct ftab *ft, uint64_t dev, uint64_t ino);

/* Append the full path of a file (or, with ftab_dir_path, a directory) to sb.
 * Returns 0, or -1 when memory ran out. */
int ftab_path(const struct ftab *ft, uint32_t file, struct strbuf *sb);
int ftab_dir_path(const struct ftab *ft, uint32_t dir, struct strbuf *sb);

/* Where a located file's read position comes from, by its flags:
 * "physical", "inline", "unallocated", "encoded", "empty", "no-extent-map". */
const char *ftab_placement(uint16_t flags);

static inline const char *ftab_str(const struct ftab *ft, uint32_t off)
{
	return ft->names + off;
}

#endif
