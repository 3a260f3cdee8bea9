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
	"  service  install, remove or inspect the nightly scan\n"
	"\n"
	"Every command takes --db PATH (default: the configuration's db, else\n"
	"$XDG_DATA_HOME/seekless/index.db) and --config FILE (default\n"
	"/etc/seekless.conf, then ~/.config/seekless/config; docs/usage.md).\n"
	"'seekless COMMAND --help' describes a command.\n"
	"\n"
	"exit status: 0 ok, 1 finished with per-file errors, 2 usage error,\n"
	"3 fatal (database, resources), 4 interrupted (what was read is stored)\n";

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
	{"service", cmd_service},
};

static int dispatch(const char *name, int argc, char **argv)
{
	size_t i;
	for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (strcmp(name, commands[i].name) == 0)
			return commands[i].fn(argc, argv);
	fprintf(stderr, "seekless: unknown command '%s'\n\n%s", name, usage);
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
		printf("seekless %s\n", SEEKLESS_VERSION);
		return EXIT_OK;
	}
	return dispatch(cmd, argc - 1, argv + 1);
}
