/* seekless dupes - identical files and near-identical images. */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app/scan.h"
#include "cli/cli.h"
#include "common/strbuf.h"
#include "common/parse.h"
#include "db/db.h"

#define DEFAULT_BITS 4

static const char help[] =
	"usage: seekless dupes [--near[=BITS]] [--json] [--no-read] [--db PATH]\n"
	"                      [--config FILE]\n"
	"\n"
	"Groups of duplicates in the index, each group's paths in path order.\n"
	"\n"
	"  (default)       identical files: the same content hash (empty files\n"
	"                  are left out).  Files a quick scan read in part have\n"
	"                  no content hash yet: those whose size and partial hash\n"
	"                  (their first and last 64 KiB) match another file's are\n"
	"                  read whole first, in physical order, as a scan reads\n"
	"                  them (recorded as a scan, 'dupes'); the others cannot\n"
	"                  be anyone's duplicate and are not read\n"
	"  --no-read       read nothing: the groups of what the index holds, and\n"
	"                  how many files it leaves out\n"
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

/* Read whole, as a scan does, the files a quick scan left whose size and
 * ends match another's (db_dupe_candidates), so that their content hashes
 * settle it.  A scan that fails leaves the index as it was, or completed in
 * part: the groups below are then of what it holds, and say so. */
static void read_candidates(const char *dbopt, const char *config, const char *list, size_t len,
			    uint64_t n, uint64_t bytes)
{
	struct scan_args a;
	struct scan_result r;
	int rc;

	memset(&a, 0, sizeof(a));
	a.order = a.cross_fs = a.phash = a.phash_now = a.trust_mtime = a.background = -1;
	a.quick = 0;
	a.db = dbopt;
	a.config = config;
	a.files_list = list;
	a.files_list_len = len;
	a.command = "dupes";
	fprintf(stderr, "seekless dupes: reading %" PRIu64 " %s (%.1f MB) that a quick scan read in "
		"part and whose size and ends match another's\n", n, cli_plural(n, "file", "files"),
		(double)bytes / 1e6);
	rc = scan_run(&a, &r);
	if (r.abandoned) {
		/* a read never returned: its thread still uses the scan's
		 * tables (scan.h); the index holds what was stored */
		fprintf(stderr, "seekless dupes: a read did not return; stopped\n");
		exit(EXIT_FATAL);
	}
	if (rc != SL_OK && rc != SL_E_CANCELLED)
		fprintf(stderr, "seekless dupes: %s; the groups below are of what the index holds\n",
			r.err.msg);
	else
		fprintf(stderr, "seekless dupes: read %" PRIu64 " files (%.1f MB) in %.1f s\n",
			r.st.files, (double)r.st.bytes / 1e6, r.wall_s);
	scan_result_free(&r);
}

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
		{"no-read", no_argument, NULL, 'R'},
		{"db", required_argument, NULL, 'd'},
		{"config", required_argument, NULL, 'C'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	const char *dbopt = NULL, *config = NULL;
	struct db *db = NULL;
	struct sl_err e;
	uint64_t groups = 0;
	int c, rc, json = 0, bits = -1, no_read = 0;

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
		case 'R': no_read = 1; break;
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
	if (bits < 0 && !no_read) {
		char *list = NULL;
		size_t len = 0;
		uint64_t n = 0, bytes = 0;

		if (db_dupe_candidates(db, &list, &len, &n, &bytes, &e) != SL_OK) {
			cli_error("dupes", &e);
			db_close(db);
			return EXIT_FATAL;
		}
		if (n) {
			db_close(db);
			db = NULL;
			read_candidates(dbopt, config, list, len, n, bytes);
			if ((rc = cli_read_index("dupes", dbopt, config, &db)) != EXIT_OK) {
				free(list);
				return rc;
			}
		}
		free(list);
	}
	rc = db_dupes(db, bits, json ? group_json : group_text, stdout, &groups, &e);
	if (rc == SL_OK && fflush(stdout) != 0)
		rc = SL_FAIL(&e, SL_E_IO, 0, "dupes: write error");
	if (rc != SL_OK)
		cli_error("dupes", &e);
	else if (!json)
		fprintf(stderr, "seekless dupes: %" PRIu64 " %s\n", groups,
			cli_plural(groups, "group", "groups"));
	if (rc == SL_OK && bits < 0) {
		/* a file read in part that may be another's duplicate, and was
		 * not read (--no-read, or the read failed), is in no group:
		 * said, as below */
		char *list = NULL;
		size_t len;
		uint64_t n = 0, bytes;
		struct sl_err e2;
		if (db_dupe_candidates(db, &list, &len, &n, &bytes, &e2) == SL_OK && n)
			fprintf(stderr, "seekless dupes: %" PRIu64 " %s read in part by a quick scan, "
				"whose size and ends match another's, %s no content hash yet and %s "
				"left out (seekless dupes without --no-read reads them)\n", n,
				cli_plural(n, "file", "files"), n == 1 ? "has" : "have",
				n == 1 ? "is" : "are");
		free(list);
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
