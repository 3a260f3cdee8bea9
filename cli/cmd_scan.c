/* seekless scan - walk, locate, plan, read, extract, store. */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app/scan.h"
#include "cli/cli.h"
#include "common/parse.h"
#include "common/sys.h"

static const char help[] =
	"usage: seekless scan [--db PATH] [--order ORDER] [--jobs N] [--progress|--quiet]\n"
	"                     [--background|--foreground] [--exclude GLOB]...\n"
	"                     [--full|--quick] [--trust-mtime]\n"
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
	"                  fs order on disks without), physical, first-extent,\n"
	"                  inode, fs, path, random\n"
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
	"  --quick         index first, read the rest later: a file over a quarter\n"
	"                  of --mem is read only where its metadata lies (its\n"
	"                  first 4 MiB; a movie's moov box) and its last 64 KiB, a\n"
	"                  JPEG over 2.3 MiB for its first 256 KiB and last 64 KiB\n"
	"                  when those hold all its metadata; their content hash,\n"
	"                  and a perceptual hash the head did not give, are\n"
	"                  pending until a scan without --quick reads them whole\n"
	"                  (configuration: quick = yes; --no-quick overrides it)\n"
	"  --trust-mtime   a ctime that moved alone (chmod, chown, rename, a new\n"
	"                  hard link) is no reason to read a file again; faster\n"
	"                  after chmod -R, blind to a rewrite that kept size and\n"
	"                  mtime (configuration: trust_mtime = yes)\n"
	"  --seed N        seed for --order random\n"
	"  --cross-fs      descend into file systems mounted below a root\n"
	"  --keep-cache    leave the files this scan read in the page cache\n"
	"  --no-phash      skip the perceptual hash of pictures (on by default)\n"
	"  --phash-now     make every perceptual hash in this scan, even when the\n"
	"                  disk must wait for it; by default, while the disk is\n"
	"                  faster than hashing, the hashes that cannot keep up are\n"
	"                  left for the next scan (configuration: phash_now = yes)\n"
	"  --mem SIZE      file bytes held in memory at once (default: a sixteenth of\n"
	"                  the memory, at least 64M and at most 512M)\n";

#define MAX_SHOWN_ERRORS SCAN_SHOWN_ERRORS

/* What the command line adds to a scan: how to talk while it runs. */
struct ui {
	int quiet;
	int progress;
	int drawn; /* the progress line is on the screen */
};

static void on_note(void *ctx, const char *msg)
{
	struct ui *u = ctx;
	fprintf(stderr, "%sseekless scan: %s\n", u->drawn ? "\n" : "", msg);
}

/* A read that is taking very long is said at once, even with --quiet: a
 * failing disk can hold one read for minutes, or for good, and nothing
 * else on that disk moves meanwhile. */
static void on_slow(void *ctx, const char *path, const char *disk, double seconds)
{
	const struct ui *u = ctx;
	fprintf(stderr, "%sseekless scan: %s: a read on %s has taken %.0f s so far (a failing "
		"disk?)\n", u->progress ? "\n" : "", path, disk, seconds);
}

/* The phase before reading starts, on the progress line. */
static void on_phase(void *ctx, const char *what, size_t n)
{
	struct ui *u = ctx;
	u->drawn = u->progress;
	if (u->progress)
		fprintf(stderr, "\r[%s] %zu %s   ", what, n,
			strcmp(what, "walk") == 0 ? "roots" : "files");
}

/* The summary as one JSON object, for scripts (--json). */
static void print_json_summary(const struct prep *p, const struct plan *pl,
			       const struct px_stats *st, const struct scan_result *s,
			       const struct db_diff *d, const char *dbpath, int64_t scan_id,
			       uint64_t marked, uint64_t relinked, uint64_t ctime_changed,
			       int marked_skipped, double wall,
			       const char *status, const char *background, int full,
			       const char *journal, const char *sandbox, const char *sandbox_read)
{
	struct strbuf o = STRBUF_INIT;
	double y = 0;
	size_t g;
	uint64_t i;

	for (g = 0; g < st->ngroups; g++)
		y += st->groups[g].yield_s;
	sb_addf(&o, "{\"status\":\"%s\",\"scan_id\":%" PRId64, status, scan_id);
	cli_json_text(&o, "index", dbpath);
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
		",\"rehashed\":%" PRIu64 ",\"upgraded\":%" PRIu64 ",\"retried\":%" PRIu64
		",\"deleted\":%" PRIu64 ",\"deletions_skipped\":%s,\"unavailable\":%" PRIu64,
		full ? "true" : "false", d->unchanged, d->changed, d->added, d->moved, relinked,
		d->rechecked, ctime_changed, d->rehash, d->upgraded, d->retried, marked, marked_skipped ? "true" : "false",
		d->unavailable);
	sb_addf(&o, ",\"read_s\":%.3f,\"extract_s\":%.3f,\"store_s\":%.3f,\"jobs\":%d",
		st->read_s, st->extract_s, st->store_s, st->jobs);
	sb_addf(&o, ",\"phash\":%s,\"phash_deferred\":%" PRIu64, s->set.po.phash ? "true" : "false",
		st->phash_deferred);
	sb_addf(&o, ",\"quick\":%s,\"completed\":%" PRIu64 ",\"content_pending\":%" PRIu64
		",\"content_pending_bytes\":%" PRIu64, s->set.quick ? "true" : "false", d->completed,
		s->content_pending, s->content_pending_bytes);
	if (s->set.po.phash)
		sb_addf(&o, ",\"phash_pending\":%" PRIu64, s->phash_pending);
	else
		sb_adds(&o, ",\"phash_pending\":null");
	cli_json_text(&o, "background", background);
	sb_addf(&o, ",\"yield_s\":%.3f", y);
	cli_json_text(&o, "journal", journal && journal[0] ? journal : NULL);
	/* what the scan gave up: before the walk, and before reading */
	sb_adds(&o, ",\"sandbox\":{\"scan\":");
	if (sandbox && sandbox[0])
		sb_add_json(&o, sandbox, strlen(sandbox));
	else
		sb_adds(&o, "null");
	cli_json_text(&o, "read", sandbox_read && sandbox_read[0] ? sandbox_read : NULL);
	sb_addc(&o, '}');
	sb_adds(&o, ",\"devices\":[");
	for (g = 0; g < pl->ngroups; g++) {
		const struct plan_group *gr = &pl->groups[g];
		const struct px_group_stats *gs = g < st->ngroups ? &st->groups[g] : NULL;
		char fs[512];
		prep_group_fs(p, pl, g, fs, sizeof(fs));
		sb_adds(&o, g ? ",{\"name\":" : "{\"name\":");
		sb_add_json(&o, gr->name, strlen(gr->name));
		cli_json_text(&o, "file_systems", fs);
		sb_addf(&o, ",\"order\":\"%s\"", plan_order_name(gr->order));
		cli_json_text(&o, "reason", gr->reason);
		sb_addf(&o, ",\"written_back\":%zu,\"synced_fs\":%s,\"writeback_s\":%.3f",
			gr->written_back, gr->synced_fs ? "true" : "false", gr->writeback_s);
		sb_addf(&o, ",\"files\":%zu,\"files_read\":%" PRIu64 ",\"bytes_read\":%" PRIu64
			",\"read_s\":%.3f,\"swept\":%s,\"unswept\":%" PRIu64 "}", gr->count,
			gs ? gs->files : 0, gs ? gs->bytes : 0, gs ? gs->read_s : 0.0,
			gs && gs->swept ? "true" : "false", gs ? gs->unswept : 0);
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
			  const struct scan_result *s, const struct db_diff *d, const char *dbpath,
			  int64_t scan_id, uint64_t marked, uint64_t relinked, uint64_t ctime_changed,
			  int marked_skipped, double wall, const char *status,
			  const char *background, int full)
{
	char bytes[32];
	size_t g;
	uint64_t i;

	cli_fmt_bytes(st->bytes, bytes, sizeof(bytes));
	printf("seekless scan: %s: %" PRIu64 " %s, %s in %.2f s (%.1f MB/s), %" PRIu64 " %s\n",
	       status, st->files, cli_plural(st->files, "file", "files"), bytes, wall,
	       wall > 0 ? (double)st->bytes / 1e6 / wall : 0.0, st->errors,
	       cli_plural(st->errors, "error", "errors"));
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
		       " never had (an earlier scan left it, or --no-phash)\n", d->rehash);
	if (d->upgraded && !full)
		printf("           %" PRIu64 " unchanged files read again: their records were made"
		       " by an older seekless, which read less from them\n", d->upgraded);
	if (d->completed)
		printf("           %" PRIu64 " unchanged files read whole: a quick scan read %s"
		       " in part\n", d->completed, d->completed == 1 ? "it" : "them");
	if (d->retried && !full)
		printf("           %" PRIu64 " unchanged %s read again: %s an error\n",
		       d->retried, d->retried == 1 ? "file" : "files",
		       d->retried == 1 ? "its record had" : "their records had");
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
	if (st->phash_deferred)
		printf("           %" PRIu64 " pictures left without a perceptual hash: the disk was"
		       " faster than hashing (--phash-now waits for them)\n", st->phash_deferred);
	if (s->content_pending)
		printf("           %" PRIu64 " files in the index read in part (%.1f GB), their"
		       " content hash pending: a scan without --quick reads them whole\n",
		       s->content_pending, (double)s->content_pending_bytes / 1e9);
	if (s->set.po.phash && s->phash_pending)
		printf("           %" PRIu64 " pictures in the index without a perceptual hash yet:"
		       " the next scan makes them\n", s->phash_pending);
	printf("  store    %7.2f s  busy, one writer\n", st->store_s);
	for (g = 0; g < pl->ngroups; g++) {
		const struct plan_group *gr = &pl->groups[g];
		char fs[512], gb[32];
		const struct px_group_stats *gs = g < st->ngroups ? &st->groups[g] : NULL;
		double rs = gs ? gs->read_s : 0;
		uint64_t gbytes = gs ? gs->bytes : 0;
		prep_group_fs(p, pl, g, fs, sizeof(fs));
		cli_fmt_bytes(gbytes, gb, sizeof(gb));
		printf("  device %s (%s): order %s: %s\n", gr->name, fs, plan_order_name(gr->order),
		       gr->reason);
		printf("         %" PRIu64 " of %zu files, %s, read in %.2f s (%.1f MB/s)",
		       gs ? gs->files : 0, gr->count, gb, rs, rs > 0 ? (double)gbytes / 1e6 / rs : 0.0);
		if (gs && gs->swept)
			printf("; swept its extents (%" PRIu64 " read whole after all)", gs->unswept);
		printf("\n");
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

/* Over 150 lines on purpose: the option table and its switch, one line
 * or one usage error per option, so that every option is seen in one
 * place; the scan itself is scan_run. */
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
		{"phash-now", no_argument, NULL, 'W'},
		{"full", no_argument, NULL, 'F'},
		{"quick", no_argument, NULL, 'Q'},
		{"no-quick", no_argument, NULL, 'U'},
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
	struct ui u = {.quiet = 0, .progress = -1, .drawn = 0}; /* progress unset: on for a terminal */
	struct scan_args a;
	struct scan_result r;
	char **extra;
	uint64_t mem = 0;
	int json = 0, file_errors, c, rc;
	uint64_t i;

	memset(&a, 0, sizeof(a));
	a.order = a.cross_fs = a.phash = a.phash_now = a.trust_mtime = a.background = -1;
	a.quick = -1;
	extra = calloc((size_t)argc + 1, sizeof(*extra));
	if (!extra)
		return EXIT_FATAL;
	optind = 1;
	while ((c = cli_getopt("scan", argc, argv, "", opts)) != -1) {
		switch (c) {
		case 'd': a.db = optarg; break;
		case 'C': a.config = optarg; break;
		case 'o':
			if (plan_order_parse(optarg, &a.order) != 0) {
				cli_usage_error("scan", "unknown order '%s'", optarg);
				goto usage;
			}
			break;
		case 'j':
			a.jobs = atoi(optarg);
			if (a.jobs < 1 || a.jobs > 256) {
				cli_usage_error("scan", "--jobs wants a number from 1 to 256");
				goto usage;
			}
			break;
		case 'p': u.progress = 1; break;
		case 'P': u.progress = 0; break;
		case 'J': json = 1; break;
		case 'q': u.quiet = 1; break;
		case 's':
			a.seed = strtoull(optarg, NULL, 10);
			a.have_seed = 1;
			break;
		case 'x': a.cross_fs = 1; break;
		case 'k': a.keep_cache = 1; break;
		case 'H': a.phash = 1; break;
		case 'N': a.phash = 0; break;
		case 'W': a.phash_now = 1; break;
		case 'F': a.full = 1; break;
		case 'Q': a.quick = 1; break;
		case 'U': a.quick = 0; break;
		case 'T': a.trust_mtime = 1; break;
		case 'b': a.background = 1; break;
		case 'f': a.background = 0; break;
		case 'S': a.scheduled = 1; break;
		case 'e': extra[a.nexcludes++] = optarg; break;
		case 'L': a.files_from = optarg; break;
		case 'm':
			if (parse_size(optarg, &mem) != 0 || mem < (1u << 20)) {
				cli_usage_error("scan", "--mem wants a size of at least 1M");
				goto usage;
			}
			a.mem = mem;
			break;
		case 'h': free(extra); fputs(help, stdout); return EXIT_OK;
		default: goto usage;
		}
	}
	if (u.progress == 1 && u.quiet) {
		cli_usage_error("scan", "--progress and --quiet exclude each other");
		goto usage;
	}
	if (u.progress < 0)
		u.progress = !u.quiet && !a.scheduled && sys_is_tty(stderr);
	if (a.files_from && optind < argc) {
		cli_usage_error("scan", "--files-from names the files: no ROOT with it");
		goto usage;
	}
	a.roots = argv + optind;
	a.nroots = (size_t)(argc - optind);
	a.excludes = extra;
	a.cancel = &cancel;
	a.note = on_note;
	a.phase = on_phase;
	a.on_slow = on_slow;
	a.ctx = &u;
	if (u.progress) {
		a.progress = cli_progress;
		a.progress_ctx = (void *)"read";
	}
	sys_on_interrupt(&cancel);
	rc = scan_run(&a, &r);
	free(extra);
	if (!r.scan_id) {
		/* it stopped before the index was opened: no scan to sum up */
		if (rc == SL_E_USAGE)
			cli_usage_error("scan", "%s", r.err.msg);
		else
			cli_error("scan", &r.err);
		scan_result_free(&r);
		return rc == SL_E_USAGE ? EXIT_USAGE : EXIT_FATAL;
	}
	if (u.progress)
		fputc('\n', stderr); /* end the progress line, whatever happened */
	if (rc != SL_OK)
		cli_error("scan", &r.err);
	if (json)
		print_json_summary(&r.set.p, &r.pl, &r.st, &r, &r.diff, r.set.dbpath.p, r.scan_id,
				   r.marked, r.relinked, r.ctime_changed, r.marked_skipped, r.wall_s,
				   r.status, r.set.background ? r.background_how : NULL, r.set.full,
				   r.journal.p, r.sandbox_how, r.sandbox_read_how);
	else if (!u.quiet)
		print_summary(&r.set.p, &r.pl, &r.st, &r, &r.diff, r.set.dbpath.p, r.scan_id, r.marked,
			      r.relinked, r.ctime_changed, r.marked_skipped, r.wall_s, r.status,
			      r.set.background ? r.background_how : NULL, r.set.full);
	if (!json && !u.quiet && r.journal.len)
		fputs(r.journal.p, stdout);
	if (!json && !u.quiet && r.sandbox_how[0])
		printf("  sandbox     %s\n", r.sandbox_how);
	if (!json && !u.quiet && r.sandbox_read_how[0])
		printf("              before reading: %s\n", r.sandbox_read_how);
	if (u.quiet)
		for (i = 0; i < r.nerrors && i < MAX_SHOWN_ERRORS; i++)
			if (r.shown[i])
				fprintf(stderr, "seekless scan: %s\n", r.shown[i]);
	if (r.abandoned) {
		/* A reader is still stuck in a read, with the plan and the file
		 * table: end here, freeing nothing. */
		fflush(NULL);
		_Exit(rc == SL_E_CANCELLED ? EXIT_INTERRUPTED : EXIT_FATAL);
	}
	file_errors = r.st.errors > 0;
	scan_result_free(&r);
	if (rc == SL_E_CANCELLED)
		return EXIT_INTERRUPTED;
	if (rc != SL_OK)
		return EXIT_FATAL;
	return file_errors ? EXIT_FILE_ERRORS : EXIT_OK;
usage:
	free(extra);
	return EXIT_USAGE;
}
