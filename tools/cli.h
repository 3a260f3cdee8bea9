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
#include "scanner/ftab.h"
#include "scanner/locate.h"
#include "scanner/plan.h"
#include "scanner/walk.h"

enum {
	EXIT_OK = 0,
	EXIT_FILE_ERRORS = 1, /* finished; some files carry errors */
	EXIT_USAGE = 2,
	EXIT_FATAL = 3        /* database or resource failure; interrupted */
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

/* Canonicalise the roots (usage error if one cannot be accessed: reported
 * on stderr, returns SL_E_USAGE). */
int cli_roots(const char *cmd, char **argv, int argc, struct prep *p);

/* Walk every root, leaving out the files of the index at dbpath (may be
 * NULL); timed in p->walk_s.  Returns SL_OK or a fatal error. */
int cli_walk(struct prep *p, int cross_fs, const char *dbpath, atomic_int *cancel,
	     struct sl_err *err);

/* cli_walk, then locate every file (stat and extent map). */
int cli_prepare(struct prep *p, int cross_fs, const char *dbpath, atomic_int *cancel,
		struct sl_err *err);
void cli_prep_free(struct prep *p);

/* --db, or the default location. */
int cli_db_path(const char *opt, struct strbuf *out);

/* "seekless CMD: message" on stderr; SEEKLESS_DEBUG=1 adds the source
 * location that raised it. */
void cli_error(const char *cmd, const struct sl_err *e);
void cli_usage_error(const char *cmd, const char *fmt, ...) SL_PRINTF(2, 3);

/* Exit code for a status. */
int cli_exit_code(int rc);

/* Parse "64M", "1G", "4096"; returns 0 or -1. */
int cli_parse_size(const char *s, uint64_t *out);

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

#endif
