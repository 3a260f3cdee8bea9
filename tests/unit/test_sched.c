/* The extent schedule against a reader model written here, not from
 * sched.c: random disks of fragmented, contiguous, sparse and unplaced
 * files, whole and streamed, under windows from nothing to everything.
 * The model follows the ops as the pipeline's reader does and checks
 * that every byte of every file is read exactly once; that a streamed file
 * is hashed in logical order (a piece is handed on only once everything
 * before it was); that what is held for unfinished files never exceeds the
 * window, nor the files kept open the limit; that first and last mark a
 * file's first and completing op; and, with room for everything, that the
 * ops sweep the disk in ascending order without going back. */
#include "scanner/sched.h"
#include "tests/unit/test.h"

static uint64_t rng_s;

static uint64_t rnd(void)
{
	return t_rnd(&rng_s);
}

static uint64_t below(uint64_t n)
{
	return n ? rnd() % n : 0;
}

struct disk {
	struct sched_file *f;
	struct ft_run *runs;
	size_t n, nruns;
};

/* n files whose runs are cut from one disk's blocks of 4 KiB, shuffled,
 * so that files interleave; some files sparse (a hole between runs, a
 * tail no run covers), some unplaced, some with runs past their size. */
static void make_disk(struct disk *d, size_t n, uint64_t whole_max)
{
	size_t i, total = 0, k;
	uint64_t *blocks, nb = 0;

	memset(d, 0, sizeof(*d));
	d->n = n;
	d->f = calloc(n, sizeof(*d->f));
	d->runs = calloc(n * 16, sizeof(*d->runs));
	for (i = 0; i < n; i++) {
		uint32_t r = (uint32_t)(below(4) == 0 ? 1 : 1 + below(12));
		d->f[i].nruns = r;
		total += r;
	}
	/* one "slot" of disk per run, taken in a shuffled order */
	blocks = malloc(total * sizeof(*blocks));
	for (k = 0; k < total; k++)
		blocks[k] = k;
	for (k = total; k > 1; k--) {
		size_t j = (size_t)below(k);
		uint64_t t = blocks[k - 1];
		blocks[k - 1] = blocks[j];
		blocks[j] = t;
	}
	for (i = 0; i < n; i++) {
		struct sched_file *f = &d->f[i];
		struct ft_run *r = d->runs + d->nruns;
		uint64_t at = 0;
		uint32_t j;
		int sparse = below(6) == 0;
		for (j = 0; j < f->nruns; j++) {
			uint64_t len = 4096 * (1 + below(8));
			if (sparse && below(3) == 0)
				at += 4096 * (1 + below(3));
			/* a slot is 64 blocks of 4 KiB: room for a run of up to 8 */
			r[j].logical = at;
			r[j].phys = blocks[nb++] * 64 * 4096 + 4096 * below(8);
			r[j].len = len;
			at += len;
		}
		f->runs = r;
		f->size = at;
		if (sparse && below(2) == 0)
			f->size += 4096 * (1 + below(4)); /* a tail no run covers */
		if (below(10) == 0 && f->size > 4096)
			f->size -= 1 + below(4096); /* the last run goes past the end */
		if (below(15) == 0)
			f->size = 0;
		f->phys = r[0].phys;
		f->placed = below(12) != 0;
		f->streamed = f->size > whole_max;
		d->nruns += f->nruns;
		if (below(8) == 0) {
			f->runs = NULL; /* only its first position is known */
			f->nruns = 0;
		}
	}
	free(blocks);
}

static void free_disk(struct disk *d)
{
	free(d->f);
	free(d->runs);
}

struct kept {
	uint64_t off, len;
};

static uint64_t cost(const struct sched_limits *lim, uint64_t len)
{
	return lim->grain > 1 ? (len + lim->grain - 1) / lim->grain * lim->grain : len;
}

/* Kept pieces that now come next in logical order are hashed. */
static void hand_on(struct kept *k, size_t nk, uint64_t *hashed, uint64_t *held,
		    const struct sched_limits *lim)
{
	size_t i;
	int moved = 1;
	while (moved) {
		moved = 0;
		for (i = 0; i < nk; i++) {
			if (k[i].len && k[i].off == *hashed) {
				*hashed += k[i].len;
				*held -= cost(lim, k[i].len);
				k[i].len = 0;
				moved = 1;
			}
		}
	}
}

/* Follows ops as the reader does; returns the number of failed checks. */
static int follow(const struct disk *d, const struct sched_op *ops, size_t nops,
		  const struct sched_limits *lim, int roomy)
{
	size_t n = d->n, i;
	uint64_t *got = calloc(n, sizeof(*got));      /* bytes read */
	uint64_t *hashed = calloc(n, sizeof(*hashed)); /* streamed: handed on so far */
	uint64_t *head_at = calloc(n, sizeof(*head_at)); /* streamed: its head's size */
	uint64_t *headgot = calloc(n, sizeof(*headgot)); /* of the head: read so far */
	int *state = calloc(n, sizeof(*state));       /* 0 not started, 1 open, 2 done */
	struct kept **kept = calloc(n, sizeof(*kept));
	size_t *nkept = calloc(n, sizeof(*nkept));
	uint8_t **seen = calloc(n, sizeof(*seen));    /* per byte: read already */
	uint64_t held = 0, prev_phys = 0;
	uint32_t open = 0;
	size_t twice = 0; /* bytes read a second time */
	int before = t_failures;

	for (i = 0; i < n; i++)
		seen[i] = calloc(d->f[i].size + 1, 1);
	for (i = 0; i < nops && t_failures - before < 20; i++) {
		const struct sched_op *o = &ops[i];
		const struct sched_file *f;
		uint64_t b;
		CHECK(o->file < n);
		if (o->file >= n)
			break;
		f = &d->f[o->file];
		CHECK(state[o->file] != 2);
		CHECK_INT(o->first, state[o->file] == 0);
		CHECK(o->off + o->len <= f->size);
		if (o->off + o->len > f->size)
			continue;
		for (b = o->off; b < o->off + o->len; b++)
			twice += seen[o->file][b]++ != 0;
		got[o->file] += o->len;
		/* with room for everything: one ascending sweep, never back
		 * (a hole costs no seek, and is read when its turn comes) */
		if (roomy && o->kind != SO_WHOLE && f->placed && !o->hole) {
			CHECK(o->phys >= prev_phys);
			prev_phys = o->phys;
		}
		if (roomy && !o->hole)
			CHECK(o->kind != SO_BACK);
		if (o->kind == SO_WHOLE) {
			CHECK(state[o->file] == 0);
			CHECK(o->off == 0 && o->len == f->size);
			CHECK(o->last);
			state[o->file] = 2;
			continue;
		}
		if (state[o->file] == 0) {
			state[o->file] = 1;
			open++;
			CHECK(open <= lim->max_open);
			if (!f->streamed)
				held += cost(lim, f->size);
			else if (lim->head && f->size > lim->head)
				head_at[o->file] = lim->head;
			held += cost(lim, head_at[o->file]);
		}
		if (f->streamed) {
			uint64_t head = head_at[o->file];
			if (o->off < head) {
				/* into the head's buffer, in place, never beyond */
				CHECK(o->kind == SO_READ);
				CHECK(o->off + o->len <= head);
				headgot[o->file] += o->len;
				if (headgot[o->file] == head) {
					hashed[o->file] = head;
					held -= cost(lim, head);
					hand_on(kept[o->file], nkept[o->file], &hashed[o->file],
						&held, lim);
				}
			} else if (o->kind == SO_AHEAD) {
				CHECK(o->off > hashed[o->file]);
				kept[o->file] = realloc(kept[o->file],
							(nkept[o->file] + 1) * sizeof(**kept));
				kept[o->file][nkept[o->file]].off = o->off;
				kept[o->file][nkept[o->file]].len = o->len;
				nkept[o->file]++;
				held += cost(lim, o->len);
			} else {
				/* hashed now: it must be next, after the whole head */
				CHECK_INT(headgot[o->file], head);
				CHECK_INT(o->off, hashed[o->file]);
				hashed[o->file] = o->off + o->len;
				hand_on(kept[o->file], nkept[o->file], &hashed[o->file], &held,
					lim);
			}
		} else {
			CHECK(o->kind == SO_READ);
		}
		CHECK(held <= lim->window);
		if (f->streamed) {
			CHECK_INT(o->last, hashed[o->file] == f->size);
		} else {
			CHECK_INT(o->last, got[o->file] == f->size);
		}
		if (o->last) {
			state[o->file] = 2;
			open--;
			if (!f->streamed)
				held -= cost(lim, f->size);
		}
	}
	for (i = 0; i < n; i++) {
		CHECK_INT(state[i], 2);
		CHECK_INT(got[i], d->f[i].size);
		free(kept[i]);
		free(seen[i]);
	}
	CHECK_INT(twice, 0);
	CHECK_INT(held, 0);
	CHECK_INT(open, 0);
	free(got);
	free(hashed);
	free(head_at);
	free(headgot);
	free(state);
	free(kept);
	free(nkept);
	free(seen);
	return t_failures - before;
}

static void test_model(void)
{
	int round;
	for (round = 0; round < 400; round++) {
		struct disk d;
		struct sched_limits lim;
		struct sched_op *ops = NULL;
		struct sched_stats st;
		struct sl_err e;
		size_t nops = 0;
		uint64_t whole_max = 4096 * (1 + below(40));
		int roomy = round % 5 == 0;
		rng_s = 1000 + (uint64_t)round;
		make_disk(&d, 1 + (size_t)below(60), whole_max);
		lim.window = roomy ? UINT64_MAX / 4 : 4096 * below(80);
		lim.max_open = roomy ? UINT32_MAX : 1 + (uint32_t)below(8);
		lim.grain = round % 3 ? 0 : 512 * (1 + below(16));
		/* a head below whole_max, as the pipeline's chunk is */
		lim.head = round % 4 ? 0 : 4096 * (1 + below(whole_max / 4096));
		CHECK_INT(sched_build(d.f, d.n, &lim, &ops, &nops, &st, &e), SL_OK);
		if (follow(&d, ops, nops, &lim, roomy)) {
			fprintf(stderr, "  round %d: %zu files, window %llu, open %u\n", round, d.n,
				(unsigned long long)lim.window, lim.max_open);
			free(ops);
			free_disk(&d);
			break;
		}
		CHECK(st.peak_held <= lim.window);
		CHECK(st.peak_open <= lim.max_open);
		CHECK_INT(st.ops, nops);
		free(ops);
		free_disk(&d);
	}
}

/* The worst case, scaled: a streamed video in 300 fragments
 * interleaved with 2,000 small whole photos, each itself in 2 pieces, under
 * a window smaller than the video: it is read in logical order, the bound
 * holds, and the photos still sweep. */
static void video_among_photos(uint64_t head)
{
	enum { PHOTOS = 2000, FRAGS = 300 };
	struct sched_file *f = calloc(PHOTOS + 1, sizeof(*f));
	struct ft_run *r = calloc(FRAGS + 2 * PHOTOS, sizeof(*r));
	struct sched_limits lim = {8u << 20, 64, 0, head};
	struct sched_op *ops;
	struct sched_stats st;
	struct sl_err e;
	struct disk d;
	size_t nops, i;
	uint64_t pos = 0;

	/* the video's fragments in reverse order over the disk: every one
	 * comes before its predecessor */
	for (i = 0; i < FRAGS; i++) {
		r[i].logical = (uint64_t)i * (1u << 20);
		r[i].len = 1u << 20;
		r[i].phys = (uint64_t)(FRAGS - i) * (64u << 20);
	}
	f[0].size = (uint64_t)FRAGS << 20;
	f[0].streamed = 1;
	f[0].placed = 1;
	f[0].runs = r;
	f[0].nruns = FRAGS;
	f[0].phys = r[FRAGS - 1].phys;
	for (i = 0; i < PHOTOS; i++) {
		struct ft_run *p = r + FRAGS + 2 * i;
		pos = (uint64_t)i * (10u << 20) + 4096;
		p[0].logical = 0;
		p[0].phys = pos;
		p[0].len = 100u << 10;
		p[1].logical = 100u << 10;
		p[1].phys = pos + (5u << 20);
		p[1].len = 100u << 10;
		f[1 + i].size = 200u << 10;
		f[1 + i].placed = 1;
		f[1 + i].runs = p;
		f[1 + i].nruns = 2;
		f[1 + i].phys = pos;
	}
	CHECK(sched_needed(f, PHOTOS + 1));
	CHECK_INT(sched_build(f, PHOTOS + 1, &lim, &ops, &nops, &st, &e), SL_OK);
	d.f = f;
	d.n = PHOTOS + 1;
	CHECK_INT(follow(&d, ops, nops, &lim, 0), 0);
	CHECK(st.peak_held <= lim.window);
	CHECK_INT(st.whole, 0);   /* every photo swept */
	CHECK(st.back > 0);       /* the video's fragments were passed over */
	CHECK(st.ahead > 0 && st.ahead <= 4); /* as many kept as fit in half */
	if (head) { /* gathered first, from the far end of the disk */
		size_t k, in_head = 0;
		for (k = 0; k < nops; k++)
			if (ops[k].file == 0 && ops[k].off < head) {
				CHECK(ops[k].kind == SO_READ && ops[k].off + ops[k].len <= head);
				in_head += ops[k].len;
			}
		CHECK_INT(in_head, head);
	}
	free(ops);
	free(f);
	free(r);
}

static void test_video_among_photos(void)
{
	video_among_photos(0);
	/* with a head of 2 MiB held from the video's first op: still room
	 * for the photos beside it and what is kept */
	video_among_photos(2u << 20);
}

static void test_contiguous(void)
{
	struct sched_file f[3];
	struct ft_run one = {0, 1u << 20, 50000};
	memset(f, 0, sizeof(f));
	f[0].size = 50000;
	f[0].placed = 1;
	f[0].phys = 1u << 20;
	f[1] = f[0];
	f[1].runs = &one; /* one run over the whole file */
	f[1].nruns = 1;
	f[2].size = 0;
	CHECK(!sched_needed(f, 3));
	/* a run split where the disk is contiguous is still one piece */
	{
		struct ft_run two[2] = {{0, 4096, 4096}, {4096, 8192, 4096}};
		f[1].runs = two;
		f[1].nruns = 2;
		f[1].size = 8192;
		CHECK(!sched_needed(f, 3));
		two[1].phys = 1u << 30;
		CHECK(sched_needed(f, 3));
	}
	CHECK_STR(sched_kind_name(SO_BACK), "back");
	CHECK_STR(sched_kind_name(9), "?");
}

/* Photos whose two extents lie at the two ends of the disk: a window that
 * holds K of them takes N/K ascending sweeps, none read whole.  And the
 * sweep that a file spanning the disk would fill goes to the short ones
 * first: taken first-come, the long one would take the first sweep alone. */
static void test_sweeps(void)
{
	enum { N = 40, K = 8, SHORT = 8 };
	struct sched_file f[N];
	struct ft_run r[2 * N];
	struct sched_limits lim = {K * (256u << 10), 256, 0, 0};
	struct sched_op *ops;
	struct sched_stats st;
	struct sl_err e;
	struct disk d = {f, r, N, 2 * N};
	size_t nops, i, descents = 0;

	memset(f, 0, sizeof(f));
	for (i = 0; i < N; i++) {
		r[2 * i].logical = 0;
		r[2 * i].phys = (uint64_t)(i + 1) << 20;
		r[2 * i].len = 128u << 10;
		r[2 * i + 1].logical = 128u << 10;
		r[2 * i + 1].phys = (1ull << 30) + ((uint64_t)i << 20);
		r[2 * i + 1].len = 128u << 10;
		f[i].size = 256u << 10;
		f[i].placed = 1;
		f[i].phys = r[2 * i].phys;
		f[i].runs = &r[2 * i];
		f[i].nruns = 2;
	}
	CHECK_INT(sched_build(f, N, &lim, &ops, &nops, &st, &e), SL_OK);
	CHECK_INT(follow(&d, ops, nops, &lim, 0), 0);
	CHECK_INT(st.passes, N / K);
	CHECK_INT(st.whole, 0);
	CHECK_INT(st.spread, N);
	CHECK(st.peak_held <= lim.window);
	for (i = 1; i < nops; i++)
		descents += ops[i].phys < ops[i - 1].phys;
	CHECK_INT(descents, N / K - 1); /* each sweep ascending */
	free(ops);

	/* one long file (0 and 1 GiB) and SHORT short ones between, a window
	 * of one: the short ones share the first sweep, the long one is last */
	lim.window = 256u << 10;
	r[0].phys = 1u << 20;
	r[1].phys = 1ull << 30;
	for (i = 1; i <= SHORT; i++) {
		r[2 * i].phys = (uint64_t)(i + 1) * (4u << 20);
		r[2 * i + 1].phys = r[2 * i].phys + (1u << 20);
		f[i].phys = r[2 * i].phys;
	}
	f[0].phys = r[0].phys;
	d.n = 1 + SHORT;
	CHECK_INT(sched_build(f, 1 + SHORT, &lim, &ops, &nops, &st, &e), SL_OK);
	CHECK_INT(follow(&d, ops, nops, &lim, 0), 0);
	CHECK_INT(st.passes, 2);
	CHECK_INT(st.whole, 0);
	CHECK(nops > 0 && ops[nops - 1].file == 0 && ops[0].file != 0);
	free(ops);
}

int main(void)
{
	RUN(test_contiguous);
	RUN(test_model);
	RUN(test_video_among_photos);
	RUN(test_sweeps);
	return t_done();
}
