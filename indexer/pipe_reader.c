/* pipe_reader.c - the reader threads (pipe_int.h): each follows its
 * group's part of the plan, by its extent schedule (pipe_sweep.c), in
 * order with the next files opened ahead, or shared with the group's other
 * readers, and reads each file through pipe_read.c. */
#include "indexer/pipe_int.h"

#include <stdlib.h>

#include "common/sys.h"
#include "indexer/yield.h"

/* A reader in background mode lowers its priority and watches its disk. */
static struct yd *reader_begin(struct pipe *P, struct rgroup *g, struct yd *y)
{
	char how[160];

	if (!P->o->background)
		return NULL;
	sys_background(how, sizeof(how));
	yd_init(y, g->g->name);
	return y;
}

static void reader_end(struct pipe *P, struct rgroup *g, const struct yd *y)
{
	if (!y)
		return;
	pthread_mutex_lock(&P->stat_mu);
	g->yield_s += y->waited;
	g->pauses += y->pauses;
	pthread_mutex_unlock(&P->stat_mu);
}

void pipe_reader_exit(struct pipe *P, struct rgroup *g)
{
	if (atomic_fetch_sub(&g->readers_left, 1) == 1)
		g->end = sys_now();
	if (atomic_fetch_sub(&P->readers_left, 1) == 1) {
		P->read_end = sys_now();
		queue_close(&P->xq);
	}
}

/* How far a sequential reader looks ahead: the next files are opened and
 * the kernel asked to fetch them (POSIX_FADV_WILLNEED), so the disk always
 * has the next requests of the plan queued, in order, instead of idling
 * between one file's last read and the next one's first.  Four are enough
 * to keep it busy; more only puts more requests in flight at once, and a
 * drive that serves them one at a time in arrival order (a USB bridge
 * without UAS) then seeks between them: 16 took 4.7 s (~380 seeks) where 4
 * take 1.95 s (5 seeks) on the emulated disk at --depth 1, the same 1.95 s
 * as 16 with command queueing, and no difference on this VM's virtio disk
 * (docs/benchmarks.md). */
#define AHEAD_FILES 4
#define AHEAD_BYTES ((uint64_t)16 << 20)

/* Ask the kernel ahead for what o's file will be read for, and return
 * those bytes (0 for a streamed file: FADV_SEQUENTIAL instead).  A file a
 * quick scan may read for its ends only gets only those asked for, and no
 * read-ahead past them: else the disk would serve the whole photo anyway
 * (a smoke run of tools/bench/quick.py: 22 MB read, 124 MB served). */
static uint64_t ahead_of(struct pipe *P, struct opened *o, int advise)
{
	uint64_t size = o->info.size;

	if (o->rc != SL_OK || size > P->whole_max)
		return 0;
	if (pipe_quick_part(P, size)) {
		if (advise) {
			rd_advise_random(o->rf);
			rd_advise_range(o->rf, 0, X_QUICK_HEAD);
			rd_advise_range(o->rf, size - X_QUICK_SPAN, X_QUICK_SPAN);
		}
		return X_QUICK_HEAD + X_QUICK_SPAN;
	}
	if (advise)
		rd_advise_willneed(o->rf);
	return size;
}

static void read_sequential(struct pipe *P, struct rgroup *g, struct yd *y)
{
	struct opened ring[AHEAD_FILES];
	size_t head = 0, n = 0, next = 0;
	uint64_t ahead = 0;

	while (!pipe_stopping(P)) {
		struct opened *o;
		/* before queueing more read-ahead: that is what competes with
		 * someone else's I/O */
		if (y)
			yd_wait(y, pipe_stop_cb, P);
		while (n < AHEAD_FILES && next < g->g->count && (n == 0 || ahead < AHEAD_BYTES)) {
			o = &ring[(head + n) % AHEAD_FILES];
			pipe_open(P, g->g->first + next, o);
			next++;
			n++;
			ahead += ahead_of(P, o, 1);
		}
		if (n == 0)
			break;
		o = &ring[head];
		head = (head + 1) % AHEAD_FILES;
		n--;
		ahead -= ahead_of(P, o, 0);
		pipe_read_whole(P, g, o, y);
	}
	while (n > 0) { /* stopped early: let go of what was opened ahead */
		struct opened *o = &ring[head];
		head = (head + 1) % AHEAD_FILES;
		n--;
		rd_close(o->rf, P->o->keep_cache);
		free(o->path);
	}
}

void *pipe_reader_main(void *arg)
{
	struct rgroup *g = arg;
	struct pipe *P = g->P;
	struct yd ys, *y = reader_begin(P, g, &ys);

	pipe_reader_slot(P, g);

	/* a quick scan reads the ends of its large files, not their
	 * extents: the schedule would read them whole */
	if (g->sequential && g->g->ops && !P->o->quick && P->pl->whole_max == P->whole_max &&
	    P->pl->head == P->chunk) {
		pipe_sweep(P, g, y);
	} else if (g->sequential) {
		read_sequential(P, g, y);
	} else {
		while (!pipe_stopping(P)) {
			struct opened o;
			size_t i;
			if (y)
				yd_wait(y, pipe_stop_cb, P);
			i = atomic_fetch_add(&g->cursor, 1);
			if (i >= g->g->count)
				break;
			pipe_open(P, g->g->first + i, &o);
			pipe_read_whole(P, g, &o, y);
		}
	}
	reader_end(P, g, y);
	pipe_reader_exit(P, g);
	return NULL;
}
