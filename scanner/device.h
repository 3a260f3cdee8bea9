/* device.h - what kind of storage a file system lives on.
 *
 * For each st_dev the probe finds the mount (file system type, source) and
 * the whole disk underneath it: partitions map to their disk, device-mapper
 * and md devices to the disks they are built on, btrfs's anonymous device
 * numbers to the block device named by the mount.  The disk says whether it
 * has a seek penalty (Linux: queue/rotational; Windows: IncursSeekPenalty).
 * Files on partitions of one disk share one reader (plan.h), and their
 * offsets are made disk-absolute with the partition start.
 *
 * The file system's identity survives reboots and replugging, which device
 * numbers do not (btrfs, USB drives): its UUID from /dev/disk/by-uuid, else
 * read from the superblock (ext2/3/4, xfs, btrfs; the serial number of FAT,
 * exFAT and NTFS), else the statfs fsid, else the device number.
 *
 * Implementations: device_linux.c, device_win.c.
 */
#ifndef SL_DEVICE_H
#define SL_DEVICE_H

#include <stdint.h>

#include "common/anchor.h"
#include "common/err.h"
#include "common/strbuf.h"

struct dev_info {
	uint64_t st_dev;
	char fstype[32];      /* "ext4", "tmpfs"...; "?" when unknown */
	char source[128];     /* what was mounted: "/dev/sda1", "tmpfs" */
	char mount[256];      /* where */
	char disk[64];        /* whole-disk name ("sda", "loop3", "dm-0"); "" if none */
	int rotational;       /* 1 seek penalty, 0 none, -1 unknown */
	uint64_t part_start;  /* byte offset of the file system on the disk */
	char how[192];        /* how rotational was decided, for reports */
	char fs_id[64];       /* stable identity of the file system: "uuid:...",
				 "serial:..." (FAT, exFAT, NTFS), "fsid:...",
				 or "dev:MAJ:MIN" when nothing better is known */
	char fs_alt[64];      /* "fsid:..." when fs_id is better, else "": what a
				 scan without the right to read the superblock (not
				 root, no /dev/disk/by-uuid) finds for the same file
				 system, so that both know it as one (db_map_fs) */
};

/* Fill *out for the file system with device number st_dev; rel below a,
 * when a is not NULL, is something on it (btrfs subvolumes have device
 * numbers the mount table does not list: its path is matched to mount
 * points; it is opened below a, as every scanned file, to ask its file
 * system's id).  A FUSE mount a user made is not taken at its word about
 * what it was mounted from (no device of its naming is probed).  Never
 * fails for lack of information (unknown fields say so); returns SL_OK,
 * or SL_E_NOMEM. */
int dev_probe(uint64_t st_dev, const struct anchor *a, const char *rel, struct dev_info *out,
	      struct sl_err *err);

/* Whether the file system known as ident (its other name alt, "" when
 * none: struct dev_info's fs_id and fs_alt, as the index keeps them) is
 * mounted now, its identity worked out for every mounted file system as a
 * scan would (Linux: each line of the mount table but autofs triggers,
 * whose file system, once there, has a line of its own; Windows: each
 * volume with a drive letter or mount folder).  Where it is mounted goes
 * into at (cap bytes; "" when it is not): `last` (where the index last saw
 * it) when it is mounted there too, else the first.  Returns 1 mounted,
 * 0 not, -1 when the mounts cannot be listed (callers that would destroy
 * something take that as mounted). */
int dev_fs_mounted(const char *ident, const char *alt, const char *last, char *at, size_t cap);

/* The device nodes ("/dev/sdb1") that the file system holding path and
 * those mounted below it were mounted from, where the mount table's word
 * for it can be taken (not a FUSE mount a user made): what dev_probe reads
 * file system ids from when /dev/disk/by-uuid does not name them.
 * Appended to out, each NUL-terminated (none: tmpfs, FUSE, NFS; always on
 * Windows).  Returns 0 or -1 when memory ran out. */
int dev_sources_under(const char *path, struct strbuf *out);

/* Whether the file system st_dev is a mergerfs pool (fuse.mergerfs) that
 * root or this process's user mounted, seen at its own top: its mount
 * point, as the mount table says, into mnt (cap bytes).  Returns 1 or 0
 * (no such pool; always on Windows).  extents.h says why the mounter
 * matters. */
int dev_pool_mount(uint64_t st_dev, char *mnt, size_t cap);

/* Bytes the whole disk `disk` (dev_info.disk) has transferred, read and
 * written, by anyone, since it appeared; the background mode compares it
 * with its own I/O to notice someone else using the disk.  Returns 0, or an
 * errno value (ENOENT: no such disk; ENOSYS: not known on this platform). */
int dev_io_bytes(const char *disk, uint64_t *bytes);

/* Human form of a device number ("8:1"). */
void dev_number(uint64_t st_dev, char *buf, unsigned len);

#endif
