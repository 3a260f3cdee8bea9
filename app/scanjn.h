/* scanjn.h - what `seekless scan` takes from the volumes' change journals
 * (scanner/journal.h): which roots need no walk, which volumes' changes
 * can be read from the journal's list, and where each journal stood when
 * this scan began, to store once it completes.
 *
 * Per volume the verdict is one of
 *   skip  nothing changed since the last complete scan: its roots are not
 *         walked and their records stay;
 *   list  only files created or written: those files are looked up by ID
 *         and read, nothing else is walked and nothing is marked deleted;
 *   walk  anything else (renames, deletions, too many changes, a new or
 *         wrapped journal, no rights, no journal at all).
 * Listing is used only when no root needs a walk: a walk's diff would
 * mistake the unlisted files of a listed root for deleted ones. */
#ifndef SL_SCANJN_H
#define SL_SCANJN_H

#include <stddef.h>

#include "app/prep.h"
#include "db/db.h"
#include "scanner/exclude.h"
#include "scanner/journal.h"

/* At most this many changed files are looked up by ID; more is a walk. */
#define SJ_MAX_LISTED 20000

enum sj_verdict { SJ_WALK, SJ_SKIP, SJ_LIST };

struct sj_vol {
	struct jn_state now;
	enum sj_verdict verdict;
	struct usn_tally t;   /* with the listed file IDs */
	char *root;           /* a root on it, to open it by */
};

struct scanjn {
	struct sj_vol *vols;
	size_t nvols, cap;
	int listed;           /* p->roots are all listed: sj_list replaces the walk */
	struct strbuf report; /* one "journal" line per volume, for the summary */
};

void sj_init(struct scanjn *j);
void sj_free(struct scanjn *j);

/* Decide per volume (full: always walk) and take the skipped volumes' roots
 * out of p->roots.  Never fails for want of a journal; returns SL_OK, or
 * SL_E_DB / SL_E_NOMEM. */
int sj_decide(struct scanjn *j, struct db *db, struct prep *p, const char *dbpath, int full,
	      struct sl_err *err);

/* With j->listed: fill p->ft with the listed files under p->roots (and not
 * excluded), instead of walking.  When a listed file cannot be named,
 * j->listed becomes 0 and p->ft is left empty: the caller walks instead.
 * Returns SL_OK or SL_E_NOMEM. */
int sj_list(struct scanjn *j, struct prep *p, const struct excl *ex, struct sl_err *err);

/* After a complete scan: store where each journal stood when it began.  A
 * position that cannot be stored is noted (p->note): the next scan then
 * walks, which is slower, not wrong. */
void sj_store(const struct scanjn *j, struct db *db, const struct prep *p);

#endif
