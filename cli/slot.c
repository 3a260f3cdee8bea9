/* slot.c - see slot.h.
 *
 * mktime() is not used to find a slot: what it makes of a wall time the
 * clocks skip or repeat differs between C libraries (and glibc's answer
 * for a repeated one depends on its previous call).  Instead the instants
 * whose wall clock reads the slot are found from the zone's offsets around
 * it, and where there is none (skipped), the instant of the jump by
 * bisection. */
#include "cli/slot.h"

#include <stdint.h>

#define DAY 86400

static int64_t floor_div(int64_t a, int64_t b)
{
	return a >= 0 ? a / b : -((-a + b - 1) / b);
}

/* Days since 1970-01-01 of a proleptic Gregorian date. */
static int64_t days_of(int64_t y, int64_t m, int64_t d)
{
	int64_t era, yoe, doy, doe;

	y -= m <= 2;
	era = floor_div(y, 400);
	yoe = y - era * 400;
	doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + doe - 719468;
}

/* The wall clock at t, counted in seconds as if local time were UTC: what
 * the slot is compared with.  A time the C library cannot convert is
 * taken as UTC. */
static int64_t wall(time_t t)
{
	const struct tm *tm = localtime(&t);

	if (!tm)
		return (int64_t)t;
	return days_of(tm->tm_year + 1900LL, tm->tm_mon + 1LL, tm->tm_mday) * DAY +
	       tm->tm_hour * 3600LL + tm->tm_min * 60LL + tm->tm_sec;
}

/* The slot of day `day` (days since 1970 on the wall clock). */
static time_t slot_of(int minutes, int64_t day)
{
	const int64_t n = day * DAY + minutes * 60LL; /* the wall time wanted */
	const int64_t probes[3] = {n - 36 * 3600, n, n + 36 * 3600};
	int64_t cand[6], lo = INT64_MIN, hi = INT64_MAX, best = INT64_MAX;
	int nc = 0, i;

	/* t + offset(t) = n: t = n - offset, with the offsets in force a day
	 * and a half either side (both sides of a change of the clocks),
	 * each refined once with the offset at its own answer */
	for (i = 0; i < 3; i++) {
		int64_t c = n - (wall((time_t)probes[i]) - probes[i]);
		cand[nc++] = c;
		cand[nc++] = n - (wall((time_t)c) - c);
	}
	for (i = 0; i < nc; i++) {
		int64_t w = wall((time_t)cand[i]);
		if (w == n && cand[i] < best)
			best = cand[i]; /* the first, when the clocks repeat it */
		else if (w < n && cand[i] > lo)
			lo = cand[i];
		else if (w > n && cand[i] < hi)
			hi = cand[i];
	}
	if (best != INT64_MAX)
		return (time_t)best;
	if (lo == INT64_MIN || hi == INT64_MAX || lo >= hi)
		return (time_t)(n - (wall((time_t)n) - n));
	/* skipped: the clocks jump from before it (lo) to after it (hi);
	 * the slot is the first second after the jump */
	while (hi - lo > 1) {
		int64_t mid = lo + (hi - lo) / 2;
		if (wall((time_t)mid) >= n)
			hi = mid;
		else
			lo = mid;
	}
	return (time_t)hi;
}

void slot_around(int minutes, time_t now, time_t *last, time_t *next)
{
	int64_t day = floor_div(wall(now), DAY);
	time_t a = slot_of(minutes, day), b;
	int i;

	if (a > now)
		a = slot_of(minutes, --day);
	b = slot_of(minutes, day + 1);
	/* the wall clock's date can step back across midnight (zones that
	 * change their clocks at 00:00): walk the days until now lies between */
	for (i = 0; i < 4 && b <= now; i++) {
		a = b;
		b = slot_of(minutes, ++day + 1);
	}
	for (i = 0; i < 4 && a > now; i++) {
		b = a;
		a = slot_of(minutes, --day);
	}
	/* no zone does what would still leave these wrong, but the contract
	 * holds whatever localtime() says: no wait that is already over */
	if (b <= now)
		b = now + 60;
	if (a > now)
		a = now - DAY;
	*last = a;
	*next = b;
}
