/* reader_posix.c - pread with posix_fadvise hints.
 *
 * Page-cache etiquette: cachestat(2) (Linux 6.5+; else mincore(2) over a
 * mapping that is never touched) tells whether a file was already cached
 * before we opened it; if it was, we leave its pages alone, otherwise we
 * drop them after reading (POSIX_FADV_DONTNEED). */
#include "indexer/reader.h"
#include "common/anchor_linux.h"
#include "common/sys_posix.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef __NR_cachestat
#define __NR_cachestat 451 /* same number on every architecture */
#endif

struct rd_file {
	int fd;
	int was_cached;
	int sparse;     /* fewer blocks than its size: holes are looked for */
	uint64_t size;
	uint64_t holes; /* bytes of holes given as zeros, not read */
};

static int sys_open(const struct anchor *a, const char *rel, int flags, struct stat *st,
		    int64_t *btime_ns, int *fd, struct sl_err *err)
{
	int e;

	switch (rd_take_fault(RD_OP_OPEN)) {
	case RD_FAULT_EMFILE: e = EMFILE; break;
	case RD_FAULT_ENOMEM: e = ENOMEM; break;
	case RD_FAULT_EACCES: e = EACCES; break;
	case RD_FAULT_EIO: e = EIO; break;
	case RD_FAULT_EINTR: e = EINTR; break;
	default: return anchor_open_file(a, rel, flags, fd, st, btime_ns, err);
	}
	*fd = -1;
	return SL_FAIL(err, sl_errno_class(e), e, "open");
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

/* Pages of the file in the page cache, the old way: mincore(2) over a
 * shared mapping of it.  The mapping is never read, so a file truncated
 * meanwhile cannot raise SIGBUS; a file too big to map (or a failure) is
 * taken as uncached.  Returns -1 when it cannot tell. */
static long cached_pages_mincore(int fd, uint64_t size, long page)
{
	size_t len, npages, i;
	unsigned char *vec;
	void *map;
	long n = 0;

	if (size > (uint64_t)SIZE_MAX / 2)
		return -1;
	len = (size_t)size;
	npages = (len + (size_t)page - 1) / (size_t)page;
	map = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED)
		return -1;
	vec = malloc(npages ? npages : 1);
	if (vec && mincore(map, len, vec) == 0) {
		for (i = 0; i < npages; i++)
			n += vec[i] & 1;
	} else {
		n = -1;
	}
	free(vec);
	munmap(map, len);
	return n;
}

/* cachestat works on this kernel (until it says ENOSYS once) */
static atomic_int have_cachestat = 1;

static int fully_cached(int fd, uint64_t size)
{
	struct cachestat_range r = {0, 0};
	struct cachestat_out cs;
	long page = sysconf(_SC_PAGESIZE), n;
	uint64_t need;

	if (size == 0)
		return 1;
	need = (size + (uint64_t)page - 1) / (uint64_t)page;
	/* a simulated ENOSYS (tests) answers for one call, not for good */
	if (atomic_load(&have_cachestat) && rd_take_fault(RD_OP_CACHESTAT) != RD_FAULT_ENOSYS) {
		if (syscall(__NR_cachestat, fd, &r, &cs, 0) == 0)
			return cs.nr_cache >= need;
		if (errno != ENOSYS)
			return 0;
		atomic_store(&have_cachestat, 0);
	}
	n = cached_pages_mincore(fd, size, page);
	return n >= 0 && (uint64_t)n >= need;
}

int rd_open(const struct anchor *a, const char *rel, struct rd_file **out, struct rd_info *info,
	    struct sl_err *err)
{
	const int base = O_RDONLY | O_NOCTTY;
	struct rd_file *f = NULL;
	struct stat st;
	int fd = -1, rc, flags;

	*out = NULL;
	for (;;) {
		flags = base | (atomic_load(&noatime_ok) ? O_NOATIME : 0);
		rc = sys_open(a, rel, flags, &st, &info->btime_ns, &fd, err);
		if (rc == SL_OK)
			break;
		if (err->sys == EINTR)
			continue;
		if (err->sys == EPERM && (flags & O_NOATIME)) {
			atomic_store(&noatime_ok, 0);
			continue;
		}
		return rc;
	}
	f = malloc(sizeof(*f));
	if (!f) {
		rc = SL_FAIL(err, SL_E_NOMEM, 0, "open: out of memory");
		goto fail;
	}
	f->fd = fd;
	f->size = (uint64_t)st.st_size;
	f->holes = 0;
	/* st_blocks counts 512-byte units; a file with fewer than its size
	 * needs has holes (or is compressed, or inline: asking costs two
	 * lseeks a piece of data, and only such files pay them) */
	f->sparse = (uint64_t)st.st_blocks * 512 < f->size;
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

/* How much of [at, at + len) is data before the next hole: len when all
 * of it (or when the file system cannot tell); 0 with *hole the hole's
 * length (to its end, or len) when at is in one. */
static size_t data_run(struct rd_file *f, uint64_t at, size_t len, size_t *hole)
{
	off_t d, h;

	*hole = 0;
	if (!f->sparse || at > (uint64_t)INT64_MAX)
		return len;
	d = lseek(f->fd, (off_t)at, SEEK_DATA);
	if (d < 0) {
		if (errno == ENXIO) { /* only a hole from here to the end */
			*hole = len;
			return 0;
		}
		f->sparse = 0; /* no SEEK_DATA here: read it all */
		return len;
	}
	if ((uint64_t)d > at) {
		*hole = (uint64_t)d - at < len ? (size_t)((uint64_t)d - at) : len;
		return 0;
	}
	h = lseek(f->fd, (off_t)at, SEEK_HOLE);
	if (h < 0 || (uint64_t)h <= at)
		return len;
	return (uint64_t)h - at < len ? (size_t)((uint64_t)h - at) : len;
}

int rd_read(struct rd_file *f, void *buf, size_t len, uint64_t off, size_t *got,
	    struct sl_err *err)
{
	unsigned char *p = buf;
	size_t done = 0;

	while (done < len) {
		size_t hole, want = data_run(f, off + done, len - done, &hole);
		ssize_t n;

		if (hole) {
			/* a hole reads as zeros: none are fetched from the disk
			 * (a 1 TiB sparse file costs nothing to read past) */
			uint64_t end = f->size > off + done ? f->size - (off + done) : 0;
			if (hole > end)
				hole = (size_t)end;
			if (hole == 0)
				break;
			memset(p + done, 0, hole);
			done += hole;
			f->holes += hole;
			continue;
		}
		n = sys_pread(f->fd, p + done, want, (off_t)(off + done));
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

int rd_cached(const struct rd_file *f)
{
	return f->was_cached;
}

uint64_t rd_holes(const struct rd_file *f)
{
	return f->holes;
}

int rd_stat(struct rd_file *f, struct rd_info *info, struct sl_err *err)
{
	struct stat st;
	if (sys_statx(f->fd, "", AT_EMPTY_PATH, &st, &info->btime_ns) != 0)
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
	if (!f->was_cached) /* all in memory already: nothing to ask the disk */
		posix_fadvise(f->fd, 0, 0, POSIX_FADV_WILLNEED);
}

void rd_advise_random(struct rd_file *f)
{
	posix_fadvise(f->fd, 0, 0, POSIX_FADV_RANDOM);
}

void rd_advise_range(struct rd_file *f, uint64_t off, uint64_t len)
{
	if (!f->was_cached && len > 0 && off <= (uint64_t)INT64_MAX &&
	    len <= (uint64_t)INT64_MAX - off)
		posix_fadvise(f->fd, (off_t)off, (off_t)len, POSIX_FADV_WILLNEED);
}

int rd_evict(const struct anchor *a, const char *rel, struct sl_err *err)
{
	struct stat st;
	int64_t bt;
	int fd, rc = anchor_open_file(a, rel, O_RDONLY | O_NONBLOCK | O_NOCTTY, &fd, &st, &bt, err);

	if (rc != SL_OK)
		return rc;
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
