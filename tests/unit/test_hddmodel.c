/* The emulated disk's service-time model. */
#include <math.h>

#include "tests/unit/test.h"
#include "tools/hddsim/model.h"

static int near(double a, double b, double tol)
{
	return fabs(a - b) <= tol;
}

static void test_seek_curve(void)
{
	struct hdd_params p;
	struct hdd_model m;
	double prev = 0, d;

	hdd_defaults(&p);
	CHECK_INT(hdd_init(&m, &p), 0);
	/* the curve passes through the three figures it was fitted to */
	CHECK(near(hdd_seek_ms(&m, 1), p.t2t_ms, 1e-9));
	CHECK(near(hdd_seek_ms(&m, m.tracks / 3), p.avg_ms, 1e-6));
	CHECK(near(hdd_seek_ms(&m, m.tracks - 1), p.full_ms, 1e-6));
	CHECK_INT(hdd_seek_ms(&m, 0), 0);
	for (d = 1; d < m.tracks; d *= 3) { /* and grows with distance */
		CHECK(hdd_seek_ms(&m, d) >= prev);
		prev = hdd_seek_ms(&m, d);
	}
	CHECK(near(m.rev_ms, 60000.0 / 7200, 1e-9));
	/* nonsense parameters make no disk */
	p.avg_ms = 0.5;
	CHECK_INT(hdd_init(&m, &p), -1);
}

static void test_zones(void)
{
	struct hdd_params p;
	struct hdd_model m;
	double t_end;

	hdd_defaults(&p);
	hdd_init(&m, &p);
	CHECK(near(hdd_rate(&m, 0), p.outer_mbs * 1e3, 1e-6));
	CHECK(near(hdd_rate(&m, m.tracks), p.inner_mbs * 1e3, 1e-6));
	CHECK(near(hdd_track(&m, 0), 0, 1e-9));
	/* the last byte is on the last track, and tracks are monotonic */
	t_end = hdd_track(&m, p.capacity - 1);
	CHECK(t_end > m.tracks - 1.01 && t_end < m.tracks);
	CHECK(hdd_track(&m, 1000000000) < hdd_track(&m, 2000000000));
	/* one outer track holds one revolution at the outer rate */
	CHECK(near(hdd_track(&m, (uint64_t)(p.outer_mbs * 1e3 * m.rev_ms)), 1, 1e-3));
	/* the image can sit further in: same offset, later track */
	p.base = 500000000000ull;
	hdd_init(&m, &p);
	CHECK(hdd_track(&m, 0) > m.tracks / 3);
}

static void test_service(void)
{
	struct hdd_params p;
	struct hdd_model m;
	double t, seq, far, rate;
	int i;

	hdd_defaults(&p);
	hdd_init(&m, &p);
	rate = hdd_rate(&m, 0);
	/* the first request positions the head */
	t = hdd_service(&m, 4096, 150000, 0);
	CHECK(t >= p.overhead_ms + 150000 / rate);
	CHECK_INT(m.hits, 0);
	/* the next file, asked for at once: no seek, no rotation, just the
	 * time for the head to read it */
	seq = hdd_service(&m, 4096 + 150000, 150000, t);
	CHECK(near(seq, 150000 / rate + 150000 / (p.iface_mbs * 1e3), 1e-6));
	CHECK_INT(m.seeks, 0);
	CHECK_INT(m.hits, 1);
	/* asked for later, it is already in the drive's cache */
	seq = hdd_service(&m, 4096 + 300000, 100000, t + seq + 50);
	CHECK(near(seq, 100000 / (p.iface_mbs * 1e3), 1e-9));
	/* nearby but not contiguous (a directory block 24 KiB on): still
	 * streamed, no revolution lost */
	seq = hdd_service(&m, 4096 + 400000 + 24576, 4096, t + 60);
	CHECK(seq < 1.0);
	/* beyond the read-ahead window: a mechanical access again */
	seq = hdd_service(&m, 4096 + 400000 + 24576 + 4096 + p.readahead + 8192, 4096, t + 70);
	CHECK(seq >= p.overhead_ms);
	CHECK_INT(m.requests, 5);
	/* a far request pays a long seek plus at most one revolution */
	far = hdd_service(&m, 400000000000ull, 4096, 200);
	CHECK(far > hdd_seek_ms(&m, m.tracks * 0.39));
	CHECK(far < p.overhead_ms + hdd_seek_ms(&m, m.tracks * 0.41) + m.rev_ms + 1);
	CHECK_INT(m.seeks, 1);
	/* rotational waits average half a revolution over random moments */
	{
		double sum = 0;
		for (i = 0; i < 1000; i++) {
			hdd_service(&m, 8192, 4096, i * 3.7);
			sum += hdd_service(&m, 1ull << 30, 4096, i * 3.7 + 1.9) -
			       hdd_seek_ms(&m, fabs(floor(hdd_track(&m, 1ull << 30)) -
						    floor(hdd_track(&m, 12288))));
		}
		sum /= 1000;
		CHECK(sum > m.rev_ms * 0.3 && sum < m.rev_ms * 0.7 + p.overhead_ms + 0.1);
	}
	hdd_reset_counters(&m);
	CHECK_INT(m.requests, 0);
	CHECK(m.busy_ms == 0);

	/* without read-ahead only exactly contiguous requests stream */
	p.readahead = 0;
	hdd_init(&m, &p);
	t = hdd_service(&m, 0, 4096, 0);
	seq = hdd_service(&m, 4096, 4096, t + 20);
	CHECK(seq < 0.1);
	seq = hdd_service(&m, 4096 * 4, 4096, t + 40); /* a gap: the platter went by */
	CHECK(seq >= p.overhead_ms);
	/* and the cache forgets what is more than `cache` bytes back */
	p.readahead = 1u << 20;
	p.cache = 1u << 20;
	hdd_init(&m, &p);
	t = 0;
	for (i = 0; i < 64; i++)
		t += hdd_service(&m, (uint64_t)i << 17, 1u << 17, t);
	CHECK_INT(m.seeks + (m.requests - m.hits), 1);
	seq = hdd_service(&m, (63u << 17), 4096, t + 10); /* just read: there */
	CHECK(seq < 0.1);
	seq = hdd_service(&m, 0, 4096, t + 20); /* 8 MiB back: gone */
	CHECK(seq >= p.overhead_ms);
}

static void test_elevator(void)
{
	struct hdd_params p;
	struct hdd_model m;
	uint64_t q[] = {900, 100, 5000, 300};

	hdd_defaults(&p);
	hdd_init(&m, &p);
	CHECK_INT(hdd_pick(&m, q, 0), -1);
	CHECK_INT(hdd_pick(&m, q, 4), 1); /* head at 0: nearest ahead is 100 */
	hdd_service(&m, 400, 100, 0);     /* head now at 500 */
	CHECK_INT(hdd_pick(&m, q, 4), 0); /* 900 next, going up */
	hdd_service(&m, 6000, 100, 10);   /* past all: wrap to the lowest */
	CHECK_INT(hdd_pick(&m, q, 4), 1);
}

int main(void)
{
	RUN(test_seek_curve);
	RUN(test_zones);
	RUN(test_service);
	RUN(test_elevator);
	return t_done();
}
