/* The service's sandbox (sys_sandbox, Landlock) really confines: in a
 * child process, after confining, the roots are readable and not writable,
 * the index's folder is writable, system files are readable, and anything
 * else is neither.  Exit 77 (skipped) where the kernel has no Landlock,
 * unless SEEKLESS_REQUIRE_ALL=1. */
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/sys.h"
#include "tests/unit/test.h"

static int opens(const char *path, int flags)
{
	int fd = open(path, flags | O_CLOEXEC, 0600);
	if (fd < 0)
		return 0;
	close(fd);
	return 1;
}

int main(void)
{
	char *dir = t_tmpdir("sandbox");
	char ro[4096], rw[4096], out[4096], p[4200], how[400];
	int status = 0;
	pid_t pid;

	snprintf(ro, sizeof(ro), "%s/photos", dir);
	snprintf(rw, sizeof(rw), "%s/index", dir);
	snprintf(out, sizeof(out), "%s/elsewhere", dir);
	t_mkdir(ro);
	t_mkdir(rw);
	t_mkdir(out);
	snprintf(p, sizeof(p), "%s/a.jpg", ro);
	t_write(p, "photo", 5);
	snprintf(p, sizeof(p), "%s/secret", out);
	t_write(p, "secret", 6);

	pid = fork();
	if (pid == 0) {
		const char *roots[] = {ro};
		int bad = 0;
		if (sys_sandbox(roots, 1, rw, how, sizeof(how)) != 0) {
			fprintf(stderr, "%s\n", how);
			_exit(77);
		}
		fprintf(stderr, "  %s\n", how);
		snprintf(p, sizeof(p), "%s/a.jpg", ro);
		bad |= !opens(p, O_RDONLY) << 0;          /* roots: readable */
		bad |= opens(p, O_WRONLY) << 1;           /* not writable */
		snprintf(p, sizeof(p), "%s/new.jpg", ro);
		bad |= opens(p, O_WRONLY | O_CREAT) << 2; /* nothing created there */
		snprintf(p, sizeof(p), "%s/index.db", rw);
		bad |= !opens(p, O_RDWR | O_CREAT) << 3;  /* the index's folder: writable */
		snprintf(p, sizeof(p), "%s/secret", out);
		bad |= opens(p, O_RDONLY) << 4;           /* elsewhere: not even readable */
		snprintf(p, sizeof(p), "%s/new", out);
		bad |= opens(p, O_WRONLY | O_CREAT) << 5;
		bad |= !opens("/proc/self/io", O_RDONLY) << 6; /* what the scan itself reads */
		bad |= opens("/etc/seekless-sandbox-test", O_WRONLY | O_CREAT) << 7;
		_exit(bad);
	}
	CHECK(pid > 0);
	waitpid(pid, &status, 0);
	t_rmtree(dir);
	free(dir);
	if (WIFEXITED(status) && WEXITSTATUS(status) == 77) {
		if (getenv("SEEKLESS_REQUIRE_ALL") && strcmp(getenv("SEEKLESS_REQUIRE_ALL"), "1") == 0)
			return 1;
		return 77;
	}
	CHECK(WIFEXITED(status));
	CHECK_INT(WEXITSTATUS(status), 0); /* bit i set: check i failed */
	return t_done();
}
