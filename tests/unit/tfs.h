/* tfs.h - a real file system for a unit test that needs one (an extent
 * map, a page cache that is not the storage, a mount to loop through):
 * made fresh by the test and checked to be what was asked, never whatever
 * file system $TMPDIR happens to be on.
 *
 * Everything is mounted in a mount namespace of the test's own with every
 * mount private: no one else sees the mounts, and they go with the process
 * however it ends; a loop device is attached with autoclear, so it is let
 * go with its file system.  Needs root (CAP_SYS_ADMIN); without it the
 * part of the test that wanted one is skipped (t_skip_part), which fails
 * where every test is required.  Linux only (tfs_linux.c). */
#ifndef SL_TFS_H
#define SL_TFS_H

#include <stddef.h>

#include "tests/unit/test.h"

/* What tfs_enter and tfs_make answer */
enum {
	TFS_OK,
	TFS_SKIP, /* not possible here: not root, no loop devices, no mkfs */
	TFS_FAIL  /* possible, and went wrong */
};

/* Move the process into its own mount namespace, every mount in it private
 * (once; later calls answer as the first did).  Call it before any thread
 * starts: unshare refuses a process with threads.  Returns TFS_OK, or
 * TFS_SKIP or TFS_FAIL with why (cap bytes) saying why. */
int tfs_enter(char *why, size_t cap);

/* A fresh file system of type "ext4" or "btrfs" (on a loop device over a
 * sparse image of size_mb MiB, made with mkfs) or "tmpfs", mounted noatime
 * on a new folder of this process's namespace, its type confirmed by
 * statfs.  Returns TFS_OK with *mnt that folder (tfs_drop it), or as
 * tfs_enter does with *mnt NULL. */
int tfs_make(const char *type, unsigned size_mb, char **mnt, char *why, size_t cap);

/* Unmount and remove what tfs_make made.  NULL is a no-op; what is not
 * dropped goes at exit. */
void tfs_drop(char *mnt);

/* tfs_make for a part of a test: NULL when there is none, that part then
 * skipped (t_skip_part) or failed (a failed check), as tfs_make says. */
static inline char *t_fs(const char *type, unsigned size_mb)
{
	char why[512], *mnt;
	int rc = tfs_make(type, size_mb, &mnt, why, sizeof(why));

	if (rc == TFS_SKIP) {
		t_skip_part(why);
	} else if (rc != TFS_OK) {
		fprintf(stderr, "%s\n", why);
		CHECK(rc == TFS_OK);
	}
	return mnt;
}

#endif
