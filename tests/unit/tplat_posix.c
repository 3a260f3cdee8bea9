/* tplat_posix.c - test.h's platform part on POSIX systems. */
#include "tests/unit/test.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

char *t_tmpdir(const char *tag)
{
	const char *base = getenv("TMPDIR");
	char *p = malloc(4096);
	snprintf(p, 4096, "%s/seekless-%s-XXXXXX", base && base[0] ? base : "/tmp", tag);
	if (!mkdtemp(p)) {
		perror("mkdtemp");
		exit(2);
	}
	return p;
}

void t_rmtree(const char *dir)
{
	char cmd[4200];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "warning: could not remove %s\n", dir);
}

void t_write(const char *path, const void *data, size_t n)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || write(fd, data, n) != (ssize_t)n || close(fd) != 0) {
		fprintf(stderr, "cannot write %s: %s\n", path, strerror(errno));
		exit(2);
	}
}

void t_rewrite(const char *path, const void *data, size_t n)
{
	int fd = open(path, O_WRONLY);
	if (fd < 0 || pwrite(fd, data, n, 0) != (ssize_t)n || ftruncate(fd, (off_t)n) != 0 ||
	    close(fd) != 0) {
		fprintf(stderr, "cannot rewrite %s: %s\n", path, strerror(errno));
		exit(2);
	}
}

int t_mkdir(const char *path)
{
	return mkdir(path, 0755);
}

int t_unlink(const char *path)
{
	return unlink(path);
}

int t_private(const char *path)
{
	struct stat st;
	if (stat(path, &st) != 0)
		return -1;
	return (st.st_mode & 0777) == 0600;
}

int t_set_tz(const char *zone)
{
	setenv("TZ", zone, 1);
	tzset();
	return 1;
}

/* The copy's pages, the guard page after them: the copy sits at the end
 * of the pages so that its last byte is the one before the guard. */
static size_t guard_span(size_t n, size_t *page)
{
	*page = (size_t)sysconf(_SC_PAGESIZE);
	return (n + *page - 1) / *page * *page;
}

unsigned char *t_guarded(const void *src, size_t n)
{
	size_t page, span = guard_span(n, &page);
	unsigned char *base = mmap(NULL, span + page, PROT_READ | PROT_WRITE,
				   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (base == MAP_FAILED || mprotect(base + span, page, PROT_NONE) != 0) {
		fprintf(stderr, "t_guarded: %s\n", strerror(errno));
		exit(2);
	}
	if (n)
		memcpy(base + span - n, src, n);
	return base + span - n;
}

void t_unguard(unsigned char *p, size_t n)
{
	size_t page, span = guard_span(n, &page);
	munmap(p + n - span, span + page);
}
