/* report.h - what `seekless report` reads from the index that stats and
 * dupes do not already hand out (db.h): the nightly history with each
 * disk's order and reason, the files recorded with an error, and one
 * file's record (for its picture).  Strings handed to callbacks are valid
 * during the call only; paths and names are as stored (len bytes; not
 * always UTF-8).  Every statement is constant; only limits and ids are
 * bound.  Callbacks return 0, or -1 to stop the run (SL_E_IO). */
#ifndef SL_DB_REPORT_H
#define SL_DB_REPORT_H

#include <stddef.h>
#include <stdint.h>

#include "common/err.h"

struct db;

/* One scan of the history (not bench's runs, which the bench section
 * shows: one bench writes a row per order and run). */
struct db_report_scan {
	int64_t id;
	const char *started_at, *status, *command, *order; /* may be NULL */
	int64_t files, bytes, errors;
	int64_t added, changed, moved, deleted, unchanged; /* -1: not recorded */
	double wall_s, read_s;
	int background;
};

/* One disk of a scan: the order it got and why. */
struct db_report_dev {
	int64_t scan_id;
	const char *device, *fstype, *order, *reason; /* fstype may be NULL */
	int rotational;                               /* -1 unknown */
	int64_t files, bytes;
	double read_s;
};

/* The last `limit` scans, oldest first, each followed by its disks (dev
 * may be NULL).  *total gets how many scans there are in all. */
int db_report_scans(struct db *db, int limit, int (*scan)(void *ctx, const struct db_report_scan *s),
		    int (*dev)(void *ctx, const struct db_report_dev *d), void *ctx, int64_t *total,
		    struct sl_err *err);

/* One live record with an error, and where it is. */
struct db_report_error {
	const char *path;
	size_t path_len;
	const char *error;   /* as stored */
	size_t error_len;
	const char *format;  /* may be NULL */
	const char *fs;      /* the file system's last mount point or identity; may be NULL */
	int64_t size, last_scan;
};

/* The first `limit` live records with an error, by path; *total gets how
 * many there are. */
int db_report_errors(struct db *db, int limit,
		     int (*fn)(void *ctx, const struct db_report_error *e), void *ctx,
		     int64_t *total, struct sl_err *err);

/* What the index says of the live file at path: found 0 when no live
 * record has it. */
struct db_report_file {
	int64_t size, mtime_ns;
	int orientation;   /* 0 unknown */
	char format[16];   /* "" unknown */
	char phash_src[24];
};
int db_report_file(struct db *db, const char *path, size_t len, struct db_report_file *f,
		   int *found, struct sl_err *err);

#endif
