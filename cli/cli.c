#include "cli/cli.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/sys.h"
#include "db/db.h"
#include "indexer/pipeline.h"

int cli_index_path(const char *cmd, const char *dbopt, const char *config_path,
		   struct strbuf *out)
{
	struct cfg c;
	struct sl_err e;
	int rc = SL_OK;

	cfg_init(&c);
	/* with --db, a broken configuration found by default is no reason to
	 * refuse; one named with --config is read as asked, so its mistakes
	 * are said */
	if (!dbopt || config_path)
		rc = cfg_load(&c, config_path, &e);
	if (rc != SL_OK) {
		cli_error(cmd, &e);
		cfg_free(&c);
		return EXIT_USAGE;
	}
	rc = cfg_db_path(&c, dbopt, out, &e);
	cfg_free(&c);
	if (rc == SL_E_USAGE)
		cli_usage_error(cmd, "%s", e.msg);
	else if (rc != SL_OK)
		cli_error(cmd, &e);
	return rc == SL_OK ? EXIT_OK : rc == SL_E_USAGE ? EXIT_USAGE : EXIT_FATAL;
}

void cli_error(const char *cmd, const struct sl_err *e)
{
	const char *dbg = getenv("SEEKLESS_DEBUG");
	fprintf(stderr, "seekless %s: %s", cmd, e->msg[0] ? e->msg : sl_code_name(e->code));
	if (dbg && dbg[0] == '1' && e->file)
		fprintf(stderr, " [%s:%d, %s%s%s]", e->file, e->line, sl_code_name(e->code),
			e->detail ? ": " : "", e->detail ? e->detail : "");
	fputc('\n', stderr);
}

void cli_usage_error(const char *cmd, const char *fmt, ...)
{
	va_list ap;
	fprintf(stderr, "seekless %s: ", cmd);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "; see 'seekless %s --help'\n", cmd);
}

/* The long option named "name" (n bytes, maybe abbreviated) that has val and
 * takes no argument: the one "--name=value" misused. */
static int takes_no_argument(const struct option *opts, const char *name, size_t n, int val)
{
	for (; opts->name; opts++)
		if (opts->val == val && opts->has_arg == no_argument &&
		    strncmp(opts->name, name, n) == 0)
			return 1;
	return 0;
}

/* Unknown or ambiguous "--name" (n bytes): say which, with the candidates. */
static void bad_long_option(const char *cmd, const struct option *opts, const char *name,
			    size_t n)
{
	struct strbuf alts = STRBUF_INIT;
	int count = 0;

	for (; opts->name; opts++) {
		if (strncmp(opts->name, name, n) != 0)
			continue;
		sb_addf(&alts, "%s--%s", count ? ", " : "", opts->name);
		count++;
	}
	if (count > 1 && !alts.oom)
		cli_usage_error(cmd, "option '--%.*s' is ambiguous (%s)", (int)n, name, alts.p);
	else
		cli_usage_error(cmd, "unrecognized option '--%.*s'", (int)n, name);
	sb_free(&alts);
}

int cli_getopt(const char *cmd, int argc, char **argv, const char *shortopts,
	       const struct option *opts)
{
	char spec[16];
	const char *arg, *name, *eq;
	size_t n;
	int c;

	/* getopt's own messages lack the program's name and the way out; the
	 * leading ':' makes a missing argument ':' rather than '?' */
	opterr = 0;
	snprintf(spec, sizeof(spec), ":%sh", shortopts);
	c = getopt_long(argc, argv, spec, opts, NULL);
	if (c != '?' && c != ':')
		return c;
	/* A long option's mistake is the element just passed; a short one's
	 * is optopt, and may sit in a cluster after a long option. */
	arg = optind >= 1 && optind <= argc ? argv[optind - 1] : "";
	name = strncmp(arg, "--", 2) == 0 ? arg + 2 : NULL;
	eq = name ? strchr(name, '=') : NULL;
	n = name ? (eq ? (size_t)(eq - name) : strlen(name)) : 0;
	if (name && c == ':' && !eq)
		cli_usage_error(cmd, "option '--%s' needs an argument", name);
	else if (name && eq && optopt && takes_no_argument(opts, name, n, optopt))
		/* glibc says '?' here, the BSD getopt of mingw ':' */
		cli_usage_error(cmd, "option '--%.*s' takes no argument", (int)n, name);
	else if (name && !optopt)
		bad_long_option(cmd, opts, name, n);
	else if (optopt > ' ' && optopt < 127)
		cli_usage_error(cmd, "unrecognized option '-%c'", optopt);
	else
		cli_usage_error(cmd, "unrecognized option '%s'", arg);
	return '?';
}

void cli_progress(void *label, const struct px_progress *p)
{
	double mbs = p->elapsed > 0 ? (double)p->bytes_done / 1e6 / p->elapsed : 0;
	double eta = mbs > 0 ? ((double)(p->bytes_total - p->bytes_done) / 1e6) / mbs : 0;
	fprintf(stderr, "\r[%s] %" PRIu64 "/%" PRIu64 " files, %.1f/%.1f MB, %.1f MB/s, ETA %.0f s   ",
		(const char *)label, p->files_done, p->files_total, (double)p->bytes_done / 1e6,
		(double)p->bytes_total / 1e6, mbs, eta);
}

void cli_fmt_bytes(uint64_t n, char *buf, size_t cap)
{
	if (n >= 1000000000ull)
		snprintf(buf, cap, "%.2f GB", (double)n / 1e9);
	else if (n >= 1000000ull)
		snprintf(buf, cap, "%.1f MB", (double)n / 1e6);
	else if (n >= 1000ull)
		snprintf(buf, cap, "%.1f kB", (double)n / 1e3);
	else
		snprintf(buf, cap, "%llu B", (unsigned long long)n);
}

/* The commands that only read open with DB_READER: an index on a
 * read-only file system or in a read-only folder is still theirs to read. */
static int open_index(const char *cmd, const char *dbopt, const char *config_path, int flags,
		      struct db **db)
{
	struct strbuf path = STRBUF_INIT;
	struct sl_err e;
	int rc = cli_index_path(cmd, dbopt, config_path, &path);

	*db = NULL;
	if (rc == EXIT_OK && db_open(path.p, flags, db, &e) != SL_OK) {
		cli_error(cmd, &e);
		rc = EXIT_FATAL;
	}
	sb_free(&path);
	return rc;
}

const char *cli_plural(uint64_t n, const char *one, const char *many)
{
	return n == 1 ? one : many;
}

int cli_open_index(const char *cmd, const char *dbopt, const char *config_path, struct db **db)
{
	return open_index(cmd, dbopt, config_path, 0, db);
}

int cli_read_index(const char *cmd, const char *dbopt, const char *config_path, struct db **db)
{
	return open_index(cmd, dbopt, config_path, DB_READER, db);
}

void cli_json_text(struct strbuf *o, const char *key, const char *s)
{
	sb_addf(o, ",\"%s\":", key);
	if (s)
		sb_add_json(o, s, strlen(s));
	else
		sb_adds(o, "null");
}
