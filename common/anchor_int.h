/* anchor_int.h - the anchor's state, shared by anchor.c and the platform's
 * anchor_*.c (no other module includes it). */
#ifndef SL_ANCHOR_INT_H
#define SL_ANCHOR_INT_H

#include <stdint.h>

struct anchor {
	int refs;
	int fd;         /* Linux: the folder, O_PATH; -1 elsewhere */
	unsigned flags; /* ANCHOR_* */
	uint64_t dev, ino;
	char *path;     /* canonical, as named (a file root: the file) */
	char *dirpath;  /* the held folder's path */
	const char *leaf; /* into path, or NULL */
};

/* A new anchor over what was resolved (copies the strings; takes fd), or
 * NULL when memory ran out (fd is then closed by the caller). */
struct anchor *anchor_new(int fd, unsigned flags, uint64_t dev, uint64_t ino, const char *path,
			  const char *leaf);

/* Close the platform's handle (anchor_free). */
void anchor_close_handle(struct anchor *a);

#endif
