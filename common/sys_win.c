/* sys_win.c - sys.h on Windows (Win32 API, UTF-16 at this seam). */
#include "common/sys.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <io.h>
#include <windows.h>
#include <psapi.h>
#include <sddl.h>
#include <shellapi.h>

#include "common/win.h"

double sys_now(void)
{
	static LARGE_INTEGER freq;
	LARGE_INTEGER now;

	if (!freq.QuadPart)
		QueryPerformanceFrequency(&freq);
	QueryPerformanceCounter(&now);
	return (double)now.QuadPart / (double)freq.QuadPart;
}

int64_t sys_wall_ns(void)
{
	FILETIME ft;
	GetSystemTimeAsFileTime(&ft);
	return win_filetime_ns(((uint64_t)ft.dwHighDateTime << 32) | ft.dwLowDateTime);
}

static double filetime_s(FILETIME ft)
{
	return (double)(((uint64_t)ft.dwHighDateTime << 32) | ft.dwLowDateTime) / 1e7;
}

double sys_thread_cpu(void)
{
	FILETIME c, x, k, u;
	if (!GetThreadTimes(GetCurrentThread(), &c, &x, &k, &u))
		return 0;
	return filetime_s(k) + filetime_s(u);
}

int sys_cpu_count(void)
{
	DWORD_PTR proc, sys;
	int n = 0;

	if (GetProcessAffinityMask(GetCurrentProcess(), &proc, &sys))
		for (; proc; proc &= proc - 1)
			n++;
	return n > 0 ? n : 1;
}

void sys_strerror(int sys, char *buf, size_t len)
{
	wchar_t w[256];
	struct strbuf sb = STRBUF_INIT;
	DWORD n;

	if (sys == WIN_E_BOGUS_EXTENTS) {
		snprintf(buf, len, "extents unavailable: the file system answered with an "
			 "impossible retrieval-pointer layout");
		return;
	}
	if (sys < WIN_SYS_BASE) {
		/* msvcrt knows only the old errno values; name the POSIX ones the
		 * seams use */
		const char *s = sys == EOPNOTSUPP ? "Operation not supported"
			      : sys == EWOULDBLOCK ? "Resource temporarily unavailable"
			      : sys == ENOTSUP ? "Not supported"
			      : NULL;
		if (s)
			snprintf(buf, len, "%s", s);
		else if (strerror_s(buf, len, sys) != 0)
			snprintf(buf, len, "error %d", sys);
		return;
	}
	n = FormatMessageW(FORMAT_MESSAGE_FROM_SYSTEM | FORMAT_MESSAGE_IGNORE_INSERTS, NULL,
			   (DWORD)(sys - WIN_SYS_BASE), MAKELANGID(LANG_ENGLISH, SUBLANG_DEFAULT),
			   w, sizeof(w) / sizeof(w[0]), NULL);
	while (n > 0 && (w[n - 1] == L'\r' || w[n - 1] == L'\n' || w[n - 1] == L'.'))
		n--;
	if (n == 0 || win_utf8(w, (int)n, &sb) != 0 || !sb.p) {
		snprintf(buf, len, "Windows error %d", sys - WIN_SYS_BASE);
	} else {
		snprintf(buf, len, "%s (Windows error %d)", sb.p, sys - WIN_SYS_BASE);
	}
	sb_free(&sb);
}

uint64_t sys_peak_rss(void)
{
	PROCESS_MEMORY_COUNTERS pmc;
	if (!K32GetProcessMemoryInfo(GetCurrentProcess(), &pmc, sizeof(pmc)))
		return 0;
	return (uint64_t)pmc.PeakWorkingSetSize;
}

/* The directory part of a path (either separator), or 0 when there is none. */
static size_t dir_len(const char *path)
{
	size_t n = strlen(path);
	while (n > 0 && path[n - 1] != '/' && path[n - 1] != '\\')
		n--;
	return n > 0 ? n - 1 : 0;
}

int sys_mkdir_parents(const char *path)
{
	size_t n = dir_len(path), i;
	char *buf;
	int rc = 0;

	if (n == 0)
		return 0;
	buf = malloc(n + 1);
	if (!buf)
		return ENOMEM;
	memcpy(buf, path, n);
	buf[n] = '\0';
	/* start past the drive ("C:/") or the UNC share ("//server/share/") */
	i = (n >= 2 && buf[1] == ':') ? 3 : 0;
	for (; i <= n && !rc; i++) {
		if (i == n || buf[i] == '/' || buf[i] == '\\') {
			char c = buf[i];
			wchar_t *w;
			if (i == 0)
				continue;
			buf[i] = '\0';
			w = win_path(buf);
			if (!w) {
				rc = errno;
			} else if (!CreateDirectoryW(w, NULL)) {
				DWORD e = GetLastError();
				if (e != ERROR_ALREADY_EXISTS && e != ERROR_ACCESS_DENIED)
					rc = win_errno(e);
				else if (e == ERROR_ACCESS_DENIED &&
					 GetFileAttributesW(w) == INVALID_FILE_ATTRIBUTES)
					rc = EACCES;
			}
			free(w);
			buf[i] = c;
		}
	}
	free(buf);
	return rc;
}

int sys_file_id(const char *path, uint64_t *dev, uint64_t *ino)
{
	BY_HANDLE_FILE_INFORMATION fi;
	wchar_t *w = win_path(path);
	HANDLE h;
	int rc = 0;

	if (!w)
		return errno;
	h = CreateFileW(w, 0, FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE, NULL,
			OPEN_EXISTING, FILE_FLAG_BACKUP_SEMANTICS | FILE_FLAG_OPEN_REPARSE_POINT, NULL);
	free(w);
	if (h == INVALID_HANDLE_VALUE)
		return win_errno(GetLastError());
	if (GetFileInformationByHandle(h, &fi)) {
		win_file_id(h, &fi, dev, ino);
	} else {
		rc = win_errno(GetLastError());
	}
	CloseHandle(h);
	return rc;
}

/* Owner, SYSTEM, Administrators and the user who made it, not inherited
 * from the folder: the index lists every file name on the drives, which is
 * not everyone's business on a shared machine.  The user by name because
 * a file an elevated administrator creates is owned by the Administrators
 * group, and owner rights alone then lock that same user out when they
 * run unelevated later. */
static const wchar_t PRIVATE_SDDL[] = L"D:P(A;;FA;;;OW)(A;;FA;;;SY)(A;;FA;;;BA)";

/* PRIVATE_SDDL with an ACE for this process's user; NULL without memory
 * or a token (then PRIVATE_SDDL alone).  LocalFree the result. */
static wchar_t *private_sddl(void)
{
	union {
		TOKEN_USER tu;
		unsigned char raw[256];
	} me;
	HANDLE tok;
	DWORD n;
	wchar_t *sid = NULL, *out = NULL;
	size_t len;

	if (!OpenProcessToken(GetCurrentProcess(), TOKEN_QUERY, &tok))
		return NULL;
	if (GetTokenInformation(tok, TokenUser, &me, sizeof(me), &n) &&
	    ConvertSidToStringSidW(me.tu.User.Sid, &sid)) {
		len = wcslen(PRIVATE_SDDL) + wcslen(sid) + 16;
		out = LocalAlloc(LMEM_FIXED, len * sizeof(wchar_t));
		if (out)
			swprintf(out, len, L"%ls(A;;FA;;;%ls)", PRIVATE_SDDL, sid);
		LocalFree(sid);
	}
	CloseHandle(tok);
	return out;
}

int sys_create_private(const char *path, int create)
{
	SECURITY_ATTRIBUTES sa = {sizeof(sa), NULL, FALSE};
	wchar_t *w, *sddl;
	HANDLE h;
	DWORD a;
	int rc = 0;

	w = win_path(path);
	if (!w)
		return errno;
	a = GetFileAttributesW(w);
	if (a != INVALID_FILE_ATTRIBUTES && (a & FILE_ATTRIBUTE_DIRECTORY)) {
		free(w);
		return EISDIR;
	}
	if (!create) {
		free(w);
		return 0; /* the DACL given at creation stands (docs/windows.md) */
	}
	sddl = private_sddl();
	if (!ConvertStringSecurityDescriptorToSecurityDescriptorW(sddl ? sddl : PRIVATE_SDDL,
								  SDDL_REVISION_1,
								  &sa.lpSecurityDescriptor, NULL))
		sa.lpSecurityDescriptor = NULL;
	LocalFree(sddl);
	h = CreateFileW(w, GENERIC_WRITE, FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE, &sa,
			CREATE_NEW, FILE_ATTRIBUTE_NORMAL, NULL);
	if (h == INVALID_HANDLE_VALUE) {
		DWORD e = GetLastError();
		if (e != ERROR_FILE_EXISTS && e != ERROR_ALREADY_EXISTS)
			rc = win_errno(e);
	} else {
		CloseHandle(h);
	}
	LocalFree(sa.lpSecurityDescriptor);
	free(w);
	return rc;
}

int sys_can_write(const char *path)
{
	wchar_t *w = win_path(path);
	DWORD a;

	if (!w)
		return errno;
	a = GetFileAttributesW(w);
	free(w);
	if (a == INVALID_FILE_ATTRIBUTES)
		return win_errno(GetLastError());
	/* on a folder the attribute only asks Explorer to look at its
	 * desktop.ini; an ACL or read-only media show when SQLite opens the
	 * file (db_open asks it then) */
	return (a & FILE_ATTRIBUTE_READONLY) && !(a & FILE_ATTRIBUTE_DIRECTORY) ? EACCES : 0;
}

int sys_default_db_path(struct strbuf *out)
{
	sb_reset(out);
	if (win_folder(L"LOCALAPPDATA", out) != 0)
		return out->oom ? ENOMEM : ENOENT;
	sb_adds(out, "/seekless/index.db");
	return out->oom ? ENOMEM : 0;
}

int sys_config_path(int system, struct strbuf *out)
{
	sb_reset(out);
	if (win_folder(system ? L"ProgramData" : L"APPDATA", out) != 0)
		return -1;
	sb_adds(out, system ? "/seekless/seekless.conf" : "/seekless/config");
	return out->oom ? -1 : 0;
}

const char *sys_home(void)
{
	static struct strbuf home = STRBUF_INIT;
	if (!home.p && win_folder(L"USERPROFILE", &home) != 0)
		return NULL;
	return home.p;
}

int sys_self_exe(struct strbuf *out)
{
	wchar_t w[32768];
	DWORD n = GetModuleFileNameW(NULL, w, sizeof(w) / sizeof(w[0]));

	if (n == 0 || n >= sizeof(w) / sizeof(w[0]))
		return EIO;
	sb_reset(out);
	return win_from_path(w, out) == 0 && !out->oom ? 0 : ENOMEM;
}

static atomic_int *interrupt_flag;
static HANDLE exiting; /* set by exit(): the work is stored (sys_on_interrupt) */

/* Longer than the system lets a handler run after a console close (5 s)
 * or at shutdown: its limit, not ours, ends the wait when storing hangs. */
#define EXIT_WAIT_MS (5u * 60u * 1000u)

static void at_exit(void)
{
	SetEvent(exiting);
}

/* Called on a thread of the system's: win_console_verdict says what to do. */
static BOOL WINAPI on_console(DWORD ev)
{
	int before = interrupt_flag && atomic_load(interrupt_flag);

	switch (win_console_verdict(ev, before)) {
	case WIN_CTL_IGNORE:
		return TRUE;
	case WIN_CTL_STOP:
		atomic_store(interrupt_flag, 1);
		return TRUE;
	case WIN_CTL_STOP_WAIT:
		atomic_store(interrupt_flag, 1);
		if (exiting)
			WaitForSingleObject(exiting, EXIT_WAIT_MS);
		return TRUE;
	default:
		return FALSE;
	}
}

/* The service runs each scan as a child process without a console; it
 * asks the child to stop by signalling an event whose inherited handle it
 * names in SEEKLESS_STOP_EVENT. */
static DWORD WINAPI watch_stop(void *ev)
{
	if (WaitForSingleObject((HANDLE)ev, INFINITE) == WAIT_OBJECT_0 && interrupt_flag)
		atomic_store(interrupt_flag, 1);
	return 0;
}

void sys_on_interrupt(atomic_int *flag)
{
	static int watching;
	const char *ev = getenv("SEEKLESS_STOP_EVENT");

	if (!exiting && (exiting = CreateEventW(NULL, TRUE, FALSE, NULL)) != NULL)
		atexit(at_exit);
	interrupt_flag = flag;
	SetConsoleCtrlHandler(on_console, TRUE);
	if (ev && !watching) {
		HANDLE h = (HANDLE)(uintptr_t)strtoull(ev, NULL, 10);
		HANDLE t = h ? CreateThread(NULL, 0, watch_stop, h, 0, NULL) : NULL;
		if (t) {
			CloseHandle(t);
			watching = 1;
		}
	}
}

void sys_raise_interrupt(void)
{
	if (interrupt_flag)
		atomic_store(interrupt_flag, 1);
}

int sys_drop_caches(void)
{
	/* Windows has no documented way to empty the whole file cache; the
	 * benchmark evicts its own files instead (rd_evict). */
	return ENOSYS;
}

int sys_run(const char *cmdline)
{
	wchar_t *w = win_wide(cmdline);
	int rc;

	if (!w)
		return -1;
	fflush(NULL);
	rc = _wsystem(w);
	free(w);
	return rc;
}

/* The lock is on a byte far past the pid we write, so other processes can
 * still read who holds it. */
#define LOCK_OFFSET 0x40000000u

int sys_lock(const char *path, void **handle, long *holder)
{
	OVERLAPPED ov;
	wchar_t *w = win_path(path);
	char buf[32];
	DWORD n;
	HANDLE h;
	int rc;

	*handle = NULL;
	*holder = 0;
	if (!w)
		return errno;
	rc = sys_create_private(path, 1);
	if (rc) {
		free(w);
		return rc;
	}
	h = CreateFileW(w, GENERIC_READ | GENERIC_WRITE, FILE_SHARE_READ | FILE_SHARE_WRITE, NULL,
			OPEN_EXISTING, FILE_ATTRIBUTE_NORMAL, NULL);
	free(w);
	if (h == INVALID_HANDLE_VALUE)
		return win_errno(GetLastError());
	memset(&ov, 0, sizeof(ov));
	ov.Offset = LOCK_OFFSET;
	if (!LockFileEx(h, LOCKFILE_EXCLUSIVE_LOCK | LOCKFILE_FAIL_IMMEDIATELY, 0, 1, 0, &ov)) {
		DWORD e = GetLastError();
		if (e == ERROR_LOCK_VIOLATION || e == ERROR_IO_PENDING) {
			memset(buf, 0, sizeof(buf));
			if (ReadFile(h, buf, sizeof(buf) - 1, &n, NULL))
				*holder = strtol(buf, NULL, 10);
			CloseHandle(h);
			return EWOULDBLOCK;
		}
		CloseHandle(h);
		return win_errno(e);
	}
	n = (DWORD)snprintf(buf, sizeof(buf), "%lu\n", (unsigned long)GetCurrentProcessId());
	SetFilePointer(h, 0, NULL, FILE_BEGIN);
	WriteFile(h, buf, n, &n, NULL);
	SetEndOfFile(h);
	*handle = h;
	return 0;
}

void sys_unlock(void *handle)
{
	if (handle)
		CloseHandle((HANDLE)handle); /* releases the lock */
}

long sys_pid(void)
{
	return (long)GetCurrentProcessId();
}

int sys_is_admin(void)
{
	TOKEN_ELEVATION el;
	HANDLE tok;
	DWORD n;
	int admin = 0;

	if (!OpenProcessToken(GetCurrentProcess(), TOKEN_QUERY, &tok))
		return 0;
	if (GetTokenInformation(tok, TokenElevation, &el, sizeof(el), &n))
		admin = el.TokenIsElevated != 0;
	CloseHandle(tok);
	return admin;
}

int sys_background(char *how, size_t cap)
{
	DWORD e;
	char why[160];
	int ok;

	/* Background mode lowers the thread's CPU priority, its I/O priority
	 * to very low and its memory priority, and is per thread. */
	ok = SetThreadPriority(GetCurrentThread(), THREAD_MODE_BACKGROUND_BEGIN) != 0;
	e = ok ? 0 : GetLastError();
	switch (win_background_verdict(ok, e)) {
	case WIN_BG_ON:
		snprintf(how, cap, "thread background mode (I/O priority very low, CPU and "
			 "memory priority low)");
		return 0;
	case WIN_BG_ALREADY:
		snprintf(how, cap, "thread background mode (already)");
		return 0;
	case WIN_BG_REFUSED:
		break;
	}
	/* Not there (Wine): at least the lowest CPU priority. */
	sys_strerror(win_errno(e), why, sizeof(why));
	if (SetThreadPriority(GetCurrentThread(), THREAD_PRIORITY_IDLE))
		snprintf(how, cap, "background mode refused (%s); CPU priority idle, I/O priority "
			 "unchanged", why);
	else
		snprintf(how, cap, "background mode refused (%s); priorities unchanged", why);
	return win_errno(e);
}

int sys_io_bytes(uint64_t *bytes)
{
	IO_COUNTERS io;

	/* Unlike Linux's /proc/self/io this counts reads the file cache served
	 * too, so our own share of the disk's traffic is overestimated and the
	 * background mode yields a little less than on Linux (docs/windows.md). */
	if (!GetProcessIoCounters(GetCurrentProcess(), &io))
		return win_errno(GetLastError());
	*bytes = io.ReadTransferCount + io.WriteTransferCount;
	return 0;
}

void sys_sleep(double seconds)
{
	if (seconds > 0)
		Sleep((DWORD)(seconds * 1000.0 + 0.5));
}

uint64_t sys_mem_bytes(void)
{
	MEMORYSTATUSEX ms;

	ms.dwLength = sizeof(ms);
	return GlobalMemoryStatusEx(&ms) ? (uint64_t)ms.ullTotalPhys : 0;
}

size_t sys_fd_limit(void)
{
	return (size_t)1 << 20;
}

void sys_raise_fd_limit(void)
{
	/* Win32 handles have no per-process limit worth raising; the C
	 * runtime's stdio limit does not apply to the handles we use. */
}

FILE *sys_fopen(const char *path, const char *mode)
{
	wchar_t *w = win_path(path), *m = win_wide(mode);
	FILE *f = NULL;

	if (w && m)
		f = _wfopen(w, m);
	free(w);
	free(m);
	return f;
}

int sys_replace(const char *from, const char *to)
{
	wchar_t *wf = win_path(from), *wt = win_path(to);
	int rc = 0;

	if (!wf || !wt)
		rc = ENOMEM;
	else if (!MoveFileExW(wf, wt, MOVEFILE_REPLACE_EXISTING | MOVEFILE_WRITE_THROUGH))
		rc = GetLastError() == ERROR_ACCESS_DENIED ? EACCES : EIO;
	free(wf);
	free(wt);
	return rc;
}

int sys_remove(const char *path)
{
	wchar_t *w = win_path(path);
	int rc = 0;

	if (!w)
		rc = ENOMEM;
	else if (!DeleteFileW(w))
		rc = GetLastError() == ERROR_FILE_NOT_FOUND ? ENOENT : EACCES;
	free(w);
	return rc;
}

#define WIDE_PATH_MAX 32768 /* UTF-16 units, the longest \\?\ path */

int sys_abs_path(const char *path, struct strbuf *out)
{
	wchar_t *w = win_wide(path), *buf = NULL, *wp = NULL;
	HANDLE h;
	DWORD n;
	int rc = 0;

	if (!w)
		return errno;
	buf = malloc(WIDE_PATH_MAX * sizeof(*buf));
	if (!buf) {
		rc = ENOMEM;
		goto out;
	}
	n = GetFullPathNameW(w, WIDE_PATH_MAX, buf, NULL);
	if (n == 0 || n >= WIDE_PATH_MAX) {
		rc = n ? ENAMETOOLONG : win_errno(GetLastError());
		goto out;
	}
	sb_reset(out);
	if (win_from_path(buf, out) != 0 || out->oom) {
		rc = ENOMEM;
		goto out;
	}
	/* opened as \\?\ so that paths past MAX_PATH resolve too */
	wp = win_path(out->p);
	if (!wp) {
		rc = errno;
		goto out;
	}
	/* Without FILE_FLAG_OPEN_REPARSE_POINT the open goes through junctions,
	 * directory symlinks, mounted folders and subst drives, and the final
	 * path has each name as it is on the disk: the roots then match the
	 * names the change journal and the walk report, whatever the user
	 * typed, as realpath does on Linux. */
	h = CreateFileW(wp, 0, FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE, NULL,
			OPEN_EXISTING, FILE_FLAG_BACKUP_SEMANTICS, NULL);
	if (h == INVALID_HANDLE_VALUE) {
		/* there but not to be opened (in use without sharing): the
		 * typed form is the best there is */
		if (GetFileAttributesW(wp) == INVALID_FILE_ATTRIBUTES)
			rc = win_errno(GetLastError());
		goto trim;
	}
	n = GetFinalPathNameByHandleW(h, buf, WIDE_PATH_MAX, FILE_NAME_NORMALIZED | VOLUME_NAME_DOS);
	CloseHandle(h);
	/* No DOS name: a volume mounted only in a folder has no drive letter
	 * to name it by (ERROR_PATH_NOT_FOUND), and Wine gives none past
	 * MAX_PATH.  Keep the full path then; the walk opens its root
	 * following reparse points, so a mounted folder still lists its
	 * volume. */
	if (n > 0 && n < WIDE_PATH_MAX) {
		sb_reset(out);
		if (win_from_path(buf, out) != 0 || out->oom) {
			rc = ENOMEM;
			goto out;
		}
	}
trim:
	/* "C:/dir/" -> "C:/dir", but keep "C:/" */
	while (out->len > 3 && out->p[out->len - 1] == '/')
		sb_truncate(out, out->len - 1);
out:
	if (rc)
		sb_reset(out);
	free(wp);
	free(buf);
	free(w);
	return rc;
}

/* Bytes of valid UTF-8 s that make its first `units` UTF-16 units, or 0
 * when they end inside a character (half a surrogate pair). */
static size_t utf8_bytes_of(const char *s, size_t units)
{
	size_t i = 0, u = 0;

	while (u < units && s[i]) {
		unsigned char c = (unsigned char)s[i];
		size_t k = c < 0x80 ? 1 : c < 0xe0 ? 2 : c < 0xf0 ? 3 : 4;
		u += k == 4 ? 2 : 1;
		i += k;
	}
	return u == units ? i : 0;
}

int sys_path_prefix(const char *path, const char *root, size_t *len)
{
	wchar_t *wr = NULL, *wp = NULL;
	size_t units, n, rlen = strlen(root);
	int rc = 0;

	*len = 0;
	if (!rlen)
		return 0;
	wr = win_wide(root);
	wp = wr ? win_wide(path) : NULL;
	if (!wp) {
		/* names that are not UTF-8 cannot be on a Windows volume */
		rc = errno == ENOMEM ? ENOMEM : 0;
		goto out;
	}
	units = wcslen(wr);
	/* NTFS compares names by upcasing each UTF-16 unit (with the
	 * volume's $UpCase table), and CompareStringOrdinal ignoring case
	 * does the same with the system's: one unit for one, so the root's
	 * units match as many of the path's, whose UTF-8 may be longer or
	 * shorter than the root's (U+2C65 is 3 bytes, its capital U+023A 2). */
	if (wcslen(wp) < units ||
	    CompareStringOrdinal(wp, (int)units, wr, (int)units, TRUE) != CSTR_EQUAL)
		goto out;
	n = utf8_bytes_of(path, units);
	if (n && (path[n] == '\0' || path[n] == '/' || root[rlen - 1] == '/'))
		*len = n;
out:
	free(wp);
	free(wr);
	return rc;
}

int sys_names_fold_case(void)
{
	/* Win32 opens names without regard to case, whatever the volume
	 * (a per-folder case-sensitive flag, set for WSL, is not looked at) */
	return 1;
}

void sys_utf8_args(int *argc, char ***argv)
{
	static char **args;
	wchar_t **w;
	int n, i;

	/* what we print is UTF-8 too (paths, names) */
	SetConsoleOutputCP(CP_UTF8);
	w = CommandLineToArgvW(GetCommandLineW(), &n);
	if (!w)
		return;
	args = calloc((size_t)n + 1, sizeof(*args));
	if (!args) {
		LocalFree(w);
		return;
	}
	for (i = 0; i < n; i++) {
		struct strbuf sb = STRBUF_INIT;
		win_utf8(w[i], -1, &sb);
		args[i] = sb.p ? sb.p : calloc(1, 1);
	}
	LocalFree(w);
	*argc = n;
	*argv = args;
}

int sys_keep_awake(int on)
{
	/* Not ES_AWAYMODE_REQUIRED (a media-center mode that fakes sleep) nor
	 * ES_DISPLAY_REQUIRED: only the idle timer is held off */
	EXECUTION_STATE want = ES_CONTINUOUS | (on ? ES_SYSTEM_REQUIRED : 0);

	return SetThreadExecutionState(want) ? 0 : win_errno(GetLastError());
}

void sys_keep_freed_memory(void)
{
	/* the Windows heap keeps freed blocks on its own */
}

int sys_is_tty(FILE *f)
{
	return _isatty(_fileno(f));
}
