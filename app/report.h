/* report.h - the index as one self-contained HTML page (`seekless
 * report`, and the service's `report` setting): what it holds at a
 * glance, the nightly history with a chart, bench's sorted-against-
 * unsorted runs with the head's path, duplicates (near ones with small
 * pictures of each member), and the files recorded with an error.
 *
 * Everything from the index or the files is hostile text: every name is
 * escaped for where it goes (HTML text or a quoted attribute; bytes that
 * are not UTF-8, control and direction characters shown as \xNN or \uNNNN
 * escapes), and the page asks for nothing outside itself (its Content
 * Security Policy allows only inline styles, its one inline script and
 * data: pictures).  The longest lists are capped, each saying how many
 * there are in all, so a report of a million records stays small.
 *
 * Pictures are made while writing: a file is opened the way a scan opens
 * it (anchor.h, reader.h: no link followed, nothing but a regular file),
 * and one that is gone, or whose size or modification time is not the
 * record's any more, is said to be so instead of shown.  Prints nothing. */
#ifndef SL_REPORT_H
#define SL_REPORT_H

#include <stdio.h>

#include "common/err.h"

struct db;

#define REPORT_ROWS 200        /* the default cap of a list */
#define REPORT_NEAR_GROUPS 40  /* near groups shown with pictures */
#define REPORT_GROUP_FILES 8   /* members of a group shown */

struct report_opts {
	const char *dbpath;   /* named in the heading (may be NULL) */
	int rows;             /* 0: REPORT_ROWS */
	int near_bits;        /* as dupes --near; -1: no near groups */
	int pictures;         /* make the near groups' pictures */
};

/* Write the page to out.  Returns SL_OK; SL_E_DB, SL_E_NOMEM, SL_E_IO (a
 * write failed).  A picture that cannot be made is said so on the page,
 * never an error. */
int report_write(struct db *db, const struct report_opts *o, FILE *out, struct sl_err *err);

/* report_write into the file at path (replaced when it exists).  Returns
 * as report_write; SL_E_IO naming path when it cannot be written. */
int report_file(struct db *db, const struct report_opts *o, const char *path, struct sl_err *err);

#endif
