/* journal_win.c - the NTFS change journal (journal.h): FSCTL_QUERY_USN_JOURNAL
 * and FSCTL_READ_USN_JOURNAL on the volume device, which takes
 * administrator rights (the service runs as LocalSystem). */
#include "scanner/journal.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <windows.h>
#include <winioctl.h>

#include "common/sys.h"
#include "common/win.h"

#define READ_BUF (64 * 1024)

/* READ_USN_JOURNAL_DATA_V1, spelled out: mingw-w64's headers have only
 * V0, which asks for whatever record version the volume likes.  V1 says
 * which we decode (2 and 3: usn.h); ReFS keeps 128-bit references only in
 * version 3.  Windows before 8 takes only V0, and is asked that way when
 * it refuses V1. */
struct read_v1 {
	int64_t StartUsn;
	DWORD ReasonMask;
	DWORD ReturnOnlyOnClose;
	DWORDLONG Timeout;
	DWORDLONG BytesToWaitFor;
	DWORDLONG UsnJournalID;
	WORD MinMajorVersion;
	WORD MaxMajorVersion;
};

static int fail(DWORD code, const char *what, char *why, size_t cap)
{
	char text[200];

	if (code == ERROR_ACCESS_DENIED) {
		snprintf(why, cap, "%s: needs administrator rights", what);
		return EACCES;
	}
	if (code == ERROR_JOURNAL_NOT_ACTIVE || code == ERROR_INVALID_FUNCTION ||
	    code == ERROR_NOT_SUPPORTED || code == ERROR_INVALID_PARAMETER) {
		snprintf(why, cap, "%s: no active change journal on this volume", what);
		return ENOSYS;
	}
	if (code == ERROR_JOURNAL_ENTRY_DELETED) {
		snprintf(why, cap, "%s: the journal no longer holds the records since the last scan",
			 what);
		return ERANGE;
	}
	sys_strerror(win_errno(code), text, sizeof(text));
	snprintf(why, cap, "%s: %s", what, text);
	return win_errno(code);
}

/* root: MAX_PATH + 8 units, the volume's root folder */
static HANDLE open_volume(const char *path, wchar_t *root, DWORD *serial, DWORD *e)
{
	wchar_t dev[MAX_PATH + 8];
	HANDLE h;

	*e = win_volume_of(path, root, dev);
	if (*e)
		return INVALID_HANDLE_VALUE;
	if (!dev[0]) {
		*e = ERROR_NOT_SUPPORTED;
		return INVALID_HANDLE_VALUE;
	}
	if (!GetVolumeInformationW(root, NULL, 0, serial, NULL, NULL, NULL, 0))
		*serial = 0;
	h = CreateFileW(dev, GENERIC_READ, FILE_SHARE_READ | FILE_SHARE_WRITE, NULL, OPEN_EXISTING,
			0, NULL);
	*e = h == INVALID_HANDLE_VALUE ? GetLastError() : 0;
	return h;
}

static int query(HANDLE h, const wchar_t *root, DWORD serial, struct jn_state *now, char *why,
		 size_t cap)
{
	USN_JOURNAL_DATA jd;
	DWORD got = 0;

	if (!DeviceIoControl(h, FSCTL_QUERY_USN_JOURNAL, NULL, 0, &jd, sizeof(jd), &got, NULL))
		return fail(GetLastError(), "query the change journal", why, cap);
	if (got < sizeof(jd)) {
		snprintf(why, cap, "query the change journal: short answer");
		return EIO;
	}
	win_volume_key(root, serial, now->volume, sizeof(now->volume));
	now->journal_id = jd.UsnJournalID;
	now->first_usn = jd.FirstUsn;
	now->next_usn = jd.NextUsn;
	return 0;
}

int jn_query(const char *path, struct jn_state *now, char *why, size_t cap)
{
	wchar_t root[MAX_PATH + 8];
	DWORD serial = 0, e;
	HANDLE h = open_volume(path, root, &serial, &e);
	int rc;

	memset(now, 0, sizeof(*now));
	if (h == INVALID_HANDLE_VALUE)
		return fail(e, "open the volume", why, cap);
	rc = query(h, root, serial, now, why, cap);
	CloseHandle(h);
	return rc;
}

int jn_read(const char *path, const struct jn_state *now, int64_t from,
	    const uint64_t *ignore_dirs, size_t n, struct usn_tally *t, char *why, size_t cap)
{
	struct read_v1 rd;
	wchar_t root[MAX_PATH + 8];
	DWORD serial = 0, e, rdsize = sizeof(rd);
	HANDLE h;
	unsigned char *buf;
	int rc = 0;

	if (from < now->first_usn) {
		snprintf(why, cap, "the journal wrapped: records since the last scan are gone");
		return ERANGE;
	}
	h = open_volume(path, root, &serial, &e);
	if (h == INVALID_HANDLE_VALUE)
		return fail(e, "open the volume", why, cap);
	buf = malloc(READ_BUF);
	if (!buf) {
		CloseHandle(h);
		snprintf(why, cap, "out of memory");
		return ENOMEM;
	}
	memset(&rd, 0, sizeof(rd));
	rd.StartUsn = from;
	rd.ReasonMask = 0xFFFFFFFFu;
	rd.UsnJournalID = now->journal_id;
	rd.MinMajorVersion = 2;
	rd.MaxMajorVersion = 3;
	while (rd.StartUsn < now->next_usn &&
	       (t->max_ids ? t->renamed + t->deleted == 0 && !t->overflow : usn_quiet(t))) {
		DWORD got = 0;
		int64_t next = 0;
		size_t bad = 0;

		if (!DeviceIoControl(h, FSCTL_READ_USN_JOURNAL, &rd, rdsize, buf, READ_BUF, &got,
				     NULL)) {
			e = GetLastError();
			if (e == ERROR_INVALID_PARAMETER && rdsize == sizeof(rd)) {
				rdsize = (DWORD)offsetof(struct read_v1, MinMajorVersion); /* V0 */
				continue;
			}
			if (e == ERROR_INVALID_PARAMETER) {
				/* the journal is there (it was queried): it is our
				 * request it will not take */
				snprintf(why, cap, "read the change journal: the volume refused our "
					 "request (Windows error 87)");
				rc = EINVAL;
			} else {
				rc = fail(e, "read the change journal", why, cap);
			}
			break;
		}
		if (usn_tally(buf, got, ignore_dirs, n, t, &next, &bad) != 0) {
			snprintf(why, cap, "read the change journal: malformed record at byte %zu", bad);
			rc = EIO;
			break;
		}
		if (got <= 8 || next <= rd.StartUsn)
			break; /* nothing more yet */
		rd.StartUsn = next;
	}
	free(buf);
	CloseHandle(h);
	return rc;
}

int jn_paths(const char *path, const struct fileid *ids, size_t n,
	     int (*fn)(const char *p, uint64_t id, void *ctx), void *ctx, char *why, size_t cap)
{
	wchar_t root[MAX_PATH + 8], dev[MAX_PATH + 8], *final;
	struct strbuf sb = STRBUF_INIT;
	const DWORD fcap = 32768;
	DWORD e;
	HANDLE hint;
	size_t i;
	int rc = 0;

	e = win_volume_of(path, root, dev);
	if (e)
		return fail(e, "find the volume", why, cap);
	/* any open handle on the volume tells OpenFileById where to look */
	hint = CreateFileW(root, FILE_READ_ATTRIBUTES,
			   FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE, NULL, OPEN_EXISTING,
			   FILE_FLAG_BACKUP_SEMANTICS, NULL);
	if (hint == INVALID_HANDLE_VALUE)
		return fail(GetLastError(), "open the volume's root", why, cap);
	final = malloc(fcap * sizeof(*final));
	if (!final) {
		CloseHandle(hint);
		snprintf(why, cap, "out of memory");
		return ENOMEM;
	}
	for (i = 0; i < n && rc == 0; i++) {
		char text[160];
		HANDLE h;
		DWORD len;
		int kind;

		/* not following a reparse point: a cloud placeholder opened
		 * through its filter may be fetched */
		h = win_open_by_id(hint, &ids[i], FILE_READ_ATTRIBUTES,
				   FILE_FLAG_BACKUP_SEMANTICS | FILE_FLAG_OPEN_REPARSE_POINT, &e);
		if (!h && win_id_gone(e))
			continue; /* deleted since: nothing to read */
		if (!h) {
			/* there, or not known to be gone: the list is not whole */
			sys_strerror(win_errno(e), text, sizeof(text));
			snprintf(why, cap, "open a changed file by its ID: %s", text);
			rc = e == ERROR_NOT_ENOUGH_MEMORY ? ENOMEM : EIO;
			break;
		}
		kind = win_handle_kind(h);
		if (kind == -1) {
			e = GetLastError();
			CloseHandle(h);
			rc = fail(e, "stat a changed file", why, cap);
			break;
		}
		if (kind != WIN_KIND_FILE) {
			CloseHandle(h);
			continue; /* what the walk would not read either */
		}
		len = GetFinalPathNameByHandleW(h, final, fcap, FILE_NAME_NORMALIZED | VOLUME_NAME_DOS);
		e = GetLastError();
		CloseHandle(h);
		if (len == 0 || len >= fcap) {
			/* it exists but has no name we can use: do not lose it */
			rc = fail(len ? ERROR_FILENAME_EXCED_RANGE : e, "name a changed file", why, cap);
			break;
		}
		sb_reset(&sb);
		if (win_from_path(final, &sb) != 0 || sb.oom) {
			snprintf(why, cap, "out of memory");
			rc = ENOMEM;
			break;
		}
		rc = fn(sb.p, fileid_fold(ids[i].lo, ids[i].hi), ctx);
	}
	free(final);
	sb_free(&sb);
	CloseHandle(hint);
	return rc;
}
