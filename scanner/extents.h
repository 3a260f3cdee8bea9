/* extents.h - identity and on-disk position of one file.
 *
 * The position is the first physical byte of the file's data on its file
 * system (FIEMAP on Linux, FSCTL_GET_RETRIEVAL_POINTERS on Windows) plus the
 * number of fragments: physically discontiguous runs, so a file the file
 * system split into adjacent extents still counts as one.  Files whose data
 * has no usable position (inline in the inode, delayed allocation, compressed,
 * empty) are flagged and later placed by inode (plan.h).
 *
 * Where the file system refuses FIEMAP (ntfs-3g's fuseblk, vfat, exfat) but
 * offers the older FIBMAP, which maps one logical block per call, the
 * position is the first block's and the fragments are counted by bisection:
 * a stretch of blocks whose ends lie as far apart on the disk as in the file
 * is taken as one run, so a file in F fragments costs about 2 F log2(blocks/F)
 * calls, and at most EXT_BMAP_BUDGET; beyond that the count is a lower bound
 * (frag_min).  FIBMAP is only asked of file systems on a block device (on
 * others the kernel has nothing to answer with, and plain FUSE answers 0),
 * and it needs CAP_SYS_RAWIO: without it the answer is EPERM, bmap_errno.
 *
 * Implementations: extents_linux.c, extents_win.c.
 */
#ifndef SL_EXTENTS_H
#define SL_EXTENTS_H

#include <stdint.h>

#include "common/anchor.h"
#include "common/err.h"
#include "common/strbuf.h"
#include "scanner/ftab.h"

/* How ext_locate asks (ft_dev.extents and .by decide it, locate.c). */
enum ext_mode {
	EXT_NONE, /* the file system is known to have no way: do not ask */
	EXT_ASK,  /* not known yet: FIEMAP, and where it is refused FIBMAP */
	EXT_MAP,  /* the extent map alone */
	EXT_BMAP  /* FIBMAP alone */
};

/* FIBMAP calls per file at most (on FUSE each is a round trip to the file
 * system's process, about 20 us here: 5 ms a file at worst). */
#define EXT_BMAP_BUDGET 256

struct ext_result {
	uint64_t dev;
	uint64_t ino;
	uint64_t size;
	int64_t mtime_ns;
	int64_t ctime_ns;   /* 0: not known */
	int64_t btime_ns;   /* birth time; 0: not known (sys_posix.h) */
	uint64_t phys;      /* valid when flags has FT_LOCATED */
	uint32_t fragments; /* 0 when the extent map is unknown */
	uint16_t flags;     /* FT_LOCATED, FT_INLINE, FT_UNKNOWN, FT_ENCODED, FT_EMPTY, FT_NOEXT */
	int noext_errno;    /* with FT_NOEXT: the error the extent map gave */
	int bmap_errno;     /* with FT_NOEXT after EXT_ASK: FIBMAP's error, 0
			       when it was not asked */
	uint8_t by;         /* FT_BY_MAP or FT_BY_BMAP: what answered */
	uint8_t frag_min;   /* fragments is a lower bound */
	uint8_t linked;     /* the file has other names (hard links) */
	uint8_t shared;     /* every extent is plain data shared with some other
			       file (a reflink copy, a deduplicated file): its
			       runs are kept, even one, to be compared
			       (ftab_join_links) */
	int undecided;      /* this answer is about the file alone: it does not
			       tell whether the file system can place files */
	uint8_t written_back; /* its data was still in the page cache, not yet
				 given blocks (delayed allocation): it was
				 written back and asked again; 2: with its
				 whole file system (EXT_WB_FS) */
	double writeback_s;   /* what that write-back took */
};

/* A fragmented file's runs, kept for the extent schedule (sched.h): every
 * extent of plain data (not inline, not encoded, not unwritten-by-delayed-
 * allocation), merged where both the file and the disk are contiguous.  Left
 * empty (n 0) when the file is in one run (unless all its data is shared,
 * ext_result.shared), when any extent is not plain data
 * (the file is read whole then), where the positions come from FIBMAP
 * (bisection knows where runs start, not all of them) or Windows (not yet),
 * and when memory for them ran out (the file is read whole: slower, not
 * wrong).  The buffer grows as needed and is reused from file to file. */
struct ext_runs {
	struct ft_run *v;
	size_t n, cap;
};

/* Identity, size, mtime and ctime of the file rel below a (anchor.h:
 * found without following any link, nothing opened).  Returns SL_OK;
 * SL_E_IO when it vanished, is unreadable, is no longer a regular file or
 * a link is on its way; SL_E_RESOURCE for resource errors.  Fills the stat
 * fields of *r and FT_STATED. */
int ext_stat(const struct anchor *a, const char *rel, struct ext_result *r,
	     struct sl_err *err);

/* How a file whose data has no blocks yet (delayed allocation: written a
 * moment ago, still in the page cache) is written back before it is asked
 * again: the file alone, or its whole file system (syncfs: the kernel
 * writes everything it owes there in one go, in its own order; measured
 * 22% faster than file by file after copying 2,000 photos, docs/design.md). */
enum ext_writeback {
	EXT_WB_FILE,
	EXT_WB_FS
};

/* Open the file rel below a (anchor.h: no link followed, nothing but a
 * regular file ever opened), stat it, and ask where its data lies as mode
 * says (EXT_NONE: the result carries FT_NOEXT without asking), and, when
 * runs is not NULL, fill it (above).  Data without blocks is written back
 * as wb says, and asked again (ext_result.written_back; Linux).
 *
 * Returns SL_OK; SL_E_IO when the file vanished, is unreadable or is no longer
 * a regular file (the message says which, for the file's record);
 * SL_E_RESOURCE when descriptors or memory ran out.  *r is zeroed first. */
int ext_locate(const struct anchor *a, const char *rel, enum ext_mode mode,
	       enum ext_writeback wb, struct ext_result *r, struct ext_runs *runs,
	       struct sl_err *err);

/* A mergerfs pool, which joins the file systems of several disks under one
 * mount: its files are stat'ed, located and read on their branches, so
 * that each disk is read in its own physical order.  Where a file lies is
 * mergerfs's answer (the attributes user.mergerfs.basepath and .relpath,
 * which mergerfs itself answers), trusted only from a pool that root (or
 * the scan's own user) mounted, and only when it names one of the pool's
 * own branches; the file is then opened below that branch as below a
 * root.  Nothing else is ever taken for a pool: on ext4 any user may set a
 * user.mergerfs.* attribute (docs/security.md). */
struct ext_pool;
#define EXT_POOL_MAX_BRANCHES 64

/* Whether the file system st_dev is such a pool: *out then holds its
 * branches, each resolved once and held open (anchor.h).  Returns SL_OK
 * (*out NULL: no such pool, which is the usual answer) or SL_E_NOMEM. */
int ext_pool_open(uint64_t st_dev, struct ext_pool **out, struct sl_err *err);
void ext_pool_free(struct ext_pool *p);

/* Pool p's branches: the i-th (borrowed), NULL past the last. */
struct anchor *ext_pool_branch_at(const struct ext_pool *p, size_t i);

/* The branch of pool p that holds the file rel below a (a borrowed
 * anchor), its names below the branch appended to below.  Returns SL_OK;
 * SL_E_UNSUPPORTED when the pool does not say, or names a branch it does
 * not have (the file is then read through the pool); SL_E_IO/SL_E_RESOURCE
 * as ext_locate; SL_E_NOMEM. */
int ext_pool_branch(const struct ext_pool *p, const struct anchor *a, const char *rel,
		    struct anchor **branch, struct strbuf *below, struct sl_err *err);

/* Where a file's metadata lies, as the key of inode order: on Linux the
 * inode number; on NTFS the MFT record number, the low 48 bits of the file
 * ID, whose high 16 are a sequence number counting the record's reuses
 * (sorting by the whole ID sorted by that count first).  Identity keeps
 * the whole ID. */
uint64_t ext_inode_rank(uint64_t ino);

#endif
