/* rawdev_linux.c - the whole disk under a file system, read with O_DIRECT. */
#include "scanner/rawdev.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* O_DIRECT wants buffer, offset and length aligned to the logical block
 * size; 4096 covers 512-byte and 4K devices alike. */
#define ALIGN 4096u
#define MAXLEN (64u * 1024)

struct rawdev {
	int fd;
	uint64_t base; /* partition start on the disk */
	unsigned char *buf;
};

int rawdev_open(const struct dev_info *d, struct rawdev **out, char *name, size_t cap,
		struct sl_err *err)
{
	struct rawdev *r;
	int e;

	*out = NULL;
	snprintf(name, cap, "/dev/%s", d->disk);
	if (!d->disk[0])
		return SL_FAIL(err, SL_E_IO, 0, "no block device under %s", d->fstype);
	r = calloc(1, sizeof(*r));
	if (!r || posix_memalign((void **)&r->buf, ALIGN, MAXLEN + 2 * ALIGN) != 0) {
		free(r);
		return SL_FAIL(err, SL_E_NOMEM, 0, "verify: out of memory");
	}
	r->base = d->part_start;
	r->fd = open(name, O_RDONLY | O_DIRECT | O_CLOEXEC);
	if (r->fd < 0 && errno == EINVAL) /* no O_DIRECT there: the cache then */
		r->fd = open(name, O_RDONLY | O_CLOEXEC);
	if (r->fd < 0) {
		e = errno;
		free(r->buf);
		free(r);
		return SL_FAIL(err, SL_E_IO, e, "cannot open %s", name);
	}
	*out = r;
	return SL_OK;
}

int rawdev_read(struct rawdev *r, uint64_t pos, void *buf, size_t len, struct sl_err *err)
{
	uint64_t at, start, end;
	ssize_t n;

	if (len > MAXLEN)
		return SL_FAIL(err, SL_E_IO, 0, "verify: read of %zu bytes", len);
	if (pos > UINT64_MAX - r->base - len - ALIGN)
		return SL_FAIL(err, SL_E_IO, 0, "position %llu out of range", (unsigned long long)pos);
	at = r->base + pos;
	start = at & ~(uint64_t)(ALIGN - 1);
	end = (at + len + ALIGN - 1) & ~(uint64_t)(ALIGN - 1);
	n = pread(r->fd, r->buf, (size_t)(end - start), (off_t)start);
	if (n < 0)
		return SL_FAIL(err, SL_E_IO, errno, "device read at %llu", (unsigned long long)at);
	if ((uint64_t)n < at - start + len)
		return SL_FAIL(err, SL_E_IO, 0, "device ends before %llu",
			       (unsigned long long)(at + len));
	memcpy(buf, r->buf + (at - start), len);
	return SL_OK;
}

void rawdev_close(struct rawdev *r)
{
	if (!r)
		return;
	close(r->fd);
	free(r->buf);
	free(r);
}

int rawdev_file_head(const char *path, void *buf, size_t len, size_t *got, struct sl_err *err)
{
	size_t have = 0;
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);

	*got = 0;
	if (fd < 0)
		return SL_FAIL(err, SL_E_IO, errno, "open");
	while (have < len) {
		ssize_t n = pread(fd, (char *)buf + have, len - have, (off_t)have);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int e = errno;
			close(fd);
			return SL_FAIL(err, SL_E_IO, e, "read");
		}
		if (n == 0)
			break;
		have += (size_t)n;
	}
	close(fd);
	*got = have;
	return SL_OK;
}
