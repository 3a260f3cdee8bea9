/* seekless dupes - identical files and near-identical images. */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "cli/cli.h"
#include "common/strbuf.h"
#include "common/parse.h"
#include "db/db.h"

#define DEFAULT_BITS 4

static const char help[] =
	"usage: seekless dupes [--near[=BITS]] [--json] [--db PATH] [--config FILE]\n"
	"\n"
	"Groups of duplicates in the index, each group's paths in path order.\n"
	"\n"
	"  (default)       identical files: the same content hash (empty files\n"
	"                  are left out)\n"
	"  --near[=BITS]   near-identical images: perceptual hashes within BITS\n"
	"                  bits of each other in any of the eight orientations\n"
	"                  (default 4; 0-16; 3 more between a hash from an EXIF\n"
	"                  thumbnail and one from an image).  Re-saved, resized,\n"
	"                  turned copies and copies that lost their orientation\n"
	"                  tag fall within a few bits; different pictures are\n"
	"                  15 or more apart.  Only JPEGs read with the perceptual\n"
	"                  hash on have one.  Cost grows with BITS\n"
	"                  (docs/benchmarks.md).\n"
	"  --json          one JSON object per group, one per line\n";

/* A group as a paragraph: its kind and why, then a path per line (bytes
 * that are not UTF-8 shown as U+FFFD). */
static int group_text(void *ctx, const struct db_dupe_group *g)
{
	struct strbuf o = STRBUF_INIT;
	size_t i;
	int rc;

	if (g->max_bits < 0)
		sb_addf(&o, "%s (content hash %s, %" PRId64 " bytes), %zu files:\n", g->kind,
			g->content_hash, g->size, g->n);
	else
		sb_addf(&o, "%s (perceptual hashes within %d bits), %zu files:\n", g->kind,
			g->max_bits, g->n);
	for (i = 0; i < g->n; i++) {
		sb_adds(&o, "  ");
		sb_add_utf8_lossy(&o, g->paths[i], g->lens[i]);
		sb_addc(&o, '\n');
	}
	sb_addc(&o, '\n');
	rc = o.oom || fwrite(o.p, 1, o.len, ctx) != o.len ? -1 : 0;
	sb_free(&o);
	return rc;
}

/* A group as one JSON line: {"kind", the hash and size or "max_bits",
 * "paths"}. */
static int group_json(void *ctx, const struct db_dupe_group *g)
{
	struct strbuf o = STRBUF_INIT;
	size_t i;
	int rc;

	if (g->max_bits < 0)
		sb_addf(&o, "{\"kind\":\"%s\",\"content_hash\":\"%s\",\"size\":%" PRId64
			",\"paths\":[", g->kind, g->content_hash, g->size);
	else
		sb_addf(&o, "{\"kind\":\"%s\",\"max_bits\":%d,\"paths\":[", g->kind, g->max_bits);
	for (i = 0; i < g->n; i++) {
		if (i)
			sb_addc(&o, ',');
		sb_add_json(&o, g->paths[i], g->lens[i]);
	}
	sb_adds(&o, "]}\n");
	rc = o.oom || fwrite(o.p, 1, o.len, ctx) != o.len ? -1 : 0;
	sb_free(&o);
	return rc;
}

int cmd_dupes(int argc, char **argv)
{
	static const struct option opts[] = {
		{"near", optional_argument, NULL, 'n'},
		{"json", no_argument, NULL, 'j'},
		{"db", required_argument, NULL, 'd'},
		{"config", required_argument, NULL, 'C'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	const char *dbopt = NULL, *config = NULL;
	struct db *db = NULL;
	struct sl_err e;
	uint64_t groups = 0;
	int c, rc, json = 0, bits = -1;

	optind = 1;
	while ((c = cli_getopt("dupes", argc, argv, "", opts)) != -1) {
		switch (c) {
		case 'n':
			bits = DEFAULT_BITS;
			if (optarg) {
				long b;
				if (parse_long(optarg, 0, 16, &b) != 0) {
					cli_usage_error("dupes", "--near=BITS wants 0 to 16");
					return EXIT_USAGE;
				}
				bits = (int)b;
			}
			break;
		case 'j': json = 1; break;
		case 'd': dbopt = optarg; break;
		case 'C': config = optarg; break;
		case 'h': fputs(help, stdout); return EXIT_OK;
		default: return EXIT_USAGE;
		}
	}
	if (optind < argc) {
		cli_usage_error("dupes", "unexpected argument '%s' (--near=BITS takes '=')",
				argv[optind]);
		return EXIT_USAGE;
	}
	if ((rc = cli_read_index("dupes", dbopt, config, &db)) != EXIT_OK)
		return rc;
	rc = db_dupes(db, bits, json ? group_json : group_text, stdout, &groups, &e);
	if (rc == SL_OK && fflush(stdout) != 0)
		rc = SL_FAIL(&e, SL_E_IO, 0, "dupes: write error");
	if (rc != SL_OK)
		cli_error("dupes", &e);
	else if (!json)
		fprintf(stderr, "seekless dupes: %" PRIu64 " %s\n", groups,
			cli_plural(groups, "group", "groups"));
	if (rc == SL_OK && bits < 0) {
		/* a file read in part has no content hash yet, and is in no
		 * group: said, as below */
		uint64_t pending = 0, bytes = 0;
		struct sl_err e2;
		if (db_content_pending(db, &pending, &bytes, &e2) == SL_OK && pending)
			fprintf(stderr, "seekless dupes: %" PRIu64 " files read in part by a quick scan "
				"have no content hash yet and are left out (a scan without --quick "
				"reads them whole)\n", pending);
	}
	if (rc == SL_OK && bits >= 0) {
		/* a picture with no hash yet is in no near group: said, so that
		 * an empty answer is not taken for "none" */
		uint64_t pending = 0;
		struct sl_err e2;
		if (db_phash_pending(db, &pending, &e2) == SL_OK && pending)
			fprintf(stderr, "seekless dupes: %" PRIu64 " pictures have no perceptual hash "
				"yet and are left out (the next scan makes them)\n", pending);
	}
	db_close(db);
	return rc == SL_OK ? EXIT_OK : EXIT_FATAL;
}
