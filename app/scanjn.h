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
 *         wrapped journal, no rights, no journal at all, a root with no
 *         position, a root not walked for SJ_WALK_DAYS).
 * Listing is used only when no root needs a walk: a walk's diff would
 * mistake the unlisted files of a listed root for deleted ones.
 *
 * Positions are kept per root (the key: the volume's, '|', the root as the
 * scan names it), not per volume: a scan of one folder says nothing of the
 * rest of its volume.  A volume's journal is read from the oldest position
 * of the roots on it.  A root's position moves on only when the scan
 * covered all of it:
 *   - every folder under it listed and every file it was to read read (or
 *     the volume skipped): the position becomes where the journal stood
 *     when the scan began;
 *   - listed, and a file failed to read: the old position stays, so the
 *     next scan reads the same records and lists that file again;
 *   - walked, and a folder could not be listed or a file failed to read:
 *     the position is forgotten, so the next scan walks the root; a walk
 *     is what retries a folder, and its diff reads again every record that
 *     holds an error.
 * Not failures: a file read whose contents are bad, and a file seekless
 * does not read (SL_E_UNSUPPORTED: its data is not on this disk); reading
 * again would not change them.  (The position used to move on after every
 * scan that ended: a file locked by an editor, or a folder that failed
 * once, stayed out of the index until an unrelated change made a walk.)
 *
 * What a journal cannot show: a volume written by another system (Linux's
 * ntfs-3g and ntfs3, macOS drivers) gets no records for those changes, and
 * looks quiet.  A root is therefore walked, whatever its journal says,
 * once its last walk is more than SJ_WALK_DAYS old (docs/windows.md). */
#ifndef SL_SCANJN_H
#define SL_SCANJN_H

#include <stddef.h>

#include "app/prep.h"
#include "db/db.h"
#include "scanner/exclude.h"
#include "scanner/journal.h"

/* At most this many changed files are looked up by ID; more is a walk. */
#define SJ_MAX_LISTED 20000

/* The longest a root goes on its journal's word alone, in days. */
#define SJ_WALK_DAYS 7

enum sj_verdict { SJ_WALK, SJ_SKIP, SJ_LIST };

struct sj_vol {
	struct jn_state now;
	enum sj_verdict verdict;
	struct usn_tally t;   /* with the listed file IDs */
	char *root;           /* a root on it, to open it by */
};

/* A root on a volume whose journal could be queried, as the scan began. */
struct sj_root {
	char *path;
	size_t vol;           /* in vols */
	int failed;           /* sj_failed: not covered whole */
};

struct scanjn {
	struct sj_vol *vols;
	size_t nvols, cap;
	struct sj_root *roots;
	size_t nroots, rcap;
	int listed;           /* p->roots are all listed: sj_list replaces the walk */
	struct strbuf report; /* "journal" lines, for the summary */
};

void sj_init(struct scanjn *j);
void sj_free(struct scanjn *j);

/* Decide per volume (full: always walk) and take the skipped volumes' roots
 * out of p->roots.  Never fails for want of a journal; returns SL_OK, or
 * SL_E_DB / SL_E_NOMEM. */
int sj_decide(struct scanjn *j, struct db *db, struct prep *p, const char *dbpath, int full,
	      struct sl_err *err);

/* With j->listed: fill p->ft with the listed files under p->roots (and not
 * excluded), instead of walking.  When a listed file cannot be named or
 * opened, j->listed becomes 0, the listed volumes' verdicts walk, and p->ft
 * is left empty: the caller walks instead.  Returns SL_OK or SL_E_NOMEM. */
int sj_list(struct scanjn *j, struct prep *p, const struct excl *ex, struct sl_err *err);

/* The folder or file at path could not be listed or read, and may be
 * another time (its record holds the error): the root it is under is not
 * covered whole. */
void sj_failed(struct scanjn *j, const char *path);

/* After a complete scan: per root, store where its volume's journal stood
 * when the scan began, keep the old position, or forget it, as above (and
 * say so in j->report when not stored).  A position that cannot be stored
 * or forgotten is noted (p->note). */
void sj_store(struct scanjn *j, struct db *db, const struct prep *p);

#endif
