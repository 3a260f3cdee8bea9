/* seekless stats - what the index holds, and how the last scans went. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>

#include "cli/cli.h"
#include "common/parse.h"
#include "db/db.h"

static const char help[] =
	"usage: seekless stats [--db PATH] [--config FILE] [--json] [--scans N]\n"
	"\n"
	"Counts and sizes of the indexed files by format, camera and year taken;\n"
	"files with errors and files marked deleted; the last N scans (default\n"
	"5), each with the order every disk got and how fast it read (MB/s over\n"
	"the disk's reading time), so sorted and unsorted runs compare at a\n"
	"glance.\n"
	"\n"
	"  --db PATH       the index (default: the configuration's db, else\n"
	"                  $XDG_DATA_HOME/seekless/index.db)\n"
	"  --config FILE   read this configuration file only\n"
	"  --json          one JSON document instead of text\n"
	"  --scans N       how many of the last scans to show\n";

int cmd_stats(int argc, char **argv)
{
	static const struct option opts[] = {
		{"db", required_argument, NULL, 'd'},
		{"config", required_argument, NULL, 'C'},
		{"json", no_argument, NULL, 'j'},
		{"scans", required_argument, NULL, 'n'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	const char *dbopt = NULL, *config = NULL;
	struct db *db = NULL;
	struct sl_err e;
	int c, rc, json = 0;
	long nscans = 5;

	optind = 1;
	while ((c = getopt_long(argc, argv, "+", opts, NULL)) != -1) {
		switch (c) {
		case 'd': dbopt = optarg; break;
		case 'C': config = optarg; break;
		case 'j': json = 1; break;
		case 'n':
			if (parse_long(optarg, 0, 100000, &nscans) != 0) {
				cli_usage_error("stats", "--scans wants a number");
				return EXIT_USAGE;
			}
			break;
		case 'h': fputs(help, stdout); return EXIT_OK;
		default: fputs(help, stderr); return EXIT_USAGE;
		}
	}
	if (optind < argc) {
		cli_usage_error("stats", "unexpected argument '%s'", argv[optind]);
		return EXIT_USAGE;
	}
	if ((rc = cli_open_index("stats", dbopt, config, &db)) != EXIT_OK)
		return rc;
	rc = db_stats(db, stdout, json, (int)nscans, &e);
	if (rc != SL_OK)
		cli_error("stats", &e);
	db_close(db);
	return rc == SL_OK ? EXIT_OK : EXIT_FATAL;
}
