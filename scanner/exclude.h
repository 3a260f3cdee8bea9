/* exclude.h - which entries the walk leaves out, by glob pattern.
 *
 * A pattern without a slash is matched against the name of every file and
 * directory (`*.tmp`, `.thumbnails`, `@eaDir`); one with a slash against the
 * absolute path, where `*` also crosses slashes (examples in docs/usage.md).  `*` matches any run of characters, `?` one character, `[a-z]`
 * and `[!0-9]` one of (or none of) a set, `\` takes the next character
 * literally.  An excluded directory is not descended at all.  Matching is
 * byte-wise; with fold_case (Windows) ASCII letters match either case and `\`
 * separates like `/`, so it cannot escape there.
 */
#ifndef SL_EXCLUDE_H
#define SL_EXCLUDE_H

#include <stddef.h>

#include "common/err.h"

struct excl {
	char **pats;
	size_t n, cap;
	int fold_case;
	int any_path;   /* some pattern has a slash: the walk must build paths */
};

/* Add a pattern (copied).  Returns SL_OK, SL_E_USAGE for an empty pattern or
 * an unclosed `[`, SL_E_NOMEM. */
int ex_add(struct excl *x, const char *pattern, struct sl_err *err);

/* 1 when the entry called `name`, at absolute `path` (only looked at when
 * any_path; may then not be NULL), is excluded; else 0. */
int ex_match(const struct excl *x, const char *path, const char *name);

/* 1 when the whole of s matches the glob pat; flags: EX_FOLD, EX_SLASH_STAR
 * (`*` and `?` may match a separator). */
enum { EX_FOLD = 1, EX_SLASH_STAR = 2 };
int ex_glob(const char *pat, const char *s, int flags);

void ex_free(struct excl *x);

#endif
