/* anchor.c - what anchors are on every platform (anchor.h): references,
 * paths, identity.  Resolving and opening are in anchor_linux.c and
 * anchor_win.c. */
#include "common/anchor.h"

#include <stdlib.h>
#include <string.h>

#include "common/anchor_int.h"

struct anchor *anchor_new(int fd, unsigned flags, uint64_t dev, uint64_t ino, const char *path,
			  const char *leaf)
{
	struct anchor *a = calloc(1, sizeof(*a));
	size_t n = strlen(path), d = n;

	if (!a)
		return NULL;
	if (leaf) {
		/* "dir/leaf"; at the top ("/leaf", "C:/leaf") the folder keeps
		 * its slash */
		d = n - strlen(leaf) - 1;
		if (!memchr(path, '/', d))
			d++;
	}
	a->path = strdup(path);
	a->dirpath = malloc(d + 1);
	if (!a->path || !a->dirpath) {
		free(a->path);
		free(a->dirpath);
		free(a);
		return NULL;
	}
	memcpy(a->dirpath, path, d);
	a->dirpath[d] = '\0';
	a->leaf = leaf ? a->path + n - strlen(leaf) : NULL;
	a->refs = 1;
	a->fd = fd;
	a->flags = flags;
	a->dev = dev;
	a->ino = ino;
	return a;
}

struct anchor *anchor_ref(struct anchor *a)
{
	if (a)
		a->refs++;
	return a;
}

void anchor_free(struct anchor *a)
{
	if (!a || --a->refs > 0)
		return;
	anchor_close_handle(a);
	free(a->path);
	free(a->dirpath);
	free(a);
}

const char *anchor_path(const struct anchor *a)
{
	return a->path;
}

const char *anchor_leaf(const struct anchor *a)
{
	return a->leaf;
}

const char *anchor_dir_path(const struct anchor *a)
{
	return a->dirpath;
}

uint64_t anchor_dev(const struct anchor *a)
{
	return a->dev;
}

uint64_t anchor_ino(const struct anchor *a)
{
	return a->ino;
}

int anchor_cross_fs(const struct anchor *a)
{
	return (a->flags & ANCHOR_CROSS_FS) != 0;
}

int anchor_join(const struct anchor *a, const char *rel, struct strbuf *out)
{
	size_t n = strlen(a->dirpath);

	sb_adds(out, a->dirpath);
	if (rel[0]) {
		if (n == 0 || a->dirpath[n - 1] != '/')
			sb_addc(out, '/');
		sb_adds(out, rel);
	}
	return out->oom ? -1 : 0;
}

int anchor_retake(struct anchor *a, struct sl_err *err)
{
	struct anchor *b;
	int rc = anchor_open(a->dirpath, a->flags & ~(unsigned)ANCHOR_FILE, &b, err);

	if (rc != SL_OK)
		return rc;
	if (b->ino != a->ino || strcmp(b->path, a->dirpath) != 0) {
		anchor_free(b);
		return SL_FAIL(err, SL_E_IO, 0, "'%s' is another folder than before", a->dirpath);
	}
	anchor_close_handle(a);
	a->fd = b->fd;
	a->dev = b->dev;
	b->fd = -1;
	anchor_free(b);
	return SL_OK;
}

void anchor_release(struct anchor *a)
{
	anchor_close_handle(a);
	a->fd = -1;
}
