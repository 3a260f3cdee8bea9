/* extents.h - identity and on-disk position of one file.
 *
 * The position is the first physical byte of the file's data on its file
 * system (FIEMAP on Linux, FSCTL_GET_RETRIEVAL_POINTERS on Windows) plus the
 * number of fragments: physically discontiguous runs, so a file the file
 * system split into adjacent extents still counts as one.  Files whose data
 * has no usable position (inline in the inode, delayed allocation, compressed,
 * empty) are flagged and later placed by inode (plan.h).
 *
 * Implementations: extents_linux.c, extents_win.c.
 */
#ifndef SL_EXTENTS_H
#define SL_EXTENTS_H

#include <stdint.h>

#include "common/err.h"

struct ext_result {
	uint64_t dev;
	uint64_t ino;
	uint64_t size;
	int64_t mtime_ns;
	int64_t ctime_ns;   /* 0: not known */
	uint64_t phys;      /* valid when flags has FT_LOCATED */
	uint32_t fragments; /* 0 when the extent map is unknown */
	uint16_t flags;     /* FT_LOCATED, FT_INLINE, FT_UNKNOWN, FT_ENCODED, FT_EMPTY, FT_NOEXT */
	int noext_errno;    /* with FT_NOEXT: the error the file system gave */
	int undecided;      /* this answer is about the file alone: it does not
			       tell whether the file system has extent maps */
};

/* Identity, size, mtime and ctime of path, without opening it and without
 * following a final symlink.  Returns SL_OK; SL_E_IO when it vanished, is
 * unreadable or is no longer a regular file; SL_E_RESOURCE for resource
 * errors.  Fills the stat fields of *r and FT_STATED. */
int ext_stat(const char *path, struct ext_result *r, struct sl_err *err);

/* Open path without following a final symlink and without blocking on a
 * FIFO put there since the walk, stat it, and when query is non-zero read its
 * extent map (query 0 means the file system is known to have none: the
 * result then carries FT_NOEXT without asking again).
 *
 * Returns SL_OK; SL_E_IO when the file vanished, is unreadable or is no longer
 * a regular file (the message says which, for the file's record);
 * SL_E_RESOURCE when descriptors or memory ran out.  *r is zeroed first. */
int ext_locate(const char *path, int query, struct ext_result *r, struct sl_err *err);

/* Where a file's metadata lies, as the key of inode order: on Linux the
 * inode number; on NTFS the MFT record number, the low 48 bits of the file
 * ID, whose high 16 are a sequence number counting the record's reuses
 * (sorting by the whole ID sorted by that count first).  Identity keeps
 * the whole ID. */
uint64_t ext_inode_rank(uint64_t ino);

#endif
