/* The read seam: whole reads, resumed short reads and EINTR, injected
 * EIO/EMFILE/EACCES, files that are not what they were, and page-cache
 * etiquette (a file read into the cache by the scan leaves it again; one
 * that was there stays), with cachestat and without. */
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include "indexer/reader.h"
#include "tests/unit/test.h"
#include "tests/unit/tfs.h"

static char *dir;
static char path[4096];
static unsigned char *data;
#define N (3 * 1024 * 1024 + 17)

/* rd_open of the file at p, below its folder held as a root is */
static int open_path(const char *p, struct rd_file **f, struct rd_info *info, struct sl_err *e)
{
	const char *name;
	struct anchor *a = t_anchor(p, &name);
	int rc = rd_open(a, name, f, info, e);
	anchor_free(a);
	return rc;
}

static int read_all(unsigned char *buf, size_t *got, struct sl_err *e)
{
	struct rd_file *f = NULL;
	struct rd_info info;
	int rc = open_path(path, &f, &info, e);
	if (rc != SL_OK)
		return rc;
	CHECK_INT(info.size, N);
	rc = rd_read(f, buf, N + 100, 0, got, e);
	rd_close(f, 1);
	return rc;
}

static void test_plain(void)
{
	unsigned char *buf = malloc(N + 100);
	struct sl_err e;
	size_t got = 0;

	CHECK_INT(read_all(buf, &got, &e), SL_OK);
	CHECK_INT(got, N); /* asked for more: stops at end of file */
	CHECK(memcmp(buf, data, N) == 0);
	free(buf);
}

static void test_short_and_eintr(void)
{
	unsigned char *buf = malloc(N + 100);
	struct sl_err e;
	size_t got = 0;

	rd_inject(RD_OP_READ, RD_FAULT_SHORT, 0);
	CHECK_INT(read_all(buf, &got, &e), SL_OK);
	CHECK_INT(got, N);
	CHECK(memcmp(buf, data, N) == 0);
	rd_inject(RD_OP_READ, RD_FAULT_EINTR, 0);
	memset(buf, 0, N);
	CHECK_INT(read_all(buf, &got, &e), SL_OK);
	CHECK_INT(got, N);
	CHECK(memcmp(buf, data, N) == 0);
	rd_inject(RD_OP_OPEN, RD_FAULT_EINTR, 0);
	CHECK_INT(read_all(buf, &got, &e), SL_OK);
	free(buf);
}

static void test_faults(void)
{
	unsigned char *buf = malloc(N + 100);
	struct sl_err e;
	size_t got = 0;

	rd_inject(RD_OP_READ, RD_FAULT_EIO, 0);
	CHECK_INT(read_all(buf, &got, &e), SL_E_IO);
	CHECK(strstr(e.msg, "read at offset 0: Input/output error") != NULL);
	CHECK_INT(e.sys, EIO);
	CHECK_INT(got, 0);

	/* EIO on the second call: the first brought everything, reported */
	rd_inject(RD_OP_READ, RD_FAULT_EIO, 1);
	CHECK_INT(read_all(buf, &got, &e), SL_E_IO);
	CHECK_INT(got, N);
	CHECK(strstr(e.msg, "read at offset 3145745") != NULL);

	rd_inject(RD_OP_OPEN, RD_FAULT_EMFILE, 0);
	CHECK_INT(read_all(buf, &got, &e), SL_E_RESOURCE);
	CHECK(strstr(e.msg, "open: Too many open files") != NULL);

	rd_inject(RD_OP_OPEN, RD_FAULT_EACCES, 0);
	CHECK_INT(read_all(buf, &got, &e), SL_E_IO);
	CHECK(strstr(e.msg, "Permission denied") != NULL);

	/* skip counts calls: the fault hits the second open, not the first */
	rd_inject(RD_OP_OPEN, RD_FAULT_EIO, 1);
	CHECK_INT(read_all(buf, &got, &e), SL_OK);
	CHECK_INT(read_all(buf, &got, &e), SL_E_IO);
	CHECK_INT(read_all(buf, &got, &e), SL_OK);
	free(buf);
}

static void test_not_regular(void)
{
	struct rd_file *f = NULL;
	struct rd_info info;
	struct sl_err e;
	char p[4096];

	snprintf(p, sizeof(p), "%s/fifo", dir);
	mkfifo(p, 0644);
	CHECK_INT(open_path(p, &f, &info, &e), SL_E_IO); /* does not block */
	CHECK(f == NULL);
	snprintf(p, sizeof(p), "%s/link", dir);
	CHECK(symlink("f", p) == 0);
	CHECK_INT(open_path(p, &f, &info, &e), SL_E_IO);
	CHECK(strstr(e.msg, "symbolic link") != NULL);
	snprintf(p, sizeof(p), "%s/missing", dir);
	CHECK_INT(open_path(p, &f, &info, &e), SL_E_IO);
	CHECK_INT(e.sys, ENOENT);
	rd_close(NULL, 0);
}

static void test_changed(void)
{
	struct rd_file *f = NULL;
	struct rd_info a, b;
	struct sl_err e;
	char p[4096];
	unsigned char buf[16];
	size_t got;

	snprintf(p, sizeof(p), "%s/grow", dir);
	t_write(p, "0123456789", 10);
	CHECK_INT(open_path(p, &f, &a, &e), SL_OK);
	CHECK(truncate(p, 4) == 0);
	CHECK_INT(rd_read(f, buf, 10, 0, &got, &e), SL_OK);
	CHECK_INT(got, 4); /* shrank under us: a short count, not a crash */
	CHECK_INT(rd_stat(f, &b, &e), SL_OK);
	CHECK_INT(b.size, 4);
	CHECK_INT(a.ino, b.ino);
	rd_close(f, 0); /* and dropping its cache is harmless */
}

/* Pages of path in the page cache, as mincore over a mapping sees them
 * (the test's own look, not the reader's). */
static long resident(const char *p)
{
	struct stat st;
	long page = sysconf(_SC_PAGESIZE), n = 0;
	size_t i, np;
	unsigned char *vec;
	void *m;
	int fd = open(p, O_RDONLY);
	if (fd < 0 || fstat(fd, &st) != 0)
		return -1;
	np = ((size_t)st.st_size + (size_t)page - 1) / (size_t)page;
	m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
	vec = malloc(np);
	if (m != MAP_FAILED && mincore(m, (size_t)st.st_size, vec) == 0)
		for (i = 0; i < np; i++)
			n += vec[i] & 1;
	if (m != MAP_FAILED)
		munmap(m, (size_t)st.st_size);
	free(vec);
	close(fd);
	return n;
}

static void evict(const char *p)
{
	int fd = open(p, O_RDONLY);
	fdatasync(fd);
	posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
	close(fd);
}

static void warm(const char *p)
{
	char buf[65536];
	int fd = open(p, O_RDONLY);
	while (read(fd, buf, sizeof(buf)) > 0)
		;
	close(fd);
}

/* Read p the way the pipeline does; keep: --keep-cache. */
static void scan_one(const char *p, int keep)
{
	struct rd_file *f = NULL;
	struct rd_info info;
	struct sl_err e;
	unsigned char *buf = malloc(N);
	size_t got;
	CHECK_INT(open_path(p, &f, &info, &e), SL_OK);
	CHECK_INT(rd_read(f, buf, N, 0, &got, &e), SL_OK);
	rd_close(f, keep);
	free(buf);
}

/* On an ext4 of the test's own: on tmpfs the cache is the storage, and
 * nothing can leave it. */
static char *cache_fs;

static void test_cache_etiquette(void)
{
	long pages = (N + sysconf(_SC_PAGESIZE) - 1) / sysconf(_SC_PAGESIZE);
	char p[4200];
	int pass;

	snprintf(p, sizeof(p), "%s/f", cache_fs);
	t_write(p, data, N);
	evict(p);
	if (resident(p) > pages / 10) {
		t_skip_part("the page cache here ignores POSIX_FADV_DONTNEED");
		return;
	}
	/* pass 0 with cachestat (when the kernel has it), pass 1 as on a
	 * kernel without it (mincore) */
	for (pass = 0; pass < 2; pass++) {
		evict(p);
		if (pass)
			rd_inject(RD_OP_CACHESTAT, RD_FAULT_ENOSYS, 0);
		scan_one(p, 0);
		CHECK(resident(p) <= pages / 10); /* brought in by us: dropped */
		warm(p);
		CHECK_INT(resident(p), pages);
		if (pass)
			rd_inject(RD_OP_CACHESTAT, RD_FAULT_ENOSYS, 0);
		scan_one(p, 0);
		CHECK_INT(resident(p), pages); /* was there: left alone */
		evict(p);
		scan_one(p, 1);
		CHECK_INT(resident(p), pages); /* --keep-cache */
	}
	rd_inject(RD_OP_CACHESTAT, RD_FAULT_NONE, 0);
}

int main(void)
{
	cache_fs = t_fs("ext4", 64);
	dir = t_tmpdir("reader");
	snprintf(path, sizeof(path), "%s/f", dir);
	data = t_bytes(N, 3);
	t_write(path, data, N);
	RUN(test_plain);
	RUN(test_short_and_eintr);
	RUN(test_faults);
	RUN(test_not_regular);
	RUN(test_changed);
	if (cache_fs)
		RUN(test_cache_etiquette);
	tfs_drop(cache_fs);
	free(data);
	t_rmtree(dir);
	free(dir);
	return t_done();
}
