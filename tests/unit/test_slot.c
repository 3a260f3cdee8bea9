/* The Windows service's daily time (cli/slot.h) across daylight-saving
 * changes: zones with them in both hemispheres, without them, with half-hour
 * offsets and a half-hour change (Lord Howe).  Around each change of 2024
 * the slots of times before, in, across and after the hour that is skipped
 * or repeated are checked from every few minutes of six days, and the
 * service's loop is played through those days: one run a day, and no wait
 * that is already over (the service took the last slot plus 24 h, which
 * after the 25-hour day lay in the past: its timer fired at once, for an
 * hour).  Zones Windows' runtime cannot set (it knows no IANA names)
 * are passed over there and said so; elsewhere a zone not known is a
 * skip (tzdata missing), a failure where every test is required. */
#include "cli/slot.h"
#include "tests/unit/test.h"

#include <time.h>

#define DAY 86400

struct zone {
	const char *name;
	long jan, jul; /* UTC offsets on 2024-01-15 and 2024-07-15, seconds */
	int changes;   /* in 2024 */
};

static const struct zone zones[] = {
	{"Europe/Berlin", 3600, 7200, 2},
	{"America/New_York", -18000, -14400, 2},
	{"Australia/Sydney", 39600, 36000, 2},
	{"Asia/Tokyo", 32400, 32400, 0},
	{"Asia/Kolkata", 19800, 19800, 0},
	{"Australia/Adelaide", 37800, 34200, 2},
	{"Australia/Lord_Howe", 39600, 37800, 2},
	/* POSIX forms, which every C library reads (Windows' runtime with its
	 * own United States rules): the zone the Windows build is tested in */
	{"UTC0", 0, 0, 0},
	{"EST5EDT", -18000, -14400, 2},
};

static long long days_of(long long y, long long m, long long d)
{
	long long era, yoe, doy;

	y -= m <= 2;
	era = (y >= 0 ? y : y - 399) / 400;
	yoe = y - era * 400;
	doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	return era * 146097 + yoe * 365 + yoe / 4 - yoe / 100 + doy - 719468;
}

/* the wall clock at t, seconds as if local time were UTC */
static long long wall(time_t t)
{
	struct tm *tm = localtime(&t);

	if (!tm)
		return (long long)t;
	return days_of(tm->tm_year + 1900, tm->tm_mon + 1, tm->tm_mday) * DAY + tm->tm_hour * 3600 +
	       tm->tm_min * 60 + tm->tm_sec;
}

static long offset(time_t t)
{
	return (long)(wall(t) - (long long)t);
}

static long long day_of(time_t t)
{
	long long w = wall(t);
	return (w >= 0 ? w : w - DAY + 1) / DAY;
}

/* t is the slot of `minutes` on its day: the wall clock reads it there for
 * the first time that day, or t is where the clocks jumped over it */
static int is_slot(time_t t, int minutes)
{
	long long w = wall(t), tod = w - day_of(t) * DAY, want = minutes * 60LL;
	long long before = wall(t - 1);

	if (tod == want)
		return wall(t - 3600) != w && wall(t - 1800) != w;
	return tod > want && before / DAY == w / DAY && before - (w / DAY) * DAY < want;
}

/* The first second of each change of the clocks in 2024. */
static int changes(time_t *at, int cap)
{
	time_t t = 1704067200; /* 2024-01-01T00:00Z */
	int n = 0;

	for (; t < 1735689600 && n < cap; t += 3600) {
		time_t lo = t, hi = t + 3600;
		if (offset(lo) == offset(hi))
			continue;
		while (hi - lo > 1) {
			time_t mid = lo + (hi - lo) / 2;
			if (offset(mid) == offset(lo))
				lo = mid;
			else
				hi = mid;
		}
		at[n++] = hi;
	}
	return n;
}

/* From every 7 min 13 s of three days either side of the change: the slots
 * bracket now, are a wall-clock day apart, and are slots. */
static int sweep(int minutes, time_t change, char *why, size_t cap)
{
	time_t now, a, b;

	for (now = change - 3 * DAY; now < change + 3 * DAY; now += 7 * 60 + 13) {
		slot_around(minutes, now, &a, &b);
		if (!(a <= now && now < b))
			snprintf(why, cap, "now %lld not in [%lld, %lld)", (long long)now, (long long)a,
				 (long long)b);
		else if (b - a < 22 * 3600 || b - a > 26 * 3600)
			snprintf(why, cap, "slots %lld, %lld are %lld s apart", (long long)a,
				 (long long)b, (long long)(b - a));
		else if (!is_slot(a, minutes) || !is_slot(b, minutes))
			snprintf(why, cap, "%lld or %lld is not a slot", (long long)a, (long long)b);
		else if (day_of(b) != day_of(a) + 1)
			snprintf(why, cap, "slots %lld, %lld not on consecutive days", (long long)a,
				 (long long)b);
		else
			continue;
		return 0;
	}
	return 1;
}

/* The service's loop (service_win.c) over six days: run when the last slot
 * is newer than the last run (a run takes 10 minutes), else wait for the
 * next slot.  One run a day, each on its own day, and one wake-up per run:
 * a wait already over would wake it at once, again and again. */
static int play(int minutes, time_t change, char *why, size_t cap)
{
	time_t now = change - 3 * DAY, stamp = now, a, b;
	long long last_day;
	int runs = 0, wakeups = 0, steps = 0;

	slot_around(minutes, now, &a, &b);
	last_day = day_of(a); /* just run: the stamp is now */

	while (now < change + 3 * DAY) {
		if (++steps > 1000) {
			snprintf(why, cap, "the loop spins at %lld (%d wake-ups)", (long long)now,
				 wakeups);
			return 0;
		}
		slot_around(minutes, now, &a, &b);
		if (stamp < a) {
			if (day_of(a) <= last_day) {
				snprintf(why, cap, "a second run on day %lld", day_of(a));
				return 0;
			}
			last_day = day_of(a);
			runs++;
			stamp = now += 600;
			continue;
		}
		if (b <= now) {
			snprintf(why, cap, "a wait already over at %lld", (long long)now);
			return 0;
		}
		wakeups++;
		now = b;
	}
	if (runs < 5 || runs > 7 || wakeups > runs + 1) {
		snprintf(why, cap, "%d runs, %d wake-ups in 6 days", runs, wakeups);
		return 0;
	}
	return 1;
}

static void one_zone(const struct zone *z, int *used)
{
	/* the slots worth a look: around 02:00-03:00 where most zones change,
	 * midnight, late evening, and the minutes either side of this zone's
	 * own changes */
	int minutes[16] = {0, 60, 90, 120, 135, 150, 165, 180, 210, 1410};
	int nm = 10, nc, i, k;
	time_t at[4];
	char why[200];

	int iana = t_set_tz(z->name);
	if (offset(1705320000) != z->jan || offset(1721044800) != z->jul) {
		/* Windows' runtime knows no IANA names: nothing to test there */
		snprintf(why, sizeof(why), "%s: not known to this C library", z->name);
		if (iana)
			t_skip_part(why);
		else
			fprintf(stderr, "  %s: passed over\n", why);
		return;
	}
	(*used)++;
	nc = changes(at, 4);
	CHECK_INT(nc, z->changes);
	if (nc == 0) { /* the days the other zones change on */
		at[0] = 1711846800;
		at[1] = 1729990800;
		nc = 2;
	}
	for (i = 0; i < nc && nm + 2 <= 16; i++) {
		long long before = wall(at[i] - 1) % DAY, after = wall(at[i]) % DAY;
		if (z->changes) {
			minutes[nm++] = (int)(before / 60);
			minutes[nm++] = (int)(after / 60);
		}
	}
	for (i = 0; i < nc; i++) {
		for (k = 0; k < nm; k++) {
			int ok;
			why[0] = 0;
			ok = sweep(minutes[k], at[i], why, sizeof(why)) &&
			     play(minutes[k], at[i], why, sizeof(why));
			if (!ok)
				fprintf(stderr, "  %s, change at %lld, daily at %02d:%02d: %s\n", z->name,
					(long long)at[i], minutes[k] / 60, minutes[k] % 60, why);
			CHECK(ok);
		}
	}
}

/* A few slots worked out by hand, in Berlin: 2024-03-31 skips 02:00-03:00
 * (01:00Z), 2024-10-27 repeats 02:00-03:00 (00:00Z-01:00Z twice). */
static void test_berlin_by_hand(void)
{
	time_t a, b;

	int iana = t_set_tz("Europe/Berlin");
	if (offset(1705320000) != 3600) {
		if (iana)
			t_skip_part("Europe/Berlin: not known to this C library");
		else
			fprintf(stderr, "  Europe/Berlin: not known to this C library: passed over\n");
		return;
	}
	/* 02:30, skipped on 03-31: 03:00 CEST, the instant the clocks jump */
	slot_around(150, 1711846800 - 7200, &a, &b); /* 00:00 CET */
	CHECK_INT(b, 1711846800);
	CHECK_INT(a, 1711846800 - DAY + 1800); /* 03-30 02:30 CET */
	/* the day after, 02:30 CEST again: 23.5 h later */
	slot_around(150, 1711846800, &a, &b);
	CHECK_INT(a, 1711846800);
	CHECK_INT(b, 1711846800 + DAY - 1800);
	/* 02:30 on 10-27 comes twice: the first, 00:30Z, only */
	slot_around(150, 1729990800 - 3 * 3600, &a, &b); /* 10-27 00:00 CEST */
	CHECK_INT(b, 1729990800 - 1800);
	slot_around(150, 1729990800 + 1800, &a, &b); /* 02:30 CET, the second */
	CHECK_INT(a, 1729990800 - 1800);
	CHECK_INT(b, 1729990800 + DAY + 1800); /* 10-28 02:30 CET: 25 h on */
	/* 04:00 after the 25-hour day: 25 h after the one before, not 24 (the
	 * old arithmetic's wait ended at 03:00 CET and found nothing to do) */
	slot_around(240, 1729990800 - 3600, &a, &b); /* 10-27 02:00 CEST */
	CHECK_INT(b - a, 25 * 3600);
}

static void test_zones(void)
{
	size_t i;
	int used = 0;

	for (i = 0; i < sizeof(zones) / sizeof(zones[0]); i++)
		one_zone(&zones[i], &used);
	fprintf(stderr, "  %d of %zu zones tested\n", used, sizeof(zones) / sizeof(zones[0]));
	CHECK(used >= 1);
}

int main(void)
{
	RUN(test_berlin_by_hand);
	RUN(test_zones);
	return t_done();
}
