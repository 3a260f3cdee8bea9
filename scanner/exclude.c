/* exclude.c - glob patterns for the walk (exclude.h). */
#include "scanner/exclude.h"

#include <stdlib.h>
#include <string.h>

#include "common/strbuf.h"

static int lower(int c, int fold)
{
	return fold && c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c;
}

static int is_sep(int c, int flags)
{
	return c == '/' || ((flags & EX_FOLD) && c == '\\');
}

/* Length of the bracket expression at p (p[0] == '['), or 0 if unclosed. */
static size_t class_len(const char *p)
{
	size_t i = 1;
	if (p[i] == '!' || p[i] == '^')
		i++;
	if (p[i] == ']')
		i++;
	while (p[i] && p[i] != ']')
		i++;
	return p[i] == ']' ? i + 1 : 0;
}

static int class_match(const char *p, size_t len, int c, int fold)
{
	size_t i = 1;
	int neg = 0, hit = 0;

	if (p[i] == '!' || p[i] == '^') {
		neg = 1;
		i++;
	}
	c = lower(c, fold);
	for (; i < len - 1; i++) {
		int lo = lower((unsigned char)p[i], fold), hi = lo;
		if (i + 2 < len - 1 && p[i + 1] == '-') {
			hi = lower((unsigned char)p[i + 2], fold);
			i += 2;
		}
		if (c >= lo && c <= hi)
			hit = 1;
	}
	return hit != neg;
}

/* Iterative matcher: on a mismatch, go back to the last `*` and let it
 * swallow one more character.  Linear in practice, never exponential. */
int ex_glob(const char *pat, const char *s, int flags)
{
	const char *star_p = NULL, *star_s = NULL;
	int fold = flags & EX_FOLD;

	for (;;) {
		int c = (unsigned char)*s;
		if (*pat == '*') {
			while (*pat == '*')
				pat++;
			star_p = pat;
			star_s = s;
			continue;
		}
		if (!c) {
			if (!*pat)
				return 1;
		} else if (*pat == '?' && ((flags & EX_SLASH_STAR) || !is_sep(c, flags))) {
			pat++;
			s++;
			continue;
		} else if (*pat == '[' && class_len(pat)) {
			size_t n = class_len(pat);
			if (class_match(pat, n, c, fold) && !(is_sep(c, flags) &&
							       !(flags & EX_SLASH_STAR))) {
				pat += n;
				s++;
				continue;
			}
		} else if (*pat == '\\' && !fold && pat[1]) {
			if ((unsigned char)pat[1] == c) {
				pat += 2;
				s++;
				continue;
			}
		} else if (*pat && (lower((unsigned char)*pat, fold) == lower(c, fold) ||
				    (is_sep(*pat, flags) && is_sep(c, flags)))) {
			pat++;
			s++;
			continue;
		}
		/* mismatch: backtrack into the last star */
		if (!star_p || !*star_s)
			return 0;
		if (!(flags & EX_SLASH_STAR) && is_sep((unsigned char)*star_s, flags))
			return 0;
		star_s++;
		s = star_s;
		pat = star_p;
	}
}

int ex_add(struct excl *x, const char *pattern, struct sl_err *err)
{
	const char *p;
	char *copy;

	if (!pattern[0])
		return SL_FAIL(err, SL_E_USAGE, 0, "empty exclude pattern");
	for (p = pattern; *p; p++) {
		if (*p == '\\' && !x->fold_case && p[1]) {
			p++;
		} else if (*p == '[') {
			size_t n = class_len(p);
			if (!n)
				return SL_FAIL(err, SL_E_USAGE, 0,
					       "exclude pattern '%s': '[' without ']'", pattern);
			p += n - 1;
		}
	}
	if (sl_grow(&x->pats, &x->cap, x->n + 1, sizeof(*x->pats)) != 0 ||
	    !(copy = strdup(pattern)))
		return SL_FAIL(err, SL_E_NOMEM, 0, "out of memory");
	x->pats[x->n++] = copy;
	if (strchr(pattern, '/') || (x->fold_case && strchr(pattern, '\\')))
		x->any_path = 1;
	return SL_OK;
}

int ex_match(const struct excl *x, const char *path, const char *name)
{
	size_t i;
	int flags = x->fold_case ? EX_FOLD : 0;

	for (i = 0; i < x->n; i++) {
		const char *p = x->pats[i];
		int has_sep = strchr(p, '/') || (x->fold_case && strchr(p, '\\'));
		if (has_sep ? ex_glob(p, path, flags | EX_SLASH_STAR) : ex_glob(p, name, flags))
			return 1;
	}
	return 0;
}

void ex_free(struct excl *x)
{
	size_t i;
	if (!x)
		return;
	for (i = 0; i < x->n; i++)
		free(x->pats[i]);
	free(x->pats);
	memset(x, 0, sizeof(*x));
}
