/* The read seam: whole reads, resumed short reads and EINTR, injected
 * EIO/EMFILE/EACCES, and files that are not what they were. */
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include "indexer/reader.h"
#include "tests/unit/test.h"

static char *dir;
static char path[4096];
static unsigned char *data;
#define N (3 * 1024 * 1024 + 17)

static int read_all(unsigned char *buf, size_t *got, struct sl_err *e)
{
	struct rd_file *f = NULL;
	struct rd_info info;
	int rc = rd_open(path, &f, &info, e);
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
	CHECK_INT(rd_open(p, &f, &info, &e), SL_E_IO); /* does not block */
	CHECK(f == NULL);
	snprintf(p, sizeof(p), "%s/link", dir);
	CHECK(symlink("f", p) == 0);
	CHECK_INT(rd_open(p, &f, &info, &e), SL_E_IO);
	CHECK(strstr(e.msg, "symbolic link") != NULL);
	snprintf(p, sizeof(p), "%s/missing", dir);
	CHECK_INT(rd_open(p, &f, &info, &e), SL_E_IO);
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
	CHECK_INT(rd_open(p, &f, &a, &e), SL_OK);
	CHECK(truncate(p, 4) == 0);
	CHECK_INT(rd_read(f, buf, 10, 0, &got, &e), SL_OK);
	CHECK_INT(got, 4); /* shrank under us: a short count, not a crash */
	CHECK_INT(rd_stat(f, &b, &e), SL_OK);
	CHECK_INT(b.size, 4);
	CHECK_INT(a.ino, b.ino);
	rd_close(f, 0); /* and dropping its cache is harmless */
}

int main(void)
{
	dir = t_tmpdir("reader");
	snprintf(path, sizeof(path), "%s/f", dir);
	data = t_bytes(N, 3);
	t_write(path, data, N);
	RUN(test_plain);
	RUN(test_short_and_eintr);
	RUN(test_faults);
	RUN(test_not_regular);
	RUN(test_changed);
	free(data);
	t_rmtree(dir);
	free(dir);
	return t_done();
}
