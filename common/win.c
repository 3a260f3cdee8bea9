/* win.c - see win.h. */
#include "common/win.h"

#include "common/err.h"
#include "common/fileid.h"
#include "common/wincall.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <windows.h>
#include <shlobj.h>

struct win_calls win_call = {CreateFileW, OpenFileById, GetFileInformationByHandle};

int win_errno(unsigned long code)
{
	switch (code) {
	case ERROR_FILE_NOT_FOUND:
	case ERROR_PATH_NOT_FOUND:
	case ERROR_INVALID_NAME:
	case ERROR_BAD_NETPATH:
	case ERROR_BAD_PATHNAME:
	case ERROR_INVALID_DRIVE:
		return ENOENT;
	case ERROR_ACCESS_DENIED:
	case ERROR_PRIVILEGE_NOT_HELD:
		return EACCES;
	case ERROR_TOO_MANY_OPEN_FILES:
		return EMFILE;
	case ERROR_NOT_ENOUGH_MEMORY:
	case ERROR_OUTOFMEMORY:
	case ERROR_NO_SYSTEM_RESOURCES:
		return ENOMEM;
	case ERROR_DISK_FULL:
	case ERROR_HANDLE_DISK_FULL:
		return ENOSPC;
	case ERROR_INVALID_FUNCTION:
	case ERROR_NOT_SUPPORTED:
		return EOPNOTSUPP;
	case ERROR_DIRECTORY:
		return ENOTDIR;
	case ERROR_WRITE_PROTECT:
		return EROFS;
	case ERROR_FILE_EXISTS:
	case ERROR_ALREADY_EXISTS:
		return EEXIST;
	case ERROR_LOCK_VIOLATION:
		return EWOULDBLOCK;
	case ERROR_CRC:
	case ERROR_READ_FAULT:
	case ERROR_SECTOR_NOT_FOUND:
	case ERROR_DEVICE_NOT_CONNECTED:
		return EIO;
	case ERROR_SUCCESS:
		return 0;
	default:
		return (int)(WIN_SYS_BASE + code);
	}
}

/* Not in every mingw-w64 winerror.h. */
#ifndef ERROR_THREAD_MODE_ALREADY_BACKGROUND
#define ERROR_THREAD_MODE_ALREADY_BACKGROUND 400L
#endif

enum win_bg win_background_verdict(int ok, unsigned long err)
{
	if (ok)
		return WIN_BG_ON;
	/* A thread asking twice hears this; the process's answer
	 * (ERROR_PROCESS_MODE_ALREADY_BACKGROUND, 402) is for
	 * SetPriorityClass and never comes from SetThreadPriority. */
	return err == ERROR_THREAD_MODE_ALREADY_BACKGROUND ? WIN_BG_ALREADY : WIN_BG_REFUSED;
}

enum win_ctl win_console_verdict(unsigned long ev, int asked_before)
{
	switch (ev) {
	case CTRL_C_EVENT:
	case CTRL_BREAK_EVENT:
		return asked_before ? WIN_CTL_DEFAULT : WIN_CTL_STOP;
	case CTRL_CLOSE_EVENT:
	case CTRL_SHUTDOWN_EVENT:
		return WIN_CTL_STOP_WAIT;
	case CTRL_LOGOFF_EVENT:
		return WIN_CTL_IGNORE;
	default:
		return WIN_CTL_DEFAULT;
	}
}

wchar_t *win_wide(const char *s)
{
	int n = MultiByteToWideChar(CP_UTF8, MB_ERR_INVALID_CHARS, s, -1, NULL, 0);
	wchar_t *w;

	if (n <= 0) {
		errno = EILSEQ;
		return NULL;
	}
	w = malloc((size_t)n * sizeof(*w));
	if (!w) {
		errno = ENOMEM;
		return NULL;
	}
	MultiByteToWideChar(CP_UTF8, MB_ERR_INVALID_CHARS, s, -1, w, n);
	return w;
}

int win_utf8(const wchar_t *w, int len, struct strbuf *out)
{
	char small[512], *buf = small;
	int n, rc;

	if (len < 0)
		len = (int)wcslen(w);
	if (len == 0)
		return 0;
	/* Without WC_ERR_INVALID_CHARS, lone surrogates become U+FFFD. */
	n = WideCharToMultiByte(CP_UTF8, 0, w, len, NULL, 0, NULL, NULL);
	if (n <= 0)
		return 0;
	if ((size_t)n > sizeof(small) && !(buf = malloc((size_t)n)))
		return -1;
	n = WideCharToMultiByte(CP_UTF8, 0, w, len, buf, n, NULL, NULL);
	rc = sb_add(out, buf, (size_t)(n > 0 ? n : 0));
	if (buf != small)
		free(buf);
	return rc;
}

static int is_sep(char c)
{
	return c == '/' || c == '\\';
}

wchar_t *win_path(const char *path)
{
	size_t n = strlen(path), i, o = 0;
	const char *prefix = "";
	char *tmp;
	wchar_t *w;

	if (((path[0] >= 'A' && path[0] <= 'Z') || (path[0] >= 'a' && path[0] <= 'z')) &&
	    path[1] == ':' && is_sep(path[2]))
		prefix = "\\\\?\\";
	else if (is_sep(path[0]) && is_sep(path[1]) && path[2] != '?' && path[2] != '.') {
		prefix = "\\\\?\\UNC\\";
		path += 2;
		n -= 2;
	}
	tmp = malloc(strlen(prefix) + n + 1);
	if (!tmp) {
		errno = ENOMEM;
		return NULL;
	}
	o = strlen(prefix);
	memcpy(tmp, prefix, o);
	for (i = 0; i < n; i++) {
		char c = path[i] == '/' ? '\\' : path[i];
		/* \\?\ paths are taken literally: collapse doubled separators */
		if (c == '\\' && o > 0 && tmp[o - 1] == '\\' && *prefix)
			continue;
		tmp[o++] = c;
	}
	tmp[o] = '\0';
	w = win_wide(tmp);
	free(tmp);
	return w;
}

int win_from_path(const wchar_t *w, struct strbuf *out)
{
	size_t at = out->len, i;

	if (wcsncmp(w, L"\\\\?\\UNC\\", 8) == 0) {
		sb_adds(out, "//");
		w += 8;
		at += 2;
	} else if (wcsncmp(w, L"\\\\?\\", 4) == 0) {
		w += 4;
	}
	if (win_utf8(w, -1, out) != 0)
		return -1;
	for (i = at; i < out->len; i++)
		if (out->p[i] == '\\')
			out->p[i] = '/';
	return 0;
}

unsigned long win_volume_of(const char *path, wchar_t *root, wchar_t *dev)
{
	const size_t cap = MAX_PATH + 8;
	wchar_t *wp = win_path(path), guid[MAX_PATH + 8];
	const wchar_t *r;
	size_t n;

	dev[0] = 0;
	if (!wp)
		return ERROR_NOT_ENOUGH_MEMORY;
	if (!GetVolumePathNameW(wp, root, (DWORD)cap)) {
		DWORD e = GetLastError();
		free(wp);
		return e;
	}
	free(wp);
	r = root;
	if (wcsncmp(r, L"\\\\?\\", 4) == 0)
		r += 4;
	if (r[0] && r[1] == L':' && (r[2] == L'\\' || r[2] == 0) && (r[2] == 0 || r[3] == 0)) {
		swprintf(dev, cap, L"\\\\.\\%lc:", r[0]);
		return 0;
	}
	if (GetVolumeNameForVolumeMountPointW(root, guid, (DWORD)cap)) {
		n = wcslen(guid);
		if (n > 0 && guid[n - 1] == L'\\')
			guid[n - 1] = 0; /* the device, not its root folder */
		swprintf(dev, cap, L"%ls", guid);
	}
	return 0;
}

#ifndef FILE_ATTRIBUTE_RECALL_ON_DATA_ACCESS
#define FILE_ATTRIBUTE_RECALL_ON_DATA_ACCESS 0x00400000
#endif
#ifndef FILE_ATTRIBUTE_RECALL_ON_OPEN
#define FILE_ATTRIBUTE_RECALL_ON_OPEN 0x00040000
#endif

int win_tag_is_link(unsigned long tag)
{
	return IsReparseTagNameSurrogate(tag) != 0;
}

enum win_kind win_entry_kind(unsigned long attrs, unsigned long tag)
{
	int is_dir = (attrs & FILE_ATTRIBUTE_DIRECTORY) != 0;

	if (attrs & FILE_ATTRIBUTE_REPARSE_POINT) {
		if (win_tag_is_link(tag))
			return WIN_KIND_LINK;
		/* Tag 0 is no tag: the listing did not say (Wine lists a Unix
		 * symlink to a folder so).  An unknown folder could lead off the
		 * volume or round in a loop; an unknown file read costs at most
		 * a link's target read once more. */
		if (tag == 0 && is_dir)
			return WIN_KIND_LINK;
	}
	/* Not on this disk (cloud placeholders, HSM): reading would
	 * download it, opening a virtual folder would fetch its listing. */
	if (attrs & (FILE_ATTRIBUTE_OFFLINE | FILE_ATTRIBUTE_RECALL_ON_DATA_ACCESS |
		     FILE_ATTRIBUTE_RECALL_ON_OPEN | FILE_ATTRIBUTE_DEVICE))
		return WIN_KIND_SPECIAL;
	return is_dir ? WIN_KIND_DIR : WIN_KIND_FILE;
}

/* 16 bytes as two little-endian halves */
static void halves(const unsigned char b[16], uint64_t *lo, uint64_t *hi)
{
	int i;

	*lo = *hi = 0;
	for (i = 7; i >= 0; i--) {
		*lo = *lo << 8 | b[i];
		*hi = *hi << 8 | b[8 + i];
	}
}

/* FILE_ID_EXTD_DIR_INFO, hidden by the headers below _WIN32_WINNT 0x0602 */
struct extd_dir_info {
	ULONG NextEntryOffset;
	ULONG FileIndex;
	LARGE_INTEGER CreationTime, LastAccessTime, LastWriteTime, ChangeTime;
	LARGE_INTEGER EndOfFile, AllocationSize;
	ULONG FileAttributes;
	ULONG FileNameLength;
	ULONG EaSize;
	ULONG ReparsePointTag;
	unsigned char FileId[16];
	WCHAR FileName[1];
};
_Static_assert(offsetof(struct extd_dir_info, FileId) == 72 &&
		       offsetof(struct extd_dir_info, FileName) == 88,
	       "FILE_ID_EXTD_DIR_INFO's layout");

void win_dirent(const void *p, int extd, struct win_dirent *out)
{
	if (extd) {
		const struct extd_dir_info *fi = p;
		halves(fi->FileId, &out->raw.lo, &out->raw.hi);
		out->name = fi->FileName;
		out->len = (int)(fi->FileNameLength / sizeof(WCHAR));
		out->attrs = fi->FileAttributes;
		out->tag = fi->ReparsePointTag;
		out->next = fi->NextEntryOffset;
	} else {
		const FILE_ID_BOTH_DIR_INFO *fi = p;
		out->raw.lo = (uint64_t)fi->FileId.QuadPart;
		out->raw.hi = 0;
		out->name = fi->FileName;
		out->len = (int)(fi->FileNameLength / sizeof(WCHAR));
		out->attrs = fi->FileAttributes;
		out->tag = fi->EaSize; /* the tag, for a reparse point */
		out->next = fi->NextEntryOffset;
	}
	out->id = fileid_fold(out->raw.lo, out->raw.hi);
}

int win_handle_kind(void *handle)
{
	BY_HANDLE_FILE_INFORMATION bi;
	FILE_ATTRIBUTE_TAG_INFO tag;
	DWORD t = 0;

	if (!win_call.file_info((HANDLE)handle, &bi))
		return -1;
	if ((bi.dwFileAttributes & FILE_ATTRIBUTE_REPARSE_POINT) &&
	    GetFileInformationByHandleEx((HANDLE)handle, FileAttributeTagInfo, &tag, sizeof(tag)))
		t = tag.ReparseTag;
	return (int)win_entry_kind(bi.dwFileAttributes, t);
}

void *win_open_by_id(void *hint, const struct fileid *id, unsigned long access,
		     unsigned long flags, unsigned long *e)
{
	FILE_ID_DESCRIPTOR fd;
	unsigned char b[16];
	HANDLE h;
	int i;

	memset(&fd, 0, sizeof(fd));
	fd.dwSize = sizeof(fd);
	if (id->hi == 0) {
		fd.Type = FileIdType;
		fd.FileId.QuadPart = (LONGLONG)id->lo;
	} else {
		/* ExtendedFileId shares the union with ObjectId, 16 bytes,
		 * both hidden below _WIN32_WINNT 0x0602 */
		fd.Type = ExtendedFileIdType;
		for (i = 0; i < 8; i++) {
			b[i] = (unsigned char)(id->lo >> (8 * i));
			b[8 + i] = (unsigned char)(id->hi >> (8 * i));
		}
		memcpy(&fd.ObjectId, b, sizeof(b));
	}
	h = win_call.open_by_id((HANDLE)hint, &fd, access,
				FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE, NULL, flags);
	*e = h == INVALID_HANDLE_VALUE ? GetLastError() : 0;
	return h == INVALID_HANDLE_VALUE ? NULL : h;
}

int win_id_gone(unsigned long e)
{
	return e == ERROR_FILE_NOT_FOUND || e == ERROR_PATH_NOT_FOUND ||
	       e == ERROR_INVALID_PARAMETER;
}

uint64_t win_fold_id(const unsigned char id[16])
{
	uint64_t lo, hi;

	halves(id, &lo, &hi);
	return fileid_fold(lo, hi);
}

static int hexval(wchar_t c)
{
	if (c >= L'0' && c <= L'9')
		return c - L'0';
	if (c >= L'a' && c <= L'f')
		return c - L'a' + 10;
	if (c >= L'A' && c <= L'F')
		return c - L'A' + 10;
	return -1;
}

int win_volume_guid(const wchar_t *path, unsigned char guid[16])
{
	const wchar_t *p = wcsstr(path, L"Volume{");
	int n = 0, i;

	if (!p)
		return -1;
	p += 7;
	for (i = 0; i < 36; i++, p++) {
		int hi, lo;
		if (i == 8 || i == 13 || i == 18 || i == 23) {
			if (*p != L'-')
				return -1;
			continue;
		}
		hi = hexval(p[0]);
		lo = hexval(p[1]);
		if (hi < 0 || lo < 0)
			return -1;
		guid[n++] = (unsigned char)(hi << 4 | lo);
		p++;
		i++;
	}
	return n == 16 && *p == L'}' ? 0 : -1;
}

uint64_t win_guid_dev(const unsigned char guid[16])
{
	uint64_t lo, hi;

	halves(guid, &lo, &hi);
	return (1ull << 63) | (fileid_mix(lo ^ fileid_mix(hi)) >> 1);
}

/* Serial numbers of the mounted volumes, listed once */
#define MAX_SERIALS 256
static INIT_ONCE serials_once = INIT_ONCE_STATIC_INIT;
static DWORD serials[MAX_SERIALS];
static size_t nserials;

static BOOL CALLBACK list_serials(PINIT_ONCE once, PVOID param, PVOID *ctx)
{
	wchar_t name[MAX_PATH + 8];
	HANDLE f;

	(void)once;
	(void)param;
	(void)ctx;
	f = FindFirstVolumeW(name, MAX_PATH + 8);
	if (f == INVALID_HANDLE_VALUE)
		return TRUE;
	do {
		DWORD serial;
		/* a reader without a card, an empty optical drive: no serial */
		UINT old = SetErrorMode(SEM_FAILCRITICALERRORS);
		if (nserials < MAX_SERIALS &&
		    GetVolumeInformationW(name, NULL, 0, &serial, NULL, NULL, NULL, 0))
			serials[nserials++] = serial;
		SetErrorMode(old);
	} while (FindNextVolumeW(f, name, MAX_PATH + 8));
	FindVolumeClose(f);
	return TRUE;
}

int win_serial_shared(uint32_t serial)
{
	size_t i, n = 0;

	InitOnceExecuteOnce(&serials_once, list_serials, NULL, NULL);
	for (i = 0; i < nserials; i++)
		n += serials[i] == serial;
	return n >= 2;
}

void win_volume_key(const wchar_t *root, unsigned long serial, char *out, size_t cap)
{
	wchar_t guid[MAX_PATH + 8];
	unsigned char g[16];
	int n = snprintf(out, cap, "serial:%04X-%04X", (unsigned)(serial >> 16) & 0xffff,
			 (unsigned)serial & 0xffff);

	if (n < 0 || (size_t)n >= cap || !win_serial_shared((uint32_t)serial) ||
	    !GetVolumeNameForVolumeMountPointW(root, guid, MAX_PATH + 8) ||
	    win_volume_guid(guid, g) != 0)
		return;
	snprintf(out + n, cap - (size_t)n,
		 "@{%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x}", g[0], g[1],
		 g[2], g[3], g[4], g[5], g[6], g[7], g[8], g[9], g[10], g[11], g[12], g[13], g[14],
		 g[15]);
}

/* GetFileInformationByHandleEx's FileIdInfo (Windows 8 on; the headers
 * hide it below _WIN32_WINNT 0x0602) */
#define WIN_FILE_ID_INFO 18
struct win_file_id_info {
	ULONGLONG serial;
	unsigned char id[16];
};

void win_file_id(void *handle, const struct _BY_HANDLE_FILE_INFORMATION *bi, uint64_t *dev,
		 uint64_t *ino)
{
	HANDLE h = handle;
	struct win_file_id_info fi;
	unsigned char guid[16];
	wchar_t small[512], *name = small;
	DWORD n;

	*dev = bi->dwVolumeSerialNumber;
	*ino = ((uint64_t)bi->nFileIndexHigh << 32) | bi->nFileIndexLow;
	if (GetFileInformationByHandleEx(h, (FILE_INFO_BY_HANDLE_CLASS)WIN_FILE_ID_INFO, &fi,
					 sizeof(fi)))
		*ino = win_fold_id(fi.id);
	if (!win_serial_shared(bi->dwVolumeSerialNumber))
		return;
	/* a clone beside its original: which volume is this one? */
	n = GetFinalPathNameByHandleW(h, small, 512, VOLUME_NAME_GUID);
	if (n >= 512) {
		name = malloc(((size_t)n + 1) * sizeof(*name));
		n = name ? GetFinalPathNameByHandleW(h, name, n + 1, VOLUME_NAME_GUID) : 0;
	}
	if (n > 0 && name && win_volume_guid(name, guid) == 0)
		*dev = win_guid_dev(guid);
	if (name != small)
		free(name);
}

int win_stat_handle(void *handle, struct win_stat *st, const char **what)
{
	BY_HANDLE_FILE_INFORMATION bi;
	FILE_BASIC_INFO basic;
	HANDLE h = handle;

	if (!GetFileInformationByHandle(h, &bi))
		return win_errno(GetLastError());
	if (bi.dwFileAttributes & FILE_ATTRIBUTE_DIRECTORY) {
		*what = "open: no longer a regular file";
		return -1;
	}
	if (bi.dwFileAttributes & FILE_ATTRIBUTE_REPARSE_POINT) {
		FILE_ATTRIBUTE_TAG_INFO tag;
		if (GetFileInformationByHandleEx(h, FileAttributeTagInfo, &tag, sizeof(tag)) &&
		    win_tag_is_link(tag.ReparseTag)) {
			*what = "open: replaced by a symbolic link";
			return -1;
		}
	}
	win_file_id(h, &bi, &st->dev, &st->ino);
	st->size = ((uint64_t)bi.nFileSizeHigh << 32) | bi.nFileSizeLow;
	st->nlink = bi.nNumberOfLinks;
	st->btime_ns = win_filetime_ns(((uint64_t)bi.ftCreationTime.dwHighDateTime << 32) |
				       bi.ftCreationTime.dwLowDateTime);
	st->mtime_ns = win_filetime_ns(((uint64_t)bi.ftLastWriteTime.dwHighDateTime << 32) |
				       bi.ftLastWriteTime.dwLowDateTime);
	/* The change time (any write, rename, attribute or ACL change) is
	 * not in BY_HANDLE_FILE_INFORMATION; FAT has none and answers 0. */
	st->ctime_ns = GetFileInformationByHandleEx(h, FileBasicInfo, &basic, sizeof(basic))
			       ? win_filetime_ns((uint64_t)basic.ChangeTime.QuadPart)
			       : 0;
	return 0;
}

int win_stat_or_fail(void *handle, struct win_stat *st, struct sl_err *err)
{
	const char *what = NULL;
	int e = win_stat_handle(handle, st, &what);

	if (e < 0)
		return SL_FAIL(err, SL_E_IO, 0, "%s", what);
	if (e > 0)
		return SL_FAIL(err, sl_errno_class(e), e, "stat");
	return SL_OK;
}

int win_folder(const wchar_t *name, struct strbuf *out)
{
	const KNOWNFOLDERID *id = wcscmp(name, L"ProgramData") == 0    ? &FOLDERID_ProgramData
				  : wcscmp(name, L"LOCALAPPDATA") == 0 ? &FOLDERID_LocalAppData
				  : wcscmp(name, L"APPDATA") == 0      ? &FOLDERID_RoamingAppData
				  : wcscmp(name, L"USERPROFILE") == 0  ? &FOLDERID_Profile
								       : NULL;
	const wchar_t *v;
	wchar_t *known = NULL;
	int rc;

	if (id && SHGetKnownFolderPath(id, 0, NULL, &known) == S_OK && known && known[0]) {
		rc = win_from_path(known, out);
		CoTaskMemFree(known);
		return rc;
	}
	CoTaskMemFree(known);
	v = _wgetenv(name);
	if (!v || !v[0])
		return -1;
	return win_from_path(v, out);
}
