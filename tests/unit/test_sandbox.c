/* A scan's confinement (confine.h) really confines.  In child processes:
 * after CONFINE_SCAN the roots are readable and not writable, the index's
 * folder is writable, /sys readable, and anything else neither (root's own
 * /etc/shadow included); after CONFINE_READ also /sys is gone but for the
 * files named, and, as root, only CAP_DAC_READ_SEARCH and CAP_FOWNER are
 * left; the system-call filter refuses sockets, signals to other
 * processes, chmod, chown, extended attributes, open_by_handle_at, chattr
 * and new namespaces, while what a reader does (threads, the checked
 * reopen of anchor.h, O_NOATIME) still works.  Each check is a bit of the
 * child's report.  Exit 77 (skipped) where the kernel has no
 * Landlock, unless SEEKLESS_REQUIRE_ALL=1. */
#include <fcntl.h>
#include <linux/capability.h>
#include <linux/fs.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#ifndef SYS_landlock_create_ruleset
#define SYS_landlock_create_ruleset 444
#endif
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "common/anchor_linux.h"
#include "common/confine.h"
#include "tests/unit/test.h"

static char ro[4096], rw[4096], out[4096];

static int opens(const char *path, int flags)
{
	int fd = open(path, flags | O_CLOEXEC | O_NONBLOCK, 0600);
	if (fd < 0)
		return 0;
	close(fd);
	return 1;
}

static void *noop(void *arg)
{
	return arg;
}

static int make_anchor(struct anchor **a)
{
	struct sl_err e;
	return anchor_open(ro, 0, a, &e) == SL_OK;
}

/* The checks every stage keeps; bits 0-7. */
static int common_checks(struct anchor *a)
{
	char p[4200];
	int bad = 0;

	snprintf(p, sizeof(p), "%s/a.jpg", ro);
	bad |= !opens(p, O_RDONLY) << 0;          /* roots: readable */
	bad |= opens(p, O_WRONLY) << 1;           /* not writable */
	snprintf(p, sizeof(p), "%s/new.jpg", ro);
	bad |= opens(p, O_WRONLY | O_CREAT) << 2; /* nothing created there */
	snprintf(p, sizeof(p), "%s/index.db", rw);
	bad |= !opens(p, O_RDWR | O_CREAT) << 3;  /* the index's folder: writable */
	snprintf(p, sizeof(p), "%s/secret", out);
	bad |= opens(p, O_RDONLY) << 4;           /* elsewhere: not even readable */
	bad |= opens("/etc/shadow", O_RDONLY) << 5;
	bad |= opens("/etc/seekless-sandbox-test", O_WRONLY | O_CREAT) << 6;
	{
		/* what the reader does: the checked reopen through /proc */
		struct stat st;
		int64_t bt;
		struct sl_err e;
		int fd;
		bad |= (anchor_open_file(a, "a.jpg", O_RDONLY | O_NOATIME, &fd, &st, &bt, &e) !=
			SL_OK) << 7;
		if (bad & (1 << 7))
			fprintf(stderr, "  reopen: %s\n", e.msg);
		else
			close(fd);
	}
	return bad;
}

static int stage_scan(void)
{
	struct anchor *a;
	struct confine c = {NULL, 1, rw, NULL, 0};
	char how[400];
	int bad;

	if (!make_anchor(&a))
		return 1 << 30;
	c.roots = &a;
	if (confine(CONFINE_SCAN, &c, how, sizeof(how)) != 0) {
		fprintf(stderr, "  %s\n", how);
		_exit(strstr(how, "no Landlock") ? 77 : 100);
	}
	fprintf(stderr, "  scan: %s\n", how);
	bad = common_checks(a);
	bad |= !opens("/sys/kernel/mm/transparent_hugepage/enabled", O_RDONLY) << 8;
	bad |= !opens("/proc/self/mountinfo", O_RDONLY) << 9;
	if (syscall(SYS_landlock_create_ruleset, NULL, 0, 1) >= 4) {
		/* no TCP out (Landlock ABI 4): refused, not merely unanswered */
		struct sockaddr_in sa;
		int s = socket(AF_INET, SOCK_STREAM, 0);
		memset(&sa, 0, sizeof(sa));
		sa.sin_family = AF_INET;
		sa.sin_port = htons(9);
		sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		bad |= (s < 0 || connect(s, (struct sockaddr *)&sa, sizeof(sa)) == 0 ||
			errno != EACCES) << 10;
		if (s >= 0)
			close(s);
	}
	return bad;
}

static int stage_read(void)
{
	struct anchor *a;
	const char *files[] = {"/sys/kernel/mm/transparent_hugepage/defrag"};
	struct confine c = {NULL, 1, rw, files, 1};
	struct __user_cap_header_struct hdr = {_LINUX_CAPABILITY_VERSION_3, 0};
	struct __user_cap_data_struct data[2];
	char how[400], p[4200];
	pthread_t t;
	pid_t other;
	int bad, fd, flags = 0, hold[2];

	if (!make_anchor(&a))
		return 1 << 30;
	c.roots = &a;
	/* a process from before the confinement, waiting until we end */
	if (pipe(hold) != 0)
		return 1 << 29;
	other = fork();
	if (other == 0) {
		/* no more capabilities than the confined one will have, so
		 * that only Landlock stands between them */
		struct __user_cap_header_struct h = {_LINUX_CAPABILITY_VERSION_3, 0};
		struct __user_cap_data_struct d[2];
		char byte;
		memset(d, 0, sizeof(d));
		d[0].effective = d[0].permitted =
			(1u << CAP_DAC_READ_SEARCH) | (1u << CAP_FOWNER);
		syscall(SYS_capset, &h, d);
		close(hold[1]);
		_exit(read(hold[0], &byte, 1) < 0);
	}
	close(hold[0]);
	if (confine(CONFINE_SCAN, &c, how, sizeof(how)) != 0)
		_exit(strstr(how, "no Landlock") ? 77 : 100);
	if (confine(CONFINE_READ, &c, how, sizeof(how)) != 0) {
		fprintf(stderr, "  %s\n", how);
		_exit(100);
	}
	fprintf(stderr, "  read: %s\n", how);
	bad = common_checks(a);
	bad |= opens("/sys/kernel/mm/transparent_hugepage/enabled", O_RDONLY) << 8;
	bad |= !opens(files[0], O_RDONLY) << 9;
	bad |= !opens("/proc/self/status", O_RDONLY) << 10;
	/* another process's secrets (one of ours, the same user, dumpable, no
	 * more capabilities: readable to an unconfined process, as it is to
	 * this one's parent; /proc is granted whole, so the refusal is the
	 * kernel's ptrace access rules for a confined process) */
	snprintf(p, sizeof(p), "/proc/%ld/environ", (long)other);
	bad |= opens(p, O_RDONLY) << 22;
	snprintf(p, sizeof(p), "/proc/%ld/mem", (long)other);
	bad |= opens(p, O_RDONLY) << 23;
	/* capabilities: reading's two, and only as root */
	memset(data, 0, sizeof(data));
	syscall(SYS_capget, &hdr, data);
	if (geteuid() == 0)
		bad |= (data[0].effective != ((1u << CAP_DAC_READ_SEARCH) | (1u << CAP_FOWNER)) ||
			data[1].effective != 0) << 11;
	/* the filter */
	bad |= (socket(AF_INET, SOCK_STREAM, 0) >= 0) << 12;
	bad |= (socket(AF_UNIX, SOCK_STREAM, 0) >= 0) << 12;
	bad |= (kill(getppid(), 0) == 0 || errno != EPERM) << 13;
	bad |= (kill(getpid(), 0) != 0) << 14;
	snprintf(p, sizeof(p), "%s/index.db", rw);
	bad |= (chmod(p, 0666) == 0) << 15;
	bad |= (chown(p, 1, 1) == 0) << 16;
	bad |= (setxattr(p, "user.x", "y", 1, 0) == 0) << 17;
	bad |= (unshare(CLONE_NEWUSER) == 0) << 18;
	fd = open(p, O_RDONLY | O_CLOEXEC);
	bad |= (fd < 0 || ioctl(fd, FS_IOC_SETFLAGS, &flags) == 0 || errno != EPERM) << 19;
	if (fd >= 0)
		close(fd);
	bad |= (syscall(SYS_open_by_handle_at, AT_FDCWD, NULL, O_RDONLY) == 0 || errno != EPERM)
	       << 20;
	/* threads still start (clone3 is refused with ENOSYS, clone is not) */
	bad |= (pthread_create(&t, NULL, noop, NULL) != 0 || pthread_join(t, NULL) != 0) << 21;
	return bad;
}

static int run_child(int (*fn)(void), const char *what)
{
	int status = 0;
	pid_t pid = fork();

	if (pid == 0) {
		/* an exit status keeps 8 bits: the failed checks are printed */
		int bad = fn();
		if (bad)
			fprintf(stderr, "  %s: failed checks (bit i = check i): %#x\n", what, bad);
		_exit(bad ? 1 : 0);
	}
	CHECK(pid > 0);
	waitpid(pid, &status, 0);
	if (WIFEXITED(status) && WEXITSTATUS(status) == 77)
		return 77;
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		fprintf(stderr, "%s: status %#x\n", what, status);
	CHECK(WIFEXITED(status));
	CHECK_INT(WEXITSTATUS(status), 0);
	return 0;
}

int main(void)
{
	char *dir = t_tmpdir("sandbox");
	char p[4200];
	int skipped;

	snprintf(ro, sizeof(ro), "%s/photos", dir);
	snprintf(rw, sizeof(rw), "%s/index", dir);
	snprintf(out, sizeof(out), "%s/elsewhere", dir);
	t_mkdir(ro);
	t_mkdir(rw);
	t_mkdir(out);
	snprintf(p, sizeof(p), "%s/a.jpg", ro);
	t_write(p, "photo", 5);
	/* not ours to read without CAP_DAC_READ_SEARCH, and no O_NOATIME
	 * without CAP_FOWNER */
	if (geteuid() == 0)
		CHECK(chown(p, 65534, 65534) == 0 && chmod(p, 0600) == 0);
	snprintf(p, sizeof(p), "%s/secret", out);
	t_write(p, "secret", 6);

	skipped = run_child(stage_scan, "CONFINE_SCAN") == 77;
	if (!skipped)
		run_child(stage_read, "CONFINE_READ");
	t_rmtree(dir);
	free(dir);
	if (skipped)
		t_skip_part("no Landlock in this kernel");
	return t_done();
}
