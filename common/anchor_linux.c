/* anchor_linux.c - roots held as O_PATH descriptors; opens below them with
 * openat2, or name by name where the kernel has none (before 5.6). */
#include "common/anchor_linux.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/anchor_int.h"
#include "common/sys_posix.h"

#ifndef SYS_openat2
#define SYS_openat2 437 /* the same number on every architecture */
#endif

/* The links one resolution may follow, as the kernel's own limit. */
#define MAX_LINKS 40

static atomic_int force_fallback, no_openat2, no_proc;

void anchor_force_fallback(int on)
{
	atomic_store(&force_fallback, on);
}

void anchor_close_handle(struct anchor *a)
{
	if (a->fd >= 0)
		close(a->fd);
}

int anchor_fd(const struct anchor *a)
{
	return a->fd;
}

/* ---- resolving a root's path ---- */

struct walkpath {
	struct strbuf todo;  /* what is left to resolve */
	size_t pos;          /* how far into todo */
	struct strbuf canon; /* the folders resolved so far: "" is "/" */
	int fd;              /* the last of them, O_PATH */
	int links;
};

static int fail_errno(struct sl_err *err, int e, const char *path)
{
	return SL_FAIL(err, e == ENOMEM ? SL_E_NOMEM : SL_E_IO, e, "cannot access '%s'", path);
}

/* The next name of w->todo into name; 0 at the end, -1 when too long. */
static int next_name(struct walkpath *w, char name[NAME_MAX + 1])
{
	for (;;) {
		const char *p = w->todo.p + w->pos, *end;
		size_t n;

		if (w->pos >= w->todo.len)
			return 0;
		end = memchr(p, '/', w->todo.len - w->pos);
		n = end ? (size_t)(end - p) : w->todo.len - w->pos;
		w->pos += n + (end != NULL);
		if (n == 0 || (n == 1 && p[0] == '.'))
			continue;
		if (n > NAME_MAX)
			return -1;
		memcpy(name, p, n);
		name[n] = '\0';
		return 1;
	}
}

/* Whether only slashes are left: the name just taken is the last. */
static int at_end(const struct walkpath *w)
{
	size_t i;
	for (i = w->pos; i < w->todo.len; i++)
		if (w->todo.p[i] != '/')
			return 0;
	return 1;
}

/* Go on with target (a link's) in front of what is left. */
static int splice_link(struct walkpath *w, const char *target)
{
	struct strbuf next = STRBUF_INIT;

	sb_adds(&next, target);
	sb_addc(&next, '/');
	sb_add(&next, w->todo.p + w->pos, w->todo.len - w->pos);
	if (next.oom) {
		sb_free(&next);
		return -1;
	}
	sb_free(&w->todo);
	w->todo = next;
	w->pos = 0;
	return 0;
}

static int restart_at_top(struct walkpath *w)
{
	int fd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	close(w->fd);
	w->fd = fd;
	sb_reset(&w->canon);
	return 0;
}

/* Follow the link nfd (named name) if it may be followed. */
static int follow(struct walkpath *w, int nfd, const struct stat *st, const char *name,
		  const char *path, struct sl_err *err)
{
	char target[PATH_MAX + 1];
	ssize_t n;

	if (++w->links > MAX_LINKS)
		return fail_errno(err, ELOOP, path);
	/* a privileged scan follows only root's links: a user's names
	 * whatever that user chose */
	if (geteuid() == 0 && st->st_uid != 0)
		return SL_FAIL(err, SL_E_IO, 0,
			       "cannot access '%s': '%s' is a symbolic link owned by uid %u, "
			       "and as root seekless follows only links root owns",
			       path, name, (unsigned)st->st_uid);
	n = readlinkat(nfd, "", target, sizeof(target) - 1);
	if (n < 0)
		return fail_errno(err, errno, path);
	target[n] = '\0';
	if (n == 0)
		return fail_errno(err, ENOENT, path);
	if (splice_link(w, target) != 0)
		return SL_FAIL(err, SL_E_NOMEM, 0, "out of memory");
	if (target[0] == '/' && restart_at_top(w) != 0)
		return fail_errno(err, errno, path);
	return SL_OK;
}

static int up(struct walkpath *w, const char *path, struct sl_err *err)
{
	char *slash;
	int fd;

	if (w->canon.len == 0)
		return SL_OK; /* ".." of "/" is "/" */
	fd = openat(w->fd, "..", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return fail_errno(err, errno, path);
	close(w->fd);
	w->fd = fd;
	slash = strrchr(w->canon.p, '/');
	sb_truncate(&w->canon, slash ? (size_t)(slash - w->canon.p) : 0);
	return SL_OK;
}

/* Resolve path: *dirfd the folder it names, or with a regular file as the
 * last name (and ANCHOR_FILE), that file's folder and *leaf its name. */
static int resolve(struct walkpath *w, const char *path, unsigned flags, char *leaf,
		   struct sl_err *err)
{
	char name[NAME_MAX + 1];
	int r, rc;

	leaf[0] = '\0';
	if (path[0] != '/') {
		char cwd[PATH_MAX];
		if (!getcwd(cwd, sizeof(cwd)))
			return fail_errno(err, errno, path);
		sb_adds(&w->canon, strcmp(cwd, "/") == 0 ? "" : cwd);
		w->fd = open(".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	} else {
		w->fd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	}
	if (w->fd < 0)
		return fail_errno(err, errno, path);
	sb_adds(&w->todo, path);
	if (w->todo.oom || w->canon.oom)
		return SL_FAIL(err, SL_E_NOMEM, 0, "out of memory");
	while ((r = next_name(w, name)) > 0) {
		struct stat st;
		int64_t bt;
		int nfd;

		if (strcmp(name, "..") == 0) {
			if ((rc = up(w, path, err)) != SL_OK)
				return rc;
			continue;
		}
		nfd = openat(w->fd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
		if (nfd < 0)
			return fail_errno(err, errno, path);
		if (sys_statx(nfd, "", AT_EMPTY_PATH, &st, &bt) != 0) {
			int e = errno;
			close(nfd);
			return fail_errno(err, e, path);
		}
		if (S_ISLNK(st.st_mode)) {
			rc = follow(w, nfd, &st, name, path, err);
			close(nfd);
			if (rc != SL_OK)
				return rc;
			continue;
		}
		if (!S_ISDIR(st.st_mode) && (!at_end(w) || !S_ISREG(st.st_mode) ||
					     !(flags & ANCHOR_FILE))) {
			close(nfd);
			if (!at_end(w))
				return fail_errno(err, ENOTDIR, path);
			return SL_FAIL(err, SL_E_IO, 0,
				       S_ISREG(st.st_mode) ? "'%s' is not a folder"
							   : "'%s' is neither a folder nor a regular file",
				       path);
		}
		sb_addc(&w->canon, '/');
		sb_adds(&w->canon, name);
		if (w->canon.oom) {
			close(nfd);
			return SL_FAIL(err, SL_E_NOMEM, 0, "out of memory");
		}
		if (S_ISREG(st.st_mode)) {
			/* the last name, a file: its folder stays held */
			memcpy(leaf, name, strlen(name) + 1);
			close(nfd);
			return SL_OK;
		}
		close(w->fd);
		w->fd = nfd;
	}
	if (r < 0)
		return fail_errno(err, ENAMETOOLONG, path);
	return SL_OK;
}

int anchor_open(const char *path, unsigned flags, struct anchor **out, struct sl_err *err)
{
	struct walkpath w = {STRBUF_INIT, 0, STRBUF_INIT, -1, 0};
	char leaf[NAME_MAX + 1];
	struct stat st;
	int64_t bt;
	int rc;

	*out = NULL;
	rc = resolve(&w, path, flags, leaf, err);
	if (rc == SL_OK && sys_statx(w.fd, "", AT_EMPTY_PATH, &st, &bt) != 0)
		rc = fail_errno(err, errno, path);
	if (rc == SL_OK && w.canon.len == 0)
		sb_addc(&w.canon, '/');
	if (rc == SL_OK && !w.canon.oom) {
		*out = anchor_new(w.fd, flags, (uint64_t)st.st_dev, (uint64_t)st.st_ino, w.canon.p,
				  leaf[0] ? leaf : NULL);
		if (*out)
			w.fd = -1;
	}
	if (rc == SL_OK && !*out)
		rc = SL_FAIL(err, SL_E_NOMEM, 0, "out of memory");
	if (w.fd >= 0)
		close(w.fd);
	sb_free(&w.todo);
	sb_free(&w.canon);
	return rc;
}

/* ---- opening below an anchor ---- */

static int is_link_at(int dfd, const char *name)
{
	struct stat st;
	return fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode);
}

static int other_fs(const struct anchor *a, int fd)
{
	struct stat st;
	return !(a->flags & ANCHOR_CROSS_FS) && fstat(fd, &st) == 0 &&
	       (uint64_t)st.st_dev != a->dev;
}

/* Name by name, each folder opened O_NOFOLLOW from the one before.  Unlike
 * RESOLVE_NO_XDEV this cannot see a bind mount of a folder of the same
 * file system; the identity checks after every open (locate.h,
 * pipeline.h) still stand. */
static int open_by_names(const struct anchor *a, const char *rel, int flags)
{
	char name[NAME_MAX + 1];
	const char *p = rel, *slash;
	int dfd = a->fd, fd, e;

	while ((slash = strchr(p, '/')) != NULL) {
		size_t n = (size_t)(slash - p);
		int nfd;

		if (n == 0) {
			p++;
			continue;
		}
		if (n > NAME_MAX) {
			e = ENAMETOOLONG;
			goto fail;
		}
		memcpy(name, p, n);
		name[n] = '\0';
		if (strcmp(name, "..") == 0) {
			e = EXDEV; /* as RESOLVE_BENEATH: never above the anchor */
			goto fail;
		}
		nfd = openat(dfd, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (nfd < 0) {
			e = errno;
			if (e == ENOTDIR && is_link_at(dfd, name))
				e = ELOOP;
			goto fail;
		}
		if (other_fs(a, nfd)) {
			close(nfd);
			e = EXDEV;
			goto fail;
		}
		if (dfd != a->fd)
			close(dfd);
		dfd = nfd;
		p = slash + 1;
	}
	if (strcmp(p, "..") == 0) {
		e = EXDEV;
		goto fail;
	}
	fd = openat(dfd, *p ? p : ".", flags);
	e = errno;
	if (fd >= 0 && other_fs(a, fd)) {
		close(fd);
		fd = -1;
		e = EXDEV;
	}
	if (dfd != a->fd)
		close(dfd);
	errno = e;
	return fd;
fail:
	if (dfd != a->fd)
		close(dfd);
	errno = e;
	return -1;
}

int anchor_openat(const struct anchor *a, const char *rel, int flags)
{
	flags |= O_NOFOLLOW | O_CLOEXEC;
	if (!atomic_load(&force_fallback) && !atomic_load(&no_openat2)) {
		struct open_how how;
		long fd;

		memset(&how, 0, sizeof(how));
		how.flags = (uint64_t)(unsigned)flags;
		how.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS |
			      ((a->flags & ANCHOR_CROSS_FS) ? 0 : RESOLVE_NO_XDEV);
		fd = syscall(SYS_openat2, a->fd, rel[0] ? rel : ".", &how, sizeof(how));
		if (fd >= 0 || errno != ENOSYS)
			return (int)fd;
		atomic_store(&no_openat2, 1);
	}
	return open_by_names(a, rel, flags);
}

static int open_failed(int e, const char *op, struct sl_err *err)
{
	if (e == ELOOP)
		return SL_FAIL(err, SL_E_IO, 0, "%s: replaced by a symbolic link", op);
	if (e == EXDEV)
		return SL_FAIL(err, SL_E_IO, 0,
			       "%s: on another file system mounted inside the root "
			       "(--cross-fs reads it)", op);
	return SL_FAIL(err, sl_errno_class(e), e, "%s", op);
}

int anchor_open_file(const struct anchor *a, const char *rel, int flags, int *fd, struct stat *st,
		     int64_t *btime_ns, struct sl_err *err)
{
	const char *op = flags == O_PATH ? "stat" : "open";
	char proc[64];
	int pfd, rfd, e;

	*fd = -1;
	pfd = anchor_openat(a, rel, O_PATH);
	if (pfd < 0)
		return open_failed(errno, op, err);
	if (sys_statx(pfd, "", AT_EMPTY_PATH, st, btime_ns) != 0) {
		e = errno;
		close(pfd);
		return SL_FAIL(err, sl_errno_class(e), e, "stat");
	}
	if (!S_ISREG(st->st_mode)) {
		close(pfd);
		return S_ISLNK(st->st_mode) ? open_failed(ELOOP, op, err)
					    : SL_FAIL(err, SL_E_IO, 0, "%s: no longer a regular file", op);
	}
	if (flags == O_PATH) {
		*fd = pfd;
		return SL_OK;
	}
	rfd = -1;
	if (!atomic_load(&no_proc)) {
		snprintf(proc, sizeof(proc), "/proc/self/fd/%d", pfd);
		rfd = open(proc, flags | O_CLOEXEC);
		if (rfd < 0 && errno == ENOENT) /* no /proc here */
			atomic_store(&no_proc, 1);
	}
	if (atomic_load(&no_proc)) {
		/* by its names again, and then it must be the same file */
		struct stat now;
		rfd = anchor_openat(a, rel, flags | O_NONBLOCK);
		if (rfd >= 0 && (fstat(rfd, &now) != 0 || now.st_dev != st->st_dev ||
				 now.st_ino != st->st_ino)) {
			close(rfd);
			close(pfd);
			return SL_FAIL(err, SL_E_IO, 0, "open: replaced while being opened");
		}
	}
	e = errno;
	close(pfd);
	if (rfd < 0)
		return open_failed(e, op, err);
	*fd = rfd;
	return SL_OK;
}
