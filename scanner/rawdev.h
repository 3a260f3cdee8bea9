/* rawdev.h - the bytes of a file system read past it, from its device.
 *
 * plan --verify (verify.h) checks a planned position by reading the same
 * bytes twice: through the file, and from what holds the file system at
 * that position.  On Linux that is the whole disk (/dev/<dev_info.disk>),
 * at the partition start plus the position; on Windows the volume
 * (\\.\X:, dev_info.source), whose positions already count from its start
 * (FSCTL_GET_RETRIEVAL_POINTER_BASE, extents_win.c).  Device reads bypass
 * the cache (O_DIRECT, FILE_FLAG_NO_BUFFERING) so that a block read before
 * the file was written cannot answer for it; both need reading the raw
 * device, which is root's (administrator's) right.
 *
 * Implementations: rawdev_linux.c, rawdev_win.c.
 */
#ifndef SL_RAWDEV_H
#define SL_RAWDEV_H

#include <stddef.h>
#include <stdint.h>

#include "common/err.h"
#include "scanner/device.h"

struct rawdev;

/* Open what holds d's file system for reading; *name says what that is
 * ("/dev/loop0", "\\.\D:") for reports, also on failure.  Returns SL_OK;
 * SL_E_IO with the reason (no such device, permission denied) in err;
 * SL_E_NOMEM. */
int rawdev_open(const struct dev_info *d, struct rawdev **out, char *name, size_t cap,
		struct sl_err *err);

/* Read len bytes (at most 64 KiB) at pos, a position on d's file system as
 * the plan has it.  Returns SL_OK, or SL_E_IO (short read: past the end). */
int rawdev_read(struct rawdev *r, uint64_t pos, void *buf, size_t len, struct sl_err *err);

void rawdev_close(struct rawdev *r);

/* The first len bytes of the file at path, through the file system; *got
 * is how many there were.  Returns SL_OK or SL_E_IO. */
int rawdev_file_head(const char *path, void *buf, size_t len, size_t *got, struct sl_err *err);

#endif
