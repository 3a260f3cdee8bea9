/* sched.c - the extent schedule (sched.h). */
#include "scanner/sched.h"

#include <stdlib.h>
#include <string.h>

/* A piece: a run of a file clipped to its size, or a stretch no run covers
 * (a hole, a tail the map left out), which costs no seek to read. */
struct piece {
	uint64_t off, len, phys;
	uint32_t file;
	uint8_t gap;
	uint8_t state;
};

enum { P_NEW, P_PASSED, P_KEPT, P_DONE };

struct fstate {
	size_t first, count; /* the file's pieces, in logical order, in pc[] */
	size_t next;         /* streamed: the piece to hash next, first + k */
	size_t head_left;    /* streamed: head pieces not read yet */
	uint64_t head;       /* head_of() the file */
	size_t left;         /* pieces not read yet */
	int open, done;
	size_t last_op;      /* the file's latest op */
	uint64_t lo, hi;     /* its pieces' lowest and highest position */
	uint32_t chosen;     /* pass + 1 when chosen for that pass */
	uint32_t seen;       /* pass + 1 when looked at for that pass */
	uint8_t passable;    /* a whole file that one pass can hold */
};

/* A file held by the pass being chosen: its last position and cost. */
struct held_file {
	uint64_t hi, cost;
	uint32_t file;
};

/* Passes after which every file left is read whole where the sweep meets
 * it: each pass costs the plan a look at every piece left. */
enum { MAX_PASSES = 32 };

struct sb {
	const struct sched_file *files;
	const struct sched_limits *lim;
	struct piece *pc;
	size_t npc;
	struct fstate *fs;
	struct sched_op *ops;
	size_t nops, cap;
	uint64_t held, held_ahead; /* held_ahead: by SO_AHEAD pieces, part of held */
	uint32_t open;
	uint32_t pass;
	int last_pass;
	size_t nfiles;
	struct held_file *act; /* choose_pass(): held files by hi */
	size_t act_cap;
	struct sched_stats st;
};

static const char *const kind_names[] = {"whole", "read", "ahead", "back"};

const char *sched_kind_name(int kind)
{
	return kind >= 0 && kind <= SO_BACK ? kind_names[kind] : "?";
}

/* Whether runs are usable: ascending, not overlapping, not empty. */
static int runs_sane(const struct sched_file *f)
{
	uint64_t end = 0;
	uint32_t i;
	for (i = 0; i < f->nruns; i++) {
		const struct ft_run *r = &f->runs[i];
		if (r->len == 0 || r->logical < end || r->logical + r->len < r->logical)
			return 0;
		end = r->logical + r->len;
	}
	return 1;
}

struct cut {
	struct piece *out; /* NULL: only count */
	size_t n;
	uint64_t head;     /* cut pieces there (a streamed file's head); 0: no */
	struct piece cur;  /* the piece being grown */
	int have;
};

static void cut_flush(struct cut *c)
{
	if (!c->have)
		return;
	if (c->out)
		c->out[c->n] = c->cur;
	c->n++;
	c->have = 0;
}

static void cut_add(struct cut *c, uint64_t off, uint64_t len, uint64_t phys, int gap)
{
	/* physically adjacent to the previous piece: one piece (a file system
	 * may split a run where the disk does not) */
	if (c->have && !gap && !c->cur.gap && c->cur.off + c->cur.len == off &&
	    c->cur.phys + c->cur.len == phys && off != c->head) {
		c->cur.len += len;
		return;
	}
	cut_flush(c);
	memset(&c->cur, 0, sizeof(c->cur));
	c->cur.off = off;
	c->cur.len = len;
	c->cur.phys = phys;
	c->cur.gap = (uint8_t)gap;
	c->cur.state = P_NEW;
	c->have = 1;
}

/* A piece over the head's end becomes two. */
static void cut_piece(struct cut *c, uint64_t off, uint64_t len, uint64_t phys, int gap)
{
	if (c->head > off && c->head - off < len) {
		uint64_t in = c->head - off;
		cut_add(c, off, in, phys, gap);
		off += in;
		len -= in;
		if (!gap)
			phys += in;
	}
	cut_add(c, off, len, phys, gap);
}

/* f's pieces in logical order into out (NULL: only count them); returns how
 * many.  Runs that make no sense (overlapping, out of order) are ignored: the
 * file is then one piece, read whole at its position.  head > 0 cuts the
 * pieces at that offset too. */
static size_t split_at(const struct sched_file *f, uint64_t head, struct piece *out)
{
	struct cut c = {out, 0, head, {0}, 0};
	uint64_t at = 0, prev_end;
	uint32_t i;

	if (!f->placed || !f->runs || f->nruns == 0 || !runs_sane(f)) {
		cut_add(&c, 0, f->size, f->phys, 0);
		cut_flush(&c);
		return c.n;
	}
	prev_end = f->runs[0].phys;
	for (i = 0; i < f->nruns && at < f->size; i++) {
		const struct ft_run *r = &f->runs[i];
		uint64_t len;
		if (r->logical >= f->size)
			break;
		if (r->logical > at)
			cut_piece(&c, at, r->logical - at, prev_end, 1);
		len = r->len < f->size - r->logical ? r->len : f->size - r->logical;
		cut_piece(&c, r->logical, len, r->phys, 0);
		at = r->logical + len;
		prev_end = r->phys + len;
	}
	if (at < f->size)
		cut_piece(&c, at, f->size - at, prev_end, 1);
	if (c.n == 0 && !c.have)
		cut_add(&c, 0, f->size, f->phys, 0);
	cut_flush(&c);
	return c.n;
}

/* A spread streamed file's head: the bytes the extractors parse as its
 * first chunk, gathered in one buffer; 0 for any other file. */
static uint64_t head_of(const struct sched_file *f, const struct sched_limits *lim)
{
	if (!f->streamed || lim->head == 0 || lim->head >= f->size)
		return 0;
	return split_at(f, 0, NULL) > 1 ? lim->head : 0;
}

int sched_needed(const struct sched_file *files, size_t n)
{
	size_t i;
	for (i = 0; i < n; i++)
		if (split_at(&files[i], 0, NULL) > 1)
			return 1;
	return 0;
}

static int emit(struct sb *b, uint32_t file, int kind, uint64_t off, uint64_t len, uint64_t phys,
		int hole)
{
	struct fstate *F = &b->fs[file];
	struct sched_op *o;

	if (b->nops == b->cap) {
		size_t cap = b->cap ? b->cap * 2 : 256;
		struct sched_op *p = realloc(b->ops, cap * sizeof(*p));
		if (!p)
			return -1;
		b->ops = p;
		b->cap = cap;
	}
	o = &b->ops[b->nops];
	memset(o, 0, sizeof(*o));
	o->off = off;
	o->len = len;
	o->phys = phys;
	o->file = file;
	o->kind = (uint8_t)kind;
	o->hole = (uint8_t)hole;
	o->first = !F->open && !F->done;
	F->last_op = b->nops++;
	if (kind == SO_AHEAD)
		b->st.ahead++;
	if (kind == SO_BACK)
		b->st.back++;
	return 0;
}

static void track(struct sb *b)
{
	if (b->held > b->st.peak_held)
		b->st.peak_held = b->held;
	if (b->open > b->st.peak_open)
		b->st.peak_open = b->open;
}

static void finish(struct sb *b, uint32_t file, int was_open)
{
	struct fstate *F = &b->fs[file];
	F->done = 1;
	b->ops[F->last_op].last = 1;
	if (was_open) {
		F->open = 0;
		b->open--;
		b->st.spread++;
	}
}

/* The file read whole, now: nothing of it has been read yet. */
static int whole(struct sb *b, uint32_t file, uint64_t phys)
{
	struct fstate *F = &b->fs[file];
	size_t k;

	if (emit(b, file, SO_WHOLE, 0, b->files[file].size, phys, 0) != 0)
		return -1;
	for (k = 0; k < F->count; k++)
		b->pc[F->first + k].state = P_DONE;
	F->left = 0;
	b->st.whole++;
	finish(b, file, 0);
	return 0;
}

/* What a buffer of len bytes costs the window. */
static uint64_t cost(const struct sb *b, uint64_t len)
{
	uint64_t g = b->lim->grain;
	if (g <= 1 || len > UINT64_MAX - g)
		return len;
	return (len + g - 1) / g * g;
}

static int fits(const struct sb *b, uint64_t bytes)
{
	return bytes <= b->lim->window && b->held <= b->lim->window - bytes;
}

/* A streamed file's next piece has been read: hand on what was kept after
 * it, read what was passed over, up to the first piece still ahead. */
static int chain(struct sb *b, uint32_t file)
{
	struct fstate *F = &b->fs[file];

	while (F->next < F->first + F->count) {
		struct piece *q = &b->pc[F->next];
		if (q->state == P_KEPT) {
			b->held -= cost(b, q->len);
			b->held_ahead -= cost(b, q->len);
		} else if (q->state == P_PASSED) {
			if (emit(b, file, SO_BACK, q->off, q->len, q->phys, q->gap) != 0)
				return -1;
		} else {
			break;
		}
		q->state = P_DONE;
		F->left--;
		F->next++;
	}
	if (F->left == 0)
		finish(b, file, 1);
	return 0;
}

/* The file's first op has just been emitted: it is open now, holding hold
 * bytes until its last. */
static void open_file(struct sb *b, uint32_t file, uint64_t hold)
{
	b->fs[file].open = 1;
	b->open++;
	b->held += hold;
	track(b);
}

/* Piece p read in its place in the sweep, the file opened at its first
 * (holding hold bytes). */
static int read_here(struct sb *b, struct piece *p, uint64_t hold)
{
	struct fstate *F = &b->fs[p->file];

	if (emit(b, p->file, SO_READ, p->off, p->len, p->phys, p->gap) != 0)
		return -1;
	if (!F->open)
		open_file(b, p->file, hold);
	p->state = P_DONE;
	F->left--;
	return 0;
}

static int visit(struct sb *b, struct piece *p)
{
	uint32_t file = p->file;
	const struct sched_file *f = &b->files[file];
	struct fstate *F = &b->fs[file];
	uint64_t head, hold;

	if (F->done || p->state != P_NEW)
		return 0;
	if (F->count == 1)
		return whole(b, file, p->phys);
	if (!f->streamed) {
		if (!F->open && F->passable && !b->last_pass && F->chosen != b->pass + 1)
			return 0; /* a later pass's */
		if (!F->open && (b->open >= b->lim->max_open || !fits(b, cost(b, f->size)))) {
			if (F->passable && !b->last_pass) {
				F->chosen = 0; /* room taken by a streamed file: next pass */
				return 0;
			}
			return whole(b, file, p->phys);
		}
		if (read_here(b, p, cost(b, f->size)) != 0)
			return -1;
		if (F->left == 0) {
			b->held -= cost(b, f->size);
			finish(b, file, 1);
		}
		return 0;
	}
	head = F->head;
	if (p->off < head) {
		/* into the head's buffer, in any order: its cost is held from
		 * the file's first op until the head is complete */
		if (!F->open && (b->open >= b->lim->max_open || !fits(b, cost(b, head))))
			return whole(b, file, p->phys);
		if (read_here(b, p, cost(b, head)) != 0)
			return -1;
		if (--F->head_left > 0)
			return 0;
		b->held -= cost(b, head); /* handed on whole, as the first chunk */
		return chain(b, file);
	}
	if (F->head_left == 0 && p == &b->pc[F->next]) {
		if (!F->open && b->open >= b->lim->max_open)
			return whole(b, file, p->phys);
		if (read_here(b, p, 0) != 0)
			return -1;
		F->next++;
		return chain(b, file);
	}
	/* out of logical order: keep it if it fits, else pass over it (a
	 * file opened here holds its head's buffer from now on too) */
	hold = F->open ? 0 : cost(b, head);
	if (!p->gap && (F->open || b->open < b->lim->max_open) &&
	    fits(b, hold + cost(b, p->len)) &&
	    b->held_ahead + cost(b, p->len) <= b->lim->window / 2) {
		if (emit(b, file, SO_AHEAD, p->off, p->len, p->phys, 0) != 0)
			return -1;
		if (!F->open)
			open_file(b, file, hold);
		b->held += cost(b, p->len);
		b->held_ahead += cost(b, p->len);
		p->state = P_KEPT;
		track(b);
	} else {
		p->state = P_PASSED;
	}
	return 0;
}

/* Which of the whole files left the next pass holds.  Each is held from
 * its lowest piece to its highest; taken by their lowest, a file that
 * would overfill the window (or the descriptors) drops the held file that
 * ends last, possibly itself: for files of one size this holds the most
 * files a pass can (the greedy rule for intervals), and it keeps the files
 * that span the disk, which would hold room for the whole sweep, for later
 * passes.  Fewer files held per sweep means more sweeps, and on an aged
 * disk each sweep skips over the pieces of the others: the window trades
 * memory for seeks (docs/design.md, "The extent schedule"). */
static int choose_pass(struct sb *b, const size_t *ord, size_t n)
{
	uint32_t stamp = b->pass + 1;
	uint64_t sum = 0;
	size_t i, na = 0;

	for (i = 0; i < n; i++) {
		const struct piece *p = &b->pc[ord[i]];
		struct fstate *F = &b->fs[p->file];
		struct held_file h;
		size_t k;

		if (!F->passable || F->done || F->open || F->seen == stamp)
			continue;
		F->seen = stamp; /* first met: at its lowest piece */
		if (!b->act) {
			b->act_cap = (b->lim->max_open < b->nfiles ? b->lim->max_open : b->nfiles) + 1;
			b->act = malloc(b->act_cap * sizeof(*b->act));
			if (!b->act)
				return -1;
		}
		/* held ones that end before it starts are done with */
		for (k = 0; k < na && b->act[k].hi < F->lo; k++)
			sum -= b->act[k].cost;
		memmove(b->act, b->act + k, (na - k) * sizeof(*b->act));
		na -= k;
		h.hi = F->hi;
		h.cost = cost(b, b->files[p->file].size);
		h.file = p->file;
		for (k = na; k > 0 && b->act[k - 1].hi > h.hi; k--)
			;
		memmove(b->act + k + 1, b->act + k, (na - k) * sizeof(*b->act));
		b->act[k] = h;
		na++;
		sum += h.cost;
		F->chosen = stamp;
		while (sum > b->lim->window || na > b->lim->max_open) {
			na--;
			sum -= b->act[na].cost;
			b->fs[b->act[na].file].chosen = 0;
		}
	}
	return 0;
}

static const struct piece *cmp_pc;
static const struct sched_file *cmp_files;

/* Placed pieces by position, then the unplaced files in plan order. */
static int cmp_piece(const void *a, const void *b)
{
	const struct piece *x = &cmp_pc[*(const size_t *)a], *y = &cmp_pc[*(const size_t *)b];
	int px = cmp_files[x->file].placed != 0, py = cmp_files[y->file].placed != 0;

	if (px != py)
		return px ? -1 : 1;
	if (px && x->phys != y->phys)
		return x->phys < y->phys ? -1 : 1;
	if (x->file != y->file)
		return x->file < y->file ? -1 : 1;
	return x->off < y->off ? -1 : x->off > y->off;
}

/* Consecutive ops of one file over contiguous bytes, of the same kind,
 * become one. */
static void merge(struct sb *b)
{
	size_t i, n = 0;
	for (i = 0; i < b->nops; i++) {
		struct sched_op *o = &b->ops[i];
		if (n > 0) {
			struct sched_op *p = &b->ops[n - 1];
			if (p->file == o->file && p->kind == o->kind && o->kind != SO_WHOLE &&
			    p->off + p->len == o->off && p->hole == o->hole &&
			    o->off != b->fs[o->file].head) {
				/* p is not its file's last: o follows it */
				p->len += o->len;
				p->last = o->last;
				continue;
			}
		}
		b->ops[n++] = *o;
	}
	b->nops = n;
}

int sched_build(const struct sched_file *files, size_t n, const struct sched_limits *lim,
		struct sched_op **ops, size_t *nops, struct sched_stats *st, struct sl_err *err)
{
	struct sb b;
	size_t *ord = NULL, i, k, at = 0, left;
	struct sched_limits L = *lim;

	/* what a pass holds is at most the window, and a newcomer's cost at
	 * most the window too: sums of two stay below 2^64 */
	if (L.window > UINT64_MAX / 2)
		L.window = UINT64_MAX / 2;
	lim = &L;
	memset(&b, 0, sizeof(b));
	b.files = files;
	b.nfiles = n;
	b.lim = lim;
	*ops = NULL;
	*nops = 0;
	if (st)
		memset(st, 0, sizeof(*st));
	b.fs = calloc(n ? n : 1, sizeof(*b.fs));
	if (!b.fs)
		goto nomem;
	for (i = 0; i < n; i++) {
		b.fs[i].head = head_of(&files[i], lim);
		b.npc += split_at(&files[i], b.fs[i].head, NULL);
	}
	b.pc = malloc((b.npc ? b.npc : 1) * sizeof(*b.pc));
	ord = malloc((b.npc ? b.npc : 1) * sizeof(*ord));
	if (!b.pc || !ord)
		goto nomem;
	for (i = 0; i < n; i++) {
		uint64_t head = b.fs[i].head;
		struct fstate *F = &b.fs[i];
		size_t c = split_at(&files[i], head, b.pc + at);
		F->first = F->next = at;
		F->count = F->left = c;
		F->lo = UINT64_MAX;
		for (k = 0; k < c; k++) {
			b.pc[at + k].file = (uint32_t)i;
			if (b.pc[at + k].phys < F->lo)
				F->lo = b.pc[at + k].phys;
			if (b.pc[at + k].phys > F->hi)
				F->hi = b.pc[at + k].phys;
			ord[at + k] = at + k;
			if (b.pc[at + k].off < head) {
				b.fs[i].head_left++;
				b.fs[i].next++;
			}
		}
		F->passable = !files[i].streamed && files[i].placed && c > 1 &&
			      lim->max_open > 0 && cost(&b, files[i].size) <= lim->window;
		at += c;
	}
	b.npc = at;
	/* qsort has no context argument in C11; this runs on one thread. */
	cmp_pc = b.pc;
	cmp_files = files;
	qsort(ord, b.npc, sizeof(*ord), cmp_piece);
	cmp_pc = NULL;
	cmp_files = NULL;
	/* Sweeps, each ascending: the first over everything, each further one
	 * over the pieces of the whole files earlier ones did not hold. */
	for (left = b.npc; left > 0; b.pass++) {
		b.last_pass = b.pass + 1 >= MAX_PASSES;
		if (!b.last_pass && choose_pass(&b, ord, left) != 0)
			goto nomem;
		for (i = 0; i < left; i++)
			if (visit(&b, &b.pc[ord[i]]) != 0)
				goto nomem;
		for (i = k = 0; i < left; i++)
			if (!b.fs[b.pc[ord[i]].file].done)
				ord[k++] = ord[i];
		left = k;
	}
	merge(&b);
	b.st.passes = b.pass;
	b.st.ops = b.nops;
	b.st.pieces = b.npc;
	if (st)
		*st = b.st;
	*ops = b.ops;
	*nops = b.nops;
	free(ord);
	free(b.pc);
	free(b.fs);
	free(b.act);
	return SL_OK;
nomem:
	free(b.act);
	free(ord);
	free(b.pc);
	free(b.fs);
	free(b.ops);
	return SL_FAIL(err, SL_E_NOMEM, 0, "schedule: out of memory");
}
