/* prep.h - the front half of every command that reads the drives: the
 * roots, the walk and the locate pass (stat and extent map), or the files a
 * list names instead of a walk.
 *
 * Nothing here prints.  Errors come back as values with their message;
 * what is only worth saying (a root that is not there and is skipped, a
 * listed file whose folder cannot be reached) goes to p->note when set. */
#ifndef SL_PREP_H
#define SL_PREP_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "common/err.h"
#include "common/strbuf.h"
#include "scanner/device.h"
#include "scanner/exclude.h"
#include "scanner/ftab.h"
#include "scanner/locate.h"
#include "scanner/plan.h"
#include "scanner/walk.h"

/* What walk and locate found for a set of roots.  Zero it, then set note
 * if wanted; prep_free releases it and zeroes it again. */
struct prep {
	struct ftab ft;
	struct dev_info *devs;  /* one per ft.devs */
	struct walk_stats ws;
	struct locate_stats ls;
	double walk_s, locate_s;
	char **roots;           /* canonical */
	struct anchor **anchors; /* each root held open since prep_roots (a
				    --files-from folder's may be NULL) */
	size_t nroots;
	void (*note)(void *ctx, const char *msg);
	void *note_ctx;
};

/* Resolve the roots once and hold them open (anchor.h) in p->anchors,
 * their canonical paths in p->roots; cross_fs: opens below them may cross
 * mount points.  One that cannot be accessed is SL_E_USAGE with its
 * reason.  Configured roots come with from ("file:line" of each; NULL for
 * roots named on the command line): one of those that cannot be accessed
 * is noted as skipped (a drive not plugged in), and only having none left
 * is an error, SL_E_USAGE naming each with its line: then the
 * configuration names nothing there is.  SL_E_NOMEM. */
int prep_roots(struct prep *p, char *const *paths, size_t n, char *const *from, int cross_fs,
	       struct sl_err *err);

/* Walk every root (p->anchors), leaving out the files of the index at dbpath (may be
 * NULL) and what matches exclude (may be NULL); timed in p->walk_s.
 * Returns SL_OK or a fatal error. */
int prep_walk(struct prep *p, int cross_fs, const struct excl *exclude, const char *dbpath,
	      atomic_int *cancel, struct sl_err *err);

/* prep_walk, then locate every file (stat and extent map; p->locate_s). */
int prep_walk_locate(struct prep *p, int cross_fs, const struct excl *exclude,
		     const char *dbpath, atomic_int *cancel, struct sl_err *err);

/* Instead of walking: the files listed in `file` ("-": standard input),
 * NUL-separated when the list holds any NUL byte (plan --print0), else one
 * per line.  Relative paths are taken from the current folder.  Fills
 * p->ft with them (each folder a root entry, also in p->roots), leaving out
 * the index's own files.  A listed path that is not a regular file is still
 * entered: the stat pass records why.  Returns SL_OK, SL_E_USAGE (nothing
 * listed, or the list cannot be read), SL_E_NOMEM. */
int prep_files_from(const char *file, const char *dbpath, struct prep *p, struct sl_err *err);
/* The same for a list in memory (len bytes at text; what names it in
 * messages). */
int prep_files_list(const char *text, size_t len, const char *what, const char *dbpath,
		    struct prep *p, struct sl_err *err);

void prep_free(struct prep *p);

/* The read plan of p's files (plan_build), with the extent schedules the
 * pipeline will follow under mem_budget (plan_schedule, px_mem): what scan,
 * plan and bench all read by.  First the names of one file (hard links)
 * among those to read are joined, so that it is read once
 * (ftab_join_links): call it after the diff has marked what to skip.
 * Returns SL_OK or SL_E_NOMEM. */
int prep_plan(struct prep *p, int order, uint64_t seed, size_t mem_budget,
	      struct plan *pl, struct sl_err *err);

/* A plan group's file systems, e.g. "ext4 on /mnt/photos". */
void prep_group_fs(const struct prep *p, const struct plan *pl, size_t g, char *buf, size_t cap);

/* Absolute form of path, resolving its folder as a root is (walk_canonical:
 * as root, only links root owns) but not its last component (which may not
 * exist yet, or be a link that must not be followed).  Returns 0 or an
 * errno value. */
int prep_abs_name(const char *path, struct strbuf *out);

/* Seed for --order random when none was given. */
uint64_t prep_random_seed(void);

/* Format a note and hand it to p->note (nothing when unset). */
void prep_note(const struct prep *p, const char *fmt, ...) SL_PRINTF(2, 3);

#endif
