/* POSIX stat with a file's birth time, for the Linux-only modules
 * (extents_linux.c, reader_posix.c).
 *
 * A file's identity in the index is its inode number, and ext4 and xfs give
 * a freed number to the next file created, at once.  A file deleted and a
 * copy made with the same size and mtime (cp -p, a move across file
 * systems: copy2 keeps the mtime) would then look like the same file
 * renamed.  The birth time tells them apart: statx(2)'s stx_btime, kept
 * by ext4 (256-byte inodes), xfs v5, btrfs, tmpfs; not by ext2/3, FUSE,
 * NFS. */
#ifndef SL_SYS_POSIX_H
#define SL_SYS_POSIX_H

#include <stdint.h>
#include <sys/stat.h>

/* fstatat(dirfd, path, st, flags), with *btime_ns the birth time, 0 when
 * the file system keeps none; path "" with AT_EMPTY_PATH in flags stats
 * dirfd itself.  Falls back to fstatat where statx is refused (kernels
 * before 4.11, container sandboxes that filter it).  Returns 0, or -1 with
 * errno set. */
int sys_statx(int dirfd, const char *path, int flags, struct stat *st, int64_t *btime_ns);

#endif
