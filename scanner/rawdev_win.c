/* rawdev_win.c - the volume under a file system (\\.\X:), read unbuffered.
 *
 * A volume handle opened for reading while the file system is mounted is
 * allowed to administrators; positions from the retrieval pointers are
 * already volume offsets (the cluster heap's base included), so nothing
 * is added to them. */
#include "scanner/rawdev.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <windows.h>

#include "common/win.h"

/* FILE_FLAG_NO_BUFFERING wants sector-aligned buffer, offset and length;
 * 4096 is a multiple of every sector size in use. */
#define ALIGN 4096u
#define MAXLEN (64u * 1024)

struct rawdev {
	HANDLE h;
	unsigned char *buf;
};

int rawdev_open(const struct dev_info *d, struct rawdev **out, char *name, size_t cap,
		struct sl_err *err)
{
	struct rawdev *r;
	wchar_t *w;
	DWORD e;

	*out = NULL;
	snprintf(name, cap, "%s", d->source);
	if (!d->source[0])
		return SL_FAIL(err, SL_E_IO, 0, "volume device not known");
	w = win_wide(d->source);
	r = calloc(1, sizeof(*r));
	if (r)
		r->buf = VirtualAlloc(NULL, MAXLEN + 2 * ALIGN, MEM_COMMIT | MEM_RESERVE,
				      PAGE_READWRITE);
	if (!w || !r || !r->buf) {
		free(w);
		free(r);
		return SL_FAIL(err, SL_E_NOMEM, 0, "verify: out of memory");
	}
	r->h = CreateFileW(w, GENERIC_READ, FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE,
			   NULL, OPEN_EXISTING, FILE_FLAG_NO_BUFFERING, NULL);
	free(w);
	if (r->h == INVALID_HANDLE_VALUE) {
		e = GetLastError();
		VirtualFree(r->buf, 0, MEM_RELEASE);
		free(r);
		return SL_FAIL(err, SL_E_IO, win_errno(e), "cannot open %s", name);
	}
	*out = r;
	return SL_OK;
}

int rawdev_read(struct rawdev *r, uint64_t pos, void *buf, size_t len, struct sl_err *err)
{
	uint64_t start, end;
	OVERLAPPED ov;
	DWORD got = 0;

	if (len > MAXLEN || pos > UINT64_MAX - len - ALIGN)
		return SL_FAIL(err, SL_E_IO, 0, "position %llu out of range", (unsigned long long)pos);
	start = pos & ~(uint64_t)(ALIGN - 1);
	end = (pos + len + ALIGN - 1) & ~(uint64_t)(ALIGN - 1);
	memset(&ov, 0, sizeof(ov));
	ov.Offset = (DWORD)start;
	ov.OffsetHigh = (DWORD)(start >> 32);
	if (!ReadFile(r->h, r->buf, (DWORD)(end - start), &got, &ov))
		return SL_FAIL(err, SL_E_IO, win_errno(GetLastError()), "volume read at %llu",
			       (unsigned long long)pos);
	if ((uint64_t)got < pos - start + len)
		return SL_FAIL(err, SL_E_IO, 0, "volume ends before %llu",
			       (unsigned long long)(pos + len));
	memcpy(buf, r->buf + (pos - start), len);
	return SL_OK;
}

void rawdev_close(struct rawdev *r)
{
	if (!r)
		return;
	CloseHandle(r->h);
	VirtualFree(r->buf, 0, MEM_RELEASE);
	free(r);
}

int rawdev_file_head(const char *path, void *buf, size_t len, size_t *got, struct sl_err *err)
{
	wchar_t *w = win_path(path);
	HANDLE h;
	size_t have = 0;

	*got = 0;
	if (!w)
		return SL_FAIL(err, SL_E_IO, errno, "open");
	h = CreateFileW(w, GENERIC_READ, FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE, NULL,
			OPEN_EXISTING, FILE_FLAG_OPEN_REPARSE_POINT, NULL);
	free(w);
	if (h == INVALID_HANDLE_VALUE)
		return SL_FAIL(err, SL_E_IO, win_errno(GetLastError()), "open");
	while (have < len) {
		DWORD n = 0;
		if (!ReadFile(h, (char *)buf + have, (DWORD)(len - have), &n, NULL)) {
			DWORD e = GetLastError();
			CloseHandle(h);
			return SL_FAIL(err, SL_E_IO, win_errno(e), "read");
		}
		if (n == 0)
			break;
		have += n;
	}
	CloseHandle(h);
	*got = have;
	return SL_OK;
}
