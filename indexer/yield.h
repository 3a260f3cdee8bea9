/* yield.h - stepping aside when someone else uses the disk (--background).
 *
 * The idle I/O class (sys_background) only helps where the kernel's I/O
 * scheduler honours it: bfq does, mq-deadline only partly, `none` (most
 * NVMe, virtio and loop devices) and kyber not at all (docs/design.md,
 * "Background mode").  So a background reader also watches the disk itself:
 * before each read it compares the disk's transfer counter (dev_io_bytes)
 * with the bytes this process caused (sys_io_bytes); when the difference,
 * someone else's I/O, exceeds YD_RATE it sleeps until the disk has been
 * quiet for a moment.  Like bfq's idle class it is not starved forever: after
 * YD_STARVE seconds of waiting one read goes through.
 *
 * Our own requests reach the disk's counter later than ours (read-ahead in
 * flight, dirty pages written back), so what we caused is kept as credit that
 * the disk's later transfers use up before any counts as foreign.  The
 * process-wide counter also covers other disks this process reads at the
 * same time; the credit is capped so that costs at most YD_CREDIT_MAX of
 * someone else's I/O going unnoticed.
 */
#ifndef SL_YIELD_H
#define SL_YIELD_H

#include <stdint.h>

#define YD_SAMPLE 0.05                 /* seconds between looks while reading */
#define YD_PAUSE 0.2                   /* seconds per wait step */
#define YD_RATE (1024.0 * 1024.0)      /* foreign bytes per second that make us wait */
#define YD_MIN_BYTES (256u * 1024u)    /* ... and at least this much in one look */
#define YD_STARVE 2.0                  /* longest wait before one read goes through */
#define YD_CREDIT_MAX ((uint64_t)64 << 20)

struct yd {
	char disk[64];
	int active;        /* both counters readable */
	uint64_t dev_last, self_last, credit;
	double t_last;
	double waited;     /* seconds spent waiting */
	uint64_t pauses;   /* times a read was held back */
};

/* Start watching `disk` (a dev_info.disk name).  When either counter is
 * unknown, yd_wait returns at once. */
void yd_init(struct yd *y, const char *disk);

/* Return when the disk may be used: at once when no one else has been using
 * it, else after it has been quiet for YD_PAUSE, after YD_STARVE seconds,
 * or as soon as stop(ctx) says so. */
void yd_wait(struct yd *y, int (*stop)(void *ctx), void *ctx);

/* Where the two counters come from: dev_io_bytes and sys_io_bytes, unless
 * a test gives its own (a disk whose traffic it scripts; NULL restores the
 * real ones).  Not for production use. */
void yd_counters(int (*disk)(const char *disk, uint64_t *bytes), int (*self)(uint64_t *bytes));

/* Where the time comes from: sys_now and sys_sleep, unless a test gives a
 * clock of its own (time that passes only when it sleeps, so that every
 * wait is exact whatever the machine's load; NULL restores the real one).
 * Not for production use. */
void yd_clock(double (*now)(void), void (*sleep)(double seconds));

#endif
