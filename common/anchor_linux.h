/* anchor_linux.h - opening below an anchor (anchor.h), for the Linux
 * modules that need a descriptor: the walk, the locate pass, the reader,
 * the btrfs chunk map and the sandbox. */
#ifndef SL_ANCHOR_LINUX_H
#define SL_ANCHOR_LINUX_H

#include <stdint.h>
#include <sys/stat.h>

#include "common/anchor.h"
#include "common/err.h"

/* The held folder, as an O_PATH descriptor (owned by the anchor). */
int anchor_fd(const struct anchor *a);

/* Open rel below a with open(2)'s flags (O_NOFOLLOW and O_CLOEXEC are
 * added): no symbolic link is followed at any step, no name leaves a, and
 * without ANCHOR_CROSS_FS no mount point is crossed.  rel is names from a
 * walk joined by '/' ("" for a itself).  Returns a descriptor, or -1 with
 * errno: ELOOP a link on the way, EXDEV a mount point, else open's. */
int anchor_openat(const struct anchor *a, const char *rel, int flags);

/* The regular file rel below a, checked before it is opened: found as
 * anchor_openat does, with O_PATH (which opens nothing), stat'ed into *st
 * and *btime_ns (sys_statx), and refused unless it is a regular file; then,
 * when flags are not O_PATH, opened with flags through that very object
 * (/proc/self/fd), so that nothing else, a device node renamed into its
 * place meanwhile, is ever opened.  Returns SL_OK with *fd; SL_E_IO with
 * "open: replaced by a symbolic link", "open: no longer a regular file",
 * "open: on another file system (mounted since the walk)" or open's own
 * error (err->sys set); SL_E_RESOURCE when descriptors ran out. */
int anchor_open_file(const struct anchor *a, const char *rel, int flags, int *fd, struct stat *st,
		     int64_t *btime_ns, struct sl_err *err);

#endif
