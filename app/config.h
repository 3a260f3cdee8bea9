/* config.h - the configuration file, for the service and for scans that
 * name no roots.
 *
 * Lines of `key = value`; `#` starts a comment line; blank lines are
 * ignored; a value may be wrapped in double quotes (to keep leading or
 * trailing blanks).  `root` and `exclude` may repeat.  Paths may start with
 * `~/`.  An unknown key or a bad value is an error naming file and line: a
 * mistyped setting must not be silently ignored by a nightly job.
 *
 * Without --config, the system file and then the user's file are read
 * (sys_config_path), the later one overriding: a key set in the user's file
 * replaces the system file's value, and a file that names any `root`
 * (or `exclude`) replaces the whole list of the files before it.  With
 * --config only that file is read.  Command-line options override both.
 *
 * Keys (docs/usage.md): root, exclude, db, schedule, background, order,
 * jobs, phash, phash_now, mem, cross_fs, trust_mtime, quick.
 */
#ifndef SL_CONFIG_H
#define SL_CONFIG_H

#include <stddef.h>
#include <stdint.h>

#include "common/err.h"
#include "common/strbuf.h"

struct cfg {
	char **roots;
	size_t nroots, cap_roots;
	char **root_from;   /* "file:line" of each root, for what is said about it */
	size_t cap_root_from;
	char **excludes;
	size_t nexcludes, cap_excludes;
	char *db;           /* NULL: the default location */
	char *schedule;     /* NULL: CFG_DEFAULT_SCHEDULE */
	char *report;       /* NULL: no report after a scheduled scan */
	int background;     /* -1 unset, 0, 1: for --scheduled runs */
	int order;          /* -1 unset, else PLAN_* */
	int jobs;           /* 0 unset */
	int phash;          /* -1 unset */
	int phash_now;      /* -1 unset: hashes the disk cannot wait for are left
			       for the next scan (px_opts.phash_defer) */
	int cross_fs;       /* -1 unset */
	int trust_mtime;    /* -1 unset: a ctime that moved alone is no reason to read */
	int quick;          /* -1 unset: scans read large files in part (scan --quick) */
	uint64_t mem;       /* 0 unset */
	struct strbuf read; /* the files read, "a, b" ("" when none) */
};

#define CFG_DEFAULT_SCHEDULE "03:00"

void cfg_init(struct cfg *c);

/* Read the configuration: only `path` when not NULL (it must exist), else
 * the system file and the user's, where they exist.  Returns SL_OK;
 * SL_E_USAGE for a syntax error or bad value (message names file:line);
 * SL_E_IO when a file exists but cannot be read; SL_E_NOMEM. */
int cfg_load(struct cfg *c, const char *path, struct sl_err *err);

/* Read one file over what c holds (the precedence rules above).  missing_ok:
 * a file that does not exist is not an error. */
int cfg_read_file(struct cfg *c, const char *path, int missing_ok, struct sl_err *err);

/* Create the configuration file at path, with its folder: a copy of sample
 * (a package's sample configuration), or, when sample is NULL or cannot be
 * opened, one comment line.  For a file that does not exist yet: one that
 * does is replaced.  Returns SL_OK, SL_E_IO (naming the file) or
 * SL_E_NOMEM. */
int cfg_create_file(const char *path, const char *sample, struct sl_err *err);

/* Rewrite the configuration file at path (created when missing, with its
 * folder): when nroots > 0 its `root` lines are replaced by roots; when
 * schedule / db are not NULL, those settings are replaced.  Every other
 * line, comments included, is kept as it was.  `service install --root
 * --at --db` goes through here, so the service always reads its settings
 * from the one file.  Returns SL_OK, SL_E_IO or SL_E_NOMEM. */
int cfg_update_file(const char *path, char *const *roots, size_t nroots, const char *schedule,
		    const char *db, struct sl_err *err);

/* The index's path into out: opt (--db) when not NULL, else the
 * configuration's db, else the default location (sys_default_db_path).
 * Returns SL_OK, SL_E_USAGE (no home directory for the default) or
 * SL_E_NOMEM. */
int cfg_db_path(const struct cfg *c, const char *opt, struct strbuf *out, struct sl_err *err);

void cfg_free(struct cfg *c);

#endif
