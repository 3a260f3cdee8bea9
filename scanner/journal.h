/* journal.h - a volume's change journal, to skip walking volumes where
 * nothing happened since the last scan (NTFS on Windows; elsewhere there is
 * none and every root is walked).
 *
 * A complete scan stores where each volume's journal stood when it began
 * (db: journals).  The next scan reads the journal from there: if no file
 * or folder was created, written, renamed or deleted (outside the index's
 * own folder), the volume's roots are not walked and their records stay as
 * they are.  Any such change, a new journal ID (recreated), or a position
 * the journal no longer holds (it wrapped) means a full walk, so deletions
 * and renames are always found by the walk and the diff (db.h), never
 * taken on faith from the journal.  Between the two: when the only changes
 * are files created or written (a night's new photos), those files are
 * looked up by ID and read without walking; nothing is marked deleted, since
 * the journal shows no deletion.  Implementations: journal_win.c,
 * journal_none.c. */
#ifndef SL_JOURNAL_H
#define SL_JOURNAL_H

#include <stddef.h>
#include <stdint.h>

#include "scanner/usn.h"

struct jn_state {
	char volume[64];      /* stable key: "serial:XXXX-XXXX" (win_volume_key) */
	uint64_t journal_id;
	int64_t first_usn;    /* oldest record still held */
	int64_t next_usn;     /* where the next record will go */
};

/* Where the journal of the volume holding path stands now.  Returns 0, or
 * an errno value with why filled in (ENOSYS: no journal on this file system,
 * or with why "" on this platform; EACCES: reading it needs administrator
 * rights). */
int jn_query(const char *path, struct jn_state *now, char *why, size_t cap);

/* Tally the records from `from` up to now->next_usn into t (zeroed by the
 * caller, who may set t->max_ids to collect the files created or written).
 * Reading stops early once the answer is known: at the first change that
 * matters when not collecting, else at the first rename, deletion or
 * overflow.  ignore_dirs: folder file IDs whose entries do not count.  Returns 0, or an errno value with why filled in (ERANGE:
 * records from `from` are gone). */
int jn_read(const char *path, const struct jn_state *now, int64_t from,
	    const uint64_t *ignore_dirs, size_t n, struct usn_tally *t, char *why, size_t cap);

/* The current path (seekless's form) of each file ID on the volume holding
 * `path`, passed to fn with its ID folded as the walk gives it (fileid.h).
 * Left out: IDs no longer on the volume, and what the walk would not read
 * either (a link, a folder, a file whose data is not on this disk: reading
 * a cloud placeholder downloads it).  fn's non-zero return stops and is
 * returned.  Returns 0, an errno value with why filled in, or fn's value.
 * An error (a file there that cannot be opened by its ID or named, access
 * denied, a delete pending) means the list cannot be trusted whole: the
 * caller must walk instead. */
int jn_paths(const char *path, const struct fileid *ids, size_t n,
	     int (*fn)(const char *p, uint64_t id, void *ctx), void *ctx, char *why, size_t cap);

#endif
