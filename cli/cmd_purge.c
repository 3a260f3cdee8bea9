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
#include "scanner/device.h"

static const char help[] =
	"usage: seekless purge [--db PATH] [--config FILE] [--older-than DAYS]\n"
	"                      [--dry-run] [--json]\n"
	"       seekless purge [--db PATH] [--config FILE] --file-system FS\n"
	"                      [--force] [--dry-run] [--json]\n"
	"\n"
	"Delete from the index the records of files that scans found gone\n"
	"(marked deleted), all of them or those deleted more than DAYS ago.\n"
	"\n"
	"With --file-system, forget a file system gone for good (a reformatted\n"
	"or retired drive): records on a file system a scan does not find stay\n"
	"live, as unavailable, until it is back.  FS is its identity or the\n"
	"mount point it was last seen at, as `seekless stats` lists them; all\n"
	"its records go.  Should it come back, the next scan reads it as new.\n"
	"A file system that is mounted now is not gone: purge refuses (exit 2),\n"
	"saying how many records it would remove, unless given --force.\n"
	"\n"
	"  --db PATH          the index (default: the configuration's db, else\n"
	"                     $XDG_DATA_HOME/seekless/index.db)\n"
	"  --config FILE      read this configuration file only\n"
	"  --older-than DAYS  only records marked deleted more than DAYS ago\n"
	"  --file-system FS   forget this file system and all its records\n"
	"  --force            forget it even though it is mounted now\n"
	"  --dry-run          say how many records would go, remove none\n"
	"  --json             {\"removed\": N} instead of a sentence; with\n"
	"                     --file-system also \"file_system\" (its identity),\n"
	"                     \"present\" (mounted now), \"mounted_at\", \"live\" and\n"
	"                     \"deleted\" (its records); with --dry-run\n"
	"                     \"dry_run\": true and \"would_remove\", \"removed\" 0\n";

/* Where the file system is, in words, for the sentences below. */
static void where(struct strbuf *o, const struct db_fs *f, int mounted, const char *at)
{
	if (mounted > 0)
		sb_addf(o, "mounted at %s", at);
	else if (mounted < 0)
		sb_adds(o, "whether it is mounted cannot be told: the mount table cannot be read");
	else if (f->mount[0])
		sb_addf(o, "not mounted; last seen at %s", f->mount);
	else
		sb_adds(o, "not mounted");
}

/* Forget the file system `what` names, unless it is mounted now and not
 * forced: its live records are then of files that are there, and only a
 * scan should take those away.  Prints the outcome; returns the exit
 * status. */
static int forget(struct db *db, const char *what, int dry, int force, int json)
{
	struct strbuf o = STRBUF_INIT;
	struct sl_err e;
	struct db_fs f;
	char at[4096];
	uint64_t n = 0, total;
	int mounted, rc;

	if ((rc = db_fs_find(db, what, &f, &e)) != SL_OK)
		goto out;
	total = f.live + f.deleted;
	mounted = dev_fs_mounted(f.ident, f.alt, f.mount, at, sizeof(at));
	if (!dry && mounted != 0 && !force) {
		if (mounted > 0)
			sb_addf(&o, "file system %s is mounted at %s now", f.ident, at);
		else
			sb_addf(&o, "cannot tell whether file system %s is mounted (the mount table"
				    " cannot be read)", f.ident);
		cli_usage_error("purge",
				"%s: forgetting it would remove %" PRIu64 " records (%" PRIu64
				" of files there now, %" PRIu64 " marked deleted); --force forgets it"
				" anyway, --dry-run only counts",
				o.oom ? f.ident : o.p, total, f.live, f.deleted);
		sb_free(&o);
		return EXIT_USAGE;
	}
	if (!dry && (rc = db_forget_fs(db, &f, &n, &e)) != SL_OK)
		goto out;
	if (json) {
		sb_addf(&o, "{\"removed\":%" PRIu64, n);
		cli_json_text(&o, "file_system", f.ident);
		sb_addf(&o, ",\"present\":%s", mounted > 0 ? "true" : mounted < 0 ? "null" : "false");
		cli_json_text(&o, "mounted_at", mounted > 0 ? at : NULL);
		sb_addf(&o, ",\"live\":%" PRIu64 ",\"deleted\":%" PRIu64, f.live, f.deleted);
		if (dry)
			sb_addf(&o, ",\"dry_run\":true,\"would_remove\":%" PRIu64, total);
		sb_adds(&o, "}\n");
	} else if (dry) {
		sb_addf(&o, "seekless purge: --dry-run: forgetting file system %s (", f.ident);
		where(&o, &f, mounted, at);
		sb_addf(&o, ") would remove %" PRIu64 " records, %" PRIu64 " live and %" PRIu64
			" marked deleted; nothing removed\n", total, f.live, f.deleted);
	} else {
		sb_addf(&o, "seekless purge: file system %s forgotten, %" PRIu64 " records removed",
			f.ident, n);
		if (mounted > 0) /* forced */
			sb_addf(&o, " (mounted at %s: a scan of it reads every file as new)", at);
		sb_addc(&o, '\n');
	}
	if (o.oom)
		rc = SL_FAIL(&e, SL_E_NOMEM, 0, "purge: out of memory");
	else
		fputs(o.p, stdout);
out:
	sb_free(&o);
	if (rc == SL_E_USAGE)
		cli_usage_error("purge", "%s", e.msg);
	else if (rc != SL_OK)
		cli_error("purge", &e);
	return rc == SL_OK ? EXIT_OK : rc == SL_E_USAGE ? EXIT_USAGE : EXIT_FATAL;
}

/* The records of files scans found gone need no --force: each is of a
 * file that was not at its path when its file system was last walked. */
static int purge_deleted(struct db *db, long days, int dry, int json)
{
	struct sl_err e;
	uint64_t n = 0;
	int rc = db_purge(db, days < 0 ? 0 : days, dry, &n, &e);

	if (rc != SL_OK) {
		cli_error("purge", &e);
		return EXIT_FATAL;
	}
	if (json && dry)
		printf("{\"removed\":0,\"dry_run\":true,\"would_remove\":%" PRIu64 "}\n", n);
	else if (json)
		printf("{\"removed\":%" PRIu64 "}\n", n);
	else if (dry)
		printf("seekless purge: --dry-run: %" PRIu64
		       " records of deleted files would be removed; nothing removed\n", n);
	else
		printf("seekless purge: %" PRIu64 " records of deleted files removed\n", n);
	return EXIT_OK;
}

int cmd_purge(int argc, char **argv)
{
	static const struct option opts[] = {
		{"db", required_argument, NULL, 'd'},
		{"config", required_argument, NULL, 'C'},
		{"older-than", required_argument, NULL, 'o'},
		{"file-system", required_argument, NULL, 'f'},
		{"force", no_argument, NULL, 'F'},
		{"dry-run", no_argument, NULL, 'n'},
		{"json", no_argument, NULL, 'j'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	const char *dbopt = NULL, *config = NULL, *fs = NULL;
	struct db *db = NULL;
	struct sl_err e;
	long days = -1;
	int c, rc, json = 0, force = 0, dry = 0;

	optind = 1;
	while ((c = cli_getopt("purge", argc, argv, "", opts)) != -1) {
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
		case 'F': force = 1; break;
		case 'n': dry = 1; break;
		case 'j': json = 1; break;
		case 'h': fputs(help, stdout); return EXIT_OK;
		default: return EXIT_USAGE;
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
	if (force && !fs) {
		cli_usage_error("purge", "--force goes with --file-system (the records of deleted"
					 " files need none)");
		return EXIT_USAGE;
	}
	if ((rc = cli_open_index("purge", dbopt, config, &db)) != EXIT_OK)
		return rc;
	/* no scan may be writing records of the file system it forgets, nor
	 * marking records deleted while they are counted; a dry run changes
	 * nothing and need not wait for one to end */
	if (!dry && db_lock(db, &e) != SL_OK) {
		cli_error("purge", &e);
		rc = EXIT_FATAL;
	} else {
		rc = fs ? forget(db, fs, dry, force, json) : purge_deleted(db, days, dry, json);
	}
	db_close(db);
	return rc;
}
