/* Background mode's yield (yield.h): a reader waits while someone else uses
 * its disk, not while it uses it itself, and never for longer than the
 * starvation bound; a stop ends the wait.  The disk here is a script: its
 * transfer counter and ours are what each test says, and so is the clock
 * (time passes only when yield sleeps), so every case is exact and no
 * check depends on the machine's speed or load; the real counters and
 * clock are used in test_background.py. */
#include "common/sys.h"
#include "indexer/yield.h"
#include "tests/unit/test.h"

static uint64_t disk_now, self_now, disk_step;
static int disk_fails;

/* every look at the disk finds disk_step more bytes moved (someone else) */
static int disk_counter(const char *disk, uint64_t *bytes)
{
	(void)disk;
	if (disk_fails)
		return -1;
	disk_now += disk_step;
	*bytes = disk_now;
	return 0;
}

static int self_counter(uint64_t *bytes)
{
	*bytes = self_now;
	return 0;
}

/* the scripted clock: seconds pass when yield sleeps, and only then */
static double clock_s;
static double fake_now(void)
{
	return clock_s;
}

static void fake_sleep(double seconds)
{
	clock_s += seconds;
}

/* equal within rounding: sums of YD_PAUSE steps are not exact in binary */
static int near(double a, double b)
{
	return a > b - 1e-9 && a < b + 1e-9;
}

static int stops, stop_after;
static int stop_cb(void *ctx)
{
	(void)ctx;
	return ++stops > stop_after;
}

static void reset(struct yd *y)
{
	disk_now = self_now = disk_step = 0;
	disk_fails = 0;
	stops = 0;
	stop_after = 1000;
	yd_counters(disk_counter, self_counter);
	yd_clock(fake_now, fake_sleep);
	yd_init(y, "scripted");
}

/* yd_wait, after the sampling interval: the seconds it waited */
static double wait_once(struct yd *y)
{
	double t;
	fake_sleep(YD_SAMPLE * 1.2);
	t = clock_s;
	yd_wait(y, stop_cb, NULL);
	return clock_s - t;
}

static void test_quiet(void)
{
	struct yd y;
	reset(&y);
	CHECK(y.active);
	CHECK(wait_once(&y) == 0);
	CHECK(wait_once(&y) == 0);
	CHECK_INT(y.pauses, 0);
}

/* Our own reads reach the disk's counter a look later: credit, not
 * someone else's I/O. */
static void test_own_io(void)
{
	struct yd y;
	reset(&y);
	self_now += 10 << 20;
	CHECK(wait_once(&y) == 0);
	disk_now += 10 << 20;
	CHECK(wait_once(&y) == 0);
	CHECK_INT(y.pauses, 0);
	CHECK_INT(y.credit, 0);
}

/* Credit beyond YD_CREDIT_MAX is forgotten: 200 MiB of ours then 200 MiB on
 * the disk leaves 136 MiB that count as someone else's. */
static void test_credit_cap(void)
{
	struct yd y;
	double t;
	reset(&y);
	self_now += 200 << 20;
	CHECK(wait_once(&y) == 0);
	CHECK(y.credit == YD_CREDIT_MAX);
	disk_now += 200 << 20;
	t = wait_once(&y);
	CHECK_INT(y.pauses, 1);
	CHECK(near(t, YD_PAUSE)); /* quiet again after one step */
}

/* A disk someone else keeps busy for good: one read goes through after
 * YD_STARVE, as bfq lets a starved idle queue through. */
static void test_starvation_bound(void)
{
	struct yd y;
	double t;
	reset(&y);
	disk_step = 50 << 20;
	t = wait_once(&y);
	CHECK_INT(y.pauses, 1);
	/* the first step at or past the bound */
	CHECK(t > YD_STARVE - 1e-9 && t < YD_STARVE + YD_PAUSE - 1e-9);
	CHECK(near(y.waited, t));
	fprintf(stderr, "  waited %.2f s on a disk busy for good\n", t);
}

/* A stop ends the wait at the next step. */
static void test_stop(void)
{
	struct yd y;
	double t;
	reset(&y);
	disk_step = 50 << 20;
	stop_after = 1;
	t = wait_once(&y);
	CHECK(near(t, YD_PAUSE)); /* one step, then the stop is seen */
	CHECK_INT(stops, 2);
}

/* No counters (no such disk, no /proc/self/io): no waiting at all. */
static void test_no_counters(void)
{
	struct yd y;
	reset(&y);
	disk_fails = 1;
	yd_init(&y, "gone");
	CHECK(!y.active);
	disk_step = 50 << 20;
	CHECK(wait_once(&y) == 0);
	CHECK_INT(y.pauses, 0);
}

int main(void)
{
	RUN(test_quiet);
	RUN(test_own_io);
	RUN(test_credit_cap);
	RUN(test_starvation_bound);
	RUN(test_stop);
	RUN(test_no_counters);
	yd_counters(NULL, NULL);
	yd_clock(NULL, NULL);
	return t_done();
}
