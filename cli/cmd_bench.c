/* seekless bench - read the same files in several orders, cold each time,
 * and compare.  Only the read phase is timed apart (no extraction, so the
 * CPU cannot hide the disk); the metadata pass (walk + locate + plan) is
 * timed too.  Orders take turns from run to run so that none always goes
 * first, and the medians are reported. */
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app/headpath.h"
#include "app/scan.h"
#include "cli/cli.h"
#include "common/parse.h"
#include "common/sys.h"
#include "db/benchruns.h"
#include "db/db.h"
#include "indexer/pipeline.h"
#include "indexer/reader.h"

/* Every order there is but auto (which is one of them, chosen per disk):
 * path is how a photo manager or `cp -r` of sorted names reads, fs how a
 * directory lists (on NTFS, name order too). */
#define DEFAULT_ORDERS "physical,first-extent,inode,path,fs,random"

static const char help[] =
	"usage: seekless bench [--orders LIST] [--runs N] [--svg FILE] [--db PATH]\n"
	"                      [--config FILE] [--cold-cmd CMD] [--seed N] [--mem SIZE]\n"
	"                      [--cross-fs] ROOT...\n"
	"\n"
	"Read every file below ROOTs once per order and run, with a cold cache each\n"
	"time, and print per order: read wall time, MB/s, files/s, speedup over fs\n"
	"order, and the time of the metadata pass (walk + locate + plan).  Medians\n"
	"over the runs.  Each run is stored in the index's scans table (command\n"
	"'bench'); no file records are written.\n"
	"\n"
	"  --orders LIST   comma-separated, default " DEFAULT_ORDERS "\n"
	"  --runs N        runs per order (default 3)\n"
	"  --svg FILE      draw, per order, the physical offset read against time\n"
	"  --db PATH       where the runs are recorded (default: the configuration's\n"
	"                  db, else $XDG_DATA_HOME/seekless/index.db)\n"
	"  --config FILE   read this configuration file only, for its db (default:\n"
	"                  /etc/seekless.conf, then ~/.config/seekless/config)\n"
	"  --cold-cmd CMD  run CMD (through sh) before every run, e.g. a remount\n"
	"  --seed N        seed of the random order (run r uses N + r)\n"
	"  --mem SIZE      memory for file bytes, as `scan --mem`; on a fragmented\n"
	"                  disk it sets how many sweeps physical order takes\n"
	"  --cross-fs      descend into file systems mounted below a root\n"
	"  --json          the results as one JSON object (every run's times too)\n"
	"\n"
	"Cold cache: every file's pages are dropped (POSIX_FADV_DONTNEED); as root\n"
	"the kernel's caches are dropped too (sync; drop_caches), so the walk is\n"
	"cold as well.  --cold-cmd adds whatever else your setup needs.\n";

#define MAX_ORDERS 8

static double median(double *v, int n);

struct event {
	double t0, t1;
	uint64_t bytes;
};

struct result {
	double wall, meta;
	uint64_t bytes, files;
};

/* Median read time and metadata time of one order's runs. */
static void medians(const struct result *runs_of, int runs, double *wall, double *meta)
{
	double w[32], m[32];
	int r;

	for (r = 0; r < runs; r++) {
		w[r] = runs_of[r].wall;
		m[r] = runs_of[r].meta;
	}
	*wall = median(w, runs);
	*meta = median(m, runs);
}

/* The table as JSON: per order the medians and every run. */
static void print_json(const int *orders, int norders, int runs,
		       const struct result (*res)[32], uint64_t files, uint64_t bytes, int dropped,
		       double fs_wall)
{
	int k, r;

	printf("{\"files\":%" PRIu64 ",\"bytes\":%" PRIu64 ",\"runs\":%d,\"caches_dropped\":%s,"
	       "\"orders\":[", files, bytes, runs, dropped ? "true" : "false");
	for (k = 0; k < norders; k++) {
		double wall, meta;
		medians(res[k], runs, &wall, &meta);
		printf("%s{\"order\":\"%s\",\"wall_s\":%.3f,\"mb_per_s\":%.1f,\"files_per_s\":%.0f,"
		       "\"speedup_over_fs\":", k ? "," : "", plan_order_name(orders[k]), wall,
		       wall > 0 ? (double)bytes / 1e6 / wall : 0, wall > 0 ? (double)files / wall : 0);
		if (fs_wall > 0 && wall > 0)
			printf("%.3f", fs_wall / wall);
		else
			printf("null");
		printf(",\"metadata_s\":%.3f,\"run_wall_s\":[", meta);
		for (r = 0; r < runs; r++)
			printf("%s%.3f", r ? "," : "", res[k][r].wall);
		printf("]}");
	}
	printf("]}\n");
}

/* The pieces of swept groups, as they arrived (on_piece; several disks'
 * readers at once). */
struct pieces {
	uint64_t *phys;
	double *t;
	size_t cap;
	atomic_size_t n;
};

static void on_piece(void *ctx, uint64_t phys, uint64_t len, double t)
{
	struct pieces *pc = ctx;
	size_t i = atomic_fetch_add(&pc->n, 1);
	(void)len;
	if (i < pc->cap) {
		pc->phys[i] = phys;
		pc->t[i] = t;
	}
}

struct trace {
	struct pieces pc; /* swept groups: one dot per piece instead */
	struct event *ev; /* by plan position */
	uint64_t *phys;   /* disk-absolute offset by plan position, UINT64_MAX if none */
	size_t n;
	double wall;
	int have;
};

static void on_read(void *ctx, size_t pos, double t0, double t1, uint64_t bytes)
{
	struct event *ev = ctx;
	ev[pos].t0 = t0;
	ev[pos].t1 = t1;
	ev[pos].bytes = bytes;
}

static int count_only(void *ctx, const struct px_record *r, struct sl_err *err)
{
	(void)ctx, (void)r, (void)err;
	return SL_OK;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* Drop every file's pages, then (when allowed) the kernel's caches. */
static int make_cold(const struct ftab *ft, const char *cold_cmd, int *dropped)
{
	struct strbuf rel = STRBUF_INIT;
	struct sl_err e;
	size_t i;

	for (i = 0; i < ft->nfiles; i++) {
		const struct anchor *a;
		if (ft->files[i].flags & FT_FAILED)
			continue;
		sb_reset(&rel);
		a = ftab_read_at(ft, (uint32_t)i, &rel);
		if (a)
			rd_evict(a, rel.p, &e);
	}
	sb_free(&rel);
	*dropped = sys_drop_caches() == 0;
	if (!cold_cmd)
		return 0;
	/* the roots are held open (anchor.h): a remount needs them free */
	locate_release((struct ftab *)ft);
	if (sys_run(cold_cmd) != 0) {
		fprintf(stderr, "seekless bench: --cold-cmd failed: %s\n", cold_cmd);
		return -1;
	}
	if (locate_retake((struct ftab *)ft, &e) != SL_OK) {
		fprintf(stderr, "seekless bench: after --cold-cmd: %s\n", e.msg);
		return -1;
	}
	return 0;
}

static size_t n_pieces(const struct trace *tr)
{
	size_t n = atomic_load(&tr->pc.n);
	return n < tr->pc.cap ? n : tr->pc.cap;
}

/* Order k's first run as head-path dots (headpath.h): the pieces of
 * swept groups, then each located file that arrived.  *t and *phys are
 * the caller's to free.  Returns the count, or -1 (no memory). */
static long dots_of(const struct trace *tr, double **t, uint64_t **phys)
{
	size_t np = n_pieces(tr), i, n = 0;

	*t = malloc((np + tr->n + 1) * sizeof(**t));
	*phys = malloc((np + tr->n + 1) * sizeof(**phys));
	if (!*t || !*phys)
		return -1;
	for (i = 0; i < np; i++, n++) {
		(*t)[n] = tr->pc.t[i];
		(*phys)[n] = tr->pc.phys[i];
	}
	for (i = 0; i < tr->n; i++) {
		if (tr->phys[i] == UINT64_MAX || tr->ev[i].t1 <= 0)
			continue;
		(*t)[n] = tr->ev[i].t1;
		(*phys)[n++] = tr->phys[i];
	}
	return (long)n;
}

/* Every order's head path, for the picture and the index; orders without
 * a first run are left out.  Returns the count, or -1 (no memory). */
struct paths {
	struct hp_panel pn[MAX_ORDERS];
	double *t[MAX_ORDERS];
	uint64_t *phys[MAX_ORDERS];
	int of[MAX_ORDERS]; /* the order's index */
};

static int collect_paths(const int *orders, int norders, const struct trace *tr,
			 struct paths *ps)
{
	int k, n = 0;

	memset(ps, 0, sizeof(*ps));
	for (k = 0; k < norders; k++) {
		long d;
		if (!tr[k].have)
			continue;
		d = dots_of(&tr[k], &ps->t[n], &ps->phys[n]);
		ps->pn[n].order = plan_order_name(orders[k]);
		ps->pn[n].wall = tr[k].wall;
		ps->pn[n].t = ps->t[n];
		ps->pn[n].phys = ps->phys[n];
		ps->pn[n].n = d > 0 ? (size_t)d : 0;
		ps->pn[n].pieces = n_pieces(&tr[k]) > 0;
		ps->of[n++] = k;
		if (d < 0)
			return -1;
	}
	return n;
}

static void paths_free(struct paths *ps)
{
	int k;
	for (k = 0; k < MAX_ORDERS; k++) {
		free(ps->t[k]);
		free(ps->phys[k]);
	}
}

static int parse_orders(const char *list, int *orders, int *n)
{
	char buf[256], *save = NULL, *tok;
	snprintf(buf, sizeof(buf), "%s", list);
	*n = 0;
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (*n == MAX_ORDERS || plan_order_parse(tok, &orders[*n]) != 0 ||
		    orders[*n] == PLAN_AUTO)
			return -1;
		(*n)++;
	}
	return *n ? 0 : -1;
}

/* The medians side by side, as a table. */
static void print_table(const int *orders, int norders, int runs, struct result (*res)[32],
			uint64_t files, uint64_t bytes, int dropped, double fs_wall)
{
	char b[32];
	int k;

	cli_fmt_bytes(bytes, b, sizeof(b));
	printf("seekless bench: %" PRIu64 " file%s, %s; median of %d cold run%s per order "
	       "(%s)\n",
	       files, files == 1 ? "" : "s", b, runs, runs > 1 ? "s" : "",
	       dropped ? "pages dropped per file and kernel caches dropped"
		       : "pages dropped per file; not root, so kernel caches kept");
	/* "first-extent" is the longest name */
	printf("%-12s %9s %9s %9s %9s %11s\n", "order", "wall s", "MB/s", "files/s",
	       "speedup", "metadata s");
	for (k = 0; k < norders; k++) {
		double wall, meta;
		medians(res[k], runs, &wall, &meta);
		printf("%-12s %9.2f %9.1f %9.0f ", plan_order_name(orders[k]), wall,
		       wall > 0 ? (double)bytes / 1e6 / wall : 0, wall > 0 ? (double)files / wall : 0);
		if (fs_wall > 0 && wall > 0)
			printf("%8.2fx", fs_wall / wall);
		else
			printf("%9s", "-");
		printf(" %11.2f\n", meta);
	}
}

/* What the runs share. */
struct bench {
	struct prep base;           /* the first, warm walk: what to make cold */
	struct db *db;
	const char *dbpath, *cold_cmd;
	atomic_int *cancel;
	int cross_fs, tty, dropped;
	uint64_t seed, files, bytes;
	size_t mem;                 /* --mem, 0 the default */
	struct result (*res)[32];   /* [order][run] */
	struct trace *tr;           /* [order]: the first run's, for the picture */
	int64_t first_scan, last_scan; /* the runs' rows of scans */
};

/* One cold run in one order: the files made cold, then walked, located
 * and planned (timed as the metadata pass) and read in that order; stored
 * as a scan of kind "bench".  Returns the run's status (e says why). */
static int one_run(struct bench *B, int r, int oi, int order, struct sl_err *e)
{
	int rc;
	struct prep p;
	struct plan pl;
	struct px_opts po;
	struct px_stats st;
	struct event *ev = NULL;
	struct db_scan_end end;
	double t;
	size_t i;

	memset(&p, 0, sizeof(p));
	memset(&pl, 0, sizeof(pl));
	memset(&po, 0, sizeof(po));
	memset(&st, 0, sizeof(st));
	po.mem_budget = B->mem;
	if (make_cold(&B->base.ft, B->cold_cmd, &B->dropped) != 0)
		return SL_FAIL(e, SL_E_RESOURCE, 0, "the cold command failed");
	p.roots = B->base.roots; /* borrowed */
	p.anchors = B->base.anchors;
	p.nroots = B->base.nroots;
	t = sys_now();
	rc = prep_walk_locate(&p, B->cross_fs, NULL, B->dbpath, B->cancel, e);
	if (rc == SL_OK)
		rc = prep_plan(&p, order, B->seed + (uint64_t)r, po.mem_budget, &pl, e);
	B->res[oi][r].meta = sys_now() - t;
	if (rc == SL_OK) {
		ev = calloc(pl.n ? pl.n : 1, sizeof(*ev));
		po.read_only = 1;
		po.on_read = on_read;
		po.on_read_ctx = ev;
		if (r == 0 && !B->tr[oi].have) {
			size_t g, cap = 0;
			for (g = 0; g < pl.ngroups; g++)
				cap += pl.groups[g].nops;
			if (cap) {
				struct pieces *pc = &B->tr[oi].pc;
				pc->phys = malloc(cap * sizeof(*pc->phys));
				pc->t = malloc(cap * sizeof(*pc->t));
				pc->cap = pc->phys && pc->t ? cap : 0;
				atomic_store(&pc->n, 0);
				po.on_piece = on_piece;
				po.on_piece_ctx = pc;
			}
		}
		po.cancel = B->cancel;
		if (B->tty) {
			po.progress = cli_progress;
			po.progress_ctx = (void *)plan_order_name(order);
		}
		rc = db_scan_begin(B->db, "bench", plan_order_name(order),
				   (const char *const *)p.roots, p.nroots, 0, e);
		if (rc == SL_OK) {
			B->last_scan = db_scan_id(B->db);
			if (!B->first_scan)
				B->first_scan = B->last_scan;
		}
		if (rc == SL_OK && ev)
			rc = px_run(&p.ft, &pl, &po, count_only, NULL, &st, e);
		if (st.abandoned) {
			/* a reader is stuck with p and pl (px_run) */
			cli_error("bench", e);
			db_close(B->db);
			fflush(NULL);
			_Exit(EXIT_INTERRUPTED);
		}
	}
	if (rc == SL_OK) {
		B->res[oi][r].wall = st.read_s;
		B->res[oi][r].bytes = st.bytes;
		B->res[oi][r].files = st.files;
		B->files = st.files;
		B->bytes = st.bytes;
		scan_store_devices(B->db, &p, &pl, &st, NULL, NULL);
		memset(&end, 0, sizeof(end));
		end.status = "ok";
		end.files = st.files;
		end.bytes = st.bytes;
		end.walk_s = p.walk_s;
		end.locate_s = p.locate_s;
		end.read_s = st.read_s;
		end.wall_s = B->res[oi][r].meta + st.read_s;
		rc = db_scan_end(B->db, &end, e);
		if (r == 0 && !B->tr[oi].have && ev) {
			B->tr[oi].ev = ev;
			ev = NULL;
			B->tr[oi].n = pl.n;
			B->tr[oi].wall = st.read_s;
			B->tr[oi].phys = malloc((pl.n ? pl.n : 1) * sizeof(uint64_t));
			for (i = 0; B->tr[oi].phys && i < pl.n; i++) {
				const struct ft_file *f = &p.ft.files[pl.seq[i]];
				/* a swept group's files are drawn piece by piece */
				int swept = pl.groups[pl.dev_group[f->dev]].ops != NULL;
				B->tr[oi].phys[i] = f->flags & FT_LOCATED && !swept
					? p.devs[f->dev].part_start + f->phys : UINT64_MAX;
			}
			B->tr[oi].have = B->tr[oi].phys != NULL;
		}
		fprintf(stderr, "%srun %d  %-9s read %7.2f s  metadata %5.2f s\n",
			B->tty ? "\r" : "", r + 1,
			plan_order_name(order), st.read_s, B->res[oi][r].meta);
	} else {
		cli_error("bench", e);
	}
	free(ev);
	px_stats_free(&st);
	plan_free(&pl);
	p.roots = NULL; /* borrowed */
	p.anchors = NULL;
	p.nroots = 0;
	prep_free(&p);
	return rc;
}

/* Keep the bench in the index for the report (benchruns.h): the medians
 * and each order's head path, thinned to what its picture shows.  A bench
 * whose results cannot be stored still printed them: said, not fatal. */
static void store(struct bench *B, const int *orders, int runs, struct result (*res)[32],
		  double fs_wall, struct paths *ps, int np)
{
	struct db_bench_order bo[MAX_ORDERS];
	struct db_bench b;
	struct strbuf roots = STRBUF_INIT;
	struct sl_err e;
	size_t i;
	int k;

	memset(&b, 0, sizeof(b));
	sb_addc(&roots, '[');
	for (i = 0; i < B->base.nroots; i++) {
		if (i)
			sb_addc(&roots, ',');
		sb_add_json(&roots, B->base.roots[i], strlen(B->base.roots[i]));
	}
	sb_addc(&roots, ']');
	for (k = 0; k < np; k++) {
		int oi = ps->of[k];
		double wall, meta;
		long kept = hp_thin(ps->t[k], ps->phys[k], ps->pn[k].n, ps->pn[k].wall);
		medians(res[oi], runs, &wall, &meta);
		memset(&bo[k], 0, sizeof(bo[k]));
		bo[k].order = plan_order_name(orders[oi]);
		bo[k].wall_s = wall;
		bo[k].metadata_s = meta;
		bo[k].mb_per_s = wall > 0 ? (double)B->bytes / 1e6 / wall : 0;
		bo[k].files_per_s = wall > 0 ? (double)B->files / wall : 0;
		bo[k].speedup = fs_wall > 0 && wall > 0 ? fs_wall / wall : 0;
		bo[k].t = ps->t[k];
		bo[k].phys = ps->phys[k];
		bo[k].n = kept < 0 ? 0 : (size_t)kept;
		bo[k].pieces = ps->pn[k].pieces;
		if (kept >= 0)
			ps->pn[k].n = (size_t)kept;
	}
	b.roots = roots.oom ? "[]" : roots.p;
	b.files = (int64_t)B->files;
	b.bytes = (int64_t)B->bytes;
	b.runs = runs;
	b.caches_dropped = B->dropped;
	b.first_scan = B->first_scan;
	b.last_scan = B->last_scan;
	b.orders = bo;
	b.norders = (size_t)np;
	if (db_bench_put(B->db, &b, &e) != SL_OK)
		cli_error("bench", &e);
	sb_free(&roots);
}

int cmd_bench(int argc, char **argv)
{
	static const struct option opts[] = {
		{"orders", required_argument, NULL, 'o'}, {"runs", required_argument, NULL, 'r'},
		{"svg", required_argument, NULL, 's'},    {"db", required_argument, NULL, 'd'},
		{"cold-cmd", required_argument, NULL, 'c'}, {"seed", required_argument, NULL, 'S'},
		{"cross-fs", no_argument, NULL, 'x'},     {"help", no_argument, NULL, 'h'},
		{"json", no_argument, NULL, 'j'},     {"mem", required_argument, NULL, 'm'},
		{"config", required_argument, NULL, 'C'},
		{NULL, 0, NULL, 0},
	};
	static atomic_int cancel;
	int orders[MAX_ORDERS], norders = 0, runs = 3, cross_fs = 0, json = 0, c, r, k, rc = SL_OK;
	int tty = sys_is_tty(stderr);
	const char *svg = NULL, *dbopt = NULL, *config = NULL, *cold_cmd = NULL;
	uint64_t seed = 1, files = 0, bytes = 0, mem = 0;
	struct result res[MAX_ORDERS][32];
	struct trace tr[MAX_ORDERS];
	struct strbuf dbpath = STRBUF_INIT;
	struct bench B;
	struct sl_err e;
	int dropped = 0, fs_index = -1, np = 0;
	struct paths ps;

	memset(&ps, 0, sizeof(ps));
	memset(res, 0, sizeof(res));
	memset(tr, 0, sizeof(tr));
	memset(&B, 0, sizeof(B));
	parse_orders(DEFAULT_ORDERS, orders, &norders);
	optind = 1;
	while ((c = cli_getopt("bench", argc, argv, "", opts)) != -1) {
		switch (c) {
		case 'o':
			if (parse_orders(optarg, orders, &norders) != 0) {
				char names[128] = "";
				int i;
				for (i = 0; i < PLAN_NORDERS; i++)
					if (i != PLAN_AUTO)
						snprintf(names + strlen(names),
							 sizeof(names) - strlen(names), "%s%s",
							 *names ? ", " : "", plan_order_name(i));
				cli_usage_error("bench", "--orders wants a comma-separated list of %s",
						names);
				return EXIT_USAGE;
			}
			break;
		case 'r':
			runs = atoi(optarg);
			if (runs < 1 || runs > 32) {
				cli_usage_error("bench", "--runs wants 1 to 32");
				return EXIT_USAGE;
			}
			break;
		case 's': svg = optarg; break;
		case 'd': dbopt = optarg; break;
		case 'C': config = optarg; break;
		case 'c': cold_cmd = optarg; break;
		case 'S': seed = strtoull(optarg, NULL, 10); break;
		case 'x': cross_fs = 1; break;
		case 'j': json = 1; break;
		case 'm':
			if (parse_size(optarg, &mem) != 0 || mem < (1u << 20)) {
				cli_usage_error("bench", "--mem wants a size of at least 1M");
				return EXIT_USAGE;
			}
			break;
		case 'h': fputs(help, stdout); return EXIT_OK;
		default: return EXIT_USAGE;
		}
	}
	if (optind >= argc) {
		cli_usage_error("bench", "no ROOT given");
		return EXIT_USAGE;
	}
	rc = prep_roots(&B.base, argv + optind, (size_t)(argc - optind), NULL, cross_fs, &e);
	if (rc != SL_OK) {
		if (rc == SL_E_USAGE)
			cli_usage_error("bench", "%s", e.msg);
		else
			cli_error("bench", &e);
		prep_free(&B.base);
		return rc == SL_E_USAGE ? EXIT_USAGE : EXIT_FATAL;
	}
	if ((rc = cli_index_path("bench", dbopt, config, &dbpath)) != EXIT_OK) {
		prep_free(&B.base);
		return rc;
	}
	sys_raise_fd_limit();
	sys_on_interrupt(&cancel);
	rc = db_open(dbpath.p, DB_CREATE, &B.db, &e);
	/* one warm walk to learn which files to make cold */
	if (rc == SL_OK)
		rc = prep_walk_locate(&B.base, cross_fs, NULL, dbpath.p, &cancel, &e);
	if (rc != SL_OK) {
		cli_error("bench", &e);
		goto out;
	}
	for (k = 0; k < norders; k++)
		if (orders[k] == PLAN_FS)
			fs_index = k;

	B.dbpath = dbpath.p;
	B.cold_cmd = cold_cmd;
	B.cancel = &cancel;
	B.cross_fs = cross_fs;
	B.tty = tty;
	B.seed = seed;
	B.mem = (size_t)mem;
	B.res = res;
	B.tr = tr;
	for (r = 0; r < runs && rc == SL_OK; r++)
		for (k = 0; k < norders && rc == SL_OK; k++)
			rc = one_run(&B, r, (k + r) % norders, orders[(k + r) % norders], &e);
	files = B.files;
	bytes = B.bytes;
	dropped = B.dropped;
	if (rc == SL_OK) {
		double fs_wall = 0;
		if (fs_index >= 0) {
			double meta;
			medians(res[fs_index], runs, &fs_wall, &meta);
		}
		if (json) {
			print_json(orders, norders, runs, res, files, bytes, dropped, fs_wall);
			goto svg_out;
		}
		print_table(orders, norders, runs, res, files, bytes, dropped, fs_wall);
svg_out:
		np = collect_paths(orders, norders, tr, &ps);
		if (np < 0) {
			fprintf(stderr, "seekless bench: out of memory for the head's path\n");
			rc = SL_E_NOMEM;
		}
		if (rc == SL_OK && svg) {
			struct strbuf pic = STRBUF_INIT;
			FILE *f = sys_fopen(svg, "w");
			hp_svg(&pic, ps.pn, (size_t)np);
			if (!f || pic.oom || fwrite(pic.p, 1, pic.len, f) != pic.len) {
				fprintf(stderr, "seekless bench: cannot write %s\n", svg);
				rc = SL_E_IO;
			}
			if (f && fclose(f) != 0)
				rc = SL_E_IO;
			if (rc == SL_OK && !json)
				printf("picture: %s\n", svg);
			sb_free(&pic);
		}
		if (rc == SL_OK)
			store(&B, orders, runs, res, fs_wall, &ps, np);
	}
out:
	for (k = 0; k < MAX_ORDERS; k++) {
		free(tr[k].ev);
		free(tr[k].phys);
		free(tr[k].pc.phys);
		free(tr[k].pc.t);
	}
	paths_free(&ps);
	prep_free(&B.base);
	db_close(B.db);
	sb_free(&dbpath);
	return rc == SL_OK ? EXIT_OK : EXIT_FATAL;
}
