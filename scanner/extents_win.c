/* extents_win.c - FSCTL_GET_RETRIEVAL_POINTERS (answers checked by
 * retrieval.c).
 *
 * A file whose data has no clusters (ERROR_HANDLE_EOF: empty, or small
 * enough to be resident in its MFT record) is flagged inline and placed by
 * file ID, which on NTFS is the MFT record number: where its data lives.
 * LCNs are made volume byte offsets with the volume's cluster size and the
 * base of its cluster heap (FSCTL_GET_RETRIEVAL_POINTER_BASE: 0 on NTFS,
 * the reserved sectors and FATs on FAT32 and exFAT), looked up once per
 * volume. */
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

/* What a volume's LCNs mean, by the volume's whole dev (win_file_id: a
 * clone beside its original has a GUID-hashed one, which cut to 32 bits
 * could equal another volume's serial); the locate pass is
 * single-threaded, the lock only keeps this safe for any other caller. */
struct geometry {
	uint64_t dev;
	DWORD cluster;        /* bytes */
	DWORD sector;         /* bytes */
	int64_t base_sectors; /* where LCN 0 is */
};
static SRWLOCK geo_lock = SRWLOCK_INIT;
static struct geometry geo_cache[64];
static int geo_n;

/* Where the cluster heap begins, in sectors.  The control code goes to the
 * volume (access 0 is enough, no elevation needed); where it is refused
 * (NTFS before Windows 7, Wine) LCN 0 is the volume's start, which is true
 * of NTFS and leaves FAT's offsets short by a constant per volume: the
 * order within the volume is unaffected. */
static int64_t heap_base(const wchar_t *root)
{
	wchar_t vol[64];
	RETRIEVAL_POINTER_BASE b;
	DWORD got = 0;
	size_t n;
	HANDLE h;
	int64_t base = 0;

	if (!GetVolumeNameForVolumeMountPointW(root, vol, sizeof(vol) / sizeof(vol[0])))
		return 0;
	n = wcslen(vol);
	if (n && vol[n - 1] == L'\\')
		vol[n - 1] = 0; /* "\\?\Volume{...}" opens the volume, with "\" its root */
	h = CreateFileW(vol, 0, FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE, NULL,
			OPEN_EXISTING, 0, NULL);
	if (h == INVALID_HANDLE_VALUE)
		return 0;
	if (DeviceIoControl(h, FSCTL_GET_RETRIEVAL_POINTER_BASE, NULL, 0, &b, sizeof(b), &got,
			    NULL) && got >= sizeof(b) && b.FileAreaOffset.QuadPart > 0)
		base = b.FileAreaOffset.QuadPart;
	CloseHandle(h);
	return base;
}

static int geometry(const wchar_t *wpath, uint64_t dev, struct geometry *g)
{
	wchar_t root[MAX_PATH + 8];
	DWORD spc, bps, fc, tc;
	int i, found = 0;

	AcquireSRWLockShared(&geo_lock);
	for (i = 0; i < geo_n && !found; i++)
		if (geo_cache[i].dev == dev) {
			*g = geo_cache[i];
			found = 1;
		}
	ReleaseSRWLockShared(&geo_lock);
	if (found)
		return 0;
	if (!GetVolumePathNameW(wpath, root, MAX_PATH + 8) ||
	    !GetDiskFreeSpaceW(root, &spc, &bps, &fc, &tc) || !spc || !bps)
		return -1;
	g->dev = dev;
	g->cluster = spc * bps;
	g->sector = bps;
	g->base_sectors = heap_base(root);
	AcquireSRWLockExclusive(&geo_lock);
	if (geo_n < (int)(sizeof(geo_cache) / sizeof(geo_cache[0])))
		geo_cache[geo_n++] = *g;
	ReleaseSRWLockExclusive(&geo_lock);
	return 0;
}

/* Errors meaning "this volume has no retrieval pointers", not "this file".
 * ERROR_INVALID_PARAMETER is not one: NTFS gives it for one file (a
 * stream it cannot map) on a volume that maps the rest, and taking it as
 * the volume's answer turned physical order off for the whole drive. */
static int is_unsupported(DWORD e)
{
	return e == ERROR_INVALID_FUNCTION || e == ERROR_NOT_SUPPORTED ||
	       e == 1452 /* ERROR_INVALID_DEVICE_REQUEST */;
}

static void map_extents(HANDLE h, const wchar_t *wpath, uint64_t dev, struct ext_result *r)
{
	union {
		RETRIEVAL_POINTERS_BUFFER rp;
		unsigned char raw[RP_HEADER + RP_BATCH * RP_EXTENT];
	} u;
	struct rp_state s;
	struct geometry g;

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
				/* this file only (a later batch failed, or the
				 * file system would not map it) */
				r->flags |= FT_UNKNOWN;
				r->undecided = 1;
			}
			return;
		}
		res = rp_feed(&s, u.raw, got, !ok);
		if (res == RP_NOTHING) {
			r->flags |= FT_UNKNOWN;
			r->undecided = 1;
			return;
		}
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
	if (geometry(wpath, dev, &g) != 0 ||
	    rp_offset(s.first_lcn, g.cluster, g.base_sectors, g.sector, &r->phys) != 0) {
		r->flags |= FT_UNKNOWN;
		r->phys = 0;
		return;
	}
	r->flags |= FT_LOCATED;
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
	r->btime_ns = st.btime_ns;
	r->flags = FT_STATED;
	r->linked = st.nlink > 1;
	return SL_OK;
}

/* ext_stat and ext_locate: map < 0 only stats.  By full path: anchor_win.c
 * says why, and what checks the file's identity instead. */
static int locate(const struct anchor *a, const char *rel, int map, struct ext_result *r,
		  struct sl_err *err)
{
	struct strbuf path = STRBUF_INIT;
	wchar_t *wp;
	HANDLE h;
	int rc;

	memset(r, 0, sizeof(*r));
	if (anchor_join(a, rel, &path) != 0) {
		sb_free(&path);
		return SL_FAIL(err, SL_E_NOMEM, 0, "out of memory");
	}
	rc = open_file(path.p, &h, &wp, err);
	sb_free(&path);
	if (rc != SL_OK)
		return rc;
	rc = fill_stat(h, r, err);
	if (rc == SL_OK && map > 0)
		map_extents(h, wp, r->dev, r);
	else if (rc == SL_OK && map == 0)
		r->flags |= FT_NOEXT;
	CloseHandle(h);
	free(wp);
	return rc;
}

int ext_stat(const struct anchor *a, const char *rel, struct ext_result *r,
	     struct sl_err *err)
{
	return locate(a, rel, -1, r, err);
}

/* Windows has no FIBMAP: EXT_BMAP is asked as the map (no file system
 * answers it there, so it never comes). */
int ext_locate(const struct anchor *a, const char *rel, enum ext_mode mode,
	       enum ext_writeback wb, struct ext_result *r, struct ext_runs *runs,
	       struct sl_err *err)
{
	int rc;

	(void)wb; /* NTFS gives clusters when the data is written: no delayed
		     allocation to wait for */
	if (runs)
		runs->n = 0; /* retrieval pointers keep no runs yet (extents.h) */
	rc = locate(a, rel, mode != EXT_NONE, r, err);
	if (rc == SL_OK && mode != EXT_NONE && !(r->flags & FT_NOEXT))
		r->by = FT_BY_MAP;
	return rc;
}

/* no mergerfs here (Windows pools are Storage Spaces: a volume) */
int ext_pool_open(uint64_t st_dev, struct ext_pool **out, struct sl_err *err)
{
	(void)st_dev;
	(void)err;
	*out = NULL;
	return SL_OK;
}

void ext_pool_free(struct ext_pool *p)
{
	(void)p;
}

struct anchor *ext_pool_branch_at(const struct ext_pool *p, size_t i)
{
	(void)p;
	(void)i;
	return NULL;
}

int ext_pool_branch(const struct ext_pool *p, const struct anchor *a, const char *rel,
		    struct anchor **branch, struct strbuf *below, struct sl_err *err)
{
	(void)p;
	(void)a;
	(void)rel;
	(void)below;
	*branch = NULL;
	return SL_FAIL(err, SL_E_UNSUPPORTED, 0, "no pools here");
}

uint64_t ext_inode_rank(uint64_t ino)
{
	return ino & 0xFFFFFFFFFFFFull;
}
