/* fmt.c - the calls every parser makes on the record it fills (fmt.h). */
#include "indexer/formats/fmt.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void x_warn(struct x_meta *m, const char *fmt, ...)
{
	size_t len = strlen(m->warnings);
	va_list ap;

	if (len + 4 >= sizeof(m->warnings))
		return;
	if (len) {
		memcpy(m->warnings + len, "; ", 2);
		len += 2;
	}
	va_start(ap, fmt);
	vsnprintf(m->warnings + len, sizeof(m->warnings) - len, fmt, ap);
	va_end(ap);
	/* vsnprintf may cut a multi-byte character at the end */
	len = strlen(m->warnings);
	while (len && (unsigned char)m->warnings[len - 1] >= 0x80 && len + 1 >= sizeof(m->warnings))
		m->warnings[--len] = '\0';
}

void x_copy_text(char *dst, size_t cap, const uint8_t *s, size_t n)
{
	size_t i = 0, o = 0;

	if (cap == 0)
		return;
	while (i < n && s[i] != 0) {
		unsigned char ch = s[i];
		size_t need, k;
		if (ch < 0x20 || ch == 0x7f) {
			i++;
			continue;
		}
		if (ch < 0x80) {
			if (o + 1 >= cap)
				break;
			dst[o++] = (char)ch;
			i++;
			continue;
		}
		/* a valid UTF-8 sequence is kept whole */
		need = ch >= 0xf0 ? 4 : ch >= 0xe0 ? 3 : ch >= 0xc2 ? 2 : 0;
		for (k = 1; need && k < need; k++)
			if (i + k >= n || (s[i + k] & 0xc0) != 0x80)
				need = 0;
		if (need == 4 && (ch > 0xf4 || (ch == 0xf0 && s[i + 1] < 0x90) ||
				  (ch == 0xf4 && s[i + 1] >= 0x90)))
			need = 0;
		if (need == 3 && ((ch == 0xe0 && s[i + 1] < 0xa0) || (ch == 0xed && s[i + 1] >= 0xa0)))
			need = 0;
		if (need) {
			if (o + need >= cap)
				break;
			memcpy(dst + o, s + i, need);
			o += need;
			i += need;
			continue;
		}
		/* a byte we cannot decode: the encoding is unknown, say so */
		if (o + 1 >= cap)
			break;
		dst[o++] = '?';
		i++;
	}
	while (o > 0 && dst[o - 1] == ' ')
		o--;
	dst[o] = '\0';
}

void x_unix_datetime(struct x_meta *m, int64_t t)
{
	/* days to civil date (proleptic Gregorian), without gmtime's locks */
	int64_t days = t >= 0 ? t / 86400 : (t - 86399) / 86400;
	int64_t secs = t - days * 86400;
	int64_t z = days + 719468, era = (z >= 0 ? z : z - 146096) / 146097;
	int64_t doe = z - era * 146097;
	int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	int64_t y = yoe + era * 400, doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	int64_t mp = (5 * doy + 2) / 153, d = doy - (153 * mp + 2) / 5 + 1;
	int64_t mo = mp < 10 ? mp + 3 : mp - 9;

	if (m->datetime_original[0])
		return;
	y += mo <= 2;
	if (y < 0 || y > 9999)
		return;
	snprintf(m->datetime_original, sizeof(m->datetime_original),
		 "%04d-%02d-%02dT%02d:%02d:%02d", (int)y, (int)mo, (int)d, (int)(secs / 3600),
		 (int)(secs / 60 % 60), (int)(secs % 60));
}
