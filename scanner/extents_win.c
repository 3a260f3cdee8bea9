/* extents_win.c - FSCTL_GET_RETRIEVAL_POINTERS (answers checked by
 * retrieval.c).
 *
 * A file whose data has no clusters (ERROR_HANDLE_EOF: empty, or small
 * enough to be resident in its MFT record) is flagged inline and placed by
 * file ID, which on NTFS is the MFT record number: where its data lives.
 * LCNs are made byte offsets with the volume's cluster size, looked up once
 * per volume. */
#include "scanner/extents.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <windows.h>
#include <winioctl.h>

#include "common/win.h"
#include "scanner/ftab.h"
#include "scanner/retrieval.h"

#define RP_BATCH 64

/* Cluster sizes by volume serial; the locate pass is single-threaded, the
 * lock only keeps this safe for any other caller. */
static SRWLOCK cl_lock = SRWLOCK_INIT;
static struct {
	DWORD serial;
	DWORD bytes;
} cl_cache[64];
static int cl_n;

static DWORD cluster_size(const wchar_t *wpath, DWORD serial)
{
	wchar_t root[MAX_PATH + 8];
	DWORD spc, bps, fc, tc, size = 0;
	int i;

	AcquireSRWLockShared(&cl_lock);
	for (i = 0; i < cl_n; i++)
		if (cl_cache[i].serial == serial)
			size = cl_cache[i].bytes;
	ReleaseSRWLockShared(&cl_lock);
	if (size)
		return size;
	if (GetVolumePathNameW(wpath, root, MAX_PATH + 8) &&
	    GetDiskFreeSpaceW(root, &spc, &bps, &fc, &tc))
		size = spc * bps;
	if (!size)
		return 0;
	AcquireSRWLockExclusive(&cl_lock);
	if (cl_n < (int)(sizeof(cl_cache) / sizeof(cl_cache[0]))) {
		cl_cache[cl_n].serial = serial;
		cl_cache[cl_n].bytes = size;
		cl_n++;
	}
	ReleaseSRWLockExclusive(&cl_lock);
	return size;
}

/* Errors meaning "this volume has no retrieval pointers", not "this file". */
static int is_unsupported(DWORD e)
{
	return e == ERROR_INVALID_FUNCTION || e == ERROR_NOT_SUPPORTED ||
	       e == ERROR_INVALID_PARAMETER || e == 1452 /* ERROR_INVALID_DEVICE_REQUEST */;
}

static void map_extents(HANDLE h, const wchar_t *wpath, DWORD serial, struct ext_result *r)
{
	union {
		RETRIEVAL_POINTERS_BUFFER rp;
		unsigned char raw[RP_HEADER + RP_BATCH * RP_EXTENT];
	} u;
	struct rp_state s;
	DWORD cluster;

	rp_init(&s);
	for (;;) {
		STARTING_VCN_INPUT_BUFFER in;
		enum rp_result res;
		DWORD got = 0, e = 0;
		BOOL ok;

		in.StartingVcn.QuadPart = s.next_vcn;
		ok = DeviceIoControl(h, FSCTL_GET_RETRIEVAL_POINTERS, &in, sizeof(in), &u, sizeof(u),
				     &got, NULL);
		if (!ok)
			e = GetLastError();
		if (!ok && e == ERROR_HANDLE_EOF && s.extents == 0) {
			/* no clusters at all: empty, or resident in the MFT */
			r->flags |= r->size ? FT_INLINE : FT_EMPTY;
			return;
		}
		if (!ok && e != ERROR_MORE_DATA) {
			if (s.extents == 0 && is_unsupported(e)) {
				r->flags |= FT_NOEXT;
				r->noext_errno = win_errno(e);
			} else {
				r->flags |= FT_UNKNOWN; /* a later batch failed */
			}
			return;
		}
		res = rp_feed(&s, u.raw, got, !ok);
		if (res == RP_BOGUS) {
			r->flags |= FT_NOEXT;
			r->noext_errno = WIN_E_BOGUS_EXTENTS;
			r->fragments = 0;
			return;
		}
		if (res == RP_DONE)
			break;
	}
	r->fragments = s.fragments;
	if (!s.located) {
		r->flags |= FT_EMPTY; /* all holes */
		return;
	}
	cluster = cluster_size(wpath, serial);
	if (!cluster) {
		r->flags |= FT_UNKNOWN;
		return;
	}
	r->flags |= FT_LOCATED;
	r->phys = (uint64_t)s.first_lcn * cluster;
}

/* Open without following a reparse point; access 0 is enough for the
 * identity and for the retrieval pointers. */
static int open_file(const char *path, HANDLE *h, wchar_t **wp, struct sl_err *err)
{
	DWORD e;

	*wp = win_path(path);
	if (!*wp)
		return SL_FAIL(err, errno == ENOMEM ? SL_E_NOMEM : SL_E_IO, errno, "open");
	*h = CreateFileW(*wp, FILE_READ_ATTRIBUTES,
			 FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE, NULL, OPEN_EXISTING,
			 FILE_FLAG_OPEN_REPARSE_POINT | FILE_FLAG_BACKUP_SEMANTICS, NULL);
	if (*h != INVALID_HANDLE_VALUE)
		return SL_OK;
	e = GetLastError();
	free(*wp);
	*wp = NULL;
	return SL_FAIL(err, sl_errno_class(win_errno(e)), win_errno(e), "open");
}

static int fill_stat(HANDLE h, struct ext_result *r, struct sl_err *err)
{
	struct win_stat st;
	int rc = win_stat_or_fail(h, &st, err);

	if (rc != SL_OK)
		return rc;
	r->dev = st.dev;
	r->ino = st.ino;
	r->size = st.size;
	r->mtime_ns = st.mtime_ns;
	r->ctime_ns = st.ctime_ns;
	r->flags = FT_STATED;
	return SL_OK;
}

/* ext_stat and ext_locate: map < 0 only stats. */
static int locate(const char *path, int map, struct ext_result *r, struct sl_err *err)
{
	wchar_t *wp;
	HANDLE h;
	int rc;

	memset(r, 0, sizeof(*r));
	rc = open_file(path, &h, &wp, err);
	if (rc != SL_OK)
		return rc;
	rc = fill_stat(h, r, err);
	if (rc == SL_OK && map > 0)
		map_extents(h, wp, (DWORD)r->dev, r);
	else if (rc == SL_OK && map == 0)
		r->flags |= FT_NOEXT;
	CloseHandle(h);
	free(wp);
	return rc;
}

int ext_stat(const char *path, struct ext_result *r, struct sl_err *err)
{
	return locate(path, -1, r, err);
}

int ext_locate(const char *path, int query, struct ext_result *r, struct sl_err *err)
{
	return locate(path, query != 0, r, err);
}
