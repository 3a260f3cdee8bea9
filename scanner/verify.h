/* verify.h - prove a plan's positions against the raw device.
 *
 * For every planned file with a physical position: its first bytes (up to
 * VERIFY_LEN) read through the file, and the same number of bytes read from
 * the device at the planned position (rawdev.h), must be equal.  A file
 * whose first block moved since the plan, or a position computed wrong (a
 * block size, a partition offset), differs.  Files are visited in plan
 * order, so on a disk read in physical order the device is read front to
 * back too.
 *
 * Not checked, each counted with its reason: files without a position
 * (inline, unallocated, encoded, empty, no extent map), files on a device
 * that could not be opened (not root), btrfs whose positions stayed logical
 * addresses (no chunk map: not root, several devices, striped chunks;
 * chunkmap.h), and files that could not be read.
 */
#ifndef SL_VERIFY_H
#define SL_VERIFY_H

#include <stddef.h>
#include <stdint.h>

#include "common/err.h"
#include "scanner/device.h"
#include "scanner/ftab.h"
#include "scanner/plan.h"

#define VERIFY_LEN 4096

enum verify_skip {
	VS_INLINE, VS_UNALLOCATED, VS_ENCODED, VS_EMPTY, VS_NOEXT, /* no position */
	VS_DEVICE,  /* the device could not be opened (verify_group.device_error) */
	VS_LOGICAL, /* btrfs: a logical address, not a device offset
		       (verify_group.logical_why) */
	VS_FILE,    /* the file could not be read (gone, no permission) */
	VS_READ,    /* the device could not be read there */
	VS_N
};

struct verify_group {
	size_t files;        /* planned */
	size_t verified;     /* compared equal */
	size_t differ;
	size_t skipped[VS_N];
	size_t devices_read; /* file systems of the group whose device opened */
	char device[160];    /* what was read ("/dev/loop0"), the first one */
	char device_error[384]; /* why a device did not open, "" if all did */
	int logical_why;     /* with skipped[VS_LOGICAL]: the first CM_* why */
};

struct verify_cb {
	void *ctx;
	/* file (ftab index) of group differs from the device at pos, first at
	 * byte at of its head */
	void (*differs)(void *ctx, size_t group, uint32_t file, uint64_t pos, size_t at);
};

/* Fill out[0 .. pl->ngroups-1].  Per-file trouble is counted, not failed.
 * Returns SL_OK or SL_E_NOMEM. */
int verify_plan(const struct ftab *ft, const struct dev_info *devs, const struct plan *pl,
		struct verify_group *out, const struct verify_cb *cb, struct sl_err *err);

/* "inline", "device not readable", ... */
const char *verify_skip_name(int why);

#endif
