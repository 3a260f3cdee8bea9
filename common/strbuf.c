#include "common/strbuf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int sl_grow(void *arr, size_t *cap, size_t need, size_t elem)
{
	void **pp = (void **)arr;
	size_t ncap;
	void *np;

	if (need <= *cap)
		return 0;
	ncap = *cap ? *cap : 16;
	while (ncap < need) {
		if (ncap > SIZE_MAX / 2)
			return -1;
		ncap *= 2;
	}
	if (elem && ncap > SIZE_MAX / elem)
		return -1;
	np = realloc(*pp, ncap * elem);
	if (!np)
		return -1;
	*pp = np;
	*cap = ncap;
	return 0;
}

static int reserve(struct strbuf *sb, size_t extra)
{
	if (sb->len + extra + 1 < sb->len) {
		sb->oom = 1;
		return -1;
	}
	if (sl_grow(&sb->p, &sb->cap, sb->len + extra + 1, 1) != 0) {
		sb->oom = 1;
		return -1;
	}
	return 0;
}

int sb_add(struct strbuf *sb, const void *data, size_t n)
{
	if (reserve(sb, n) != 0)
		return -1;
	if (n)
		memcpy(sb->p + sb->len, data, n);
	sb->len += n;
	sb->p[sb->len] = '\0';
	return 0;
}

int sb_adds(struct strbuf *sb, const char *s)
{
	return sb_add(sb, s, strlen(s));
}

int sb_addc(struct strbuf *sb, char c)
{
	return sb_add(sb, &c, 1);
}

int sb_addf(struct strbuf *sb, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0 || reserve(sb, (size_t)n) != 0)
		return -1;
	va_start(ap, fmt);
	vsnprintf(sb->p + sb->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	sb->len += (size_t)n;
	return 0;
}

/* Length of the valid UTF-8 sequence at s (1-4), or 0 if invalid. */
static size_t utf8_seq(const unsigned char *s, size_t n)
{
	size_t len, i;
	uint32_t cp;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		len = 2, cp = s[0] & 0x1f;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		len = 3, cp = s[0] & 0x0f;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		len = 4, cp = s[0] & 0x07;
	else
		return 0;
	if (n < len)
		return 0;
	for (i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (s[i] & 0x3f);
	}
	if ((len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return len;
}

int sl_utf8_valid(const char *str, size_t n)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t i = 0, l;

	while (i < n) {
		if (!(l = utf8_seq(s + i, n - i)))
			return 0;
		i += l;
	}
	return 1;
}

int sb_add_utf8_lossy(struct strbuf *sb, const char *str, size_t n)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t i = 0, l;

	while (i < n) {
		l = utf8_seq(s + i, n - i);
		if (l) {
			sb_add(sb, s + i, l);
			i += l;
		} else {
			sb_add(sb, "\xef\xbf\xbd", 3);
			i++;
		}
	}
	return sb->oom ? -1 : 0;
}

int sb_add_json(struct strbuf *sb, const char *str, size_t n)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t i = 0;

	sb_addc(sb, '"');
	while (i < n) {
		unsigned char c = s[i];
		size_t l = utf8_seq(s + i, n - i);
		if (l == 0) {
			sb_addf(sb, "\\u%04x", c);
			i++;
			continue;
		}
		if (l > 1) {
			sb_add(sb, s + i, l);
			i += l;
			continue;
		}
		switch (c) {
		case '"': sb_adds(sb, "\\\""); break;
		case '\\': sb_adds(sb, "\\\\"); break;
		case '\n': sb_adds(sb, "\\n"); break;
		case '\r': sb_adds(sb, "\\r"); break;
		case '\t': sb_adds(sb, "\\t"); break;
		default:
			if (c < 0x20 || c == 0x7f)
				sb_addf(sb, "\\u%04x", c);
			else
				sb_addc(sb, (char)c);
		}
		i++;
	}
	sb_addc(sb, '"');
	return sb->oom ? -1 : 0;
}

void sb_reset(struct strbuf *sb)
{
	sb->len = 0;
	if (sb->p)
		sb->p[0] = '\0';
}

void sb_truncate(struct strbuf *sb, size_t len)
{
	if (sb->p && len < sb->len) {
		sb->len = len;
		sb->p[len] = '\0';
	}
}

void sb_free(struct strbuf *sb)
{
	free(sb->p);
	sb->p = NULL;
	sb->len = sb->cap = 0;
	sb->oom = 0;
}
