/* device_linux.c - /proc/self/mountinfo and sysfs. */
#include "scanner/device.h"

#include "common/anchor_linux.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <fcntl.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <unistd.h>

void dev_number(uint64_t st_dev, char *buf, unsigned len)
{
	snprintf(buf, len, "%u:%u", major((dev_t)st_dev), minor((dev_t)st_dev));
}

/* mountinfo escapes space, tab, newline and backslash as \ooo. */
static void unescape(char *s)
{
	char *o = s;
	while (*s) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' &&
		    s[3] >= '0' && s[3] <= '7') {
			*o++ = (char)(((s[1] - '0') << 6) | ((s[2] - '0') << 3) | (s[3] - '0'));
			s += 4;
		} else {
			*o++ = *s++;
		}
	}
	*o = '\0';
}

/* Bounded copy; a name too long for dst is cut, never overrun. */
static void copy(char *dst, size_t cap, const char *src)
{
	size_t n = strlen(src);
	if (n >= cap)
		n = cap - 1;
	memcpy(dst, src, n);
	dst[n] = '\0';
}

/* True when path lies at or below mount point mnt. */
static int under(const char *path, const char *mnt)
{
	size_t n = strlen(mnt);
	if (strcmp(mnt, "/") == 0)
		return path[0] == '/';
	return strncmp(path, mnt, n) == 0 && (path[n] == '/' || path[n] == '\0');
}

/* The fields of one mountinfo line this file reads, split in place
 * (still escaped): the device number, the root of the mount within its
 * file system, the mount point, and after the "-" the type, the source
 * and the super options.  Missing ones are NULL. */
struct mi_line {
	char *num, *top, *mnt, *type, *src, *opts;
};

static void mi_split(char *line, struct mi_line *m)
{
	char *save = NULL, *tok;
	int field = 0;

	memset(m, 0, sizeof(*m));
	for (tok = strtok_r(line, " \n", &save); tok; tok = strtok_r(NULL, " \n", &save)) {
		field++;
		if (field == 3)
			m->num = tok;
		else if (field == 4)
			m->top = tok;
		else if (field == 5)
			m->mnt = tok;
		else if (field > 6 && strcmp(tok, "-") == 0) {
			m->type = strtok_r(NULL, " \n", &save);
			m->src = m->type ? strtok_r(NULL, " \n", &save) : NULL;
			m->opts = m->src ? strtok_r(NULL, " \n", &save) : NULL;
			break;
		}
	}
}

/* Whether superopts (mountinfo's last field) say user_id=uid. */
static int mounted_by(const char *superopts, unsigned uid)
{
	char want[32];
	const char *p = superopts;
	size_t n = (size_t)snprintf(want, sizeof(want), "user_id=%u", uid);

	while ((p = strstr(p, want)) != NULL) {
		if ((p == superopts || p[-1] == ',') && (p[n] == ',' || p[n] == '\0' || p[n] == '\n'))
			return 1;
		p += n;
	}
	return 0;
}

/* Fields: id parent maj:min root mountpoint options [optional...] - fstype
 * source superopts.  The mount is the line whose maj:min is st_dev; btrfs
 * gives files a per-subvolume device number that mountinfo does not show,
 * so failing that, the last-mounted, longest mount point containing hint. */
/* Returns whether the source is the mounter's word that can be taken: a
 * FUSE file system a user mounted names any source it likes ("/dev/sda"),
 * and its device would then be probed and its superblock read as root. */
static int find_mount(uint64_t st_dev, const char *hint, struct dev_info *out)
{
	char want[32], line[8192];
	size_t best = 0;
	int exact = 0, trusted = 1;
	FILE *f = fopen("/proc/self/mountinfo", "re");

	dev_number(st_dev, want, sizeof(want));
	if (!f)
		return 0;
	while (!exact && fgets(line, sizeof(line), f)) {
		struct mi_line m;
		char *num, *mnt, *type, *src, *opts;
		mi_split(line, &m);
		num = m.num, mnt = m.mnt, type = m.type, src = m.src, opts = m.opts;
		if (!num || !mnt || !type || !src)
			continue;
		unescape(mnt);
		unescape(src);
		if (strcmp(num, want) == 0)
			exact = 1;
		else if (!hint || !under(hint, mnt) || strlen(mnt) < best)
			continue;
		best = strlen(mnt);
		copy(out->fstype, sizeof(out->fstype), type);
		copy(out->source, sizeof(out->source), src);
		copy(out->mount, sizeof(out->mount), mnt);
		trusted = strncmp(type, "fuse", 4) != 0 || (opts && mounted_by(opts, 0));
	}
	fclose(f);
	return trusted;
}

int dev_sources_under(const char *path, struct strbuf *out)
{
	char line[8192], top[4096] = "";
	size_t best = 0;
	FILE *f = fopen("/proc/self/mountinfo", "re");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		struct mi_line m;
		char *mnt, *type, *src, *opts;
		mi_split(line, &m);
		mnt = m.mnt, type = m.type, src = m.src, opts = m.opts;
		if (!mnt || !type || !src || strncmp(src, "/dev/", 5) != 0 ||
		    (strncmp(type, "fuse", 4) == 0 && !(opts && mounted_by(opts, 0))))
			continue;
		unescape(mnt);
		unescape(src);
		if (under(mnt, path) && strcmp(mnt, path) != 0)
			sb_add(out, src, strlen(src) + 1); /* below the root */
		else if (under(path, mnt) && strlen(mnt) >= best && strlen(src) < sizeof(top)) {
			best = strlen(mnt); /* holding it: the last, longest */
			memcpy(top, src, strlen(src) + 1);
		}
	}
	fclose(f);
	if (top[0])
		sb_add(out, top, strlen(top) + 1);
	return out->oom ? -1 : 0;
}

int dev_pool_mount(uint64_t st_dev, char *mnt, size_t cap)
{
	char want[32], line[8192];
	int found = 0;
	FILE *f = fopen("/proc/self/mountinfo", "re");

	dev_number(st_dev, want, sizeof(want));
	if (!f)
		return 0;
	while (!found && fgets(line, sizeof(line), f)) {
		struct mi_line m;
		char *num, *top, *at, *type, *opts;
		mi_split(line, &m);
		num = m.num, top = m.top, at = m.mnt, type = m.type, opts = m.opts;
		/* the pool's own top (not a bind mount of a folder of it), by
		 * root or by us: a user's FUSE server may call itself anything */
		if (!num || !top || !at || !type || !opts || strcmp(num, want) != 0 ||
		    strcmp(type, "fuse.mergerfs") != 0 || strcmp(top, "/") != 0 ||
		    !(mounted_by(opts, 0) || mounted_by(opts, (unsigned)geteuid())))
			continue;
		unescape(at);
		if (strlen(at) < cap) {
			memcpy(mnt, at, strlen(at) + 1);
			found = 1;
		}
	}
	fclose(f);
	return found;
}

static int read_line(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "re");
	size_t n;

	if (!f)
		return -1;
	if (!fgets(buf, (int)len, f)) {
		fclose(f);
		return -1;
	}
	fclose(f);
	n = strlen(buf);
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
		buf[--n] = '\0';
	return 0;
}

static int exists(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0;
}

/* The sysfs directory of the whole disk holding block device dir (a
 * resolved /sys/devices/... path); *start gets the partition offset. */
static void whole_disk(const char *dir, char *disk, size_t cap, uint64_t *start)
{
	char p[PATH_MAX + 32], v[64];

	*start = 0;
	snprintf(p, sizeof(p), "%s/partition", dir);
	if (exists(p)) {
		const char *slash;
		snprintf(p, sizeof(p), "%s/start", dir);
		if (read_line(p, v, sizeof(v)) == 0)
			*start = strtoull(v, NULL, 10) * 512u;
		slash = strrchr(dir, '/');
		if (slash && (size_t)(slash - dir) < cap) {
			memcpy(disk, dir, (size_t)(slash - dir));
			disk[slash - dir] = '\0';
			return;
		}
	}
	copy(disk, cap, dir);
}

/* Rotational flag of a resolved disk directory, following dm/md slaves.
 * Returns 1, 0 or -1 and appends what it saw to how. */
static int rotational_of(const char *diskdir, char *how, size_t howcap, int depth)
{
	char p[PATH_MAX + 32], v[16];
	const char *name = strrchr(diskdir, '/');
	DIR *d;
	struct dirent *de;
	int any = -1, nslaves = 0;
	size_t hl;

	name = name ? name + 1 : diskdir;
	snprintf(p, sizeof(p), "%s/slaves", diskdir);
	d = depth < 8 ? opendir(p) : NULL;
	if (d) {
		while ((de = readdir(d)) != NULL) {
			char link[PATH_MAX + 300], *res, sub[PATH_MAX];
			uint64_t ignored;
			int r;
			if (de->d_name[0] == '.')
				continue;
			snprintf(link, sizeof(link), "%s/%s", p, de->d_name);
			res = realpath(link, NULL);
			if (!res)
				continue;
			whole_disk(res, sub, sizeof(sub), &ignored);
			free(res);
			hl = strlen(how);
			snprintf(how + hl, howcap - hl, "%s%s over ", nslaves ? ", " : "", name);
			r = rotational_of(sub, how, howcap, depth + 1);
			nslaves++;
			if (r == 1 || (r == 0 && any == -1))
				any = r;
		}
		closedir(d);
		if (nslaves)
			return any;
	}
	snprintf(p, sizeof(p), "%s/queue/rotational", diskdir);
	hl = strlen(how);
	if (read_line(p, v, sizeof(v)) != 0) {
		snprintf(how + hl, howcap - hl, "%s (no queue/rotational)", name);
		return -1;
	}
	snprintf(how + hl, howcap - hl, "%s queue/rotational=%s", name, v);
	snprintf(p, sizeof(p), "%s/loop/backing_file", diskdir);
	{
		char back[200];
		if (read_line(p, back, sizeof(back)) == 0) {
			hl = strlen(how);
			snprintf(how + hl, howcap - hl, " (backed by %s)", back);
		}
	}
	return v[0] == '1' ? 1 : v[0] == '0' ? 0 : -1;
}

/* ---- file system identity ----------------------------------------------- */

static void hex(char *out, size_t cap, const unsigned char *b, size_t n, int dashes)
{
	static const char digits[] = "0123456789abcdef";
	size_t i, o = 0;
	for (i = 0; i < n && o + 3 < cap; i++) {
		if (dashes && (i == 4 || i == 6 || i == 8 || i == 10))
			out[o++] = '-';
		out[o++] = digits[b[i] >> 4];
		out[o++] = digits[b[i] & 15];
	}
	out[o] = '\0';
}

static int all_zero(const unsigned char *b, size_t n)
{
	size_t i;
	for (i = 0; i < n; i++)
		if (b[i])
			return 0;
	return 1;
}

/* A little-endian volume serial of n bytes (at most 8) as blkid prints
 * it: most significant byte first. */
static void serial_le(char *out, size_t cap, const unsigned char *b, size_t n)
{
	unsigned char s[8];
	size_t i;
	for (i = 0; i < n; i++)
		s[i] = b[n - 1 - i];
	hex(out, cap, s, n, 0);
}

/* The UUID or serial in the superblock of block device `dev`; 0 if found. */
static int superblock_id(const char *dev, char *out, size_t cap)
{
	unsigned char b[512];
	char id[40];
	int fd = open(dev, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	int found = -1;

	if (fd < 0)
		return -1;
	/* ext2/3/4: superblock at 1024, magic 0xEF53 at +56, UUID at +104 */
	if (pread(fd, b, 512, 1024) == 512 && b[56] == 0x53 && b[57] == 0xEF &&
	    !all_zero(b + 104, 16)) {
		hex(id, sizeof(id), b + 104, 16, 1);
		found = 0;
	/* xfs: "XFSB" at 0, UUID at 32 */
	} else if (pread(fd, b, 512, 0) == 512 && memcmp(b, "XFSB", 4) == 0) {
		hex(id, sizeof(id), b + 32, 16, 1);
		found = 0;
	/* NTFS, exFAT, FAT32, FAT16: volume serial numbers */
	} else if (memcmp(b + 3, "NTFS    ", 8) == 0) {
		serial_le(id, sizeof(id), b + 0x48, 8);
		found = 1;
	} else if (memcmp(b + 3, "EXFAT   ", 8) == 0) {
		serial_le(id, sizeof(id), b + 0x64, 4);
		found = 1;
	} else if (memcmp(b + 0x52, "FAT32   ", 8) == 0) {
		serial_le(id, sizeof(id), b + 0x43, 4);
		found = 1;
	} else if (memcmp(b + 0x36, "FAT1", 4) == 0) {
		serial_le(id, sizeof(id), b + 0x27, 4);
		found = 1;
	/* btrfs: superblock at 64 KiB, "_BHRfS_M" at +64, fsid at +32 */
	} else if (pread(fd, b, 512, 65536) == 512 && memcmp(b + 64, "_BHRfS_M", 8) == 0) {
		hex(id, sizeof(id), b + 32, 16, 1);
		found = 0;
	}
	close(fd);
	if (found < 0)
		return -1;
	snprintf(out, cap, "%s:%s", found == 0 ? "uuid" : "serial", id);
	return 0;
}

/* /dev/disk/by-uuid/NAME -> the device; 0 when one points at `dev`. */
static int by_uuid(const char *dev, char *out, size_t cap)
{
	DIR *d = opendir("/dev/disk/by-uuid");
	struct dirent *de;
	char *want = realpath(dev, NULL);
	int rc = -1;

	while (d && want && (de = readdir(d)) != NULL) {
		char link[PATH_MAX], *res;
		if (de->d_name[0] == '.')
			continue;
		snprintf(link, sizeof(link), "/dev/disk/by-uuid/%s", de->d_name);
		res = realpath(link, NULL);
		if (res && strcmp(res, want) == 0 && strlen(de->d_name) + 6 <= cap) {
			memcpy(out, "uuid:", 5);
			memcpy(out + 5, de->d_name, strlen(de->d_name) + 1);
			rc = 0;
		}
		free(res);
		if (rc == 0)
			break;
	}
	if (d)
		closedir(d);
	free(want);
	return rc;
}

/* statfs's file system id of the file system holding fd (or, fd < 0,
 * path), as "fsid:..." into out; 0 when there is one. */
static int fsid_of(int fd, const char *path, char *out, size_t cap)
{
	struct statfs sf;
	int v[2];
	if (fd >= 0 ? fstatfs(fd, &sf) != 0 : (!path || !path[0] || statfs(path, &sf) != 0))
		return -1;
	memcpy(v, &sf.f_fsid, sizeof(v));
	if (!v[0] && !v[1])
		return -1;
	snprintf(out, cap, "fsid:%08x%08x", (unsigned)v[0], (unsigned)v[1]);
	return 0;
}

/* The identity must depend neither on which file the hint names (it may
 * have been deleted since it was stat'ed) nor on the privileges of the
 * scan: the statfs id is asked of the hint, else of the mount point, and
 * kept as the alternative of a better one. */
static void identify(uint64_t st_dev, int hint_fd, int trusted, struct dev_info *out)
{
	char num[32], fsid[64] = "";

	if (fsid_of(hint_fd, NULL, fsid, sizeof(fsid)) != 0)
		fsid_of(-1, out->mount, fsid, sizeof(fsid));
	if (trusted && strncmp(out->source, "/dev/", 5) == 0 &&
	    (by_uuid(out->source, out->fs_id, sizeof(out->fs_id)) == 0 ||
	     superblock_id(out->source, out->fs_id, sizeof(out->fs_id)) == 0)) {
		copy(out->fs_alt, sizeof(out->fs_alt), fsid);
		return;
	}
	if (fsid[0]) {
		copy(out->fs_id, sizeof(out->fs_id), fsid);
		return;
	}
	dev_number(st_dev, num, sizeof(num));
	snprintf(out->fs_id, sizeof(out->fs_id), "dev:%s", num);
}

/* Whether the names of one file system (either may be "") and of another
 * meet: a scan as root and one as a user name the same one differently
 * (identify), and the index finds a row by either (db_map_fs). */
static int same_fs(const struct dev_info *d, const char *ident, const char *alt)
{
	const char *mine[2] = {d->fs_id, d->fs_alt}, *theirs[2] = {ident, alt ? alt : ""};
	int i, j;

	for (i = 0; i < 2; i++)
		for (j = 0; j < 2; j++)
			if (mine[i][0] && theirs[j][0] && strcmp(mine[i], theirs[j]) == 0)
				return 1;
	return 0;
}

int dev_fs_mounted(const char *ident, const char *alt, const char *last, char *at, size_t cap)
{
	char line[8192];
	int found = 0;
	FILE *f = fopen("/proc/self/mountinfo", "re");

	if (cap)
		at[0] = '\0';
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		struct mi_line m;
		char *num, *mnt, *type, *src, *opts;
		unsigned maj, mnr;
		struct dev_info d;
		int here;

		mi_split(line, &m);
		num = m.num, mnt = m.mnt, type = m.type, src = m.src, opts = m.opts;
		/* asking an automount point's file system mounts what it
		 * stands for (a network share, perhaps a dead one) */
		if (!num || !mnt || !type || !src || strcmp(type, "autofs") == 0 ||
		    sscanf(num, "%u:%u", &maj, &mnr) != 2)
			continue;
		unescape(mnt);
		unescape(src);
		memset(&d, 0, sizeof(d));
		copy(d.fstype, sizeof(d.fstype), type);
		copy(d.source, sizeof(d.source), src);
		copy(d.mount, sizeof(d.mount), mnt);
		identify((uint64_t)makedev(maj, mnr), -1,
			 strncmp(type, "fuse", 4) != 0 || (opts && mounted_by(opts, 0)), &d);
		if (!same_fs(&d, ident, alt))
			continue;
		here = last && strcmp(mnt, last) == 0;
		if ((!found || here) && cap)
			copy(at, cap, mnt);
		found = 1;
		if (here)
			break;
	}
	fclose(f);
	return found;
}

int dev_probe(uint64_t st_dev, const struct anchor *a, const char *rel, struct dev_info *out,
	      struct sl_err *err)
{
	struct strbuf hint = STRBUF_INIT;
	char sys[64], diskdir[PATH_MAX];
	char *res;
	dev_t blk = (dev_t)st_dev;
	const char *name;
	int fd = -1, trusted;

	memset(out, 0, sizeof(*out));
	out->st_dev = st_dev;
	out->rotational = -1;
	copy(out->fstype, sizeof(out->fstype), "?");
	if (a) {
		if (anchor_join(a, rel, &hint) != 0) {
			sb_free(&hint);
			return SL_FAIL(err, SL_E_NOMEM, 0, "out of memory");
		}
		fd = anchor_openat(a, rel, O_PATH);
	}
	trusted = find_mount(st_dev, hint.p, out);
	identify(st_dev, fd, trusted, out);
	if (fd >= 0)
		close(fd);
	sb_free(&hint);

	if (major(blk) == 0) {
		/* Anonymous device (btrfs, overlay, tmpfs, FUSE...): the mount
		 * source may still name the block device. */
		struct stat st;
		if (trusted && strncmp(out->source, "/dev/", 5) == 0 && stat(out->source, &st) == 0 &&
		    S_ISBLK(st.st_mode)) {
			blk = st.st_rdev;
		} else {
			snprintf(out->how, sizeof(out->how), "%s is not backed by a block device",
				 out->fstype);
			return SL_OK;
		}
	}
	snprintf(sys, sizeof(sys), "/sys/dev/block/%u:%u", major(blk), minor(blk));
	res = realpath(sys, NULL);
	if (!res) {
		snprintf(out->how, sizeof(out->how), "no sysfs entry for block device %u:%u",
			 major(blk), minor(blk));
		return SL_OK;
	}
	whole_disk(res, diskdir, sizeof(diskdir), &out->part_start);
	free(res);
	name = strrchr(diskdir, '/');
	copy(out->disk, sizeof(out->disk), name ? name + 1 : diskdir);
	out->rotational = rotational_of(diskdir, out->how, sizeof(out->how), 0);
	return SL_OK;
}

int dev_io_bytes(const char *disk, uint64_t *bytes)
{
	char p[128], line[512];
	unsigned long long f[7];
	FILE *fp;

	*bytes = 0;
	if (!disk[0] || strchr(disk, '/'))
		return ENOENT;
	snprintf(p, sizeof(p), "/sys/class/block/%s/stat", disk);
	fp = fopen(p, "re");
	if (!fp)
		return errno;
	if (!fgets(line, sizeof(line), fp)) {
		fclose(fp);
		return EIO;
	}
	fclose(fp);
	/* Documentation/block/stat.rst: reads, merges, sectors read, ticks,
	 * writes, merges, sectors written...; sectors are always 512 bytes */
	if (sscanf(line, "%llu %llu %llu %llu %llu %llu %llu", &f[0], &f[1], &f[2], &f[3], &f[4],
		   &f[5], &f[6]) != 7)
		return EIO;
	*bytes = ((uint64_t)f[2] + (uint64_t)f[6]) * 512u;
	return 0;
}
