/* walk.h - enumerate the roots into an ftab.
 *
 * The walk never follows symbolic links, never opens FIFOs, sockets or device
 * nodes (their type comes from the directory entry), and stays on each root's
 * file system unless told otherwise, like `find -xdev` (a btrfs subvolume is
 * its own file system here).  A directory reached twice, through a bind-mount
 * loop or overlapping roots, is walked once.  A directory that cannot be
 * listed becomes a failed entry (FT_DIR) carrying its error, so it is stored
 * and reported like any unreadable file.
 *
 * Implementations: walk_linux.c (openat/fdopendir), walk_win.c.
 */
#ifndef SL_WALK_H
#define SL_WALK_H

#include <stdatomic.h>
#include <stdint.h>

#include "common/anchor.h"
#include "common/err.h"
#include "scanner/exclude.h"
#include "scanner/ftab.h"

/* Directories nested deeper than this are recorded as failed, not descended:
 * the walk holds one descriptor per level. */
#define WALK_MAX_DEPTH 256

/* A file the walk leaves out, by identity (the index's own files). */
struct walk_skip {
	uint64_t dev;
	uint64_t ino;
};

struct walk_opts {
	int cross_fs;                /* descend into file systems mounted below a root */
	atomic_int *cancel;          /* when set (may be NULL): stop with SL_E_CANCELLED */
	const struct walk_skip *skip; /* files to leave out */
	size_t nskip;
	const struct excl *exclude;  /* patterns to leave out (may be NULL) */
};

struct walk_stats {
	uint64_t dirs;
	uint64_t files;
	uint64_t symlinks;  /* skipped, never followed */
	uint64_t special;   /* FIFOs, sockets, devices: skipped, never opened */
	uint64_t other_fs;  /* mount points not descended */
	uint64_t repeats;   /* directories reached a second time */
	uint64_t excluded;  /* files in walk_opts.skip */
	uint64_t excl_files; /* files and directories left out by pattern */
	uint64_t excl_dirs;
	uint64_t dir_errors;
};

/* Walk one root, a folder or a single file resolved once already
 * (anchor_open with ANCHOR_FILE, and ANCHOR_CROSS_FS for o->cross_fs), and
 * append what it holds to ft, which takes a reference to the anchor: every
 * file below it is opened relative to it from then on.  Per-directory
 * failures are recorded in ft and counted in st->dir_errors.  Returns
 * SL_OK; SL_E_IO when the root itself cannot be listed; SL_E_NOMEM/
 * SL_E_RESOURCE when the walk had to stop; SL_E_CANCELLED when o->cancel
 * was set. */
int walk_root(struct ftab *ft, struct anchor *root, const struct walk_opts *o,
	      struct walk_stats *st, struct sl_err *err);

/* For walk_linux.c and walk_win.c (walk.c): record directory `dir` as a
 * failed entry carrying "op: <error text of sys>" (or just op when sys is
 * 0), counted in st->dir_errors; msg is scratch.  Returns SL_OK or
 * SL_E_NOMEM. */
int walk_dir_error(struct ftab *ft, struct walk_stats *st, uint32_t dir, const char *op, int sys,
		   struct strbuf *msg, struct sl_err *err);

/* For tests: list directories with the fallback API where there is one
 * (Windows: FindFirstFileExW instead of FileIdBothDirectoryInfo); no
 * effect elsewhere. */
void walk_force_fallback(int on);

/* Whether the entry `name` of directory `dir` (its path; only built into
 * full, scratch, when a pattern looks at paths) is left out by x. */
int walk_excluded(const struct excl *x, const char *dir, const char *name, struct strbuf *full);

/* Whether (dev, ino) is one of o->skip (ino 0: unknown, never skipped). */
int walk_skipped(const struct walk_opts *o, uint64_t dev, uint64_t ino);

/* Canonical absolute form of a root as the user named it (anchor_open:
 * links in the root path itself are resolved, as root only links root
 * owns; Windows: names in the disk's case).  Returns SL_OK or SL_E_IO. */
int walk_canonical(const char *root, struct strbuf *out, struct sl_err *err);

#endif
