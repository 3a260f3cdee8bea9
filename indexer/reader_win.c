/* reader_win.c - ReadFile at explicit offsets on a handle opened with
 * FILE_FLAG_SEQUENTIAL_SCAN (larger read-ahead, and the cache manager
 * unmaps what was read behind us, which is the nearest Windows has to
 * dropping our pages from the cache).
 *
 * Access times: the handle asks for FILE_WRITE_ATTRIBUTES as well, only to
 * call SetFileTime(-1) on it, which tells NTFS not to update the last-access
 * time for this handle's reads; without that right (read-only media, ACLs)
 * the file is read anyway.  Nothing is ever written. */
#include "indexer/reader.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <windows.h>

#include "common/win.h"

struct rd_file {
	HANDLE h;
};

static const DWORD SHARE = FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE;

static HANDLE open_read(const wchar_t *w, DWORD access, DWORD flags, DWORD *e)
{
	HANDLE h;

	switch (rd_take_fault(RD_OP_OPEN)) {
	case RD_FAULT_EMFILE: *e = ERROR_TOO_MANY_OPEN_FILES; return INVALID_HANDLE_VALUE;
	case RD_FAULT_ENOMEM: *e = ERROR_NOT_ENOUGH_MEMORY; return INVALID_HANDLE_VALUE;
	case RD_FAULT_EACCES: *e = ERROR_ACCESS_DENIED; return INVALID_HANDLE_VALUE;
	case RD_FAULT_EIO: *e = ERROR_READ_FAULT; return INVALID_HANDLE_VALUE;
	default: break;
	}
	h = CreateFileW(w, access, SHARE, NULL, OPEN_EXISTING, FILE_FLAG_SEQUENTIAL_SCAN | flags,
			NULL);
	*e = h == INVALID_HANDLE_VALUE ? GetLastError() : 0;
	return h;
}

/* Opened without following a reparse point, so a link put in the file's
 * place since the walk is seen and refused (win_stat_handle).  But that
 * open also goes around the filters that serve the data of files whose
 * reparse point is not a link: Data Deduplication and WOF (`compact
 * /exe`) keep the bytes elsewhere, and the file's own stream is a stub.
 * Such a file is opened again the ordinary way, through its filter; not
 * one whose data is not on this disk (rd_open refuses those first). */
static int needs_filter(HANDLE h)
{
	FILE_ATTRIBUTE_TAG_INFO tag;

	if (!GetFileInformationByHandleEx(h, FileAttributeTagInfo, &tag, sizeof(tag)))
		return 0;
	return (tag.FileAttributes & FILE_ATTRIBUTE_REPARSE_POINT) && tag.ReparseTag &&
	       !win_tag_is_link(tag.ReparseTag);
}

/* With write-attribute rights when we may (for SetFileTime below); a
 * read-only ACL answers ERROR_ACCESS_DENIED, a locked SD card or other
 * write-protected medium ERROR_WRITE_PROTECT: then read-only. */
static HANDLE open_for_reading(const wchar_t *w, DWORD flags, DWORD *e, int *keep_atime)
{
	HANDLE h = open_read(w, GENERIC_READ | FILE_WRITE_ATTRIBUTES, flags, e);

	*keep_atime = h != INVALID_HANDLE_VALUE;
	if (h == INVALID_HANDLE_VALUE && (*e == ERROR_ACCESS_DENIED || *e == ERROR_WRITE_PROTECT))
		h = open_read(w, GENERIC_READ, flags, e);
	return h;
}

static int info_of(HANDLE h, struct rd_info *info, struct sl_err *err)
{
	struct win_stat st;
	int rc = win_stat_or_fail(h, &st, err);

	if (rc != SL_OK)
		return rc;
	info->dev = st.dev;
	info->ino = st.ino;
	info->size = st.size;
	info->mtime_ns = st.mtime_ns;
	info->ctime_ns = st.ctime_ns;
	info->btime_ns = st.btime_ns;
	return SL_OK;
}

/* By full path: anchor_win.c says why, and the identity check after the
 * open (pipeline.h) refuses another file than the one the walk saw. */
int rd_open(const struct anchor *a, const char *rel, struct rd_file **out, struct rd_info *info,
	    struct sl_err *err)
{
	static const FILETIME keep = {0xFFFFFFFFu, 0xFFFFFFFFu};
	struct strbuf path = STRBUF_INIT;
	struct rd_file *f;
	wchar_t *w;
	HANDLE h;
	DWORD e;
	int rc, keep_atime;

	*out = NULL;
	w = anchor_join(a, rel, &path) == 0 ? win_path(path.p) : NULL;
	sb_free(&path);
	if (!w)
		return SL_FAIL(err, errno == ENOMEM ? SL_E_NOMEM : SL_E_IO, errno, "open");
	h = open_for_reading(w, FILE_FLAG_OPEN_REPARSE_POINT, &e, &keep_atime);
	/* made a cloud placeholder or offline since the walk (or listed by the
	 * journal): through its filter, the read would download it, which the
	 * walk never asks for (win_entry_kind) */
	if (h != INVALID_HANDLE_VALUE && win_handle_kind(h) == WIN_KIND_SPECIAL) {
		CloseHandle(h);
		free(w);
		return SL_FAIL(err, SL_E_UNSUPPORTED, 0,
			       "open: not on this disk (a cloud or offline file): not read, "
			       "as reading would download it");
	}
	if (h != INVALID_HANDLE_VALUE && needs_filter(h)) {
		CloseHandle(h);
		h = open_for_reading(w, 0, &e, &keep_atime);
	}
	if (h != INVALID_HANDLE_VALUE && keep_atime)
		SetFileTime(h, NULL, &keep, NULL);
	free(w);
	if (h == INVALID_HANDLE_VALUE)
		return SL_FAIL(err, sl_errno_class(win_errno(e)), win_errno(e), "open");
	rc = info_of(h, info, err);
	if (rc != SL_OK) {
		CloseHandle(h);
		return rc;
	}
	f = malloc(sizeof(*f));
	if (!f) {
		CloseHandle(h);
		return SL_FAIL(err, SL_E_NOMEM, 0, "open: out of memory");
	}
	f->h = h;
	*out = f;
	return SL_OK;
}

int rd_read(struct rd_file *f, void *buf, size_t len, uint64_t off, size_t *got,
	    struct sl_err *err)
{
	unsigned char *p = buf;
	size_t done = 0;

	while (done < len) {
		size_t want = len - done;
		OVERLAPPED ov;
		DWORD n = 0, e = 0;
		uint64_t at = off + done;
		int fault = rd_take_fault(RD_OP_READ);

		if (want > (1u << 30))
			want = 1u << 30;
		if (fault == RD_FAULT_SHORT && want > 1)
			want /= 2;
		memset(&ov, 0, sizeof(ov));
		ov.Offset = (DWORD)at;
		ov.OffsetHigh = (DWORD)(at >> 32);
		if (fault == RD_FAULT_EIO)
			e = ERROR_CRC;
		else if (fault == RD_FAULT_EINTR)
			continue; /* Win32 reads are not interrupted: just retry */
		else if (!ReadFile(f->h, p + done, (DWORD)want, &n, &ov))
			e = GetLastError();
		if (e == ERROR_HANDLE_EOF)
			break;
		if (e) {
			*got = done;
			return SL_FAIL(err, SL_E_IO, win_errno(e), "read at offset %llu",
				       (unsigned long long)at);
		}
		if (n == 0)
			break;
		done += n;
	}
	*got = done;
	return SL_OK;
}

int rd_stat(struct rd_file *f, struct rd_info *info, struct sl_err *err)
{
	return info_of(f->h, info, err);
}

void rd_advise_sequential(struct rd_file *f)
{
	(void)f; /* FILE_FLAG_SEQUENTIAL_SCAN, at open */
}

void rd_advise_willneed(struct rd_file *f)
{
	(void)f; /* no equivalent for unmapped files; read-ahead does it */
}

void rd_advise_random(struct rd_file *f)
{
	(void)f; /* FILE_FLAG_RANDOM_ACCESS is for the open; pieces are large
		    enough that Windows' read-ahead costs little */
}

void rd_advise_range(struct rd_file *f, uint64_t off, uint64_t len)
{
	(void)f; /* as rd_advise_willneed */
	(void)off;
	(void)len;
}

int rd_evict(const struct anchor *a, const char *rel, struct sl_err *err)
{
	/* Opening a file without buffering makes the cache manager flush and
	 * purge its cached pages (when no cached handle keeps them). */
	struct strbuf path = STRBUF_INIT;
	wchar_t *w = anchor_join(a, rel, &path) == 0 ? win_path(path.p) : NULL;
	HANDLE h;

	sb_free(&path);
	if (!w)
		return SL_FAIL(err, SL_E_IO, errno, "open");
	h = CreateFileW(w, GENERIC_READ, SHARE, NULL, OPEN_EXISTING, FILE_FLAG_NO_BUFFERING, NULL);
	free(w);
	if (h == INVALID_HANDLE_VALUE)
		return SL_FAIL(err, SL_E_IO, win_errno(GetLastError()), "open");
	CloseHandle(h);
	return SL_OK;
}

void rd_close(struct rd_file *f, int keep_cache)
{
	(void)keep_cache;
	if (!f)
		return;
	CloseHandle(f->h);
	free(f);
}

uint64_t rd_holes(const struct rd_file *f)
{
	(void)f; /* holes are read as the file system gives them here */
	return 0;
}

int rd_cached(const struct rd_file *f)
{
	(void)f; /* Windows has no cheap question for it */
	return -1;
}
