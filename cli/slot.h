/* slot.h - the Windows service's daily time (service_win.c) in local time,
 * across daylight-saving changes.  Portable, and pure but for the C
 * library's local time (TZ), so that tests/unit/test_slot.c can run it in
 * several zones on Linux.
 *
 * A day's slot is the first instant of that day whose wall clock reads
 * HH:MM or later:
 *   - on most days, HH:MM itself;
 *   - when the clocks skip HH:MM (spring forward over 02:30), the instant
 *     they skip: 03:00 new time;
 *   - when the clocks repeat HH:MM (fall back over 02:30), its first
 *     occurrence: one run that day, not two.
 * Days are the wall clock's, not 24-hour steps: the service used to take
 * the last slot plus 24 h as the next one, an hour early after the 25-hour
 * day; the absolute timer set for that past instant fired at once, again
 * and again, and the service spun for an hour every autumn. */
#ifndef SL_SLOT_H
#define SL_SLOT_H

#include <time.h>

/* The latest slot at or before now (*last) and the first after it (*next)
 * of the daily time `minutes` after midnight (0..1439):
 * *last <= now < *next, always, so a wait until *next is never in the
 * past.  Calls localtime(): one thread at a time. */
void slot_around(int minutes, time_t now, time_t *last, time_t *next);

#endif
