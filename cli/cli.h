/* cli.h - what the seekless commands share: exit codes, finding and
 * opening the index, error and progress printing.  The scan itself, and the
 * walk and locate passes the commands share, are app/scan.h and
 * app/prep.h: they print nothing, and everything printed is here or in a
 * cmd_*.c file. */
#ifndef SL_CLI_H
#define SL_CLI_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "app/config.h"
#include "common/err.h"
#include "common/strbuf.h"

enum {
	EXIT_OK = 0,
	EXIT_FILE_ERRORS = 1, /* finished; some files carry errors */
	EXIT_USAGE = 2,
	EXIT_FATAL = 3,       /* database or resource failure */
	EXIT_INTERRUPTED = 4  /* stopped by SIGINT/SIGTERM; what was read is stored */
};

/* For commands that only need the index: load the configuration (with
 * dbopt, only when config_path names one), then cfg_db_path.  Errors
 * printed.  Returns EXIT_OK or the exit status. */
int cli_index_path(const char *cmd, const char *dbopt, const char *config_path,
		   struct strbuf *out);

struct db;

/* cli_index_path, then open the existing index to write it (*db; close
 * it with db_close): a read-only one is refused.  Errors printed (what is
 * wrong with the path: missing, a directory, not an index, read-only).
 * Returns EXIT_OK or the exit status (EXIT_FATAL for all of those). */
int cli_open_index(const char *cmd, const char *dbopt, const char *config_path, struct db **db);
/* The same for a command that only reads: an index it cannot write is
 * opened read-only, as it is (db_open's DB_READER). */
int cli_read_index(const char *cmd, const char *dbopt, const char *config_path, struct db **db);

/* "seekless CMD: message" on stderr; SEEKLESS_DEBUG=1 adds the source
 * location that raised it and the error's detail (the SQL of a database
 * error). */
void cli_error(const char *cmd, const struct sl_err *e);

/* A usage error, in one line: "seekless CMD: message; see 'seekless CMD
 * --help'" on stderr (the help itself would bury the message). */
void cli_usage_error(const char *cmd, const char *fmt, ...) SL_PRINTF(2, 3);

struct option;

/* getopt_long for a command's arguments, called in a loop after optind = 1.
 * shortopts lists the short options besides -h ("" or "0"); -h is --help
 * everywhere, so every opts table needs {"help", ..., 'h'}.  Options may
 * come anywhere among the arguments (getopt permutes them: its operands
 * end up from optind on; "--" ends the options; POSIXLY_CORRECT stops at
 * the first operand).  Returns the option's val, or -1 at the end; '?'
 * after printing the mistake (unknown or ambiguous option, missing or
 * unexpected argument) as cli_usage_error does: the caller returns
 * EXIT_USAGE. */
int cli_getopt(const char *cmd, int argc, char **argv, const char *shortopts,
	       const struct option *opts);

struct px_progress;

/* The reading progress line on stderr (px_opts.progress): label is the
 * bracketed word in front ("read", or bench's order), passed as ctx. */
void cli_progress(void *label, const struct px_progress *p);

/* ',"key":' and s as a JSON string, or null when s is NULL. */
void cli_json_text(struct strbuf *o, const char *key, const char *s);

/* one if n is 1, else many: "1 file", "2 files". */
const char *cli_plural(uint64_t n, const char *one, const char *many);

/* Human figures: "45.2 MB". */
void cli_fmt_bytes(uint64_t n, char *buf, size_t cap);

int cmd_scan(int argc, char **argv);
int cmd_plan(int argc, char **argv);
int cmd_export(int argc, char **argv);
int cmd_bench(int argc, char **argv);
int cmd_purge(int argc, char **argv);
int cmd_stats(int argc, char **argv);
int cmd_query(int argc, char **argv);
int cmd_dupes(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_service(int argc, char **argv);

#endif
