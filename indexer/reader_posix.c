/* reader_posix.c - pread with posix_fadvise hints.
 *
 * Page-cache etiquette: cachestat(2) (Linux 6.5+) tells whether a file was
 * already cached before we opened it; if it was, we leave its pages alone,
 * otherwise we drop them after reading (POSIX_FADV_DONTNEED).  Without
 * cachestat the file is assumed uncached. */
#include "indexer/reader.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef __NR_cachestat
#define __NR_cachestat 451 /* same number on every architecture */
#endif

struct rd_file {
	int fd;
	int was_cached;
	uint64_t size;
};

static int sys_open(const char *path, int flags)
{
	switch (rd_take_fault(RD_OP_OPEN)) {
	case RD_FAULT_EMFILE: errno = EMFILE; return -1;
	case RD_FAULT_ENOMEM: errno = ENOMEM; return -1;
	case RD_FAULT_EACCES: errno = EACCES; return -1;
	case RD_FAULT_EIO: errno = EIO; return -1;
	case RD_FAULT_EINTR: errno = EINTR; return -1;
	default: return open(path, flags);
	}
}

static ssize_t sys_pread(int fd, void *buf, size_t len, off_t off)
{
	switch (rd_take_fault(RD_OP_READ)) {
	case RD_FAULT_EIO: errno = EIO; return -1;
	case RD_FAULT_EINTR: errno = EINTR; return -1;
	case RD_FAULT_SHORT: return pread(fd, buf, len > 1 ? len / 2 : len, off);
	default: return pread(fd, buf, len, off);
	}
}

/* O_NOATIME is refused (EPERM) on files the caller does not own; after the
 * first refusal stop asking. */
static atomic_int noatime_ok = 1;

struct cachestat_range {
	uint64_t off, len;
};
struct cachestat_out {
	uint64_t nr_cache, nr_dirty, nr_writeback, nr_evicted, nr_recently_evicted;
};

static int fully_cached(int fd, uint64_t size)
{
	struct cachestat_range r = {0, 0};
	struct cachestat_out cs;
	long page = sysconf(_SC_PAGESIZE);

	if (size == 0)
		return 1;
	if (syscall(__NR_cachestat, fd, &r, &cs, 0) != 0)
		return 0;
	return cs.nr_cache >= (size + (uint64_t)page - 1) / (uint64_t)page;
}

int rd_open(const char *path, struct rd_file **out, struct rd_info *info, struct sl_err *err)
{
	const int base = O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC;
	struct rd_file *f = NULL;
	struct stat st;
	int fd = -1, e, rc;

	*out = NULL;
	for (;;) {
		int flags = base | (atomic_load(&noatime_ok) ? O_NOATIME : 0);
		fd = sys_open(path, flags);
		if (fd >= 0)
			break;
		e = errno;
		if (e == EINTR)
			continue;
		if (e == EPERM && (flags & O_NOATIME)) {
			atomic_store(&noatime_ok, 0);
			continue;
		}
		if (e == ELOOP)
			return SL_FAIL(err, SL_E_IO, 0, "open: replaced by a symbolic link");
		return SL_FAIL(err, sl_errno_class(e), e, "open");
	}
	if (fstat(fd, &st) != 0) {
		e = errno;
		rc = SL_FAIL(err, sl_errno_class(e), e, "stat");
		goto fail;
	}
	if (!S_ISREG(st.st_mode)) {
		rc = SL_FAIL(err, SL_E_IO, 0, "open: no longer a regular file");
		goto fail;
	}
	/* O_NONBLOCK only guarded the open against a FIFO swapped in. */
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	f = malloc(sizeof(*f));
	if (!f) {
		rc = SL_FAIL(err, SL_E_NOMEM, 0, "open: out of memory");
		goto fail;
	}
	f->fd = fd;
	f->size = (uint64_t)st.st_size;
	f->was_cached = fully_cached(fd, f->size);
	info->dev = (uint64_t)st.st_dev;
	info->ino = (uint64_t)st.st_ino;
	info->size = (uint64_t)st.st_size;
	info->mtime_ns = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
	info->ctime_ns = (int64_t)st.st_ctim.tv_sec * 1000000000 + st.st_ctim.tv_nsec;
	*out = f;
	return SL_OK;
fail:
	close(fd);
	return rc;
}

int rd_read(struct rd_file *f, void *buf, size_t len, uint64_t off, size_t *got,
	    struct sl_err *err)
{
	unsigned char *p = buf;
	size_t done = 0;

	while (done < len) {
		ssize_t n = sys_pread(f->fd, p + done, len - done, (off_t)(off + done));
		if (n < 0) {
			int e = errno;
			if (e == EINTR)
				continue;
			*got = done;
			return SL_FAIL(err, SL_E_IO, e, "read at offset %llu",
				       (unsigned long long)(off + done));
		}
		if (n == 0)
			break;
		done += (size_t)n;
	}
	*got = done;
	return SL_OK;
}

int rd_stat(struct rd_file *f, struct rd_info *info, struct sl_err *err)
{
	struct stat st;
	if (fstat(f->fd, &st) != 0)
		return SL_FAIL(err, SL_E_IO, errno, "stat");
	info->dev = (uint64_t)st.st_dev;
	info->ino = (uint64_t)st.st_ino;
	info->size = (uint64_t)st.st_size;
	info->mtime_ns = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
	info->ctime_ns = (int64_t)st.st_ctim.tv_sec * 1000000000 + st.st_ctim.tv_nsec;
	return SL_OK;
}

void rd_advise_sequential(struct rd_file *f)
{
	posix_fadvise(f->fd, 0, 0, POSIX_FADV_SEQUENTIAL);
}

void rd_advise_willneed(struct rd_file *f)
{
	posix_fadvise(f->fd, 0, 0, POSIX_FADV_WILLNEED);
}

int rd_evict(const char *path, struct sl_err *err)
{
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return SL_FAIL(err, SL_E_IO, errno, "open");
	posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
	close(fd);
	return SL_OK;
}

void rd_close(struct rd_file *f, int keep_cache)
{
	if (!f)
		return;
	if (!keep_cache && !f->was_cached)
		posix_fadvise(f->fd, 0, 0, POSIX_FADV_DONTNEED);
	close(f->fd);
	free(f);
}
