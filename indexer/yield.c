/* yield.c - background readers wait while others use the disk (yield.h). */
#include "indexer/yield.h"

#include <stdio.h>
#include <string.h>

#include "common/sys.h"
#include "scanner/device.h"

static int (*disk_bytes)(const char *, uint64_t *) = dev_io_bytes;
static int (*self_bytes)(uint64_t *) = sys_io_bytes;
static double (*clock_now)(void) = sys_now;
static void (*clock_sleep)(double) = sys_sleep;

void yd_counters(int (*disk)(const char *disk, uint64_t *bytes), int (*self)(uint64_t *bytes))
{
	disk_bytes = disk ? disk : dev_io_bytes;
	self_bytes = self ? self : sys_io_bytes;
}

void yd_clock(double (*now)(void), void (*sleep)(double seconds))
{
	clock_now = now ? now : sys_now;
	clock_sleep = sleep ? sleep : sys_sleep;
}

static int sample(struct yd *y, uint64_t *foreign)
{
	uint64_t dev, self, ddev, dself, used;

	if (disk_bytes(y->disk, &dev) != 0 || self_bytes(&self) != 0)
		return -1;
	ddev = dev >= y->dev_last ? dev - y->dev_last : 0;
	dself = self >= y->self_last ? self - y->self_last : 0;
	y->dev_last = dev;
	y->self_last = self;
	y->credit += dself;
	if (y->credit > YD_CREDIT_MAX)
		y->credit = YD_CREDIT_MAX;
	used = y->credit < ddev ? y->credit : ddev;
	y->credit -= used;
	*foreign = ddev - used;
	return 0;
}

void yd_init(struct yd *y, const char *disk)
{
	uint64_t ignored;

	memset(y, 0, sizeof(*y));
	snprintf(y->disk, sizeof(y->disk), "%s", disk);
	y->t_last = clock_now();
	y->active = sample(y, &ignored) == 0;
	y->credit = 0;
}

static int busy(uint64_t foreign, double dt)
{
	return foreign >= YD_MIN_BYTES && (double)foreign >= YD_RATE * (dt > 0 ? dt : YD_SAMPLE);
}

void yd_wait(struct yd *y, int (*stop)(void *ctx), void *ctx)
{
	uint64_t foreign;
	double now, start;

	if (!y->active)
		return;
	now = clock_now();
	if (now - y->t_last < YD_SAMPLE)
		return;
	if (sample(y, &foreign) != 0) {
		y->active = 0;
		return;
	}
	if (!busy(foreign, now - y->t_last)) {
		y->t_last = now;
		return;
	}
	y->pauses++;
	start = now;
	for (;;) {
		double before = now;
		if (stop(ctx))
			break;
		clock_sleep(YD_PAUSE);
		now = clock_now();
		if (sample(y, &foreign) != 0 || !busy(foreign, now - before))
			break;
		if (now - start >= YD_STARVE)
			break;
	}
	y->waited += now - start;
	y->t_last = now;
}
