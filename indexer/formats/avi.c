/* avi.c - AVI movies (RIFF "AVI "): duration, size and capture date.
 *
 * RIFF is chunks of a four-character code, a 32-bit little-endian size and
 * the data, padded to an even length; a LIST chunk holds a type and more
 * chunks.  What we read sits in the header list, before the media data
 * ("movi"), so the first chunk of a streamed file holds it:
 *  - hdrl/avih: microseconds per frame, total frames, width, height;
 *  - hdrl/strl/strh of the first video stream ("vids"): rate / scale and
 *    length in frames; its strf (BITMAPINFOHEADER) gives the size when
 *    avih says 0;
 *  - IDIT (in hdrl or at the top): the capture date as text, in the forms
 *    cameras write ("Mon Mar 10 15:04:43 2003", "2005/11/28/ 09:19",
 *    "2002-12-16  15:35:01");
 *  - _PMX (at the top, usually after the media data): an XMP packet.
 * The duration follows exiftool: total frames times the frame time, unless
 * the video stream's own count gives a duration between 1.9 and 3.1 times
 * shorter (cameras that count every stream's frames in avih); a file of
 * sound only: its size over the sound's bytes per second. */
#include <stdio.h>
#include <string.h>

#include "indexer/formats/cursor.h"
#include "indexer/formats/fmt.h"
#include "indexer/formats/parsers.h"
#include "indexer/formats/xmp.h"

struct avi {
	const struct bc *c;
	struct x_meta *m;
	uint32_t usec, frames, w, h;
	int have_avih;
	uint32_t scale, rate, length, sw, sh;
	int have_video;
	uint32_t bytes_per_s; /* the first sound stream's (WAVEFORMATEX) */
};

static int month(const char *s)
{
	static const char names[] = "janfebmaraprmayjunjulaugsepoctnovdec";
	char low[4];
	int i;

	for (i = 0; i < 3; i++)
		low[i] = (char)(s[i] >= 'A' && s[i] <= 'Z' ? s[i] + 32 : s[i]);
	low[3] = '\0';
	for (i = 0; i < 12; i++)
		if (memcmp(names + 3 * i, low, 3) == 0)
			return i + 1;
	return 0;
}

static void set_date(struct x_meta *m, int y, int mo, int d, int hh, int mi, int ss)
{
	if (m->datetime_original[0] || y < 1 || y > 9999 || mo < 1 || mo > 12 || d < 1 || d > 31 ||
	    hh < 0 || hh > 23 || mi < 0 || mi > 59 || ss < 0 || ss > 60)
		return;
	snprintf(m->datetime_original, sizeof(m->datetime_original),
		 "%04d-%02d-%02dT%02d:%02d:%02d", y, mo, d, hh, mi, ss);
}

/* IDIT's text, in the three forms exiftool knows. */
static void parse_idit(struct x_meta *m, const uint8_t *p, size_t n)
{
	char s[64], wd[8], mon[8], ampm[4] = "";
	int y, mo, d, hh, mi, ss = 0, k;
	size_t i;

	if (n >= sizeof(s))
		n = sizeof(s) - 1;
	for (i = 0; i < n && p[i]; i++)
		s[i] = (char)(p[i] >= 0x20 && p[i] < 0x7f ? p[i] : ' ');
	s[i] = '\0';
	if (sscanf(s, "%7s %7s %d %d:%d:%d %d", wd, mon, &d, &hh, &mi, &ss, &y) == 7 &&
	    strlen(mon) == 3 && (mo = month(mon)) != 0) {
		set_date(m, y, mo, d, hh, mi, ss);
	} else if (sscanf(s, "%d/ %d/ %d%n", &y, &mo, &d, &k) == 3 && y >= 1000 &&
		   sscanf(s + k + (s[k] == '/'), " %d: %d%3s", &hh, &mi, ampm) >= 2) {
		/* Casio: "2001/ 1/27  1:42PM", "2005/11/28/ 09:19" */
		set_date(m, y, mo, d, hh + (ampm[0] == 'P' && hh < 12 ? 12 : 0), mi, 0);
	} else if ((sscanf(s, "%d-%d-%d %d:%d:%d", &y, &mo, &d, &hh, &mi, &ss) == 6 ||
		    sscanf(s, "%d/%d/%d %d:%d:%d", &y, &mo, &d, &hh, &mi, &ss) == 6) && y >= 1000) {
		set_date(m, y, mo, d, hh, mi, ss);
	} else if (s[0]) {
		x_warn(m, "avi: capture date '%s' in no form known", s);
	}
}

/* strh then strf of one stream list: the first video stream's. */
static void parse_strl(struct avi *a, size_t pos, size_t end)
{
	const struct bc *c = a->c;
	int video = 0, sound = 0;

	while (pos + 8 <= end) {
		uint32_t size, v;
		size_t body = pos + 8;
		if (bc_le32(c, pos + 4, &size) || size > end - body)
			return;
		if (bc_is(c, pos, "strh", 4) && size >= 36 && bc_is(c, body, "vids", 4) &&
		    !a->have_video) {
			bc_le32(c, body + 20, &a->scale);
			bc_le32(c, body + 24, &a->rate);
			bc_le32(c, body + 32, &a->length);
			a->have_video = video = 1;
		} else if (bc_is(c, pos, "strh", 4) && size >= 4 && bc_is(c, body, "auds", 4)) {
			sound = !a->bytes_per_s;
		} else if (bc_is(c, pos, "strf", 4) && sound && size >= 12) {
			bc_le32(c, body + 8, &a->bytes_per_s);
			sound = 0;
		} else if (bc_is(c, pos, "strf", 4) && video && size >= 12) {
			bc_le32(c, body + 4, &v);
			a->sw = v;
			bc_le32(c, body + 8, &v);
			a->sh = (uint32_t)((int32_t)v < 0 ? -(int64_t)(int32_t)v : (int32_t)v);
		}
		pos = body + size + (size & 1);
	}
}

static void parse_list(struct avi *a, size_t pos, size_t end, int in_hdrl)
{
	const struct bc *c = a->c;

	while (pos + 8 <= end) {
		uint32_t size;
		size_t body = pos + 8;
		int cut = 0;
		if (bc_le32(c, pos + 4, &size))
			return;
		if (size > end - body) {
			size = (uint32_t)(end - body); /* cut short: read what is there */
			cut = 1;
		}
		if (bc_is(c, pos, "LIST", 4) && size >= 4) {
			if (bc_is(c, body, "movi", 4)) {
				/* the media data, skipped in one step; after it may
				 * come _PMX, which a streamed file's first chunk
				 * does not hold */
			} else if (!in_hdrl && bc_is(c, body, "hdrl", 4))
				parse_list(a, body + 4, body + size, 1);
			else if (in_hdrl && bc_is(c, body, "strl", 4))
				parse_strl(a, body + 4, body + size);
		} else if (in_hdrl && bc_is(c, pos, "avih", 4) && size >= 40 && !a->have_avih) {
			bc_le32(c, body, &a->usec);
			bc_le32(c, body + 16, &a->frames);
			bc_le32(c, body + 32, &a->w);
			bc_le32(c, body + 36, &a->h);
			a->have_avih = 1;
		} else if (bc_is(c, pos, "IDIT", 4)) {
			/* a date cut short reads as another ("... 2003" as year 2) */
			if (cut)
				x_warn(a->m, "avi: capture date cut short");
			else
				parse_idit(a->m, c->p + body, size);
		} else if (!in_hdrl && bc_is(c, pos, "_PMX", 4)) {
			xmp_parse(c->p + body, size, a->m, DS_XMP); /* Adobe's XMP packet */
		}
		pos = body + size + (size & 1);
	}
}

int avi_parse(const uint8_t *p, size_t n, struct x_meta *m, struct sl_err *err)
{
	struct bc c = bc_make(p, n, 0);
	struct avi a;
	uint32_t riff;
	double d1 = 0, d2;

	memset(&a, 0, sizeof(a));
	a.c = &c;
	a.m = m;
	if (bc_le32(&c, 4, &riff) || !bc_is(&c, 8, "AVI ", 4))
		return SL_FAIL(err, SL_E_CORRUPT, 0, "avi: no RIFF header");
	parse_list(&a, 12, riff - 4 < n - 12 ? 12 + (size_t)riff - 4 : n, 0);
	if (!a.have_avih)
		return SL_FAIL(err, SL_E_CORRUPT, 0, "avi: no main header (avih)");
	if (a.w && a.h) {
		m->width = a.w, m->height = a.h, m->have |= XM_DIMS;
	} else if (a.sw && a.sh) {
		m->width = a.sw, m->height = a.sh, m->have |= XM_DIMS;
	}
	if (a.usec && a.frames) {
		d1 = (double)a.frames * a.usec / 1e6;
		if (a.have_video && a.rate && a.scale && a.length) {
			double r;
			d2 = (double)a.length * a.scale / a.rate;
			r = d1 / d2;
			if (r > 1.9 && r < 3.1)
				d1 = d2;
		}
		m->duration = d1;
		m->have |= XM_DURATION;
	} else if (!a.frames && !a.length && a.bytes_per_s) {
		m->duration = (double)m->pics.file_size / a.bytes_per_s;
		m->have |= XM_DURATION;
	}
	return SL_OK;
}
