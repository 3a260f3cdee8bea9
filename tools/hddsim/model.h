/* model.h - service time of a 7200 rpm hard disk, for the emulator.
 *
 * Geometry: a disk of `capacity` bytes whose transfer rate falls linearly
 * from the outer to the inner track (zoned recording; a track holds one
 * revolution's worth of bytes).  The emulated image occupies the band that
 * starts `base` bytes in, so a photo tree on a small image sees the short
 * seeks it would see on a big drive.
 *
 * A request pays: controller overhead, a seek from the head's track to the
 * target's (seek(d) = T + a(d-1) + b*sqrt(d-1), fitted to track-to-track,
 * average (at N/3) and full-stroke times), the rotational wait until the
 * target angle passes under the head (the platter turns with real time),
 * and the transfer at that track's rate.
 *
 * Like a real drive, after a mechanical access the head keeps reading ahead
 * into the drive's cache, up to `readahead` bytes past the last request,
 * and the cache keeps the last `cache` bytes of that run.  A request inside
 * that window costs no seek and no rotation: only the wait for the head to
 * get there (if it has not yet) and the interface transfer.  So sequential
 * and nearly sequential requests stream, as on a disk; with readahead 0 only
 * exactly contiguous requests do.  Pending requests, up to the queue depth,
 * are served in elevator (C-LOOK) order, as NCQ would.
 *
 * Times are in milliseconds.  Not thread-safe: the emulator calls it from
 * its one disk thread.
 */
#ifndef SL_HDD_MODEL_H
#define SL_HDD_MODEL_H

#include <stdint.h>

struct hdd_params {
	double rpm;         /* 7200 */
	double t2t_ms;      /* track-to-track seek, 1.0 */
	double avg_ms;      /* average seek, 8.5 */
	double full_ms;     /* full-stroke seek, 18 */
	double outer_mbs;   /* MB/s (1e6 bytes) on the outer track, 210 */
	double inner_mbs;   /* on the inner track, 100 */
	double overhead_ms; /* per positioned command, 0.1 */
	double iface_mbs;   /* interface rate for data already in the cache, 550 */
	uint64_t readahead; /* bytes read ahead past a request, 1 MiB */
	uint64_t cache;     /* bytes of the current run kept, 8 MiB */
	uint64_t capacity;  /* bytes of the modelled disk, 1e12 */
	uint64_t base;      /* where the image starts on it, 0 = outer edge */
	int depth;          /* command queue depth, 32 */
};

struct hdd_model {
	struct hdd_params p;
	double rev_ms;
	double tracks;      /* N */
	double a, b;        /* seek curve above T */
	/* head */
	double head_track;
	uint64_t next_seq;  /* byte after the last request; UINT64_MAX at start */
	/* the run being streamed into the cache: the head was at head_off at
	 * head_ms, moving on at run_rate until stop_off; the cache holds
	 * [run_start, where the head has got to) */
	int run;
	uint64_t run_start, head_off, stop_off;
	double head_ms, run_rate;
	/* counters */
	uint64_t requests, seeks, bytes, hits;
	double seek_tracks, busy_ms;
};

void hdd_defaults(struct hdd_params *p);

/* Set up from p; returns 0, or -1 when the parameters make no disk. */
int hdd_init(struct hdd_model *m, const struct hdd_params *p);

/* Track (fractional: the fraction is the angular position) of an image
 * offset. */
double hdd_track(const struct hdd_model *m, uint64_t offset);

/* Seek time over d tracks (0 for d < 1). */
double hdd_seek_ms(const struct hdd_model *m, double d);

/* Transfer rate at a track, bytes per millisecond. */
double hdd_rate(const struct hdd_model *m, double track);

/* Serve [offset, offset+len) starting at model time now_ms: returns the
 * service time and moves the head; counts the request.  hits counts those
 * served from the read-ahead window. */
double hdd_service(struct hdd_model *m, uint64_t offset, uint64_t len, double now_ms);

/* Index of the request to serve next among n pending offsets: the nearest
 * at or beyond the head, else the lowest (C-LOOK).  -1 when n is 0. */
int hdd_pick(const struct hdd_model *m, const uint64_t *offsets, int n);

void hdd_reset_counters(struct hdd_model *m);

#endif
