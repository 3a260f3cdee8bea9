/* win.h - what the *_win.c files share: UTF-8 <-> UTF-16 at the seam, the
 * conversion of our paths to Win32 ones, and Win32 error codes as sys values.
 *
 * Inside seekless every path is UTF-8 with '/' separators on every platform
 * ("C:/Photos/2024/a.jpg"), so ftab, the plan, excludes and the database need
 * no platform knowledge.  Only here do paths become UTF-16, with '\' and the
 * \\?\ prefix that lifts MAX_PATH and turns off Win32 name mangling
 * (trailing dots and spaces, "CON", ...), as FindFirstFileExW reported them.
 *
 * Compiled only on Windows (CMake); no other module includes <windows.h>.
 */
#ifndef SL_WIN_H
#define SL_WIN_H

#include <stddef.h>
#include <stdint.h>
#include <wchar.h>

#include "common/fileid.h"
#include "common/strbuf.h"

/* sys values (struct sl_err.sys, sys_strerror) at or above this are Win32
 * error codes with no errno equivalent: WIN_SYS_BASE + GetLastError(). */
#define WIN_SYS_BASE 0x10000
/* The file system answered FSCTL_GET_RETRIEVAL_POINTERS with a layout that
 * cannot be (Wine's stub): no usable extent map on that volume. */
#define WIN_E_BOGUS_EXTENTS (WIN_SYS_BASE - 1)

/* Win32 error code -> sys value: the errno that means the same thing where
 * the difference matters to callers (ENOENT, EACCES, EMFILE, ENOSPC, ENOMEM,
 * EOPNOTSUPP...), else WIN_SYS_BASE + code. */
int win_errno(unsigned long code);

/* New UTF-16 copy of UTF-8 s (malloc; NULL on bad UTF-8 or no memory, with
 * errno EILSEQ or ENOMEM). */
wchar_t *win_wide(const char *s);

/* Append UTF-16 w (len units, or -1: NUL-terminated) to out as UTF-8.
 * Unpaired surrogates (possible in NTFS names) become U+FFFD.  Returns 0,
 * or -1 when memory ran out. */
int win_utf8(const wchar_t *w, int len, struct strbuf *out);

/* Our path -> Win32 path for the W functions: '/' -> '\', and absolute
 * drive or UNC paths get the \\?\ (\\?\UNC\) prefix.  NULL as win_wide. */
wchar_t *win_path(const char *path);

/* A Win32 path as FindFirstFileExW/GetFullPathNameW give it -> our form:
 * \\?\ stripped, '\' -> '/'. */
int win_from_path(const wchar_t *w, struct strbuf *out);

/* A folder by its environment variable's name (ProgramData, LOCALAPPDATA,
 * APPDATA, USERPROFILE; others from the environment only), in UTF-8 with
 * '/' separators.  Asked of the shell first: a service's environment need
 * not hold the variables (Wine's services have no ProgramData), and the
 * folder is the same either way.  Returns 0 or -1. */
int win_folder(const wchar_t *name, struct strbuf *out);

/* What SetThreadPriority(THREAD_MODE_BACKGROUND_BEGIN) came to, from
 * whether it succeeded (ok) and, when not, GetLastError() (err): on, already
 * on for this thread (ERROR_THREAD_MODE_ALREADY_BACKGROUND, 400; not the
 * process's 402), or refused. */
enum win_bg { WIN_BG_ON, WIN_BG_ALREADY, WIN_BG_REFUSED };
enum win_bg win_background_verdict(int ok, unsigned long err);

/* What a console control event (SetConsoleCtrlHandler) asks of a process
 * whose interrupt flag stops its work cleanly; asked_before: the flag was
 * already raised.
 *   DEFAULT    not ours, or Ctrl+C a second time: the system's handler
 *              ends the process;
 *   IGNORE     CTRL_LOGOFF_EVENT: some user logs off, the event does not
 *              say who; a process of the user who leaves is ended anyway,
 *              and a service's scan (a console process without a window,
 *              in session 0) must not be: the default handler would end it;
 *   STOP       Ctrl+C, Ctrl+Break: raise the flag, go on until stopped;
 *   STOP_WAIT  CTRL_CLOSE_EVENT, CTRL_SHUTDOWN_EVENT: the system ends the
 *              process as soon as the handler returns, whatever it
 *              returns, so raise the flag and return only once the process
 *              is exiting (the work stored), or the system's own time limit
 *              ends it first. */
enum win_ctl { WIN_CTL_DEFAULT, WIN_CTL_IGNORE, WIN_CTL_STOP, WIN_CTL_STOP_WAIT };
enum win_ctl win_console_verdict(unsigned long ev, int asked_before);

/* One entry of a listing by handle (GetFileInformationByHandleEx) at p:
 * FileIdExtdDirectoryInfo when extd (Windows 8 on; 128-bit IDs, ReFS's
 * whole), else FileIdBothDirectoryInfo (64-bit IDs; the reparse tag in
 * EaSize).  The ID comes folded as win_file_id gives it for the open
 * file (the walk compares it with the index's own files' IDs), and as
 * listed, to open the entry by. */
struct win_dirent {
	const wchar_t *name;
	int len;            /* UTF-16 units */
	unsigned long attrs;
	unsigned long tag;  /* with FILE_ATTRIBUTE_REPARSE_POINT */
	struct fileid raw;
	uint64_t id;        /* fileid_fold(raw) */
	unsigned long next; /* bytes to the next entry; 0: the last */
};
void win_dirent(const void *p, int extd, struct win_dirent *out);

/* What the walk makes of a directory entry, from its attributes and, when
 * they include FILE_ATTRIBUTE_REPARSE_POINT, its reparse tag as the listing
 * gives it (FILE_ID_BOTH_DIR_INFO.EaSize, WIN32_FIND_DATAW.dwReserved0).
 * A link is never followed; a special entry is neither listed nor read. */
enum win_kind { WIN_KIND_FILE, WIN_KIND_DIR, WIN_KIND_LINK, WIN_KIND_SPECIAL };
enum win_kind win_entry_kind(unsigned long attrs, unsigned long tag);

/* Whether a reparse tag makes its file or folder stand for another name
 * (IsReparseTagNameSurrogate: symbolic links, junctions and mount points,
 * WSL links).  Other tags (cloud files, deduplication, WOF compression)
 * belong to a filter that serves the data in place. */
int win_tag_is_link(unsigned long tag);

/* What the readers and the locate pass want of an open file. */
struct win_stat {
	uint64_t dev;     /* the volume (win_file_id) */
	uint64_t ino;     /* the file on it (win_file_id) */
	uint64_t size;
	int64_t mtime_ns; /* since 1970 */
	int64_t ctime_ns; /* ChangeTime since 1970; 0 when the file system keeps none (FAT) */
	int64_t btime_ns; /* CreationTime since 1970, 0 when not set: with the id, which FAT
			     and exFAT give again to the next file in a freed slot, the
			     file's identity (sys_posix.h says why) */
	uint32_t nlink;   /* names the file has (NTFS hard links) */
};

/* A FILETIME (100 ns units since 1601, as one 64-bit count) -> ns since
 * 1970.  0 (a time never set, common on FAT and in the change journal)
 * stays 0, "not known"; times the signed 64-bit nanoseconds cannot hold
 * (before 1677, after 2262) are clamped to the nearest one it can, instead
 * of overflowing. */
static inline int64_t win_filetime_ns(uint64_t ft)
{
	const uint64_t epoch = 116444736000000000ull; /* 1970 in FILETIME units */
	const uint64_t span = (uint64_t)INT64_MAX / 100; /* FILETIME units int64 ns hold */
	if (ft == 0)
		return 0;
	if (ft >= epoch)
		return ft - epoch > span ? INT64_MAX / 100 * 100 : (int64_t)(ft - epoch) * 100;
	return epoch - ft > span ? -(INT64_MAX / 100 * 100) : -(int64_t)(epoch - ft) * 100;
}

/* Stat an open handle as a regular file.  Returns 0; ENOTDIR-like
 * refusals as -1 with *what set to the message for the file's record
 * ("open: no longer a regular file", "open: replaced by a symbolic
 * link"); or a positive sys value (win_errno). */
int win_stat_handle(void *handle, struct win_stat *st, const char **what);

struct sl_err;
/* win_stat_handle with the outcome as an SL_ code and a message in err. */
int win_stat_or_fail(void *handle, struct win_stat *st, struct sl_err *err);

/* Identity of files and volumes.
 *
 * A file is (dev, ino).  dev is the 32-bit volume serial number, unless two
 * mounted volumes carry the same serial (a sector-by-sector clone of a
 * drive, plugged in beside it): those are told apart by their volume GUIDs,
 * hashed into a dev with the top bit set, which no serial has.  ino is the
 * 128-bit FileIdInfo ID (Windows 8 on) folded to 64 bits: as it is when its
 * upper half is 0 (NTFS, FAT: the 64-bit file index, so indexes made before
 * keep their identities), hashed when not (ReFS, whose 64-bit indexes are
 * not unique); the 64-bit file index where FileIdInfo is refused.
 * Volumes are enumerated once per process: a clone plugged in later is
 * known at the next run. */

/* The identity of the open file or folder h, whose
 * BY_HANDLE_FILE_INFORMATION is bi. */
struct _BY_HANDLE_FILE_INFORMATION;
void win_file_id(void *h, const struct _BY_HANDLE_FILE_INFORMATION *bi, uint64_t *dev,
		 uint64_t *ino);
/* The 128-bit file ID (16 bytes, little-endian) folded as above. */
uint64_t win_fold_id(const unsigned char id[16]);
/* The 16 bytes of the GUID in a volume name or a path that starts with one
 * ("\\?\Volume{01234567-89ab-cdef-0123-456789abcdef}\..."), in the
 * order written; 0, or -1 when there is none. */
int win_volume_guid(const wchar_t *path, unsigned char guid[16]);
/* The dev of a volume known by its GUID (top bit set). */
uint64_t win_guid_dev(const unsigned char guid[16]);
/* Whether two or more mounted volumes carry this serial number. */
int win_serial_shared(uint32_t serial);
/* The stable name of the volume whose root folder is root and whose serial
 * is serial, for the file system's identity and the change journal's
 * position: "serial:XXXX-XXXX", and "@{guid}" after it when another mounted
 * volume shares the serial.  At most 64 bytes with the NUL. */
void win_volume_key(const wchar_t *root, unsigned long serial, char *out, size_t cap);

/* What the walk would make of the open file or folder h: win_entry_kind
 * of its attributes and, for a reparse point, its tag.  -1 when its
 * attributes cannot be read. */
int win_handle_kind(void *h);

/* Open the file or folder whose ID is id on the volume of hint (any handle
 * open there), through win_call.open_by_id: by the 64-bit ID when the
 * upper half is 0 (NTFS, FAT; every Windows), else by the whole 128-bit
 * one (ReFS, Windows 8 on), which the lower half alone would miss or, its
 * halves not being unique there, confuse with another file.  Returns the
 * handle, or NULL with *e set to the Win32 error. */
void *win_open_by_id(void *hint, const struct fileid *id, unsigned long access,
		     unsigned long flags, unsigned long *e);

/* Whether win_open_by_id's error e says the ID names no file now: not
 * found, or ERROR_INVALID_PARAMETER, NTFS's answer for a reference whose
 * record is free or was reused.  Any other error (access denied, a delete
 * pending, a sharing violation, no memory) says nothing of whether the file
 * is there. */
int win_id_gone(unsigned long e);

/* The volume holding path: its root folder (root: "\\?\C:\" or a mount
 * folder; MAX_PATH + 8 units) and the device name to open it with (dev:
 * "\\.\C:" or "\\?\Volume{...}", MAX_PATH + 8 units, "" when unknown).
 * Returns 0 or a Win32 error code. */
unsigned long win_volume_of(const char *path, wchar_t *root, wchar_t *dev);

#endif
