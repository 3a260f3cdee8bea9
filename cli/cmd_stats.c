/* seekless stats - what the index holds, and how the last scans went. */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "common/parse.h"
#include "common/strbuf.h"
#include "db/db.h"
#include "scanner/device.h"

static const char help[] =
	"usage: seekless stats [--db PATH] [--config FILE] [--json] [--scans N]\n"
	"\n"
	"Counts and sizes of the indexed files by format, camera and year taken,\n"
	"and by file system (identity first: what purge --file-system takes);\n"
	"files with errors and files marked deleted; the last N scans (default\n"
	"5), each with the order every disk got and how fast it read (MB/s over\n"
	"the disk's reading time), so sorted and unsorted runs compare at a\n"
	"glance.\n"
	"\n"
	"  --db PATH       the index (default: the configuration's db, else\n"
	"                  $XDG_DATA_HOME/seekless/index.db)\n"
	"  --config FILE   read this configuration file only\n"
	"  --json          one JSON document instead of text; each file system\n"
	"                  an object: id (what purge --file-system takes), alt,\n"
	"                  fstype, last_mount, present (mounted now), mounted_at,\n"
	"                  last_scan, last_walked, files, bytes, deleted\n"
	"  --scans N       how many of the last scans to show\n";

/* The report is built whole, then written: text, or one JSON document. */
struct report {
	struct strbuf o;
	int json;
	int first;   /* no item yet in the open list */
	int dfirst;  /* no device yet in the open scan */
};

static void text_bytes(struct strbuf *o, uint64_t b)
{
	if (b >= 10ull << 30)
		sb_addf(o, "%.1f GB", (double)b / 1e9);
	else
		sb_addf(o, "%.1f MB", (double)b / 1e6);
}

static void on_totals(void *ctx, int64_t n, int64_t b, int64_t bad, int64_t gone,
		      int64_t pending, int64_t quick, int64_t quick_bytes)
{
	struct report *R = ctx;

	if (R->json) {
		sb_addf(&R->o, "\"files\":%" PRId64 ",\"bytes\":%" PRId64 ",\"errors\":%" PRId64
			",\"deleted\":%" PRId64 ",\"phash_pending\":%" PRId64
			",\"content_pending\":%" PRId64 ",\"content_pending_bytes\":%" PRId64,
			n, b, bad, gone, pending, quick, quick_bytes);
		return;
	}
	sb_addf(&R->o, "files: %" PRId64 " (", n);
	text_bytes(&R->o, (uint64_t)b);
	sb_addf(&R->o, "), %" PRId64 " with errors, %" PRId64
		" marked deleted (seekless purge removes them)\n", bad, gone);
	if (pending)
		sb_addf(&R->o, "pictures without a perceptual hash yet: %" PRId64
			" (the next scan makes them)\n", pending);
	if (quick) {
		sb_addf(&R->o, "read in part by a quick scan, content hash pending: %" PRId64 " (",
			quick);
		text_bytes(&R->o, (uint64_t)quick_bytes);
		sb_adds(&R->o, "; the next scan without --quick reads them whole)\n");
	}
}

static void on_section(void *ctx, const char *key, const char *title)
{
	struct report *R = ctx;

	R->first = 1;
	if (!key) { /* the list ends */
		if (R->json)
			sb_addc(&R->o, ']');
		return;
	}
	if (R->json)
		sb_addf(&R->o, ",\"%s\":[", key);
	else if (title)
		sb_addf(&R->o, "\n%s:\n", title);
	else /* the scans */
		sb_adds(&R->o, "\nlast scans (MB/s: bytes read / reading time):\n");
}

static void on_group(void *ctx, const char *label, size_t len, int64_t count, int64_t bytes)
{
	struct report *R = ctx;

	if (R->json) {
		sb_adds(&R->o, R->first ? "{\"name\":" : ",{\"name\":");
		sb_add_json(&R->o, label, len);
		sb_addf(&R->o, ",\"files\":%" PRId64 ",\"bytes\":%" PRId64 "}", count, bytes);
	} else {
		sb_addf(&R->o, "  %10" PRId64 "  %10.1f MB  ", count, (double)bytes / 1e6);
		sb_add_utf8_lossy(&R->o, label, len);
		sb_addc(&R->o, '\n');
	}
	R->first = 0;
}

/* A file system: in JSON each fact its own field, whether it is mounted now
 * among them (what purge --file-system asks --force for); in text one line
 * per file system, its identity first. */
static void on_fs(void *ctx, const struct db_stats_fs *f)
{
	static const char *const present[] = {"null", "false", "true"};
	struct report *R = ctx;
	char at[4096];
	int mounted;

	if (!R->json) {
		struct strbuf label = STRBUF_INIT;
		sb_addf(&label, "%s %s at %s, last walked %s", f->ident, f->fstype ? f->fstype : "?",
			f->mount ? f->mount : "?", f->last_walked ? f->last_walked : "never");
		sb_addf(&R->o, "  %10" PRId64 "  %10.1f MB  ", f->files, (double)f->bytes / 1e6);
		if (label.oom)
			R->o.oom = 1;
		else
			sb_add_utf8_lossy(&R->o, label.p, label.len);
		sb_addc(&R->o, '\n');
		sb_free(&label);
		return;
	}
	mounted = dev_fs_mounted(f->ident, f->alt ? f->alt : "", f->mount, at, sizeof(at));
	sb_adds(&R->o, R->first ? "{\"id\":" : ",{\"id\":");
	sb_add_json(&R->o, f->ident, strlen(f->ident));
	cli_json_text(&R->o, "alt", f->alt && f->alt[0] ? f->alt : NULL);
	cli_json_text(&R->o, "fstype", f->fstype);
	cli_json_text(&R->o, "last_mount", f->mount);
	sb_addf(&R->o, ",\"present\":%s", present[mounted + 1]);
	cli_json_text(&R->o, "mounted_at", mounted == 1 ? at : NULL);
	if (f->last_scan)
		sb_addf(&R->o, ",\"last_scan\":%" PRId64, f->last_scan);
	else
		sb_adds(&R->o, ",\"last_scan\":null");
	cli_json_text(&R->o, "last_walked", f->last_walked);
	sb_addf(&R->o, ",\"files\":%" PRId64 ",\"bytes\":%" PRId64 ",\"deleted\":%" PRId64 "}",
		f->files, f->bytes, f->deleted);
	R->first = 0;
}

static void on_scan(void *ctx, const struct db_stats_scan *s)
{
	struct report *R = ctx;
	double rd;

	if (!s) { /* its devices are done */
		if (R->json)
			sb_adds(&R->o, "]}");
		R->first = 0;
		return;
	}
	rd = s->read_s;
	R->dfirst = 1;
	if (R->json) {
		sb_addf(&R->o, "%s{\"id\":%" PRId64 ",\"started_at\":\"%s\",\"command\":\"%s\","
			"\"status\":\"%s\",\"order\":\"%s\",\"files_read\":%" PRId64
			",\"bytes_read\":%" PRId64 ",\"wall_s\":%.3f,\"mb_per_s\":%.1f,"
			"\"devices\":[",
			R->first ? "" : ",", s->id, s->started_at, s->command, s->status, s->order,
			s->files, s->bytes, s->wall_s, rd > 0 ? (double)s->bytes / 1e6 / rd : 0.0);
		return;
	}
	sb_addf(&R->o, "  #%-4" PRId64 " %s %-9s %-11s order %-8s %7" PRId64
		" files read in %7.1f s", s->id, s->started_at, s->command, s->status, s->order,
		s->files, s->wall_s);
	if (rd > 0)
		sb_addf(&R->o, ", %.1f MB/s", (double)s->bytes / 1e6 / rd);
	sb_addc(&R->o, '\n');
}

static void on_device(void *ctx, const char *dev, const char *used, int64_t df, int64_t dbytes,
		      double ds)
{
	struct report *R = ctx;
	double mbs = ds > 0 ? (double)dbytes / 1e6 / ds : 0.0;

	if (R->json) {
		sb_adds(&R->o, R->dfirst ? "{\"device\":" : ",{\"device\":");
		sb_add_json(&R->o, dev, strlen(dev));
		sb_addf(&R->o, ",\"order\":\"%s\",\"files\":%" PRId64 ",\"bytes\":%" PRId64
			",\"read_s\":%.3f,\"mb_per_s\":%.1f}", used, df, dbytes, ds, mbs);
	} else {
		sb_addf(&R->o, "         %-12s %-8s %7" PRId64 " files %9.1f MB in %7.2f s"
			" = %7.1f MB/s\n", dev, used, df, (double)dbytes / 1e6, ds, mbs);
	}
	R->dfirst = 0;
}

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
	struct report R = {STRBUF_INIT, 0, 1, 1};
	const struct db_stats_out out = {on_totals, on_section, on_group, on_fs, on_scan,
					  on_device, &R};
	int c, rc, json = 0;
	long nscans = 5;

	optind = 1;
	while ((c = cli_getopt("stats", argc, argv, "", opts)) != -1) {
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
		default: return EXIT_USAGE;
		}
	}
	if (optind < argc) {
		cli_usage_error("stats", "unexpected argument '%s'", argv[optind]);
		return EXIT_USAGE;
	}
	if ((rc = cli_read_index("stats", dbopt, config, &db)) != EXIT_OK)
		return rc;
	R.json = json;
	if (json)
		sb_addc(&R.o, '{');
	rc = db_stats(db, (int)nscans, &out, &e);
	if (json)
		sb_adds(&R.o, "}\n");
	if (rc == SL_OK && R.o.oom)
		rc = SL_FAIL(&e, SL_E_NOMEM, 0, "stats: out of memory");
	if (rc == SL_OK && (fwrite(R.o.p, 1, R.o.len, stdout) != R.o.len || fflush(stdout) != 0))
		rc = SL_FAIL(&e, SL_E_IO, 0, "stats: write error");
	sb_free(&R.o);
	if (rc != SL_OK)
		cli_error("stats", &e);
	db_close(db);
	return rc == SL_OK ? EXIT_OK : EXIT_FATAL;
}
