/* strbuf.h - growable byte buffers and arrays.
 *
 * A strbuf always holds a NUL-terminated string when p is not NULL.  Append
 * functions return 0, or -1 when memory ran out; after a failure the buffer
 * keeps what it had and sb->oom is set, so a caller may append many times and
 * check once. */
#ifndef SL_STRBUF_H
#define SL_STRBUF_H

#include <stddef.h>
#include <stdint.h>

#include "common/err.h"

struct strbuf {
	char *p;
	size_t len;
	size_t cap;
	int oom;
};

#define STRBUF_INIT {NULL, 0, 0, 0}

int sb_add(struct strbuf *sb, const void *data, size_t n);
int sb_adds(struct strbuf *sb, const char *s);
int sb_addc(struct strbuf *sb, char c);
int sb_addf(struct strbuf *sb, const char *fmt, ...) SL_PRINTF(2, 3);
/* Append s as a JSON string literal (quotes included).  Bytes that are not
 * valid UTF-8 are written as \u00XX escapes of their Latin-1 reading so the
 * output is always valid JSON. */
int sb_add_json(struct strbuf *sb, const char *s, size_t n);

/* Whether s[0..n) is valid UTF-8 (no overlongs, surrogates or values past
 * U+10FFFF). */
int sl_utf8_valid(const char *s, size_t n);

/* Append s with every byte that is not part of valid UTF-8 replaced by
 * U+FFFD, so the result is always valid UTF-8.  Returns 0 or -1. */
int sb_add_utf8_lossy(struct strbuf *sb, const char *s, size_t n);
void sb_reset(struct strbuf *sb);
/* Shorten to len bytes (no-op when already shorter). */
void sb_truncate(struct strbuf *sb, size_t len);
void sb_free(struct strbuf *sb);

/* Make room for need elements of size elem in *arr (capacity *cap, counted in
 * elements), growing geometrically.  Returns 0 or -1 on overflow/no memory;
 * *arr is untouched on failure. */
int sl_grow(void *arr, size_t *cap, size_t need, size_t elem);

#endif
