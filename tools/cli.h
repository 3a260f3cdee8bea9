/* cli.h - what the seekless commands share: exit codes, the scanner
 * front half (walk + locate), error printing, option helpers. */
#ifndef SL_CLI_H
#define SL_CLI_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "common/err.h"
#include "common/strbuf.h"
#include "scanner/device.h"
#include "scanner/exclude.h"
#include "scanner/ftab.h"
#include "scanner/locate.h"
#include "scanner/plan.h"
#include "scanner/walk.h"
#include "tools/config.h"

enum {
	EXIT_OK = 0,
	EXIT_FILE_ERRORS = 1, /* finished; some files carry errors */
	EXIT_USAGE = 2,
	EXIT_FATAL = 3,       /* database or resource failure */
	EXIT_INTERRUPTED = 4  /* stopped by SIGINT/SIGTERM; what was read is stored */
};

/* What walk and locate found for a set of roots. */
struct prep {
	struct ftab ft;
	struct dev_info *devs;  /* one per ft.devs */
	struct walk_stats ws;
	struct locate_stats ls;
	double walk_s, locate_s;
	char **roots;           /* canonical */
	size_t nroots;
};

/* Canonicalise the roots.  One that cannot be accessed is a usage error
 * (reported on stderr, returns SL_E_USAGE), unless skip_missing: then it is
 * reported as skipped, and only having no root left is an error. */
int cli_roots(const char *cmd, char *const *argv, int argc, int skip_missing, struct prep *p);

/* Walk every root, leaving out the files of the index at dbpath (may be
 * NULL) and what matches exclude (may be NULL); timed in p->walk_s.
 * Returns SL_OK or a fatal error. */
int cli_walk(struct prep *p, int cross_fs, const struct excl *exclude, const char *dbpath,
	     atomic_int *cancel, struct sl_err *err);

/* cli_walk, then locate every file (stat and extent map). */
int cli_prepare(struct prep *p, int cross_fs, const struct excl *exclude, const char *dbpath,
		atomic_int *cancel, struct sl_err *err);
void cli_prep_free(struct prep *p);

/* Load the configuration (config.h): config_path, or the default files.
 * Errors are printed for cmd.  Returns SL_OK or the error. */
int cli_config(const char *cmd, const char *config_path, struct cfg *c);

/* The index: --db (opt), else the configuration's db, else the default
 * location.  Errors printed.  Returns EXIT_OK, EXIT_USAGE (no home
 * directory) or EXIT_FATAL (out of memory). */
int cli_db_path(const char *cmd, const char *opt, const struct cfg *c, struct strbuf *out);

/* The exclude patterns: the configuration's, then those given on the
 * command line.  Errors printed.  Returns SL_OK or the error. */
int cli_excludes(const char *cmd, const struct cfg *c, char *const *extra, size_t nextra,
		 struct excl *out);

/* Absolute form of path, resolving its folder but not its last component
 * (which may not exist yet, or be a link that must not be followed).
 * Returns 0 or an errno value. */
int cli_abs_name(const char *path, struct strbuf *out);

/* Instead of walking: the files listed in `file` ("-": standard input),
 * NUL-separated when the list holds any NUL byte (plan --print0), else one
 * per line.  Relative paths are taken from the current folder.  Fills
 * p->ft with them (each folder a root entry, also in p->roots), leaving out
 * the index's own files.  A listed path that is not a regular file is still
 * entered: the stat pass records why.  Returns SL_OK, SL_E_USAGE (nothing
 * listed, or the list cannot be read), SL_E_NOMEM. */
int cli_files_from(const char *cmd, const char *file, const char *dbpath, struct prep *p,
		   struct sl_err *err);

/* The roots: those on the command line, else the configuration's (then a
 * missing one is skipped, not an error: a drive not plugged in).  Usage
 * error when there are none.  Returns SL_OK or the error (printed). */
int cli_roots_or_config(const char *cmd, char *const *argv, int argc, const struct cfg *c,
			struct prep *p);

/* For commands that only need the index: load the configuration, then
 * cli_db_path.  Errors printed.  Returns EXIT_OK or the exit status. */
int cli_index_path(const char *cmd, const char *dbopt, const char *config_path,
		   struct strbuf *out);

struct db;

/* cli_index_path, then open the existing index (*db; close it with
 * db_close).  Errors printed.  Returns EXIT_OK or the exit status. */
int cli_open_index(const char *cmd, const char *dbopt, const char *config_path, struct db **db);

/* "seekless CMD: message" on stderr; SEEKLESS_DEBUG=1 adds the source
 * location that raised it. */
void cli_error(const char *cmd, const struct sl_err *e);
void cli_usage_error(const char *cmd, const char *fmt, ...) SL_PRINTF(2, 3);

/* Exit code for a status. */
int cli_exit_code(int rc);

/* Parse "64M", "1G", "4096"; returns 0 or -1. */
int cli_parse_size(const char *s, uint64_t *out);

/* Parse a whole decimal number in [lo, hi]; returns 0 or -1. */
int cli_parse_long(const char *s, long lo, long hi, long *out);

struct px_progress;

/* The reading progress line on stderr (px_opts.progress): label is the
 * bracketed word in front ("read", or bench's order), passed as ctx. */
void cli_progress(void *label, const struct px_progress *p);

/* Human figures: "45.2 MB". */
void cli_fmt_bytes(uint64_t n, char *buf, size_t cap);

/* A plan group's file systems, e.g. "ext4 on /mnt/photos". */
void cli_group_fs(const struct prep *p, const struct plan *pl, size_t g, char *buf, size_t cap);

/* Seed for --order random when none was given. */
uint64_t cli_random_seed(void);

int cmd_scan(int argc, char **argv);
int cmd_plan(int argc, char **argv);
int cmd_export(int argc, char **argv);
int cmd_bench(int argc, char **argv);
int cmd_purge(int argc, char **argv);
int cmd_stats(int argc, char **argv);
int cmd_query(int argc, char **argv);
int cmd_dupes(int argc, char **argv);
int cmd_service(int argc, char **argv);

#endif
