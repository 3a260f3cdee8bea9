/* locate.h - the metadata passes between walk and plan.
 *
 * Two passes, both in (device, inode) order, so that on ext4 and xfs the
 * inode tables are read front to back instead of jumping between groups:
 *   locate_stat     stat every walked file (no open), then probe each device
 *                   (device.h);
 *   locate_extents  open and ask the extent map of every file still to be
 *                   read (not FT_SKIP: an incremental scan leaves unchanged
 *                   files out).  The first answer from each file system
 *                   tells whether it has an extent map at all; after
 *                   "unsupported" the rest of its files are not asked.
 */
#ifndef SL_LOCATE_H
#define SL_LOCATE_H

#include <stdatomic.h>
#include <stdint.h>

#include "common/err.h"
#include "scanner/device.h"
#include "scanner/ftab.h"

struct locate_stats {
	uint64_t files;     /* files stat'ed successfully */
	uint64_t located;   /* with a physical offset */
	uint64_t failed;    /* vanished or unreadable: recorded in ft */
	uint64_t bytes;     /* sum of sizes */
	uint64_t written_back; /* files written back alone to be placed (extents.h) */
	int synced_fs;         /* and a whole file system was, for the rest */
	double writeback_s;    /* what that took */
};

/* Fill ino/size/mtime of every file in ft, and *devs with one dev_info per
 * ft->devs entry (caller frees *devs).  Per-file failures are recorded in
 * ft.  cancel, when not NULL and set, stops early with SL_E_CANCELLED.
 * Returns SL_OK, SL_E_NOMEM, SL_E_RESOURCE or SL_E_CANCELLED. */
int locate_stat(struct ftab *ft, struct dev_info **devs, struct locate_stats *st,
		atomic_int *cancel, struct sl_err *err);

/* Fill phys/fragments/location flags (and fresh stat fields) of every file
 * not failed and not FT_SKIP.  Same errors. */
int locate_extents(struct ftab *ft, struct locate_stats *st, atomic_int *cancel,
		   struct sl_err *err);

/* Let go of every anchor ft holds, so that a file system can be
 * unmounted and mounted again (bench --cold-cmd), then take them again
 * (anchor_retake) and follow each device to the number its mount has now,
 * as one file of it, stat'ed again, says (btrfs and FUSE get new numbers
 * at every mount; the identity checks compare them).  locate_retake
 * returns SL_OK, SL_E_IO (a root leads elsewhere now) or SL_E_NOMEM. */
void locate_release(struct ftab *ft);
int locate_retake(struct ftab *ft, struct sl_err *err);

/* Both passes, for every file. */
int locate_all(struct ftab *ft, struct dev_info **devs, struct locate_stats *st,
	       atomic_int *cancel, struct sl_err *err);

#endif
