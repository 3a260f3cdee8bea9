/* device_win.c - volumes and disks on Windows.
 *
 * Device numbers here are volume serial numbers (what
 * GetFileInformationByHandle reports for every file on the volume), or for
 * a clone mounted beside its original its GUID's hash (win.h).  The
 * volume is opened as a device (\\.\C:, or its \\?\Volume{GUID} name) with
 * no access rights, which any user may do, and asked:
 *   IOCTL_VOLUME_GET_VOLUME_DISK_EXTENTS  which disk, and where on it the
 *                                         volume starts (the partition
 *                                         offset added to LCN offsets);
 *   IOCTL_STORAGE_QUERY_PROPERTY          StorageDeviceSeekPenaltyProperty:
 *                                         IncursSeekPenalty.
 * A short or refused answer is "unknown": the planner then assumes a seek
 * penalty (physical order costs little on an SSD, and unsorted reads cost a
 * lot on a disk) and the report says it assumed.  Wine answers
 * ERROR_NOT_SUPPORTED, so under Wine it always assumes.
 *
 * The identity of the file system is its volume serial number
 * ("serial:XXXX-XXXX"), stored on the volume itself, so it survives
 * replugging and drive-letter changes.  For NTFS that is the low half of the
 * 64-bit serial Linux reports, so one drive indexed from both systems has
 * two identities (its paths differ anyway).  A volume whose serial another
 * mounted volume shares (a clone) adds its GUID: "serial:XXXX-XXXX@{...}"
 * (win_volume_key; device numbers do the same, win.h). */
#include "scanner/device.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <windows.h>
#include <winioctl.h>

#include "common/sys.h"
#include "common/win.h"

void dev_number(uint64_t st_dev, char *buf, unsigned len)
{
	if (st_dev >> 32) /* a clone's volume, known by its GUID (win.h) */
		snprintf(buf, len, "%016llX", (unsigned long long)st_dev);
	else
		snprintf(buf, len, "%04X-%04X", (unsigned)(st_dev >> 16) & 0xffff,
			 (unsigned)st_dev & 0xffff);
}

static void utf8_into(const wchar_t *w, char *out, size_t cap)
{
	struct strbuf sb = STRBUF_INIT;

	if (win_from_path(w, &sb) == 0 && sb.p)
		snprintf(out, cap, "%s", sb.p);
	else
		snprintf(out, cap, "?");
	sb_free(&sb);
}

static void probe_disk(HANDLE vol, struct dev_info *out)
{
	union {
		VOLUME_DISK_EXTENTS v;
		unsigned char raw[sizeof(VOLUME_DISK_EXTENTS) + 8 * sizeof(DISK_EXTENT)];
	} ext;
	STORAGE_PROPERTY_QUERY q;
	DEVICE_SEEK_PENALTY_DESCRIPTOR sp;
	DWORD got = 0;
	char why[160];

	if (DeviceIoControl(vol, IOCTL_VOLUME_GET_VOLUME_DISK_EXTENTS, NULL, 0, &ext, sizeof(ext),
			    &got, NULL) &&
	    got >= sizeof(VOLUME_DISK_EXTENTS) && ext.v.NumberOfDiskExtents >= 1) {
		snprintf(out->disk, sizeof(out->disk), "PhysicalDrive%lu",
			 (unsigned long)ext.v.Extents[0].DiskNumber);
		if (ext.v.NumberOfDiskExtents == 1)
			out->part_start = (uint64_t)ext.v.Extents[0].StartingOffset.QuadPart;
		else
			out->disk[0] = 0; /* spanned or striped: no one head to follow */
	}

	memset(&q, 0, sizeof(q));
	memset(&sp, 0, sizeof(sp));
	q.PropertyId = StorageDeviceSeekPenaltyProperty;
	q.QueryType = PropertyStandardQuery;
	got = 0;
	if (!DeviceIoControl(vol, IOCTL_STORAGE_QUERY_PROPERTY, &q, sizeof(q), &sp, sizeof(sp),
			     &got, NULL)) {
		sys_strerror(win_errno(GetLastError()), why, sizeof(why));
	} else if (got < sizeof(sp) || sp.Size < sizeof(sp)) {
		snprintf(why, sizeof(why), "short answer, %lu bytes", (unsigned long)got);
	} else {
		out->rotational = sp.IncursSeekPenalty ? 1 : 0;
		snprintf(out->how, sizeof(out->how), "IncursSeekPenalty=%s",
			 sp.IncursSeekPenalty ? "true" : "false");
		return;
	}
	out->rotational = -1;
	snprintf(out->how, sizeof(out->how), "seek-penalty query failed: %s", why);
}

int dev_probe(uint64_t st_dev, const struct anchor *a, const char *rel, struct dev_info *out,
	      struct sl_err *err)
{
	wchar_t root[MAX_PATH + 8], fs[64], dev[MAX_PATH + 8];
	struct strbuf hint = STRBUF_INIT;
	DWORD serial = 0;
	HANDLE vol;
	int found;

	if (a && anchor_join(a, rel, &hint) != 0) {
		sb_free(&hint);
		return SL_FAIL(err, SL_E_NOMEM, 0, "out of memory");
	}
	memset(out, 0, sizeof(*out));
	out->st_dev = st_dev;
	out->rotational = -1;
	snprintf(out->fstype, sizeof(out->fstype), "?");
	snprintf(out->how, sizeof(out->how), "volume not found");
	snprintf(out->fs_id, sizeof(out->fs_id), "serial:%04X-%04X",
		 (unsigned)(st_dev >> 16) & 0xffff, (unsigned)st_dev & 0xffff);
	found = hint.p && win_volume_of(hint.p, root, dev) == 0;
	sb_free(&hint);
	if (!found)
		return SL_OK;
	utf8_into(root, out->mount, sizeof(out->mount));
	if (GetVolumeInformationW(root, NULL, 0, &serial, NULL, NULL, fs, 64)) {
		utf8_into(fs, out->fstype, sizeof(out->fstype));
		/* a clone beside its original adds its GUID: the serial alone
		 * would make the two one file system, and the diff would take
		 * one's files for the other's (docs/windows.md) */
		win_volume_key(root, serial, out->fs_id, sizeof(out->fs_id));
	}
	if (!dev[0])
		return SL_OK;
	utf8_into(dev, out->source, sizeof(out->source));
	vol = CreateFileW(dev, 0, FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE, NULL,
			  OPEN_EXISTING, 0, NULL);
	if (vol == INVALID_HANDLE_VALUE) {
		char why[160];
		sys_strerror(win_errno(GetLastError()), why, sizeof(why));
		snprintf(out->how, sizeof(out->how), "volume device not opened (%s)", why);
		return SL_OK;
	}
	probe_disk(vol, out);
	CloseHandle(vol);
	return SL_OK;
}

int dev_io_bytes(const char *disk, uint64_t *bytes)
{
	DISK_PERFORMANCE dp;
	wchar_t name[96];
	DWORD got = 0;
	HANDLE h;
	int rc = 0;

	if (!disk || !disk[0])
		return ENOENT;
	swprintf(name, sizeof(name) / sizeof(name[0]), L"\\\\.\\%hs", disk);
	h = CreateFileW(name, 0, FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE, NULL,
			OPEN_EXISTING, 0, NULL);
	if (h == INVALID_HANDLE_VALUE)
		return win_errno(GetLastError());
	/* counts since the disk counters were enabled (diskperf; on by default) */
	if (DeviceIoControl(h, IOCTL_DISK_PERFORMANCE, NULL, 0, &dp, sizeof(dp), &got, NULL) &&
	    got >= sizeof(dp))
		*bytes = (uint64_t)dp.BytesRead.QuadPart + (uint64_t)dp.BytesWritten.QuadPart;
	else
		rc = ENOSYS;
	CloseHandle(h);
	return rc;
}

int dev_pool_mount(uint64_t st_dev, char *mnt, size_t cap)
{
	/* no mergerfs here (Windows pools are Storage Spaces: a volume) */
	(void)st_dev;
	if (cap)
		mnt[0] = '\0';
	return 0;
}

int dev_sources_under(const char *path, struct strbuf *out)
{
	(void)path;
	(void)out;
	return 0;
}

int dev_fs_mounted(const char *ident, const char *alt, const char *last, char *at, size_t cap)
{
	wchar_t vol[MAX_PATH + 8];
	HANDLE h;
	int found = 0;

	if (cap)
		at[0] = '\0';
	h = FindFirstVolumeW(vol, MAX_PATH + 8);
	if (h == INVALID_HANDLE_VALUE)
		return -1;
	do {
		wchar_t *paths = NULL, *p;
		DWORD need = 0, serial = 0;
		char key[64], path[MAX_PATH * 3];

		/* an empty card reader's volume has no serial: nothing there */
		if (!GetVolumeInformationW(vol, NULL, 0, &serial, NULL, NULL, NULL, 0))
			continue;
		/* a volume with no drive letter or mount folder shows no file */
		if (!GetVolumePathNamesForVolumeNameW(vol, NULL, 0, &need) &&
		    GetLastError() == ERROR_MORE_DATA && need > 1 &&
		    (paths = malloc(need * sizeof(*paths))) != NULL &&
		    GetVolumePathNamesForVolumeNameW(vol, paths, need, &need) && paths[0]) {
			/* the key dev_probe makes, a clone's GUID and all */
			win_volume_key(paths, serial, key, sizeof(key));
			if (strcmp(key, ident) == 0 || (alt && alt[0] && strcmp(key, alt) == 0)) {
				found = 1;
				for (p = paths; *p; p += wcslen(p) + 1) {
					utf8_into(p, path, sizeof(path));
					if (p == paths || (last && strcmp(path, last) == 0))
						snprintf(at, cap, "%s", path);
				}
			}
		}
		free(paths);
	} while (!found && FindNextVolumeW(h, vol, MAX_PATH + 8));
	FindVolumeClose(h);
	return found;
}
