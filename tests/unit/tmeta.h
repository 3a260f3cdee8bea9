/* tmeta.h - what a record read from a cut file may say: what the whole
 * file's says, or nothing.  A parser that reads past what it holds, or
 * takes the bytes after a cut for a value, makes a value up; the tests of
 * every truncation check each record against the whole file's with this. */
#ifndef SL_TMETA_H
#define SL_TMETA_H

#include <stdio.h>
#include <string.h>

#include "indexer/extract.h"

static inline int t_text_within(const char *what, const char *cut, const char *whole, char *why,
				size_t cap)
{
	if (cut[0] && strcmp(cut, whole) != 0) {
		snprintf(why, cap, "%s '%s', the whole file's '%s'", what, cut, whole);
		return 0;
	}
	return 1;
}

static inline int t_number_within(const char *what, unsigned bit, const struct x_meta *cut,
				  const struct x_meta *whole, double a, double b, char *why,
				  size_t cap)
{
	if ((cut->have & bit) && (!(whole->have & bit) || a != b)) {
		snprintf(why, cap, "%s %g, the whole file's %g%s", what, a, b,
			 whole->have & bit ? "" : " (none)");
		return 0;
	}
	return 1;
}

/* 1 when every value of cut is whole's (or absent from cut); else 0, and
 * why (cap bytes) names the first that is not. */
static inline int t_meta_within(const struct x_meta *cut, const struct x_meta *whole, char *why,
				size_t cap)
{
	const struct x_meta *c = cut, *w = whole;
	return t_text_within("format", c->format, w->format, why, cap) &&
	       t_text_within("make", c->make, w->make, why, cap) &&
	       t_text_within("model", c->model, w->model, why, cap) &&
	       t_text_within("lens", c->lens_model, w->lens_model, why, cap) &&
	       t_text_within("date", c->datetime_original, w->datetime_original, why, cap) &&
	       t_text_within("zone", c->tz_offset, w->tz_offset, why, cap) &&
	       t_text_within("subsec", c->subsec, w->subsec, why, cap) &&
	       t_text_within("content id", c->content_id, w->content_id, why, cap) &&
	       t_number_within("width", XM_DIMS, c, w, c->width, w->width, why, cap) &&
	       t_number_within("height", XM_DIMS, c, w, c->height, w->height, why, cap) &&
	       t_number_within("orientation", XM_ORIENTATION, c, w, c->orientation,
			       w->orientation, why, cap) &&
	       t_number_within("latitude", XM_GPS, c, w, c->gps_lat, w->gps_lat, why, cap) &&
	       t_number_within("longitude", XM_GPS, c, w, c->gps_lon, w->gps_lon, why, cap) &&
	       t_number_within("exposure", XM_EXPOSURE, c, w, c->exposure_time, w->exposure_time,
			       why, cap) &&
	       t_number_within("f-number", XM_FNUMBER, c, w, c->f_number, w->f_number, why, cap) &&
	       t_number_within("iso", XM_ISO, c, w, (double)c->iso, (double)w->iso, why, cap) &&
	       t_number_within("focal length", XM_FOCAL, c, w, c->focal_length, w->focal_length,
			       why, cap) &&
	       t_number_within("duration", XM_DURATION, c, w, c->duration, w->duration, why, cap);
}

#endif
