/* locate.h - the metadata pass between walk and plan.
 *
 * Every walked file is opened, stat'ed and asked for its extent map, in
 * (device, inode) order: on ext4 and xfs the inode tables are then read
 * front to back instead of jumping between block groups.  The first answer
 * from each file system tells whether it has an extent map at all; after an
 * "unsupported" answer the rest of its files are not asked again.  Then each
 * device is probed (device.h).
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
};

/* Fill size/mtime/ino/phys/fragments/flags of every file in ft, and *devs
 * with one dev_info per ft->devs entry (caller frees *devs).  Per-file
 * failures are recorded in ft.  cancel, when not NULL and set, stops early
 * with SL_E_CANCELLED.  Returns SL_OK, SL_E_NOMEM, SL_E_RESOURCE or
 * SL_E_CANCELLED. */
int locate_all(struct ftab *ft, struct dev_info **devs, struct locate_stats *st,
	       atomic_int *cancel, struct sl_err *err);

#endif
