/* The whole read -> extract -> store path on a real tree: one record per
 * file with the right bytes and hash, bounded memory for big files, files
 * that vanish or fail between plan and read, cancellation, sink failure. */
#include <sys/stat.h>
#include <xxhash.h>

#include "common/sys.h"
#include "indexer/pipeline.h"
#include "indexer/reader.h"
#include "scanner/extents.h"
#include "scanner/locate.h"
#include "scanner/sched.h"
#include "scanner/walk.h"
#include "tests/unit/test.h"

#define NSMALL 60
#define BIG (40u << 20)

static char *dir;

struct got {
	char path[512];
	uint64_t size;
	char hash[33];
	char quick_hash[33];
	int err_code;
	char error[384];
	int read;
	char format[16];
	char warnings[256];
	uint64_t ino;
};

struct sink_state {
	struct got *recs;
	size_t n, cap;
	size_t fail_after; /* 0: never */
};

static int sink(void *ctx, const struct px_record *r, struct sl_err *err)
{
	struct sink_state *s = ctx;
	struct got *g;
	if (s->fail_after && s->n >= s->fail_after)
		return SL_FAIL(err, SL_E_DB, 0, "database: disk is full (test)");
	sl_grow(&s->recs, &s->cap, s->n + 1, sizeof(*s->recs));
	g = &s->recs[s->n++];
	snprintf(g->path, sizeof(g->path), "%s", r->path);
	g->size = r->size;
	memcpy(g->hash, r->hash, sizeof(g->hash));
	memcpy(g->quick_hash, r->quick_hash, sizeof(g->quick_hash));
	g->err_code = r->err_code;
	snprintf(g->error, sizeof(g->error), "%s", r->error);
	g->read = r->read;
	snprintf(g->format, sizeof(g->format), "%s", r->meta.format);
	snprintf(g->warnings, sizeof(g->warnings), "%s", r->meta.warnings);
	g->ino = r->ino;
	return SL_OK;
}

static const struct got *find(const struct sink_state *s, const char *suffix)
{
	size_t i, n = strlen(suffix);
	for (i = 0; i < s->n; i++) {
		size_t l = strlen(s->recs[i].path);
		if (l >= n && strcmp(s->recs[i].path + l - n, suffix) == 0)
			return &s->recs[i];
	}
	return NULL;
}

static void ref_hash(const char *path, char out[33])
{
	size_t len = 0;
	unsigned char *d = t_read(path, &len);
	XXH128_canonical_t c;
	int i;
	XXH128_canonicalFromHash(&c, XXH3_128bits(d, len));
	for (i = 0; i < 16; i++)
		snprintf(out + 2 * i, 3, "%02x", c.digest[i]);
	free(d);
}

/* The partial hash as extract.h defines it, by xxHash itself: the size
 * (8 bytes little-endian), the first 64 KiB, the last 64 KiB past them. */
static void ref_quick(const char *path, char out[33])
{
	size_t len = 0, head, tail;
	unsigned char *d = t_read(path, &len), le[8];
	XXH3_state_t *st = XXH3_createState();
	XXH128_canonical_t c;
	int i;

	for (i = 0; i < 8; i++)
		le[i] = (unsigned char)((uint64_t)len >> (8 * i));
	head = len < (64u << 10) ? len : 64u << 10;
	tail = len <= (64u << 10) ? len : len - (64u << 10) > (64u << 10) ? len - (64u << 10)
									      : 64u << 10;
	XXH3_128bits_reset(st);
	XXH3_128bits_update(st, le, 8);
	XXH3_128bits_update(st, d, head);
	XXH3_128bits_update(st, d + tail, len - tail);
	XXH128_canonicalFromHash(&c, XXH3_128bits_digest(st));
	for (i = 0; i < 16; i++)
		snprintf(out + 2 * i, 3, "%02x", c.digest[i]);
	XXH3_freeState(st);
	free(d);
}

static void build(void)
{
	char p[4096];
	int i;
	dir = t_tmpdir("pipe");
	snprintf(p, sizeof(p), "%s/sub", dir);
	t_mkdir(p);
	for (i = 0; i < NSMALL; i++) {
		size_t n = (size_t)(i * 7919 % 300000);
		unsigned char *d = t_bytes(n, (uint64_t)i);
		snprintf(p, sizeof(p), "%s/%s%02d.bin", dir, i % 2 ? "sub/" : "", i);
		t_write(p, d, n);
		free(d);
	}
	{
		unsigned char *d = t_bytes(BIG, 99);
		snprintf(p, sizeof(p), "%s/big.bin", dir);
		t_write(p, d, BIG);
		free(d);
	}
	snprintf(p, sizeof(p), "%s/empty.jpg", dir);
	t_write(p, "", 0);
	snprintf(p, sizeof(p), "%s/notjpeg.jpg", dir);
	t_write(p, "\xff\xd8\xff\xe0 not really", 16);
	snprintf(p, sizeof(p), "%s/vanishes.bin", dir);
	t_write(p, "soon gone", 9);
}

/* dir walked, located and planned, plus what a run needs. */
struct fixture {
	struct ftab ft;
	struct dev_info *devs;
	struct plan pl;
	struct px_opts o;
	struct px_stats st;
	struct sink_state s;
	struct sl_err e;
};

static void fx_setup(struct fixture *x)
{
	struct walk_opts wo = {0};
	struct walk_stats ws;
	struct locate_stats ls;
	memset(x, 0, sizeof(*x));
	memset(&ws, 0, sizeof(ws));
	ftab_init(&x->ft);
	CHECK_INT(t_walk_root(&x->ft, dir, &wo, &ws, &x->e), SL_OK);
	CHECK_INT(locate_all(&x->ft, &x->devs, &ls, NULL, &x->e), SL_OK);
	CHECK_INT(plan_build(&x->ft, x->devs, PLAN_AUTO, 1, &x->pl, &x->e), SL_OK);
	x->o.keep_cache = 1;
}

static int fx_run(struct fixture *x)
{
	px_stats_free(&x->st);
	x->s.n = 0;
	return px_run(&x->ft, &x->pl, &x->o, sink, &x->s, &x->st, &x->e);
}

static void fx_free(struct fixture *x)
{
	free(x->s.recs);
	px_stats_free(&x->st);
	plan_free(&x->pl);
	free(x->devs);
	ftab_free(&x->ft);
}

static void test_full_run(void)
{
	struct fixture x;
	struct sink_state *s = &x.s;
	char p[4096], ref[33];
	const struct got *g;
	int i;

	fx_setup(&x);
	snprintf(p, sizeof(p), "%s/vanishes.bin", dir);
	t_unlink(p); /* between plan and read */
	x.o.jobs = 3;
	x.o.mem_budget = 4u << 20; /* the 40 MiB file must stream */
	x.o.chunk = 256u << 10;
	CHECK_INT(fx_run(&x), SL_OK);
	CHECK_INT(s->n, NSMALL + 4);
	CHECK_INT(x.st.files, NSMALL + 4);
	CHECK_INT(x.st.errors, 2); /* vanished, not a JPEG */
	CHECK(x.st.peak_inflight <= (4u << 20));
	CHECK(x.st.peak_inflight > 0);
	CHECK_INT(x.st.jobs, 3);
	for (i = 0; i < NSMALL; i++) {
		snprintf(p, sizeof(p), "/%s%02d.bin", i % 2 ? "sub/" : "", i);
		g = find(s, p);
		CHECK(g != NULL);
		if (!g)
			continue;
		CHECK_INT(g->size, (uint64_t)(i * 7919 % 300000));
		snprintf(p, sizeof(p), "%s/%s%02d.bin", dir, i % 2 ? "sub/" : "", i);
		ref_hash(p, ref);
		CHECK_STR(g->hash, ref);
		CHECK_INT(g->err_code, SL_OK);
	}
	g = find(s, "/big.bin");
	CHECK(g && g->size == BIG && g->read);
	snprintf(p, sizeof(p), "%s/big.bin", dir);
	ref_hash(p, ref);
	CHECK(g && strcmp(g->hash, ref) == 0);
	g = find(s, "/vanishes.bin");
	CHECK(g && g->err_code == SL_E_IO && !g->read);
	CHECK(g && strstr(g->error, "open: No such file or directory") != NULL);
	g = find(s, "/notjpeg.jpg");
	CHECK(g && g->err_code == SL_E_CORRUPT && g->read && strcmp(g->format, "jpeg") == 0);
	CHECK(g && strncmp(g->error, "jpeg: ", 6) == 0);
	g = find(s, "/empty.jpg");
	CHECK(g && g->size == 0 && g->err_code == 0);
	CHECK(g && strcmp(g->hash, "99aa06d3014798d86001c324468d497f") == 0);

	snprintf(p, sizeof(p), "%s/vanishes.bin", dir);
	t_write(p, "soon gone", 9);
	fx_free(&x);
}

/* Whether the file at path is still, as the platform tells it, the file x's
 * walk and stat pass saw (same inode and birth time): a rewrite in place
 * keeps it so on Linux and NTFS, but Wine's birth time follows the ctime,
 * and then the scan rightly refuses it ("replaced since the walk"). */
static int kept_identity(const struct fixture *x, const char *path)
{
	const char *name;
	struct anchor *a = t_anchor(path, &name);
	struct ext_result r;
	struct sl_err e;
	size_t i;
	int same = 0;

	if (ext_stat(a, name, &r, &e) == SL_OK)
		for (i = 0; i < x->ft.nfiles; i++)
			if (strcmp(ftab_str(&x->ft, x->ft.files[i].name), name) == 0)
				same = x->ft.files[i].ino == r.ino &&
				       (!r.btime_ns || x->ft.files[i].btime_ns == r.btime_ns);
	anchor_free(a);
	return same;
}

/* Files that change between the plan and the read: each record describes
 * the file as it was read (size, hash, identity); a file replaced by
 * another is not read at all (the diff judged the other one): an error,
 * and the next scan looks again. */
static void test_changed_before_read(void)
{
	struct fixture x;
	char grow[4096], shrink[4096], repl[4096], tmp[4096], ref[33];
	unsigned char *d;
	const struct got *g;
	uint64_t old_ino = 0;
	size_t i;

	snprintf(grow, sizeof(grow), "%s/grows.bin", dir);
	snprintf(shrink, sizeof(shrink), "%s/shrinks.bin", dir);
	snprintf(repl, sizeof(repl), "%s/replaced.bin", dir);
	snprintf(tmp, sizeof(tmp), "%s/replaced.tmp", dir);
	d = t_bytes(200000, 5);
	t_write(grow, d, 1000);
	t_write(shrink, d, 200000);
	t_write(repl, d, 5000);
	fx_setup(&x);
	for (i = 0; i < x.ft.nfiles; i++)
		if (strcmp(ftab_str(&x.ft, x.ft.files[i].name), "replaced.bin") == 0)
			old_ino = x.ft.files[i].ino;
	/* between plan and read */
	t_rewrite(grow, d, 150000);
	t_rewrite(shrink, d, 10);
	t_write(tmp, d + 7, 6000); /* a new file in the old one's place */
	t_unlink(repl);             /* (Windows' rename does not replace) */
	CHECK_INT(rename(tmp, repl), 0);
	x.o.jobs = 2;
	CHECK_INT(fx_run(&x), SL_OK);
	g = find(&x.s, "/grows.bin");
	ref_hash(grow, ref);
	if (kept_identity(&x, grow))
		CHECK(g && g->size == 150000 && g->read && strcmp(g->hash, ref) == 0);
	else
		CHECK(g && !g->read && strcmp(g->error, "open: replaced since the walk") == 0);
	g = find(&x.s, "/shrinks.bin");
	ref_hash(shrink, ref);
	if (kept_identity(&x, shrink))
		CHECK(g && g->size == 10 && g->read && strcmp(g->hash, ref) == 0);
	else
		CHECK(g && !g->read && strcmp(g->error, "open: replaced since the walk") == 0);
	g = find(&x.s, "/replaced.bin");
	CHECK(old_ino != 0);
	CHECK(g && g->err_code == SL_E_IO && !g->read && g->hash[0] == '\0' &&
	      strcmp(g->error, "open: replaced since the walk") == 0);
	t_unlink(grow);
	t_unlink(shrink);
	t_unlink(repl);
	free(d);
	fx_free(&x);
}

static atomic_int reads;

static void count_reads(void *ctx, size_t pos, double t0, double t1, uint64_t bytes)
{
	(void)pos, (void)t0, (void)t1, (void)bytes;
	if (atomic_fetch_add(&reads, 1) + 1 == 10)
		atomic_store((atomic_int *)ctx, 1);
}

static void test_faults(void)
{
	struct fixture x;
	size_t i, io = 0;

	fx_setup(&x);
	x.o.jobs = 2;
	/* EIO on one read: that file's record says so, the others are fine */
	rd_inject(RD_OP_READ, RD_FAULT_EIO, 5);
	CHECK_INT(fx_run(&x), SL_OK);
	for (i = 0; i < x.s.n; i++)
		if (x.s.recs[i].err_code == SL_E_IO) {
			io++;
			CHECK(strstr(x.s.recs[i].error, "Input/output error") != NULL);
			CHECK(x.s.recs[i].hash[0] == '\0');
		}
	CHECK_INT(io, 1);
	CHECK_INT(x.s.n, NSMALL + 4);

	/* EMFILE: the run stops with a resource error, and says where */
	rd_inject(RD_OP_OPEN, RD_FAULT_EMFILE, 3);
	CHECK_INT(fx_run(&x), SL_E_RESOURCE);
	CHECK(strstr(x.e.msg, "Too many open files") != NULL);
	CHECK(x.s.n < NSMALL + 4);

	/* the kernel out of memory: the same clean stop, saying so */
	rd_inject(RD_OP_OPEN, RD_FAULT_ENOMEM, 2);
	CHECK_INT(fx_run(&x), SL_E_RESOURCE);
	CHECK(strstr(x.e.msg, strerror(ENOMEM)) != NULL);
	CHECK(x.s.n < NSMALL + 4);

	/* the sink fails (a full database): stop, report the sink's error */
	x.s.fail_after = 10;
	CHECK_INT(fx_run(&x), SL_E_DB);
	CHECK(strstr(x.e.msg, "disk is full (test)") != NULL);
	CHECK_INT(x.s.n, 10);
	CHECK_INT(x.st.files, 10);

	/* cancelled before it starts: nothing read, reported as cancelled */
	{
		atomic_int cancel;
		atomic_init(&cancel, 1);
		x.s.fail_after = 0;
		x.o.cancel = &cancel;
		CHECK_INT(fx_run(&x), SL_E_CANCELLED);
		CHECK_INT(x.st.bytes, 0);
		/* cancelled in the middle (as SIGINT would, here after the 10th
		 * file read): readers stop, what was read is still stored */
		atomic_store(&cancel, 0);
		reads = 0;
		x.o.on_read = count_reads;
		x.o.on_read_ctx = &cancel;
		CHECK_INT(fx_run(&x), SL_E_CANCELLED);
		CHECK(strstr(x.e.msg, "interrupted") != NULL);
		/* each reader (up to 4) may finish the file it holds */
		CHECK(x.s.n >= 10 && x.s.n <= 10 + 4);
		CHECK_INT(x.st.files, x.s.n);
		CHECK(x.st.bytes > 0);
		x.o.cancel = NULL;
		x.o.on_read = NULL;
	}
	fx_free(&x);
}

static void test_failed_entries(void)
{
	struct fixture x;

	fx_setup(&x);
	plan_free(&x.pl);
	/* as if locate had failed on the first file */
	ftab_fail(&x.ft, 0, "open: Permission denied", &x.e);
	CHECK_INT(plan_build(&x.ft, x.devs, PLAN_INODE, 1, &x.pl, &x.e), SL_OK);
	CHECK_INT(fx_run(&x), SL_OK);
	CHECK_INT(x.s.n, NSMALL + 4);
	CHECK_INT(x.st.errors, 2); /* the failed entry and the bad JPEG */
	fx_free(&x);
}

/* The extent schedule followed on real files.  Each file's bytes are cut
 * into runs laid out at random over a made-up disk of 900 GiB (reading
 * goes through the file, so any layout gives the file's bytes; only the
 * order changes), and the big one into 300 runs in reverse order across
 * it, among the others: the worst case for memory.  Whatever the budget
 * and the number of extractors, every record's size and hash must be the
 * file's, the budget must hold, and the run must end (a reader waiting
 * for memory the schedule holds would hang it). */
static uint64_t sw_rng;

static uint64_t sw_rnd(void)
{
	return t_rnd(&sw_rng);
}

static void fragment(struct fixture *x, size_t mem, uint64_t seed, struct sched_stats *sum)
{
	struct ft_run runs[300];
	struct plan_mem m;
	size_t i, g;

	sw_rng = seed;
	for (i = 0; i < x->ft.ndevs; i++) { /* as a disk with extent maps */
		x->ft.devs[i].extents = 1;
		x->ft.devs[i].by = FT_BY_MAP;
		x->devs[i].rotational = 1;
	}
	for (i = 0; i < x->ft.nfiles; i++) {
		struct ft_file *f = &x->ft.files[i];
		const char *name = ftab_str(&x->ft, f->name);
		int big = f->size >= (8u << 20), marked = strcmp(name, "10.bin") == 0;
		uint64_t at = 0;
		size_t k, n;

		if ((f->flags & (FT_FAILED | FT_SKIP | FT_DIR)) || f->size == 0)
			continue;
		n = big ? 300 : marked ? 4 : 1 + (size_t)(sw_rnd() % 6);
		for (k = 0; k < n && at < f->size; k++) {
			uint64_t left = f->size - at, len = left;
			if (k + 1 < n && left > 8192)
				len = 4096 + sw_rnd() % (2 * left / (n - k));
			if (len > left)
				len = left;
			runs[k].logical = at;
			runs[k].len = len;
			runs[k].phys = big || marked ? (uint64_t)(n - k) * (3ull << 30)
					: (sw_rnd() % 900000) << 20;
			at += len;
		}
		f->phys = runs[0].phys;
		f->flags |= FT_LOCATED;
		CHECK_INT(ftab_set_runs(&x->ft, (uint32_t)i, runs, k, &x->e), SL_OK);
	}
	plan_free(&x->pl);
	CHECK_INT(plan_build(&x->ft, x->devs, PLAN_PHYSICAL, 1, &x->pl, &x->e), SL_OK);
	px_mem(mem, &m);
	CHECK_INT(plan_schedule(&x->pl, &x->ft, x->devs, &m, &x->e), SL_OK);
	for (g = 0; g < x->pl.ngroups; g++) {
		const struct sched_stats *st = &x->pl.groups[g].sched;
		CHECK(x->pl.groups[g].ops != NULL);
		sum->spread += st->spread;
		sum->ahead += st->ahead;
		sum->back += st->back;
		sum->whole += st->whole;
	}
}

static void test_sweep(void)
{
	static const size_t mems[] = {1u << 20, 3u << 20, 64u << 20};
	struct sched_stats sum;
	char p[4096], ref[33];
	int round;

	memset(&sum, 0, sizeof(sum));
	for (round = 0; round < 6; round++) {
		size_t mem = mems[round % 3], i, g;
		struct fixture x;
		unsigned char *d = NULL;
		uint64_t unswept = 0;
		int kept;

		fx_setup(&x);
		fragment(&x, mem, 100 + (uint64_t)round, &sum);
		if (round == 1 || round == 2) { /* a spread file grows after the plan */
			d = t_bytes(90000, 77);
			snprintf(p, sizeof(p), "%s/10.bin", dir);
			t_rewrite(p, d, 90000);
		}
		x.o.mem_budget = mem;
		x.o.jobs = 1 + round % 3;
		kept = !d || kept_identity(&x, p);
		CHECK_INT(fx_run(&x), SL_OK);
		CHECK(x.st.peak_inflight <= mem);
		for (g = 0; g < x.st.ngroups; g++) {
			CHECK_INT(x.st.groups[g].swept, 1);
			unswept += x.st.groups[g].unswept;
		}
		CHECK_INT(x.s.n, NSMALL + 4);
		for (i = 0; i < x.s.n; i++) {
			const struct got *r = &x.s.recs[i];
			struct stat sb;
			size_t l = strlen(r->path);
			int notjpeg = l > 12 && strcmp(r->path + l - 12, "/notjpeg.jpg") == 0;
			if (!kept && l > 7 && strcmp(r->path + l - 7, "/10.bin") == 0) {
				CHECK_STR(r->error, "open: replaced since the walk");
				continue;
			}
			CHECK(r->read);
			CHECK_INT(r->err_code, notjpeg ? SL_E_CORRUPT : SL_OK);
			if (r->err_code && !notjpeg)
				fprintf(stderr, "  round %d: %s: %s\n", round, r->path, r->error);
			CHECK_INT(stat(r->path, &sb), 0);
			CHECK_INT(r->size, (uint64_t)sb.st_size);
			ref_hash(r->path, ref);
			if (strcmp(r->hash, ref) != 0)
				fprintf(stderr, "  round %d (mem %zu): %s\n", round, mem, r->path);
			CHECK_STR(r->hash, ref);
		}
		CHECK_INT(unswept, d && kept ? 1u : 0u);
		if (d) { /* as build() made it */
			free(d);
			d = t_bytes(10 * 7919 % 300000, 10);
			t_write(p, d, 10 * 7919 % 300000);
			free(d);
		}
		fx_free(&x);
	}
	/* the layouts made every kind of op: pieces kept, passed over and
	 * read back, files read across the sweep and whole */
	CHECK(sum.spread > 0 && sum.ahead > 0 && sum.back > 0 && sum.whole > 0);
	fprintf(stderr, "  swept: %zu files spread, %zu kept ahead, %zu read back, %zu whole\n",
		sum.spread, sum.ahead, sum.back, sum.whole);
}

/* scan --quick on a disk without a seek penalty: four readers, each
 * holding a head of a quarter of the budget, so that none may wait for
 * more budget while it holds one (they all did, for the catch's and the
 * tail's reads, and the run hung).  Files over the whole-file limit are
 * read in part: no content hash, the partial hash xxHash's; the others
 * whole, with both. */
static void test_quick_ssd(void)
{
	struct fixture x;
	char ref[33], p[4096], *main_dir = dir;
	size_t i, parts = 0;

	/* a tree of its own: 32 files of 600 KiB, all read in part */
	dir = t_tmpdir("quick");
	for (i = 0; i < 32; i++) {
		unsigned char *d = t_bytes(600u << 10, 500 + (uint64_t)i);
		snprintf(p, sizeof(p), "%s/q%02zu.bin", dir, i);
		t_write(p, d, 600u << 10);
		free(d);
	}
	fx_setup(&x);
	for (i = 0; i < x.ft.ndevs; i++)
		x.devs[i].rotational = 0;
	plan_free(&x.pl);
	CHECK_INT(plan_build(&x.ft, x.devs, PLAN_AUTO, 1, &x.pl, &x.e), SL_OK);
	CHECK_INT(x.pl.groups[0].rotational, 0);
	x.o.quick = 1;
	x.o.mem_budget = 1u << 20; /* whole up to 256 KiB, heads of 256 KiB */
	x.o.jobs = 1;
	x.o.ssd_readers = 4;
	CHECK_INT(fx_run(&x), SL_OK);
	CHECK_INT(x.s.n, 32);
	CHECK(x.st.peak_inflight <= (1u << 20));
	for (i = 0; i < x.s.n; i++) {
		const struct got *r = &x.s.recs[i];
		if (!r->read || r->err_code)
			continue;
		ref_quick(r->path, ref);
		CHECK_STR(r->quick_hash, ref);
		if (r->size > (256u << 10)) {
			CHECK_STR(r->hash, "");
			parts++;
		} else {
			ref_hash(r->path, ref);
			CHECK_STR(r->hash, ref);
		}
	}
	CHECK_INT(parts, 32);
	fx_free(&x);
	t_rmtree(dir);
	free(dir);
	dir = main_dir;
}

int main(void)
{
	build();
	RUN(test_full_run);
	RUN(test_changed_before_read);
	RUN(test_faults);
	RUN(test_failed_entries);
	RUN(test_sweep);
	RUN(test_quick_ssd);
	t_rmtree(dir);
	free(dir);
	return t_done();
}
