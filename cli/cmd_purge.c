/* seekless purge - remove the records of files marked deleted. */
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

#include "cli/cli.h"
#include "common/parse.h"
#include "db/db.h"

static const char help[] =
	"usage: seekless purge [--db PATH] [--config FILE] [--older-than DAYS] [--json]\n"
	"\n"
	"Delete from the index the records of files that scans found gone\n"
	"(marked deleted), all of them or those deleted more than DAYS ago.\n"
	"\n"
	"  --db PATH          the index (default: the configuration's db, else\n"
	"                     $XDG_DATA_HOME/seekless/index.db)\n"
	"  --config FILE      read this configuration file only\n"
	"  --older-than DAYS  only records marked deleted more than DAYS ago\n"
	"  --json             {\"removed\": N} instead of a sentence\n";

int cmd_purge(int argc, char **argv)
{
	static const struct option opts[] = {
		{"db", required_argument, NULL, 'd'},
		{"config", required_argument, NULL, 'C'},
		{"older-than", required_argument, NULL, 'o'},
		{"json", no_argument, NULL, 'j'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	const char *dbopt = NULL, *config = NULL;
	struct db *db = NULL;
	struct sl_err e;
	uint64_t n = 0;
	long days = 0;
	int c, rc, json = 0;

	optind = 1;
	while ((c = getopt_long(argc, argv, "+", opts, NULL)) != -1) {
		switch (c) {
		case 'd': dbopt = optarg; break;
		case 'C': config = optarg; break;
		case 'o':
			if (parse_long(optarg, 0, LONG_MAX, &days) != 0) {
				cli_usage_error("purge", "--older-than wants a number of days");
				return EXIT_USAGE;
			}
			break;
		case 'j': json = 1; break;
		case 'h': fputs(help, stdout); return EXIT_OK;
		default: fputs(help, stderr); return EXIT_USAGE;
		}
	}
	if (optind < argc) {
		cli_usage_error("purge", "unexpected argument '%s'", argv[optind]);
		return EXIT_USAGE;
	}
	if ((rc = cli_open_index("purge", dbopt, config, &db)) != EXIT_OK)
		return rc;
	rc = db_lock(db, &e);
	if (rc == SL_OK)
		rc = db_purge(db, days, &n, &e);
	if (rc == SL_OK && json)
		printf("{\"removed\":%" PRIu64 "}\n", n);
	else if (rc == SL_OK)
		printf("seekless purge: %" PRIu64 " records of deleted files removed\n", n);
	else
		cli_error("purge", &e);
	db_close(db);
	return rc == SL_OK ? EXIT_OK : EXIT_FATAL;
}
