/* seekless - index photo drives by reading files in physical disk order. */
#include <stdio.h>
#include <string.h>

#include "tools/cli.h"

static const char usage[] =
	"usage: seekless COMMAND [OPTIONS] [ROOT...]\n"
	"\n"
	"Index photo trees by reading their files in physical disk order.\n"
	"\n"
	"commands:\n"
	"  scan     index ROOTs into the database (reads every file)\n"
	"  plan     show the read plan for ROOTs without reading\n"
	"  export   write the index as JSON lines or CSV\n"
	"  bench    time cold reads of ROOTs in several orders, side by side\n"
	"  purge    remove the records of files scans found gone\n"
	"\n"
	"Every command takes --db PATH (default $XDG_DATA_HOME/seekless/index.db).\n"
	"'seekless COMMAND --help' describes a command.\n"
	"\n"
	"exit status: 0 ok, 1 finished with per-file errors, 2 usage error,\n"
	"3 fatal (database, resources, interrupted)\n";

int main(int argc, char **argv)
{
	const char *cmd = argc > 1 ? argv[1] : NULL;

	if (!cmd) {
		fputs(usage, stderr);
		return EXIT_USAGE;
	}
	if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0 || strcmp(cmd, "help") == 0) {
		if (argc > 2 && strcmp(cmd, "help") == 0) {
			char *args[] = {argv[2], (char *)"--help", NULL};
			if (strcmp(argv[2], "scan") == 0)
				return cmd_scan(2, args);
			if (strcmp(argv[2], "plan") == 0)
				return cmd_plan(2, args);
			if (strcmp(argv[2], "export") == 0)
				return cmd_export(2, args);
			if (strcmp(argv[2], "bench") == 0)
				return cmd_bench(2, args);
			if (strcmp(argv[2], "purge") == 0)
				return cmd_purge(2, args);
		}
		fputs(usage, stdout);
		return EXIT_OK;
	}
	if (strcmp(cmd, "--version") == 0) {
		printf("seekless %s\n", SEEKLESS_VERSION);
		return EXIT_OK;
	}
	if (strcmp(cmd, "scan") == 0)
		return cmd_scan(argc - 1, argv + 1);
	if (strcmp(cmd, "plan") == 0)
		return cmd_plan(argc - 1, argv + 1);
	if (strcmp(cmd, "export") == 0)
		return cmd_export(argc - 1, argv + 1);
	if (strcmp(cmd, "bench") == 0)
		return cmd_bench(argc - 1, argv + 1);
	if (strcmp(cmd, "purge") == 0)
		return cmd_purge(argc - 1, argv + 1);
	fprintf(stderr, "seekless: unknown command '%s'\n\n%s", cmd, usage);
	return EXIT_USAGE;
}
