/* seekless - index photo drives by reading files in physical disk order. */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "common/sys.h"

static const char usage[] =
	"usage: seekless COMMAND [OPTIONS] [ROOT...]\n"
	"\n"
	"Index photo trees by reading their files in physical disk order.\n"
	"\n"
	"commands:\n"
	"  scan     index ROOTs into the database (new and changed files only)\n"
	"  plan     show the read plan for ROOTs without reading\n"
	"  export   write the index (or its scans) as JSON lines or CSV\n"
	"  bench    time cold reads of ROOTs in several orders, side by side\n"
	"  purge    remove the records of files scans found gone\n"
	"  stats    what the index holds; the last scans, disk by disk, with speeds\n"
	"  query    the indexed files by camera, lens, date, place, format, errors\n"
	"  dupes    groups of identical files, or of near-identical images\n"
	"  report   the index as one HTML page: history, bench, duplicates, errors\n"
	"  service  install, remove or inspect the nightly scan\n"
	"\n"
	"Every command takes --db PATH (default: the configuration's db, else\n"
	"$XDG_DATA_HOME/seekless/index.db) and --config FILE (default\n"
	"/etc/seekless.conf, then ~/.config/seekless/config; docs/usage.md).\n"
	"Options may come before or after the ROOTs; '--' ends them.\n"
	"'seekless COMMAND --help' (or -h) describes a command.\n"
	"\n"
	"exit status: 0 ok, 1 finished with per-file errors, 2 usage error (or a\n"
	"configuration that cannot be used), 3 fatal (database, resources),\n"
	"4 interrupted (what was read is stored)\n";

static const struct {
	const char *name;
	int (*fn)(int argc, char **argv);
} commands[] = {
	{"scan", cmd_scan},
	{"plan", cmd_plan},
	{"export", cmd_export},
	{"bench", cmd_bench},
	{"purge", cmd_purge},
	{"stats", cmd_stats},
	{"query", cmd_query},
	{"dupes", cmd_dupes},
	{"report", cmd_report},
	{"service", cmd_service},
};

#define NCOMMANDS (sizeof(commands) / sizeof(commands[0]))

/* Edits (insert, delete, change, swap two neighbours) from a to b, or
 * more than 2 when that is all it can tell: names are short. */
static int distance(const char *a, const char *b)
{
	enum { MAX = 16 };
	int d[MAX + 1][MAX + 1];
	size_t la = strlen(a), lb = strlen(b), i, j;

	if (la > MAX || lb > MAX)
		return MAX;
	for (i = 0; i <= la; i++)
		d[i][0] = (int)i;
	for (j = 0; j <= lb; j++)
		d[0][j] = (int)j;
	for (i = 1; i <= la; i++) {
		for (j = 1; j <= lb; j++) {
			int best = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);
			if (d[i - 1][j] + 1 < best)
				best = d[i - 1][j] + 1;
			if (d[i][j - 1] + 1 < best)
				best = d[i][j - 1] + 1;
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
			    d[i - 2][j - 2] + 1 < best)
				best = d[i - 2][j - 2] + 1;
			d[i][j] = best;
		}
	}
	return d[la][lb];
}

/* The one command name meant a typo: the only one it begins, else the
 * only nearest within 2 edits.  NULL when none or several are. */
static const char *guess(const char *name)
{
	const char *found = NULL;
	int best = 3, ties = 0;
	size_t i, n = strlen(name);

	for (i = 0; n && i < NCOMMANDS; i++) {
		if (strncmp(commands[i].name, name, n) != 0)
			continue;
		if (found)
			return NULL;
		found = commands[i].name;
	}
	if (found)
		return found;
	for (i = 0; i < NCOMMANDS; i++) {
		int d = distance(name, commands[i].name);
		if (d < best) {
			best = d;
			found = commands[i].name;
			ties = 0;
		} else if (d == best) {
			ties++;
		}
	}
	return ties ? NULL : found;
}

static int dispatch(const char *name, int argc, char **argv)
{
	const char *hint;
	size_t i;

	for (i = 0; i < NCOMMANDS; i++)
		if (strcmp(name, commands[i].name) == 0)
			return commands[i].fn(argc, argv);
	if (name[0] == '-') {
		fprintf(stderr, "seekless: unrecognized option '%s' (options follow the command); "
			"see 'seekless --help'\n", name);
	} else if ((hint = guess(name)) != NULL) {
		fprintf(stderr, "seekless: '%s' is not a command; did you mean '%s'? "
			"See 'seekless --help'\n", name, hint);
	} else {
		fprintf(stderr, "seekless: '%s' is not a command; the commands are", name);
		for (i = 0; i < NCOMMANDS; i++)
			fprintf(stderr, "%s %s", i ? "," : "", commands[i].name);
		fputs("; see 'seekless --help'\n", stderr);
	}
	return EXIT_USAGE;
}

int main(int argc, char **argv)
{
	const char *cmd;

	sys_utf8_args(&argc, &argv);
	cmd = argc > 1 ? argv[1] : NULL;
	if (!cmd) {
		fputs(usage, stderr);
		return EXIT_USAGE;
	}
	if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0 || strcmp(cmd, "help") == 0) {
		if (argc > 2 && strcmp(cmd, "help") == 0) {
			char *args[] = {argv[2], (char *)"--help", NULL};
			return dispatch(argv[2], 2, args);
		}
		fputs(usage, stdout);
		return EXIT_OK;
	}
	if (strcmp(cmd, "--version") == 0) {
		/* the commit, where the build knew it (CMakeLists.txt) */
		if (*SEEKLESS_COMMIT)
			printf("seekless %s (commit %s)\n", SEEKLESS_VERSION, SEEKLESS_COMMIT);
		else
			printf("seekless %s\n", SEEKLESS_VERSION);
		return EXIT_OK;
	}
	return dispatch(cmd, argc - 1, argv + 1);
}
