/* seekless scan - walk, locate, plan, read, extract, store. */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/sys.h"
#include "db/db.h"
#include "indexer/pipeline.h"
#include "tools/cli.h"
#include "tools/scanjn.h"

static const char help[] =
	"usage: seekless scan [--db PATH] [--order ORDER] [--jobs N] [--progress|--quiet]\n"
	"                     [--background|--foreground] [--exclude GLOB]... [--full]\n"
	"                     [--trust-mtime]\n"
	"                     [--config FILE] [--scheduled] [more options] [ROOT...]\n"
	"\n"
	"Index every regular file below ROOTs (default: the configuration's roots):\n"
	"where it lies on disk, its format, dimensions and EXIF metadata, and a\n"
	"content hash.  Files are read disk by disk in the order given by --order;\n"
	"the summary says which order each disk got and why.  Files that cannot be\n"
	"read are stored with their error.\n"
	"Incremental: files the index already has with the same identity, size,\n"
	"mtime and ctime are not read again; moved or renamed files keep their\n"
	"record (and are read again when their ctime moved, as a rename moves it\n"
	"on Linux: only reading tells a rename from a rewrite that put the mtime\n"
	"back); files\n"
	"gone since are marked deleted (seekless purge removes them), unless their\n"
	"whole file system is absent (a drive not plugged in).  Only one scan per\n"
	"index runs at a time.  SIGINT/SIGTERM stop it after storing what was read\n"
	"(exit status 4); the next scan goes on from there.  On Windows (NTFS,\n"
	"administrator), a volume whose change journal shows no change since the\n"
	"last complete scan is not walked at all (docs/windows.md).\n"
	"\n"
	"  --db PATH       the index (default: the configuration's db, else\n"
	"                  $XDG_DATA_HOME/seekless/index.db)\n"
	"  --config FILE   read this configuration file only (default:\n"
	"                  /etc/seekless.conf, then ~/.config/seekless/config)\n"
	"  --order ORDER   auto (default: physical on disks with a seek penalty,\n"
	"                  fs order on disks without), physical, inode, fs, path, random\n"
	"  --jobs N        extractor threads (default: one per CPU)\n"
	"  --progress      show progress on standard error (the default when it\n"
	"                  is a terminal: phase, files, MB, MB/s, ETA)\n"
	"  --no-progress   only the summary\n"
	"  --quiet         print nothing but errors\n"
	"  --json          the summary as one JSON object (for scripts)\n"
	"  --background    stay out of the way: idle I/O class, lowest CPU priority,\n"
	"                  and wait while anyone else uses the disk (docs/usage.md)\n"
	"  --foreground    the opposite (the default, except for --scheduled)\n"
	"  --scheduled     run as the service does: in the background unless the\n"
	"                  configuration says background = no; recorded as such\n"
	"  --files-from FILE  index exactly the files FILE lists (- for standard\n"
	"                  input; NUL-separated when it holds a NUL byte, as\n"
	"                  `seekless plan -0` writes, else one per line), in the\n"
	"                  plan's order; nothing else is walked or marked deleted\n"
	"  --exclude GLOB  leave out files and directories matching GLOB\n"
	"                  (repeatable; adds to the configuration's excludes)\n"
	"  --full          read every file again, not only new and changed ones\n"
	"                  (moves and deletions are applied as by any scan)\n"
	"  --trust-mtime   a ctime that moved alone (chmod, chown, rename, a new\n"
	"                  hard link) is no reason to read a file again; faster\n"
	"                  after chmod -R, blind to a rewrite that kept size and\n"
	"                  mtime (configuration: trust_mtime = yes)\n"
	"  --seed N        seed for --order random\n"
	"  --cross-fs      descend into file systems mounted below a root\n"
	"  --keep-cache    leave the files this scan read in the page cache\n"
	"  --no-phash      skip the perceptual hash of JPEGs (on by default)\n"
	"  --mem SIZE      file bytes held in memory at once (default 64M)\n";

#define MAX_SHOWN_ERRORS 10

/* The service's scans run confined (sys_sandbox): the roots read-only, the
 * index's folder read-write, nothing else.  Not having a sandbox is said,
 * not fatal. */
static void confine(const struct prep *p, const char *dbpath, char *how, size_t cap)
{
	struct strbuf dir = STRBUF_INIT;
	const char *a, *b, *slash;

	a = strrchr(dbpath, '/');
	b = strrchr(dbpath, '\\');
	slash = a > b ? a : b;
	if (slash)
		sb_add(&dir, dbpath, (size_t)(slash - dbpath) + (slash == dbpath));
	else
		sb_adds(&dir, ".");
	if (!dir.oom && sys_mkdir_parents(dbpath) == 0)
		sys_sandbox((const char *const *)p->roots, p->nroots, dir.p, how, cap);
	else
		snprintf(how, cap, "no sandbox: the index's folder cannot be created");
	sb_free(&dir);
}


struct scan_ctx {
	struct db *db;
	uint64_t nerrors;
	char *shown[MAX_SHOWN_ERRORS];
	int quiet;
	int progress;
	const char *phase;
};

static int sink(void *ctx, const struct px_record *r, struct sl_err *err)
{
	struct scan_ctx *s = ctx;
	if (r->err_code && s->nerrors < MAX_SHOWN_ERRORS) {
		size_t n = strlen(r->path) + strlen(r->error) + 3;
		s->shown[s->nerrors] = malloc(n);
		if (s->shown[s->nerrors])
			snprintf(s->shown[s->nerrors], n, "%s: %s", r->path, r->error);
	}
	if (r->err_code)
		s->nerrors++;
	return db_sink(s->db, r, err);
}

/* A read that is taking very long is said at once, even with --quiet: a
 * failing disk can hold one read for minutes, or for good, and nothing
 * else on that disk moves meanwhile. */
static void on_slow(void *ctx, const char *path, const char *disk, double seconds)
{
	const struct scan_ctx *s = ctx;
	fprintf(stderr, "%sseekless scan: %s: a read on %s has taken %.0f s so far (a failing "
		"disk?)\n", s->progress ? "\n" : "", path, disk, seconds);
}

/* The phase before reading starts, on the progress line. */
static void phase(const struct scan_ctx *s, const char *what, size_t n)
{
	if (s->progress)
		fprintf(stderr, "\r[%s] %zu %s   ", what, n,
			strcmp(what, "walk") == 0 ? "roots" : "files");
}

static void json_str(struct strbuf *o, const char *key, const char *v)
{
	sb_addf(o, ",\"%s\":", key);
	if (v)
		sb_add_json(o, v, strlen(v));
	else
		sb_adds(o, "null");
}

/* The summary as one JSON object, for scripts (--json). */
static void print_json_summary(const struct prep *p, const struct plan *pl,
			       const struct px_stats *st, const struct scan_ctx *s,
			       const struct db_diff *d, const char *dbpath, int64_t scan_id,
			       uint64_t marked, uint64_t relinked, uint64_t ctime_changed,
			       int marked_skipped, double wall,
			       const char *status, const char *background, int full,
			       const char *journal, const char *sandbox)
{
	struct strbuf o = STRBUF_INIT;
	double y = 0;
	size_t g;
	uint64_t i;

	for (g = 0; g < st->ngroups; g++)
		y += st->groups[g].yield_s;
	sb_addf(&o, "{\"status\":\"%s\",\"scan_id\":%" PRId64, status, scan_id);
	json_str(&o, "index", dbpath);
	sb_addf(&o, ",\"files_read\":%" PRIu64 ",\"bytes_read\":%" PRIu64 ",\"errors\":%" PRIu64
		",\"wall_s\":%.3f,\"walk\":{\"s\":%.3f,\"dirs\":%" PRIu64 ",\"files\":%" PRIu64
		",\"symlinks\":%" PRIu64 ",\"special\":%" PRIu64 ",\"other_fs\":%" PRIu64
		",\"excluded_files\":%" PRIu64 ",\"excluded_dirs\":%" PRIu64
		",\"dir_errors\":%" PRIu64 "},\"locate_s\":%.3f,\"located\":%" PRIu64,
		st->files, st->bytes, st->errors, wall, p->walk_s, p->ws.dirs, p->ws.files,
		p->ws.symlinks, p->ws.special, p->ws.other_fs, p->ws.excl_files, p->ws.excl_dirs,
		p->ws.dir_errors, p->locate_s, p->ls.located);
	sb_addf(&o, ",\"full\":%s,\"unchanged\":%" PRIu64 ",\"changed\":%" PRIu64
		",\"new\":%" PRIu64 ",\"moved\":%" PRIu64 ",\"relinked\":%" PRIu64
		",\"ctime_rechecked\":%" PRIu64 ",\"ctime_new_content\":%" PRIu64
		",\"rehashed\":%" PRIu64 ",\"upgraded\":%" PRIu64
		",\"deleted\":%" PRIu64 ",\"deletions_skipped\":%s,\"unavailable\":%" PRIu64,
		full ? "true" : "false", d->unchanged, d->changed, d->added, d->moved, relinked,
		d->rechecked, ctime_changed, d->rehash, d->upgraded, marked, marked_skipped ? "true" : "false",
		d->unavailable);
	sb_addf(&o, ",\"read_s\":%.3f,\"extract_s\":%.3f,\"store_s\":%.3f,\"jobs\":%d",
		st->read_s, st->extract_s, st->store_s, st->jobs);
	json_str(&o, "background", background);
	sb_addf(&o, ",\"yield_s\":%.3f", y);
	json_str(&o, "journal", journal && journal[0] ? journal : NULL);
	json_str(&o, "sandbox", sandbox && sandbox[0] ? sandbox : NULL);
	sb_adds(&o, ",\"devices\":[");
	for (g = 0; g < pl->ngroups; g++) {
		const struct plan_group *gr = &pl->groups[g];
		const struct px_group_stats *gs = g < st->ngroups ? &st->groups[g] : NULL;
		char fs[512];
		cli_group_fs(p, pl, g, fs, sizeof(fs));
		sb_adds(&o, g ? ",{\"name\":" : "{\"name\":");
		sb_add_json(&o, gr->name, strlen(gr->name));
		json_str(&o, "file_systems", fs);
		sb_addf(&o, ",\"order\":\"%s\"", plan_order_name(gr->order));
		json_str(&o, "reason", gr->reason);
		sb_addf(&o, ",\"files\":%zu,\"files_read\":%" PRIu64 ",\"bytes_read\":%" PRIu64
			",\"read_s\":%.3f}", gr->count, gs ? gs->files : 0, gs ? gs->bytes : 0,
			gs ? gs->read_s : 0.0);
	}
	sb_adds(&o, "],\"errors_shown\":[");
	for (i = 0; i < s->nerrors && i < MAX_SHOWN_ERRORS; i++) {
		if (i)
			sb_addc(&o, ',');
		sb_add_json(&o, s->shown[i] ? s->shown[i] : "", s->shown[i] ? strlen(s->shown[i]) : 0);
	}
	sb_adds(&o, "]}\n");
	if (!o.oom)
		fwrite(o.p, 1, o.len, stdout);
	sb_free(&o);
}

static void print_summary(const struct prep *p, const struct plan *pl, const struct px_stats *st,
			  const struct scan_ctx *s, const struct db_diff *d, const char *dbpath,
			  int64_t scan_id, uint64_t marked, uint64_t relinked, uint64_t ctime_changed,
			  int marked_skipped, double wall, const char *status,
			  const char *background, int full)
{
	char bytes[32];
	size_t g;
	uint64_t i;

	cli_fmt_bytes(st->bytes, bytes, sizeof(bytes));
	printf("seekless scan: %s: %" PRIu64 " files, %s in %.2f s (%.1f MB/s), %" PRIu64
	       " errors\n",
	       status, st->files, bytes, wall, wall > 0 ? (double)st->bytes / 1e6 / wall : 0.0,
	       st->errors);
	printf("  walk     %7.2f s  %" PRIu64 " dirs, %" PRIu64 " files; skipped %" PRIu64
	       " symlinks, %" PRIu64 " special files, %" PRIu64 " other file systems%s\n",
	       p->walk_s, p->ws.dirs, p->ws.files, p->ws.symlinks, p->ws.special, p->ws.other_fs,
	       p->ws.excluded ? ", the index's own files" : "");
	if (p->ws.excl_files || p->ws.excl_dirs)
		printf("           excluded by pattern: %" PRIu64 " files, %" PRIu64 " directories\n",
		       p->ws.excl_files, p->ws.excl_dirs);
	printf("  locate   %7.2f s  stat in inode order, compare with the index, extent maps of "
	       "the %zu to read (%" PRIu64 " with a physical position)\n",
	       p->locate_s, pl->n, p->ls.located);
	if (full)
		printf("  index    --full: every file read again; %" PRIu64 " moved or renamed",
		       d->moved);
	else
		printf("  index    %" PRIu64 " unchanged (not read), %" PRIu64 " changed, %" PRIu64
		       " new, %" PRIu64 " moved or renamed",
		       d->unchanged, d->changed, d->added, d->moved);
	if (relinked)
		printf(", %" PRIu64 " moved across file systems", relinked);
	putchar('\n');
	if (d->rechecked && !full)
		printf("           %" PRIu64 " read again because only their ctime moved: %" PRIu64
		       " with new content (--trust-mtime skips these reads)\n",
		       d->rechecked, ctime_changed);
	if (d->rehash && !full)
		printf("           %" PRIu64 " unchanged pictures read for a perceptual hash they"
		       " never had (an index from before it, or --no-phash)\n", d->rehash);
	if (d->upgraded && !full)
		printf("           %" PRIu64 " unchanged files read again: their records were made"
		       " by an older seekless, which read less from them\n", d->upgraded);
	printf("  read     %7.2f s  wall, all disks in parallel\n", st->read_s);
	if (background) {
		double y = 0;
		uint64_t n = 0;
		for (g = 0; g < st->ngroups; g++) {
			y += st->groups[g].yield_s;
			n += st->groups[g].pauses;
		}
		printf("  background: %s; waited %.2f s for other I/O (%" PRIu64 " pauses)\n",
		       background, y, n);
	}
	printf("  extract  %7.2f s  busy, summed over %d workers\n", st->extract_s, st->jobs);
	printf("  store    %7.2f s  busy, one writer\n", st->store_s);
	for (g = 0; g < pl->ngroups; g++) {
		const struct plan_group *gr = &pl->groups[g];
		char fs[512], gb[32];
		const struct px_group_stats *gs = g < st->ngroups ? &st->groups[g] : NULL;
		double rs = gs ? gs->read_s : 0;
		uint64_t gbytes = gs ? gs->bytes : 0;
		cli_group_fs(p, pl, g, fs, sizeof(fs));
		cli_fmt_bytes(gbytes, gb, sizeof(gb));
		printf("  device %s (%s): order %s: %s\n", gr->name, fs, plan_order_name(gr->order),
		       gr->reason);
		printf("         %" PRIu64 " of %zu files, %s, read in %.2f s (%.1f MB/s)\n",
		       gs ? gs->files : 0, gr->count, gb, rs, rs > 0 ? (double)gbytes / 1e6 / rs : 0.0);
	}
	if (pl->requested == PLAN_RANDOM)
		printf("  random order seed %" PRIu64 "\n", pl->seed);
	if (marked_skipped)
		printf("  missing files not marked deleted: %" PRIu64 " directories could not be read\n",
		       p->ws.dir_errors);
	else if (marked)
		printf("  %" PRIu64 " files no longer present marked deleted\n", marked);
	if (d->unavailable)
		printf("  %" PRIu64 " files on file systems this scan did not see (not mounted?) kept,"
		       " not marked deleted\n", d->unavailable);
	printf("  index %s (scan #%" PRId64 ")\n", dbpath, scan_id);
	for (i = 0; i < s->nerrors && i < MAX_SHOWN_ERRORS; i++)
		if (s->shown[i])
			fprintf(stderr, "  error: %s\n", s->shown[i]);
	if (s->nerrors > MAX_SHOWN_ERRORS)
		fprintf(stderr, "  ... and %" PRIu64 " more (seekless export shows all)\n",
			s->nerrors - MAX_SHOWN_ERRORS);
}

static void store_devices(struct db *db, const struct prep *p, const struct plan *pl,
			  const struct px_stats *st)
{
	size_t g;
	for (g = 0; g < pl->ngroups; g++) {
		const struct plan_group *gr = &pl->groups[g];
		char fs[512];
		struct db_device_row row;
		struct sl_err e;
		cli_group_fs(p, pl, g, fs, sizeof(fs));
		row.device = gr->name;
		row.fstype = fs;
		row.rotational = gr->rotational;
		row.extents = gr->extents;
		row.order = plan_order_name(gr->order);
		row.reason = gr->reason;
		row.files = g < st->ngroups ? st->groups[g].files : 0;
		row.bytes = g < st->ngroups ? st->groups[g].bytes : 0;
		row.read_s = g < st->ngroups ? st->groups[g].read_s : 0;
		if (db_scan_device(db, &row, &e) != SL_OK)
			cli_error("scan", &e);
	}
}

int cmd_scan(int argc, char **argv)
{
	static const struct option opts[] = {
		{"db", required_argument, NULL, 'd'},
		{"config", required_argument, NULL, 'C'},
		{"order", required_argument, NULL, 'o'},
		{"jobs", required_argument, NULL, 'j'},
		{"progress", no_argument, NULL, 'p'},
		{"no-progress", no_argument, NULL, 'P'},
		{"json", no_argument, NULL, 'J'},
		{"quiet", no_argument, NULL, 'q'},
		{"seed", required_argument, NULL, 's'},
		{"cross-fs", no_argument, NULL, 'x'},
		{"keep-cache", no_argument, NULL, 'k'},
		{"mem", required_argument, NULL, 'm'},
		{"phash", no_argument, NULL, 'H'},
		{"no-phash", no_argument, NULL, 'N'},
		{"full", no_argument, NULL, 'F'},
		{"trust-mtime", no_argument, NULL, 'T'},
		{"background", no_argument, NULL, 'b'},
		{"foreground", no_argument, NULL, 'f'},
		{"scheduled", no_argument, NULL, 'S'},
		{"exclude", required_argument, NULL, 'e'},
		{"files-from", required_argument, NULL, 'L'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	static atomic_int cancel;
	struct scan_ctx sc;
	struct strbuf dbpath = STRBUF_INIT;
	const char *dbopt = NULL, *config = NULL, *files_from = NULL;
	char **extra = NULL, bg_how[200];
	size_t nextra = 0;
	struct cfg cfg;
	struct excl ex = {0};
	struct px_opts po;
	struct px_stats st;
	struct prep p;
	struct plan pl;
	struct sl_err e;
	struct db *db = NULL;
	struct db_scan_end end;
	struct db_diff diff;
	struct scanjn jn;
	char sandbox_how[400] = "";
	uint64_t seed = 0, mem = 0, marked = 0;
	int order = -1, cross_fs = -1, have_seed = 0, marked_skipped = 0, full = 0, phash = -1;
	int background = -1, scheduled = 0, json = 0, trust_mtime = -1, c, rc, i;
	double t0 = sys_now();
	const char *status;

	memset(&sc, 0, sizeof(sc));
	sc.progress = -1; /* unset: on when standard error is a terminal */
	memset(&po, 0, sizeof(po));
	memset(&st, 0, sizeof(st));
	memset(&p, 0, sizeof(p));
	memset(&pl, 0, sizeof(pl));
	memset(&end, 0, sizeof(end));
	memset(&diff, 0, sizeof(diff));
	cfg_init(&cfg);
	sj_init(&jn);
	extra = calloc((size_t)argc + 1, sizeof(*extra));
	if (!extra)
		return EXIT_FATAL;
	optind = 1;
	while ((c = getopt_long(argc, argv, "+", opts, NULL)) != -1) {
		switch (c) {
		case 'd': dbopt = optarg; break;
		case 'C': config = optarg; break;
		case 'o':
			if (plan_order_parse(optarg, &order) != 0) {
				cli_usage_error("scan", "unknown order '%s'", optarg);
				goto usage;
			}
			break;
		case 'j':
			po.jobs = atoi(optarg);
			if (po.jobs < 1 || po.jobs > 256) {
				cli_usage_error("scan", "--jobs wants a number from 1 to 256");
				goto usage;
			}
			break;
		case 'p': sc.progress = 1; break;
		case 'P': sc.progress = 0; break;
		case 'J': json = 1; break;
		case 'q': sc.quiet = 1; break;
		case 's':
			seed = strtoull(optarg, NULL, 10);
			have_seed = 1;
			break;
		case 'x': cross_fs = 1; break;
		case 'k': po.keep_cache = 1; break;
		case 'H': phash = 1; break;
		case 'N': phash = 0; break;
		case 'F': full = 1; break;
		case 'T': trust_mtime = 1; break;
		case 'b': background = 1; break;
		case 'f': background = 0; break;
		case 'S': scheduled = 1; break;
		case 'e': extra[nextra++] = optarg; break;
		case 'L': files_from = optarg; break;
		case 'm':
			if (cli_parse_size(optarg, &mem) != 0 || mem < (1u << 20)) {
				cli_usage_error("scan", "--mem wants a size of at least 1M");
				goto usage;
			}
			po.mem_budget = (size_t)mem;
			break;
		case 'h': free(extra); fputs(help, stdout); return EXIT_OK;
		default: fputs(help, stderr); goto usage;
		}
	}
	if (sc.progress == 1 && sc.quiet) {
		cli_usage_error("scan", "--progress and --quiet exclude each other");
		goto usage;
	}
	if (sc.progress < 0)
		sc.progress = !sc.quiet && !scheduled && sys_is_tty(stderr);
	if (files_from && optind < argc) {
		cli_usage_error("scan", "--files-from names the files: no ROOT with it");
		goto usage;
	}
	rc = cli_config("scan", config, &cfg);
	if (rc == SL_OK)
		rc = cli_excludes("scan", &cfg, extra, nextra, &ex);
	if (rc == SL_OK && !files_from)
		rc = cli_roots_or_config("scan", argv + optind, argc - optind, &cfg, &p);
	free(extra);
	extra = NULL;
	if (rc != SL_OK) {
		cli_prep_free(&p);
		ex_free(&ex);
		cfg_free(&cfg);
		return rc == SL_E_USAGE ? EXIT_USAGE : EXIT_FATAL;
	}
	/* the command line over the configuration over the defaults */
	if (order < 0)
		order = cfg.order >= 0 ? cfg.order : PLAN_AUTO;
	if (cross_fs < 0)
		cross_fs = cfg.cross_fs > 0;
	if (!po.jobs && cfg.jobs)
		po.jobs = cfg.jobs;
	if (!po.mem_budget && cfg.mem)
		po.mem_budget = (size_t)cfg.mem;
	po.phash = phash >= 0 ? phash : cfg.phash != 0;
	if (trust_mtime < 0)
		trust_mtime = cfg.trust_mtime > 0;
	/* the configuration's `background` is about the service's runs; an
	 * interactive scan is in the foreground unless asked */
	if (background < 0)
		background = scheduled && cfg.background != 0;
	if ((rc = cli_db_path("scan", dbopt, &cfg, &dbpath)) != EXIT_OK) {
		cli_prep_free(&p);
		ex_free(&ex);
		cfg_free(&cfg);
		return rc;
	}
	if (files_from) {
		/* the folders of the listed files stand in for roots from here on */
		rc = cli_files_from("scan", files_from, dbpath.p, &p, &e);
		if (rc != SL_OK) {
			if (rc != SL_E_USAGE || p.ws.files)
				cli_error("scan", &e);
			cli_prep_free(&p);
			ex_free(&ex);
			cfg_free(&cfg);
			sb_free(&dbpath);
			return rc == SL_E_USAGE ? EXIT_USAGE : EXIT_FATAL;
		}
	}
	if (!have_seed)
		seed = cli_random_seed();
	sys_raise_fd_limit();
	sys_on_interrupt(&cancel);
	if (background) {
		/* this thread walks, stats and writes the index; the pipeline's
		 * threads lower themselves (pipeline.h) */
		sys_background(bg_how, sizeof(bg_how));
		po.background = 1;
	}

	if (scheduled)
		confine(&p, dbpath.p, sandbox_how, sizeof(sandbox_how));
	rc = db_open(dbpath.p, 1, &db, &e);
	if (rc == SL_OK)
		rc = db_lock(db, &e);
	if (rc == SL_OK)
		rc = db_scan_begin(db, scheduled ? "scheduled" : "scan", plan_order_name(order),
				   (const char *const *)p.roots,
				   p.nroots, po.jobs ? po.jobs : sys_cpu_count(), &e);
	if (rc != SL_OK) {
		cli_error("scan", &e);
		db_close(db);
		cli_prep_free(&p);
		ex_free(&ex);
		cfg_free(&cfg);
		sb_free(&dbpath);
		return EXIT_FATAL;
	}
	sc.db = db;

	rc = files_from ? SL_OK : sj_decide(&jn, db, &p, dbpath.p, full, &e);
	if (rc == SL_OK && jn.listed)
		rc = sj_list(&jn, &p, &ex, &e);
	if (rc == SL_OK && !jn.listed && !files_from) {
		phase(&sc, "walk", p.nroots);
		rc = cli_walk(&p, cross_fs, &ex, dbpath.p, &cancel, &e);
	}
	if (rc == SL_OK) {
		/* stat everything, diff with the index, then ask for the extent
		 * maps of only the files that will be read */
		double t = sys_now();
		phase(&sc, "locate", p.ft.nfiles);
		rc = locate_stat(&p.ft, &p.devs, &p.ls, &cancel, &e);
		if (rc == SL_OK)
			rc = db_map_fs(db, p.devs, p.ft.ndevs, &e);
		if (rc == SL_OK)
			rc = db_diff(db, &p.ft, p.roots, p.nroots,
				     (full ? DB_DIFF_FULL : 0) | (trust_mtime ? DB_DIFF_TRUST_MTIME : 0) |
					     (po.phash ? DB_DIFF_PHASH : 0),
				     &diff, &e);
		if (rc == SL_OK && (jn.listed || files_from))
			diff.nmissing = 0; /* the journal shows no deletion; a list
					    * says nothing of what it leaves out */
		if (rc == SL_OK)
			rc = locate_extents(&p.ft, &p.ls, &cancel, &e);
		p.locate_s = sys_now() - t;
	}
	if (rc == SL_OK)
		rc = plan_build(&p.ft, p.devs, order, seed, &pl, &e);
	if (rc == SL_OK)
		rc = db_apply_moves(db, &p.ft, &diff, &e);
	if (rc == SL_OK)
		rc = db_relink_candidates(db, &diff, p.roots, p.nroots, &e);
	if (rc == SL_OK) {
		po.cancel = &cancel;
		po.on_slow = on_slow;
		po.on_slow_ctx = &sc;
		if (sc.progress) {
			po.progress = cli_progress;
			po.progress_ctx = (void *)"read";
		}
		rc = px_run(&p.ft, &pl, &po, sink, &sc, &st, &e);
	}
	if (sc.progress)
		fputc('\n', stderr); /* end the progress line, whatever happened */
	if (rc == SL_OK)
		rc = db_commit(db, &e);
	if (rc == SL_OK) {
		/* only a complete scan knows what is gone; an unreadable
		 * directory's files are unknown, not gone */
		if (p.ws.dir_errors) {
			marked_skipped = 1;
			rc = db_deleted_count(db, &marked, &e);
		} else {
			rc = db_mark_deleted(db, &diff, &marked, &e);
		}
	}
	if (rc == SL_OK)
		sj_store(&jn, db);
	status = rc == SL_OK ? (st.errors ? "errors" : "ok")
			     : rc == SL_E_CANCELLED ? "interrupted" : "failed";
	if (rc != SL_OK)
		cli_error("scan", &e);
	if (pl.ngroups)
		store_devices(db, &p, &pl, &st);
	end.status = status;
	end.files = st.files;
	end.bytes = st.bytes;
	end.errors = st.errors;
	end.unchanged = diff.unchanged;
	end.changed = diff.changed;
	end.added = diff.added;
	end.moved = diff.moved;
	end.rechecked = diff.rechecked;
	end.upgraded = diff.upgraded;
	/* deletions stand only when every directory was listed (db.h,
	 * DB_PROVISIONAL_SQL) */
	end.complete = rc == SL_OK && !marked_skipped && !files_from && !jn.listed;
	end.deleted = marked;
	end.unavailable = diff.unavailable;
	end.background = background;
	for (i = 0; (size_t)i < st.ngroups; i++)
		end.yield_s += st.groups[i].yield_s;
	end.walk_s = p.walk_s;
	end.locate_s = p.locate_s;
	end.read_s = st.read_s;
	end.extract_s = st.extract_s;
	end.store_s = st.store_s;
	end.wall_s = sys_now() - t0;
	end.message = rc != SL_OK ? e.msg : NULL;
	{
		struct sl_err e2;
		if (db_scan_end(db, &end, &e2) != SL_OK) {
			cli_error("scan", &e2);
			if (rc == SL_OK) {
				rc = e2.code;
				status = "failed";
			}
		}
	}
	if (json && rc != SL_E_USAGE)
		print_json_summary(&p, &pl, &st, &sc, &diff, dbpath.p, db->scan_id, marked,
				   db->relinked, db->ctime_changed, marked_skipped, end.wall_s, status,
				   background ? bg_how : NULL, full, jn.report.p, sandbox_how);
	else if (!sc.quiet && rc != SL_E_USAGE)
		print_summary(&p, &pl, &st, &sc, &diff, dbpath.p, db->scan_id, marked, db->relinked,
			      db->ctime_changed, marked_skipped, end.wall_s, status,
			      background ? bg_how : NULL, full);
	if (!json && !sc.quiet && jn.report.len)
		fputs(jn.report.p, stdout);
	if (!json && !sc.quiet && sandbox_how[0])
		printf("  sandbox     %s\n", sandbox_how);
	if (sc.quiet && sc.nerrors)
		for (i = 0; (uint64_t)i < sc.nerrors && i < MAX_SHOWN_ERRORS; i++)
			if (sc.shown[i])
				fprintf(stderr, "seekless scan: %s\n", sc.shown[i]);
	if (st.abandoned) {
		/* A reader is still stuck in a read, with the plan and the file
		 * table: close the index and end here, freeing nothing. */
		db_close(db);
		fflush(NULL);
		_Exit(rc == SL_E_CANCELLED ? EXIT_INTERRUPTED : EXIT_FATAL);
	}
	for (i = 0; i < MAX_SHOWN_ERRORS; i++)
		free(sc.shown[i]);
	sj_free(&jn);
	px_stats_free(&st);
	plan_free(&pl);
	db_diff_free(&diff);
	cli_prep_free(&p);
	ex_free(&ex);
	cfg_free(&cfg);
	db_close(db);
	sb_free(&dbpath);
	if (rc == SL_E_CANCELLED)
		return EXIT_INTERRUPTED;
	if (rc != SL_OK)
		return EXIT_FATAL;
	return st.errors ? EXIT_FILE_ERRORS : EXIT_OK;
usage:
	free(extra);
	return EXIT_USAGE;
}
