/* tfs_linux.c - tfs.h: file systems made by the test, in a mount namespace
 * of its own. */
#include "tests/unit/tfs.h"

#include <fcntl.h>
#include <linux/loop.h>
#include <sched.h>
#include <spawn.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

/* statfs's f_type of each file system made here */
#define MAGIC_EXT4 0xEF53
#define MAGIC_BTRFS 0x9123683E
#define MAGIC_TMPFS 0x01021994

#define TFS_MAX 8
static char *made[TFS_MAX];

static void forget(const char *mnt)
{
	int i;
	for (i = 0; i < TFS_MAX; i++)
		if (made[i] == mnt)
			made[i] = NULL;
}

static void unmount(const char *mnt)
{
	if (umount2(mnt, 0) != 0 && errno != EINVAL)
		umount2(mnt, MNT_DETACH); /* busy: let it go when it is closed */
	rmdir(mnt);
}

static void drop_all(void)
{
	int i;
	for (i = 0; i < TFS_MAX; i++)
		if (made[i]) {
			unmount(made[i]);
			free(made[i]);
			made[i] = NULL;
		}
}

/* FUSE mounts whose daemon is gone (ENOTCONN), anyone's on this machine,
 * are detached from our namespace only: mkfs.btrfs stats every mount point
 * to see whether its device is in use, and gives up on one of them. */
static void detach_dead_mounts(void)
{
	FILE *f = fopen("/proc/self/mounts", "r");
	char line[8192], point[4096];
	struct stat st;

	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		const char *s = strchr(line, ' ');
		size_t n = 0;
		if (!s)
			continue;
		/* the mount point, its blanks written as octal escapes */
		for (s++; *s && *s != ' ' && n + 1 < sizeof(point); s++) {
			if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] && s[3]) {
				point[n++] = (char)((s[1] - '0') * 64 + (s[2] - '0') * 8 + (s[3] - '0'));
				s += 3;
			} else {
				point[n++] = *s;
			}
		}
		point[n] = '\0';
		if (stat(point, &st) != 0 && errno == ENOTCONN)
			umount2(point, MNT_DETACH);
	}
	fclose(f);
}

int tfs_enter(char *why, size_t cap)
{
	static int rc = -1;
	static char said[256];

	if (rc >= 0) {
		snprintf(why, cap, "%s", said);
		return rc;
	}
	rc = TFS_SKIP;
	if (geteuid() != 0) {
		snprintf(said, sizeof(said), "a file system of the test's own needs root");
	} else if (unshare(CLONE_NEWNS) != 0) {
		snprintf(said, sizeof(said), "no mount namespace of our own: unshare: %s",
			 strerror(errno));
	} else if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0) {
		/* our mounts must not reach the machine's namespace (a shared /
		 * would pass them on) */
		snprintf(said, sizeof(said), "tfs: making / private: %s", strerror(errno));
		rc = TFS_FAIL;
	} else {
		detach_dead_mounts();
		atexit(drop_all);
		said[0] = '\0';
		rc = TFS_OK;
	}
	snprintf(why, cap, "%s", said);
	return rc;
}

/* Run argv[0] (found on PATH) with argv, its chatter on stdout dropped
 * (its errors stay on stderr); its exit status, 127 when it is not
 * installed, -1 when it could not be run otherwise. */
static int run(char *const argv[])
{
	posix_spawn_file_actions_t fa;
	pid_t pid;
	int st, rc;

	if (posix_spawn_file_actions_init(&fa) != 0)
		return -1;
	posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
	rc = posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	if (rc == ENOENT)
		return 127;
	if (rc != 0)
		return -1;
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* Attach img to a free loop device with autoclear; its path into dev.
 * Returns the open device (closed once mounted: the mount holds it), -1
 * after saying why. */
static int loop_attach(const char *img, char *dev, size_t cap, char *why, size_t wcap)
{
	int ctl = open("/dev/loop-control", O_RDWR | O_CLOEXEC);
	int fd = open(img, O_RDWR | O_CLOEXEC);
	int tries, loop = -1;

	if (ctl < 0 || fd < 0) {
		snprintf(why, wcap, "tfs: %s: %s", ctl < 0 ? "/dev/loop-control" : img,
			 strerror(errno));
		goto out;
	}
	/* a test beside this one may take the device between our asking for a
	 * free one and attaching it: then it is busy, ask again */
	for (tries = 0; tries < 64; tries++) {
		struct loop_config cfg;
		int n = ioctl(ctl, LOOP_CTL_GET_FREE);
		if (n < 0)
			break;
		snprintf(dev, cap, "/dev/loop%d", n);
		loop = open(dev, O_RDWR | O_CLOEXEC);
		if (loop < 0)
			continue; /* its node not made yet by udev */
		memset(&cfg, 0, sizeof(cfg));
		cfg.fd = (uint32_t)fd;
		cfg.info.lo_flags = LO_FLAGS_AUTOCLEAR;
		if (ioctl(loop, LOOP_CONFIGURE, &cfg) == 0)
			goto out;
		if (errno == EINVAL || errno == ENOTTY) {
			/* before Linux 5.8: in two steps */
			if (ioctl(loop, LOOP_SET_FD, fd) == 0) {
				if (ioctl(loop, LOOP_SET_STATUS64, &cfg.info) == 0)
					goto out;
				ioctl(loop, LOOP_CLR_FD, 0);
			}
		}
		n = errno;
		close(loop);
		loop = -1;
		errno = n;
		if (n != EBUSY)
			break;
	}
	snprintf(why, wcap, "tfs: no loop device for %s: %s", img, strerror(errno));
out:
	if (fd >= 0)
		close(fd);
	if (ctl >= 0)
		close(ctl);
	return loop;
}

int tfs_make(const char *type, unsigned size_mb, char **out, char *why, size_t cap)
{
	int tmpfs = strcmp(type, "tmpfs") == 0, ext4 = strcmp(type, "ext4") == 0;
	long magic = tmpfs ? MAGIC_TMPFS : ext4 ? MAGIC_EXT4 : MAGIC_BTRFS;
	char img[4200] = "", dev[64];
	char *mnt = NULL;
	struct statfs sf;
	int i, fd, loop, rc;

	*out = NULL;
	if (!tmpfs && !ext4 && strcmp(type, "btrfs") != 0) {
		snprintf(why, cap, "tfs: no file system %s here", type);
		return TFS_FAIL;
	}
	rc = tfs_enter(why, cap);
	if (rc != TFS_OK)
		return rc;
	rc = TFS_FAIL;
	mnt = t_tmpdir(type);
	if (tmpfs) {
		char opt[64];
		snprintf(opt, sizeof(opt), "size=%um,mode=0755", size_mb);
		if (mount("seekless-test", mnt, "tmpfs", MS_NOATIME, opt) != 0) {
			snprintf(why, cap, "tfs: mount tmpfs on %s: %s", mnt, strerror(errno));
			goto out;
		}
		goto mounted;
	}

	/* the image beside the mount point, unlinked once the loop device
	 * holds it */
	snprintf(img, sizeof(img), "%s.img", mnt);
	fd = open(img, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0 || ftruncate(fd, (off_t)size_mb << 20) != 0) {
		snprintf(why, cap, "tfs: %s: %s", img, strerror(errno));
		if (fd >= 0)
			close(fd);
		goto out;
	}
	close(fd);
	if (ext4) {
		char *argv[] = {"mkfs.ext4", "-q", "-F", "-E",
				"lazy_itable_init=0,lazy_journal_init=0", img, NULL};
		i = run(argv);
	} else {
		char *argv[] = {"mkfs.btrfs", "-q", "-f", img, NULL};
		i = run(argv);
	}
	if (i != 0) {
		snprintf(why, cap, i == 127 ? "mkfs.%s is not installed" : "tfs: mkfs.%s %s failed",
			 type, img);
		rc = i == 127 ? TFS_SKIP : TFS_FAIL;
		goto out;
	}
	if (access("/dev/loop-control", F_OK) != 0) {
		snprintf(why, cap, "no loop devices here (/dev/loop-control)");
		rc = TFS_SKIP;
		goto out;
	}
	loop = loop_attach(img, dev, sizeof(dev), why, cap);
	if (loop < 0)
		goto out;
	if (mount(dev, mnt, type, MS_NOATIME, NULL) != 0) {
		snprintf(why, cap, "tfs: mount %s (%s) on %s: %s", dev, type, mnt, strerror(errno));
		close(loop); /* autoclear: let go as it closes */
		goto out;
	}
	close(loop);
	unlink(img);
	img[0] = '\0';

mounted:
	if (statfs(mnt, &sf) != 0 || (long)sf.f_type != magic) {
		snprintf(why, cap, "tfs: %s is not the %s just mounted", mnt, type);
		unmount(mnt);
		goto out;
	}
	for (i = 0; i < TFS_MAX && made[i]; i++)
		;
	if (i == TFS_MAX) {
		snprintf(why, cap, "tfs: more than %d file systems at once", TFS_MAX);
		unmount(mnt);
		goto out;
	}
	made[i] = mnt;
	*out = mnt;
	return TFS_OK;

out:
	if (img[0])
		unlink(img);
	rmdir(mnt);
	free(mnt);
	return rc;
}

void tfs_drop(char *mnt)
{
	if (!mnt)
		return;
	forget(mnt);
	unmount(mnt);
	free(mnt);
}
