/* anchor.h - a root held open, the one place where a path is resolved.
 *
 * A root is named by a path once, when it is opened here; from then on every
 * file below it is opened by its names relative to the folder held open,
 * never by a full path again.  On Linux such an open follows no symbolic
 * link at any step and, unless the anchor allows it, crosses no mount point
 * (openat2 with RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_XDEV; a
 * walk name by name with O_NOFOLLOW where the kernel has no openat2).  A
 * folder swapped for a link between the walk and the read therefore cannot
 * lead a read outside the root (docs/security.md, "Opening what the walk
 * saw").
 *
 * The root's own path may go through links (a root named through a link is
 * common), with one rule for a privileged process (euid 0): it follows only
 * links that root owns.  A link a user owns names whatever that user chose,
 * and a user who can rename a folder on a root's path could otherwise point
 * the scan anywhere.
 *
 * Implementations: anchor_linux.c (descriptors), anchor_win.c (the path,
 * with the identity check of every open doing the work; docs/windows.md).
 */
#ifndef SL_ANCHOR_H
#define SL_ANCHOR_H

#include <stdint.h>

#include "common/err.h"
#include "common/strbuf.h"

struct anchor;

/* anchor_open flags */
enum {
	ANCHOR_CROSS_FS = 1u << 0, /* opens below may enter file systems mounted
				      below the root (scan --cross-fs) */
	ANCHOR_FILE = 1u << 1      /* path may name a regular file: its folder is
				      held, and its name is the leaf */
};

/* Resolve path (absolute, or relative to the working folder) now and hold
 * the folder it names open.  Returns SL_OK; SL_E_IO with the reason ("cannot
 * access 'p': ...", a link root does not own, not a folder); SL_E_NOMEM. */
int anchor_open(const char *path, unsigned flags, struct anchor **out, struct sl_err *err);

/* One more reference to a (returned); anchor_free drops one and frees the
 * anchor with the last.  anchor_free(NULL) is a no-op. */
struct anchor *anchor_ref(struct anchor *a);
void anchor_free(struct anchor *a);

/* The canonical absolute path of what was named (for a file root, the
 * file's), in the form seekless stores (sys_abs_path). */
const char *anchor_path(const struct anchor *a);

/* The name of the file a file root names, or NULL for a folder. */
const char *anchor_leaf(const struct anchor *a);

/* The held folder's own path: anchor_path without the leaf. */
const char *anchor_dir_path(const struct anchor *a);

/* The held folder's device and file number. */
uint64_t anchor_dev(const struct anchor *a);
uint64_t anchor_ino(const struct anchor *a);

/* Whether opens below may cross mount points (ANCHOR_CROSS_FS). */
int anchor_cross_fs(const struct anchor *a);

/* Append the full path of rel below a ("dir/rel") to out: for messages and
 * records, never to open.  Returns 0 or -1 when memory ran out. */
int anchor_join(const struct anchor *a, const char *rel, struct strbuf *out);

/* Let go of the held folder, so that its file system can be unmounted
 * (bench --cold-cmd remounts), and take it again by its path afterwards:
 * it must be the same folder (its inode), on whatever device number the
 * mount has now (btrfs and FUSE get a new one at every mount).  Opens
 * below a released anchor fail.  anchor_retake returns SL_OK, or SL_E_IO
 * when the path leads elsewhere now. */
void anchor_release(struct anchor *a);
int anchor_retake(struct anchor *a, struct sl_err *err);

/* For tests: open below anchors the way kernels without openat2 make us
 * (Linux: a walk name by name); no effect elsewhere. */
void anchor_force_fallback(int on);

#endif
