/* journal_none.c - no change journal (the Linux build): Linux file systems
 * keep none readable from user space (fanotify sees only what happens while
 * it listens), so every root is walked (journal.h). */
#include "scanner/journal.h"

#include <errno.h>
#include <stdio.h>

int jn_query(const char *path, struct jn_state *now, char *why, size_t cap)
{
	(void)path;
	(void)now;
	snprintf(why, cap, "%s", ""); /* nothing worth a line in every summary */
	return ENOSYS;
}

int jn_read(const char *path, const struct jn_state *now, int64_t from,
	    const uint64_t *ignore_dirs, size_t n, struct usn_tally *t, char *why, size_t cap)
{
	(void)path;
	(void)now;
	(void)from;
	(void)ignore_dirs;
	(void)n;
	(void)t;
	snprintf(why, cap, "%s", ""); /* nothing worth a line in every summary */
	return ENOSYS;
}

int jn_paths(const char *path, const struct fileid *ids, size_t n,
	     int (*fn)(const char *p, uint64_t id, void *ctx), void *ctx, char *why, size_t cap)
{
	(void)path;
	(void)ids;
	(void)n;
	(void)fn;
	(void)ctx;
	snprintf(why, cap, "no change journal on this platform");
	return ENOSYS;
}
