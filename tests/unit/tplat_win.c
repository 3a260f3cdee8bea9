/* tplat_win.c - test.h's platform part on Windows. */
#include "tests/unit/test.h"

#include <aclapi.h>
#include <time.h>
#include <windows.h>

#include "common/sys.h"
#include "common/win.h"

char *t_tmpdir(const char *tag)
{
	wchar_t base[MAX_PATH + 1];
	struct strbuf sb = STRBUF_INIT;
	static unsigned seq;
	int i;

	if (!GetTempPathW(MAX_PATH + 1, base)) {
		fprintf(stderr, "no temporary folder\n");
		exit(2);
	}
	for (i = 0; i < 1000; i++) {
		wchar_t *w;
		sb_reset(&sb);
		win_from_path(base, &sb);
		if (sb.len && sb.p[sb.len - 1] == '/')
			sb_truncate(&sb, sb.len - 1);
		sb_addf(&sb, "/seekless-%s-%lu-%u", tag, (unsigned long)GetCurrentProcessId(), seq++);
		w = win_path(sb.p);
		if (w && CreateDirectoryW(w, NULL)) {
			free(w);
			return sb.p;
		}
		free(w);
	}
	fprintf(stderr, "cannot create a temporary folder\n");
	exit(2);
}

static void rm_w(const wchar_t *dir)
{
	WIN32_FIND_DATAW fd;
	size_t n = wcslen(dir);
	wchar_t *pat = malloc((n + MAX_PATH + 4) * sizeof(wchar_t));
	HANDLE h;

	swprintf(pat, n + 3, L"%ls\\*", dir);
	h = FindFirstFileW(pat, &fd);
	if (h != INVALID_HANDLE_VALUE) {
		do {
			if (!wcscmp(fd.cFileName, L".") || !wcscmp(fd.cFileName, L".."))
				continue;
			swprintf(pat, n + MAX_PATH + 4, L"%ls\\%ls", dir, fd.cFileName);
			if (fd.dwFileAttributes & FILE_ATTRIBUTE_DIRECTORY &&
			    !(fd.dwFileAttributes & FILE_ATTRIBUTE_REPARSE_POINT)) {
				rm_w(pat);
			} else {
				SetFileAttributesW(pat, FILE_ATTRIBUTE_NORMAL);
				DeleteFileW(pat);
			}
		} while (FindNextFileW(h, &fd));
		FindClose(h);
	}
	free(pat);
	RemoveDirectoryW(dir);
}

void t_rmtree(const char *dir)
{
	wchar_t *w = win_path(dir);
	if (w)
		rm_w(w);
	free(w);
}

void t_write(const char *path, const void *data, size_t n)
{
	FILE *f = sys_fopen(path, "wb");
	if (!f || fwrite(data, 1, n, f) != n || fclose(f) != 0) {
		fprintf(stderr, "cannot write %s\n", path);
		exit(2);
	}
}

void t_rewrite(const char *path, const void *data, size_t n)
{
	wchar_t *w = win_path(path);
	HANDLE h = w ? CreateFileW(w, GENERIC_WRITE, FILE_SHARE_READ | FILE_SHARE_WRITE, NULL,
				   OPEN_EXISTING, FILE_ATTRIBUTE_NORMAL, NULL)
		     : INVALID_HANDLE_VALUE;
	DWORD done = 0;
	int ok = h != INVALID_HANDLE_VALUE && WriteFile(h, data, (DWORD)n, &done, NULL) &&
		 done == n && SetEndOfFile(h);

	if (h != INVALID_HANDLE_VALUE)
		CloseHandle(h);
	free(w);
	if (!ok) {
		fprintf(stderr, "cannot rewrite %s\n", path);
		exit(2);
	}
}

int t_mkdir(const char *path)
{
	wchar_t *w = win_path(path);
	int rc = w && CreateDirectoryW(w, NULL) ? 0 : -1;
	free(w);
	return rc;
}

int t_unlink(const char *path)
{
	wchar_t *w = win_path(path);
	int rc = w && DeleteFileW(w) ? 0 : -1;
	free(w);
	return rc;
}

int t_private(const char *path)
{
	PSECURITY_DESCRIPTOR sd = NULL;
	PACL dacl = NULL;
	wchar_t *w = win_path(path);
	union {
		TOKEN_USER tu;
		unsigned char raw[256];
	} me;
	HANDLE tok;
	DWORD i, n;
	int rc = 1;

	if (!OpenProcessToken(GetCurrentProcess(), TOKEN_QUERY, &tok))
		return -1;
	if (!GetTokenInformation(tok, TokenUser, &me, sizeof(me), &n)) {
		CloseHandle(tok);
		return -1;
	}
	CloseHandle(tok);

	if (!w || GetNamedSecurityInfoW(w, SE_FILE_OBJECT, DACL_SECURITY_INFORMATION, NULL, NULL,
					&dacl, NULL, &sd) != ERROR_SUCCESS) {
		free(w);
		return -1;
	}
	free(w);
	if (!dacl) {
		rc = 0; /* no DACL: everyone */
	} else {
		int mine = 0;
		for (i = 0; i < dacl->AceCount; i++) {
			ACCESS_ALLOWED_ACE *ace;
			PSID sid;
			if (!GetAce(dacl, i, (void **)&ace) || ace->Header.AceType != ACCESS_ALLOWED_ACE_TYPE)
				continue;
			sid = (PSID)&ace->SidStart;
			mine |= EqualSid(sid, me.tu.User.Sid) != 0;
			/* allowed: us, owner rights, SYSTEM, Administrators */
			if (!EqualSid(sid, me.tu.User.Sid) &&
			    !IsWellKnownSid(sid, WinCreatorOwnerRightsSid) &&
			    !IsWellKnownSid(sid, WinLocalSystemSid) &&
			    !IsWellKnownSid(sid, WinBuiltinAdministratorsSid))
				rc = 0;
		}
		/* and us by name: owner rights alone lock out a user whose
		 * elevated self made the file (owned by Administrators) */
		if (!mine)
			rc = 0;
	}
	LocalFree(sd);
	return rc;
}

/* The C runtime reads TZ only in its own form ("CET-1CEST"), and with
 * United States rules: an IANA name gives no zone, which the tests detect
 * and pass over. */
int t_set_tz(const char *zone)
{
	_putenv_s("TZ", zone);
	_tzset();
	return 0;
}

/* As tplat_posix.c's: the copy ends where the guard page begins. */
static size_t guard_span(size_t n, size_t *page)
{
	SYSTEM_INFO si;
	GetSystemInfo(&si);
	*page = si.dwPageSize;
	return (n + *page - 1) / *page * *page;
}

unsigned char *t_guarded(const void *src, size_t n)
{
	size_t page, span = guard_span(n, &page);
	unsigned char *base = VirtualAlloc(NULL, span + page, MEM_RESERVE | MEM_COMMIT,
					   PAGE_READWRITE);
	DWORD old;

	if (!base || !VirtualProtect(base + span, page, PAGE_NOACCESS, &old)) {
		fprintf(stderr, "t_guarded: error %lu\n", (unsigned long)GetLastError());
		exit(2);
	}
	if (n)
		memcpy(base + span - n, src, n);
	return base + span - n;
}

void t_unguard(unsigned char *p, size_t n)
{
	size_t page, span = guard_span(n, &page);
	VirtualFree(p + n - span, 0, MEM_RELEASE);
}
