/* seekless export - the index as JSON lines or CSV. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "db/db.h"

static const char help[] =
	"usage: seekless export [--db PATH] [--config FILE] [--format jsonl|csv]\n"
	"                       [--extended | --scans]\n"
	"\n"
	"Write one record per indexed file (deleted files left out), ordered by\n"
	"path, to standard output.  Keys (null where unknown): path, size, mtime\n"
	"(Unix seconds), format, width, height, make, model, datetime_original,\n"
	"orientation, gps_lat, gps_lon, exposure_time, f_number, iso,\n"
	"focal_length, lens_model, content_hash, phys_offset, fragments, error,\n"
	"tz_offset, subsec, duration, content_id, rating, label, keywords,\n"
	"hierarchical_keywords, title, description, creator, copyright, sidecar,\n"
	"embedded_video (bytes of a motion photo's appended movie).\n"
	"An image with an XMP sidecar (IMG.CR2.xmp, else IMG.xmp) gives rating\n"
	"to copyright from the sidecar where it has them, and its path as sidecar.\n"
	"\n"
	"  --db PATH        the index (default: the configuration's db, else\n"
	"                   $XDG_DATA_HOME/seekless/index.db)\n"
	"  --config FILE    read this configuration file only\n"
	"  --format FORMAT  jsonl (default) or csv\n"
	"  --extended       add phash (perceptual hash of JPEGs, 16 hex digits),\n"
	"                   phash_src, warnings, placement and meta_version after\n"
	"                   those keys\n"
	"  --scans          one record per scan instead: when, how it ended, its\n"
	"                   roots (an array), what it found (unchanged, changed,\n"
	"                   added, moved, deleted, unavailable) and its phase\n"
	"                   timings (docs/schema.md); not with --extended\n";

int cmd_export(int argc, char **argv)
{
	static const struct option opts[] = {
		{"db", required_argument, NULL, 'd'},
		{"config", required_argument, NULL, 'C'},
		{"format", required_argument, NULL, 'f'},
		{"extended", no_argument, NULL, 'x'},
		{"scans", no_argument, NULL, 's'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	const char *dbopt = NULL, *config = NULL;
	struct db *db = NULL;
	struct sl_err e;
	int format = DB_JSONL, extended = 0, c, rc;

	optind = 1;
	while ((c = cli_getopt("export", argc, argv, "", opts)) != -1) {
		switch (c) {
		case 'd': dbopt = optarg; break;
		case 'C': config = optarg; break;
		case 'f':
			if (strcmp(optarg, "jsonl") == 0 || strcmp(optarg, "json") == 0)
				format = DB_JSONL;
			else if (strcmp(optarg, "csv") == 0)
				format = DB_CSV;
			else {
				cli_usage_error("export", "unknown format '%s' (jsonl or csv)", optarg);
				return EXIT_USAGE;
			}
			break;
		case 'x': extended |= DB_EXTENDED; break;
		case 's': extended |= DB_SCANS; break;
		case 'h': fputs(help, stdout); return EXIT_OK;
		default: return EXIT_USAGE;
		}
	}
	if (optind < argc) {
		cli_usage_error("export", "unexpected argument '%s'", argv[optind]);
		return EXIT_USAGE;
	}
	/* --extended adds keys to the file records, and a scan record has none
	 * to add: taken silently, it would promise what it does not give */
	if ((extended & DB_EXTENDED) && (extended & DB_SCANS)) {
		cli_usage_error("export", "--extended and --scans do not go together (--extended"
					  " adds keys to file records, --scans writes scans)");
		return EXIT_USAGE;
	}
	if ((rc = cli_read_index("export", dbopt, config, &db)) != EXIT_OK)
		return rc;
	rc = db_export(db, stdout, format | extended, &e);
	if (rc != SL_OK)
		cli_error("export", &e);
	db_close(db);
	return rc == SL_OK ? EXIT_OK : EXIT_FATAL;
}
