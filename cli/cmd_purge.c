/* seekless purge - remove the records of files marked deleted, or of a
 * file system gone for good. */
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "common/strbuf.h"
#include "common/parse.h"
#include "db/db.h"

static const char help[] =
	"usage: seekless purge [--db PATH] [--config FILE] [--older-than DAYS] [--json]\n"
	"       seekless purge [--db PATH] [--config FILE] --file-system FS [--json]\n"
	"\n"
	"Delete from the index the records of files that scans found gone\n"
	"(marked deleted), all of them or those deleted more than DAYS ago.\n"
	"\n"
	"With --file-system, forget a file system gone for good (a reformatted\n"
	"or retired drive): records on a file system a scan does not find stay\n"
	"live, as unavailable, until it is back.  FS is its identity or the\n"
	"mount point it was last seen at, as `seekless stats` lists them; all\n"
	"its records go.  Should it come back, the next scan reads it as new.\n"
	"\n"
	"  --db PATH          the index (default: the configuration's db, else\n"
	"                     $XDG_DATA_HOME/seekless/index.db)\n"
	"  --config FILE      read this configuration file only\n"
	"  --older-than DAYS  only records marked deleted more than DAYS ago\n"
	"  --file-system FS   forget this file system and all its records\n"
	"  --json             {\"removed\": N} (with --file-system also\n"
	"                     \"file_system\": its identity) instead of a sentence\n";

static void print_forgot_json(const char *ident, uint64_t n)
{
	struct strbuf js = STRBUF_INIT;

	if (sb_add_json(&js, ident, strlen(ident)) == 0)
		printf("{\"removed\":%" PRIu64 ",\"file_system\":%s}\n", n, js.p);
	sb_free(&js);
}

int cmd_purge(int argc, char **argv)
{
	static const struct option opts[] = {
		{"db", required_argument, NULL, 'd'},
		{"config", required_argument, NULL, 'C'},
		{"older-than", required_argument, NULL, 'o'},
		{"file-system", required_argument, NULL, 'f'},
		{"json", no_argument, NULL, 'j'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	const char *dbopt = NULL, *config = NULL, *fs = NULL;
	char ident[512];
	struct db *db = NULL;
	struct sl_err e;
	uint64_t n = 0;
	long days = -1;
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
		case 'f': fs = optarg; break;
		case 'j': json = 1; break;
		case 'h': fputs(help, stdout); return EXIT_OK;
		default: fputs(help, stderr); return EXIT_USAGE;
		}
	}
	if (optind < argc) {
		cli_usage_error("purge", "unexpected argument '%s'", argv[optind]);
		return EXIT_USAGE;
	}
	if (fs && (days >= 0 || !*fs)) {
		cli_usage_error("purge", !*fs ? "--file-system wants a file system"
					      : "--file-system and --older-than do not go together");
		return EXIT_USAGE;
	}
	if ((rc = cli_open_index("purge", dbopt, config, &db)) != EXIT_OK)
		return rc;
	/* no scan may be writing records of the file system it forgets */
	rc = db_lock(db, &e);
	if (rc == SL_OK && fs)
		rc = db_forget_fs(db, fs, ident, sizeof(ident), &n, &e);
	else if (rc == SL_OK)
		rc = db_purge(db, days < 0 ? 0 : days, &n, &e);
	if (rc == SL_OK && json && fs)
		print_forgot_json(ident, n);
	else if (rc == SL_OK && json)
		printf("{\"removed\":%" PRIu64 "}\n", n);
	else if (rc == SL_OK && fs)
		printf("seekless purge: file system %s forgotten, %" PRIu64 " records removed\n",
		       ident, n);
	else if (rc == SL_OK)
		printf("seekless purge: %" PRIu64 " records of deleted files removed\n", n);
	else if (rc == SL_E_USAGE)
		cli_usage_error("purge", "%s", e.msg);
	else
		cli_error("purge", &e);
	db_close(db);
	return rc == SL_OK ? EXIT_OK : rc == SL_E_USAGE ? EXIT_USAGE : EXIT_FATAL;
}
