#include "common/sys.h"
#include "common/sys_posix.h"

#include <errno.h>
#include <malloc.h>
#include <limits.h>
#include <fcntl.h>
#include <string.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <stdio.h>

double sys_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int64_t sys_wall_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

double sys_thread_cpu(void)
{
	struct timespec ts;
	if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0)
		return 0;
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int sys_cpu_count(void)
{
	cpu_set_t set;
	long n;

	if (sched_getaffinity(0, sizeof(set), &set) == 0) {
		int c = CPU_COUNT(&set);
		if (c > 0)
			return c;
	}
	n = sysconf(_SC_NPROCESSORS_ONLN);
	return n > 0 ? (int)n : 1;
}

void sys_strerror(int sys, char *buf, size_t len)
{
	/* _GNU_SOURCE gives the GNU strerror_r, which may return a static
	 * string instead of filling buf. */
	const char *s = strerror_r(sys, buf, len);
	if (s != buf)
		snprintf(buf, len, "%s", s);
}

uint64_t sys_peak_rss(void)
{
	struct rusage ru;
	if (getrusage(RUSAGE_SELF, &ru) != 0)
		return 0;
	return (uint64_t)ru.ru_maxrss * 1024u;
}

int sys_mkdir_parents(const char *path)
{
	char buf[4096];
	size_t n = strlen(path);
	size_t i;

	if (n >= sizeof(buf))
		return ENAMETOOLONG;
	memcpy(buf, path, n + 1);
	/* Stop at the last separator: path names a file. */
	while (n > 0 && buf[n - 1] != '/')
		n--;
	if (n <= 1)
		return 0;
	buf[n - 1] = '\0';
	for (i = 1; i <= n - 1; i++) {
		if (buf[i] == '/' || buf[i] == '\0') {
			char c = buf[i];
			buf[i] = '\0';
			if (mkdir(buf, 0700) != 0 && errno != EEXIST)
				return errno;
			buf[i] = c;
		}
	}
	return 0;
}

/* The least limit in `file` of the cgroup at rel below base and of those
 * above it (a unit's own may say "max" under a slice that has one). */
static uint64_t cgroup_limit(const char *base, char *rel, const char *file)
{
	char path[4200];
	uint64_t v = UINT64_MAX;
	char *slash;
	FILE *f;

	for (;;) {
		unsigned long long n;
		snprintf(path, sizeof(path), "%s%s/%s", base, rel, file);
		f = fopen(path, "re");
		if (f) {
			if (fscanf(f, "%llu", &n) == 1 && n < v) /* "max" is no number */
				v = n;
			fclose(f);
		}
		slash = strrchr(rel, '/');
		if (!slash || slash == rel)
			break;
		*slash = 0;
	}
	/* the base itself: a v1 container's own cgroup when its path is not
	 * namespaced ("/docker/ID" there, the limit at the mount's top) */
	snprintf(path, sizeof(path), "%s/%s", base, file);
	f = fopen(path, "re");
	if (f) {
		unsigned long long n;
		if (fscanf(f, "%llu", &n) == 1 && n < v)
			v = n;
		fclose(f);
	}
	return v;
}

/* This process's cgroup memory limit, UINT64_MAX if none or unknown: v2's
 * memory.max ("0::/path") or v1's memory.limit_in_bytes ("4:memory:/path"). */
static uint64_t cgroup_mem_max(void)
{
	char line[4096];
	uint64_t v = UINT64_MAX, w;
	FILE *f = fopen("/proc/self/cgroup", "re");

	if (!f)
		return v;
	while (fgets(line, sizeof(line), f)) {
		char *ctl = strchr(line, ':'), *rel = ctl ? strchr(ctl + 1, ':') : NULL;
		if (!rel || rel[1] != '/')
			continue;
		*rel++ = 0;
		rel[strcspn(rel, "\n")] = 0;
		if (strcmp(ctl + 1, "") == 0)
			w = cgroup_limit("/sys/fs/cgroup", rel, "memory.max");
		else if (strcmp(ctl + 1, "memory") == 0)
			w = cgroup_limit("/sys/fs/cgroup/memory", rel, "memory.limit_in_bytes");
		else
			continue;
		if (w < v)
			v = w;
	}
	fclose(f);
	return v;
}

uint64_t sys_mem_bytes(void)
{
	long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGESIZE);
	uint64_t phys = pages > 0 && size > 0 ? (uint64_t)pages * (uint64_t)size : 0;
	uint64_t cg = cgroup_mem_max();

	if (cg < phys || (!phys && cg != UINT64_MAX))
		return cg;
	return phys;
}

size_t sys_fd_limit(void)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
		return 1024;
	if (rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur > SIZE_MAX)
		return SIZE_MAX;
	return (size_t)rl.rlim_cur;
}

void sys_raise_fd_limit(void)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

/* The owner of path's folder, or -1. */
static long folder_owner(const char *path)
{
	const char *slash = strrchr(path, '/');
	char dir[PATH_MAX];
	struct stat st;
	size_t n = slash ? (size_t)(slash - path) : 0;

	if (!slash)
		return stat(".", &st) == 0 ? (long)st.st_uid : -1;
	if (n >= sizeof(dir))
		return -1;
	memcpy(dir, path, n ? n : 1);
	dir[n ? n : 1] = '\0';
	return stat(dir, &st) == 0 ? (long)st.st_uid : -1;
}

int sys_create_private(const char *path, int create)
{
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC |
				    (create ? O_CREAT : 0), 0600);
	uid_t me = geteuid();
	struct stat st;
	int e = 0;

	if (fd < 0)
		return !create && errno == ENOENT ? 0 : errno;
	if (fstat(fd, &st) != 0)
		e = errno;
	else if (S_ISDIR(st.st_mode))
		e = EISDIR;
	else if (!S_ISREG(st.st_mode))
		e = EINVAL;
	else if (st.st_nlink > 1)
		e = EMLINK; /* a name for someone else's file */
	else if (me == 0 && st.st_uid != 0 && (long)st.st_uid != folder_owner(path))
		e = EPERM; /* planted: not the folder owner's */
	else if ((st.st_mode & 077) && (st.st_uid == me || me == 0) &&
		 fchmod(fd, st.st_mode & 07700) != 0) {
		e = errno;
		/* without create, a file that cannot be written at all (a
		 * read-only file system, chattr +i) keeps its mode: it will
		 * only be read */
		if (!create && sys_can_write(path) != 0)
			e = 0;
	}
	close(fd);
	return e;
}

int sys_can_write(const char *path)
{
	/* the effective ids, as an open would be judged; the kernel answers
	 * EROFS for a read-only file system and EPERM for an immutable file
	 * before it looks at the mode, also for root */
	return faccessat(AT_FDCWD, path, W_OK, AT_EACCESS) == 0 ? 0 : errno;
}

int sys_default_db_path(struct strbuf *out)
{
	const char *xdg = getenv("XDG_DATA_HOME");
	const char *home = sys_home();

	sb_reset(out);
	if (xdg && xdg[0] == '/')
		sb_addf(out, "%s/seekless/index.db", xdg);
	else if (home)
		sb_addf(out, "%s/.local/share/seekless/index.db", home);
	else
		return ENOENT;
	return out->oom ? ENOMEM : 0;
}

int sys_config_path(int system, struct strbuf *out)
{
	const char *xdg = getenv("XDG_CONFIG_HOME");
	const char *home = sys_home();

	sb_reset(out);
	if (system)
		sb_adds(out, "/etc/seekless.conf");
	else if (xdg && xdg[0] == '/')
		sb_addf(out, "%s/seekless/config", xdg);
	else if (home)
		sb_addf(out, "%s/.config/seekless/config", home);
	else
		return -1;
	return out->oom ? -1 : 0;
}

const char *sys_home(void)
{
	const char *home = getenv("HOME");
	return home && home[0] == '/' ? home : NULL;
}

int sys_self_exe(struct strbuf *out)
{
	char buf[PATH_MAX + 1];
	ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);

	if (n < 0)
		return errno;
	buf[n] = '\0';
	sb_reset(out);
	sb_adds(out, buf);
	return out->oom ? ENOMEM : 0;
}

static atomic_int *interrupt_flag;

static void on_signal(int sig)
{
	if (interrupt_flag && !atomic_load(interrupt_flag)) {
		atomic_store(interrupt_flag, 1);
		return;
	}
	signal(sig, SIG_DFL);
	raise(sig);
}

void sys_on_interrupt(atomic_int *flag)
{
	struct sigaction sa;

	interrupt_flag = flag;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
}

void sys_raise_interrupt(void)
{
	if (interrupt_flag)
		atomic_store(interrupt_flag, 1);
}

int sys_file_id(const char *path, uint64_t *dev, uint64_t *ino)
{
	struct stat st;
	if (lstat(path, &st) != 0)
		return errno;
	*dev = (uint64_t)st.st_dev;
	*ino = (uint64_t)st.st_ino;
	return 0;
}

int sys_drop_caches(void)
{
	int fd, e = 0;
	sync();
	fd = open("/proc/sys/vm/drop_caches", O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return errno;
	if (write(fd, "3\n", 2) != 2)
		e = errno;
	close(fd);
	return e;
}

int sys_run(const char *cmdline)
{
	int st = system(cmdline);
	if (st == -1 || !WIFEXITED(st))
		return -1;
	return WEXITSTATUS(st);
}

struct lock {
	int fd;
};

/* Who holds the flock on fd's file, as the kernel says (/proc/locks, the
 * line "N: FLOCK  ADVISORY  WRITE PID MAJ:MIN:INODE ..."); 0 when it does
 * not say (no /proc, or a holder in a pid namespace not ours).  The pid in
 * the file is only the holder's word, written after its flock: a holder
 * not yet there (or that could not write) leaves the pid of the one before,
 * a process gone, or by now another process altogether. */
static long flock_holder(int fd)
{
	struct stat st;
	char line[256], kind[16], mode[16];
	unsigned int maj, min;
	unsigned long long ino;
	long pid = 0, p;
	FILE *f;

	if (fstat(fd, &st) != 0 || !(f = fopen("/proc/locks", "re")))
		return 0;
	while (!pid && fgets(line, sizeof(line), f))
		/* a waiter's line reads "N: -> FLOCK ...": not a holder */
		if (sscanf(line, "%*d: %15s %*s %15s %ld %x:%x:%llu", kind, mode, &p, &maj, &min,
			   &ino) == 6 &&
		    strcmp(kind, "FLOCK") == 0 && strcmp(mode, "WRITE") == 0 &&
		    maj == major(st.st_dev) && min == minor(st.st_dev) && ino == st.st_ino)
			pid = p;
	fclose(f);
	return pid;
}

int sys_lock(const char *path, void **handle, long *holder)
{
	struct lock *l;
	char buf[32];
	int fd, e;

	*handle = NULL;
	*holder = 0;
	e = sys_create_private(path, 1);
	if (e)
		return e;
	fd = open(path, O_RDWR | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0600);
	if (fd < 0)
		return errno;
	if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
		ssize_t n;
		e = errno;
		*holder = flock_holder(fd);
		n = *holder ? 0 : pread(fd, buf, sizeof(buf) - 1, 0);
		if (n > 0) {
			buf[n] = '\0';
			*holder = strtol(buf, NULL, 10);
		}
		close(fd);
		return e == EWOULDBLOCK || e == EAGAIN ? EWOULDBLOCK : e;
	}
	l = malloc(sizeof(*l));
	if (!l) {
		close(fd);
		return ENOMEM;
	}
	snprintf(buf, sizeof(buf), "%ld\n", (long)getpid());
	if (ftruncate(fd, 0) != 0 || pwrite(fd, buf, strlen(buf), 0) < 0) {
		/* the lock holds even if the pid could not be written */
	}
	l->fd = fd;
	*handle = l;
	return 0;
}

void sys_unlock(void *handle)
{
	struct lock *l = handle;
	if (!l)
		return;
	close(l->fd); /* releases the flock */
	free(l);
}

int sys_is_admin(void)
{
	return geteuid() == 0;
}

long sys_pid(void)
{
	return (long)getpid();
}

/* From linux/ioprio.h, which glibc does not wrap. */
#define IOPRIO_CLASS_SHIFT 13
#define IOPRIO_CLASS_IDLE 3
#define IOPRIO_WHO_PROCESS 1

int sys_background(char *how, size_t cap)
{
	struct sched_param sp;
	int first = 0;
	size_t n;

	how[0] = '\0';
	/* who = 0 means the calling thread: ioprio, nice and the scheduling
	 * policy are per-thread on Linux, and inherited by new threads */
	if (syscall(SYS_ioprio_set, IOPRIO_WHO_PROCESS, 0, IOPRIO_CLASS_IDLE << IOPRIO_CLASS_SHIFT) == 0) {
		snprintf(how, cap, "I/O class idle");
	} else {
		first = errno;
		snprintf(how, cap, "I/O class unchanged (%s)", strerror(errno));
	}
	n = strlen(how);
	if (setpriority(PRIO_PROCESS, 0, 19) == 0) {
		snprintf(how + n, cap - n, ", nice 19");
	} else {
		if (!first)
			first = errno;
		snprintf(how + n, cap - n, ", nice unchanged (%s)", strerror(errno));
	}
	n = strlen(how);
	memset(&sp, 0, sizeof(sp));
	if (sched_setscheduler(0, SCHED_IDLE, &sp) == 0) {
		snprintf(how + n, cap - n, ", SCHED_IDLE");
	} else {
		if (!first)
			first = errno;
		snprintf(how + n, cap - n, ", SCHED_IDLE refused (%s)", strerror(errno));
	}
	return first;
}

int sys_io_bytes(uint64_t *bytes)
{
	char line[128];
	uint64_t rd = 0, wr = 0, cw = 0;
	int have = 0;
	FILE *f = fopen("/proc/self/io", "re");

	*bytes = 0;
	if (!f)
		return errno == ENOENT ? ENOSYS : errno;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long v;
		if (sscanf(line, "read_bytes: %llu", &v) == 1) {
			rd = v;
			have |= 1;
		} else if (sscanf(line, "write_bytes: %llu", &v) == 1) {
			wr = v;
			have |= 2;
		} else if (sscanf(line, "cancelled_write_bytes: %llu", &v) == 1) {
			cw = v;
		}
	}
	fclose(f);
	if (have != 3)
		return ENOSYS; /* kernel without task I/O accounting */
	*bytes = rd + (wr > cw ? wr - cw : 0);
	return 0;
}

void sys_sleep(double seconds)
{
	struct timespec ts;
	if (seconds <= 0)
		return;
	ts.tv_sec = (time_t)seconds;
	ts.tv_nsec = (long)((seconds - (double)ts.tv_sec) * 1e9);
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
	}
}

FILE *sys_fopen(const char *path, const char *mode)
{
	return fopen(path, mode);
}

int sys_replace(const char *from, const char *to)
{
	return rename(from, to) == 0 ? 0 : errno;
}

int sys_remove(const char *path)
{
	return unlink(path) == 0 ? 0 : errno;
}

int sys_abs_path(const char *path, struct strbuf *out)
{
	char *abs = realpath(path, NULL);

	if (!abs)
		return errno;
	sb_reset(out);
	sb_adds(out, abs);
	free(abs);
	return out->oom ? ENOMEM : 0;
}

int sys_path_prefix(const char *path, const char *root, size_t *len)
{
	size_t n = strlen(root);

	*len = 0;
	if (n && strncmp(path, root, n) == 0 &&
	    (path[n] == '\0' || path[n] == '/' || root[n - 1] == '/'))
		*len = n;
	return 0;
}

int sys_names_fold_case(void)
{
	/* ext4 with casefold folders and mounted FAT fold case, but names
	 * are bytes to Linux and we take them so everywhere */
	return 0;
}

void sys_utf8_args(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
}

int sys_keep_awake(int on)
{
	(void)on;
	return ENOSYS;
}

void sys_keep_freed_memory(void)
{
	mallopt(M_MMAP_THRESHOLD, 32 << 20);
	mallopt(M_TRIM_THRESHOLD, 64 << 20);
}

int sys_is_tty(FILE *f)
{
	return isatty(fileno(f));
}

#define STATX_REFUSED 64

int sys_statx(int dirfd, const char *path, int flags, struct stat *st, int64_t *btime_ns)
{
	static atomic_int no_statx, statx_ok, refused;
	struct statx sx;

	*btime_ns = 0;
	if (!atomic_load_explicit(&no_statx, memory_order_relaxed)) {
		if (statx(dirfd, path, flags, STATX_BASIC_STATS | STATX_BTIME, &sx) == 0) {
			atomic_store_explicit(&statx_ok, 1, memory_order_relaxed);
			memset(st, 0, sizeof(*st));
			st->st_dev = makedev(sx.stx_dev_major, sx.stx_dev_minor);
			st->st_ino = (ino_t)sx.stx_ino;
			st->st_mode = sx.stx_mode;
			st->st_nlink = sx.stx_nlink;
			st->st_uid = sx.stx_uid;
			st->st_gid = sx.stx_gid;
			st->st_rdev = makedev(sx.stx_rdev_major, sx.stx_rdev_minor);
			st->st_size = (off_t)sx.stx_size;
			st->st_blksize = (blksize_t)sx.stx_blksize;
			st->st_blocks = (blkcnt_t)sx.stx_blocks;
			st->st_atim.tv_sec = sx.stx_atime.tv_sec;
			st->st_atim.tv_nsec = sx.stx_atime.tv_nsec;
			st->st_mtim.tv_sec = sx.stx_mtime.tv_sec;
			st->st_mtim.tv_nsec = sx.stx_mtime.tv_nsec;
			st->st_ctim.tv_sec = sx.stx_ctime.tv_sec;
			st->st_ctim.tv_nsec = sx.stx_ctime.tv_nsec;
			if (sx.stx_mask & STATX_BTIME)
				*btime_ns = (int64_t)sx.stx_btime.tv_sec * 1000000000 +
					    sx.stx_btime.tv_nsec;
			return 0;
		}
		if (errno != ENOSYS && errno != EPERM)
			return -1;
		/* ENOSYS: no statx.  EPERM is a seccomp filter's answer to every
		 * call, and also one file's (a FUSE server's): statx is given up
		 * only after STATX_REFUSED such answers where fstatat worked and
		 * statx never did, else one file would cost every other its
		 * birth time for the run.  Until then each costs a call more. */
		if (errno == ENOSYS) {
			atomic_store_explicit(&no_statx, 1, memory_order_relaxed);
		} else {
			if (fstatat(dirfd, path, st, flags) != 0)
				return -1;
			if (!atomic_load_explicit(&statx_ok, memory_order_relaxed) &&
			    atomic_fetch_add_explicit(&refused, 1, memory_order_relaxed) + 1 >=
				    STATX_REFUSED)
				atomic_store_explicit(&no_statx, 1, memory_order_relaxed);
			return 0;
		}
	}
	return fstatat(dirfd, path, st, flags);
}
