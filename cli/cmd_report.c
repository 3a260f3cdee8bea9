/* seekless report - the index as one HTML page (app/report.h). */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app/config.h"
#include "app/report.h"
#include "cli/cli.h"
#include "common/parse.h"
#include "db/db.h"

static const char help[] =
	"usage: seekless report [--db PATH] [--config FILE] [-o FILE] [--rows N]\n"
	"                       [--near BITS] [--no-pictures]\n"
	"\n"
	"Write the index as one self-contained HTML page (no network: open it from\n"
	"a file share): files and bytes by format, camera, year taken and file\n"
	"system; every scan with its speed, each disk's order and why, and what\n"
	"changed, as a table and a chart; the runs of `seekless bench` with the\n"
	"head's path per order; identical files and pictures that look alike,\n"
	"side by side; the files recorded with an error.  Long lists are capped,\n"
	"the page saying how many there are in all.\n"
	"\n"
	"  -o, --output FILE  write the page here (default: standard output)\n"
	"  --rows N           the longest list shown (default 200)\n"
	"  --near BITS        how near pictures are grouped, as dupes --near\n"
	"                     (default 4; -1 leaves the near groups out)\n"
	"  --no-pictures      no small pictures of the near groups (they are made\n"
	"                     from the files, which are read for them)\n"
	"  --db PATH          the index (default: the configuration's db, else\n"
	"                     $XDG_DATA_HOME/seekless/index.db)\n"
	"  --config FILE      read this configuration file only\n"
	"  --scheduled        as the service runs it after each scan: write the\n"
	"                     page to the configuration's report, or do nothing\n"
	"                     when it sets none\n";

int cmd_report(int argc, char **argv)
{
	static const struct option opts[] = {
		{"output", required_argument, NULL, 'o'},
		{"rows", required_argument, NULL, 'r'},
		{"near", required_argument, NULL, 'n'},
		{"no-pictures", no_argument, NULL, 'P'},
		{"db", required_argument, NULL, 'd'},
		{"config", required_argument, NULL, 'C'},
		{"scheduled", no_argument, NULL, 'S'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	const char *dbopt = NULL, *config = NULL, *output = NULL;
	struct cfg cfg;
	int scheduled = 0;
	struct report_opts ro = {NULL, 0, 4, 1};
	struct strbuf dbpath = STRBUF_INIT;
	struct db *db = NULL;
	struct sl_err e;
	long v;
	int c, rc;

	optind = 1;
	while ((c = cli_getopt("report", argc, argv, "o:", opts)) != -1) {
		switch (c) {
		case 'o': output = optarg; break;
		case 'r':
			if (parse_long(optarg, 1, 1000000, &v) != 0) {
				cli_usage_error("report", "--rows wants a number from 1");
				return EXIT_USAGE;
			}
			ro.rows = (int)v;
			break;
		case 'n':
			if (parse_long(optarg, -1, 16, &v) != 0) {
				cli_usage_error("report", "--near wants -1 to 16");
				return EXIT_USAGE;
			}
			ro.near_bits = (int)v;
			break;
		case 'P': ro.pictures = 0; break;
		case 'd': dbopt = optarg; break;
		case 'C': config = optarg; break;
		case 'S': scheduled = 1; break;
		case 'h': fputs(help, stdout); return EXIT_OK;
		default: return EXIT_USAGE;
		}
	}
	if (optind < argc) {
		cli_usage_error("report", "unexpected argument '%s'", argv[optind]);
		return EXIT_USAGE;
	}
	cfg_init(&cfg);
	if (scheduled) {
		/* the setting is read at each run, so changing it needs no new
		 * unit or service (except for where a Linux unit may write) */
		if (output) {
			cli_usage_error("report", "--scheduled writes to the configuration's report, not -o");
			return EXIT_USAGE;
		}
		if (cfg_load(&cfg, config, &e) != SL_OK) {
			cli_error("report", &e);
			return EXIT_USAGE;
		}
		if (!cfg.report) {
			cfg_free(&cfg);
			return EXIT_OK;
		}
		output = cfg.report;
	}
	if ((rc = cli_index_path("report", dbopt, config, &dbpath)) != EXIT_OK) {
		cfg_free(&cfg);
		return rc;
	}
	if ((rc = cli_read_index("report", dbpath.p, NULL, &db)) != EXIT_OK) {
		sb_free(&dbpath);
		cfg_free(&cfg);
		return rc;
	}
	ro.dbpath = dbpath.p;
	if (output && strcmp(output, "-") != 0)
		rc = report_file(db, &ro, output, &e);
	else if ((rc = report_write(db, &ro, stdout, &e)) == SL_OK && fflush(stdout) != 0)
		rc = SL_FAIL(&e, SL_E_IO, 0, "report: write error");
	if (rc != SL_OK)
		cli_error("report", &e);
	else if (scheduled)
		printf("report: wrote %s\n", output);
	db_close(db);
	sb_free(&dbpath);
	cfg_free(&cfg);
	return rc == SL_OK ? EXIT_OK : EXIT_FATAL;
}
