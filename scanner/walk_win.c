/* walk_win.c - the walk on Windows.
 *
 * Each directory is opened once (a handle, for its identity) and listed in
 * big batches with GetFileInformationByHandleEx(FileIdExtdDirectoryInfo),
 * which also returns every entry's 128-bit file ID, folded as the open
 * file's (win.h): the index's own files can be left out by identity without
 * opening anything, on ReFS too.  Before Windows 8, and where a file system
 * refuses that class, FileIdBothDirectoryInfo (64-bit IDs, whole on NTFS
 * and FAT); where that is refused too (some network redirectors)
 * FindFirstFileExW with FindExInfoBasic and FIND_FIRST_EX_LARGE_FETCH;
 * file IDs then come from the stat pass (and an index kept inside such a
 * tree is not recognised by ID: keep it elsewhere, or exclude it by
 * pattern).
 *
 * A listed folder that does not open by its name is a folder error, not a
 * folder gone, unless its ID shows it gone: a name another system wrote
 * may mean something else to Win32 (ntfs-3g allows ':' in a name, which
 * Win32 reads as a stream; an unpaired surrogate came back as U+FFFD), and
 * skipping it silently left everything below it out of the index.
 *
 * Links are never followed: reparse points whose tag is a name surrogate
 * (symbolic links, junctions, volume mount points) count as symlinks, so the
 * walk stays on the root's volume.  Other reparse points are a filter's way
 * of keeping data in place (OneDrive folders, deduplicated or compressed
 * files): folders are walked and files read like any other
 * (win_entry_kind).  Entries whose data is not on the disk (cloud
 * placeholders, HSM: FILE_ATTRIBUTE_RECALL_ON_DATA_ACCESS / OFFLINE) are
 * skipped like special files: reading them would download them.
 *
 * Names arrive in UTF-16 and are stored in UTF-8 (win.h). */
#include "scanner/walk.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <windows.h>

#include "common/sys.h"
#include "common/win.h"
#include "common/wincall.h"

#define LIST_BUF (64 * 1024)

static int force_find; /* walk_force_fallback */

void walk_force_fallback(int on)
{
	force_find = on;
}

/* How folders are listed: the best the file system takes (the first
 * folder of a root finds out, the rest of the root is listed so). */
enum listing { LIST_EXTD, LIST_BOTH, LIST_FIND };

struct walker {
	struct ftab *ft;
	const struct walk_opts *o;
	struct walk_stats *st;
	struct strbuf msg;
	struct strbuf path; /* current directory, our form */
	struct strbuf name; /* scratch: one entry's UTF-8 name */
	struct strbuf full; /* scratch: path/name */
	void *buf;          /* LIST_BUF bytes for directory batches */
	enum listing how;
	HANDLE hint;        /* a folder on the root's volume, for OpenFileById;
			       opened when first needed */
};

struct pending {
	uint32_t dir;
	uint32_t name;
	struct fileid raw; /* as listed; 0 when not known */
};

static int record_dir_error(struct walker *w, uint32_t dir, const char *op, int sys,
			    struct sl_err *err)
{
	return walk_dir_error(w->ft, w->st, dir, op, sys, &w->msg, err);
}

/* Whether the entry `name` of the current directory is left out by pattern. */
static int excluded(struct walker *w, const char *name)
{
	return walk_excluded(w->o->exclude, w->path.p ? w->path.p : "", name, &w->full);
}

/* follow: go through a reparse point at path itself.  Only for the root:
 * sys_abs_path resolves links in it, except a volume mounted in a folder
 * with no drive letter, whose mount point must then lead to the volume
 * (opening the mount point itself lists an empty folder).  Below the root
 * nothing is followed, even if it became a link since it was listed. */
static HANDLE open_dir(const char *path, int follow, DWORD *e)
{
	wchar_t *wp = win_path(path);
	HANDLE h;

	if (!wp) {
		*e = ERROR_NOT_ENOUGH_MEMORY;
		return INVALID_HANDLE_VALUE;
	}
	h = win_call.create_file(wp, FILE_LIST_DIRECTORY | FILE_READ_ATTRIBUTES,
			FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE, NULL, OPEN_EXISTING,
			FILE_FLAG_BACKUP_SEMANTICS | (follow ? 0 : FILE_FLAG_OPEN_REPARSE_POINT), NULL);
	*e = h == INVALID_HANDLE_VALUE ? GetLastError() : 0;
	free(wp);
	return h;
}

static int walk_dir(struct walker *w, HANDLE h, uint32_t dir, uint64_t dev, uint16_t devidx,
		    int depth, struct sl_err *err);

/* What to do with one entry; the directory's subdirectories are collected
 * in subs to be descended once the listing is done. */
static int take(struct walker *w, const struct win_dirent *en, uint32_t dir, uint64_t dev,
		uint16_t devidx, struct pending **subs, size_t *nsubs, size_t *cap,
		struct sl_err *err)
{
	int is_dir = 0;
	const char *name;

	if (en->len == 1 && en->name[0] == L'.')
		return SL_OK;
	if (en->len == 2 && en->name[0] == L'.' && en->name[1] == L'.')
		return SL_OK;
	switch (win_entry_kind(en->attrs, en->tag)) {
	case WIN_KIND_LINK:
		w->st->symlinks++;
		return SL_OK;
	case WIN_KIND_SPECIAL:
		w->st->special++;
		return SL_OK;
	case WIN_KIND_DIR:
		is_dir = 1;
		break;
	case WIN_KIND_FILE:
		break;
	}
	sb_reset(&w->name);
	if (win_utf8(en->name, en->len, &w->name) != 0 || w->name.oom)
		return SL_FAIL(err, SL_E_NOMEM, 0, "walk: out of memory");
	name = w->name.p;
	if (excluded(w, name)) {
		if (is_dir)
			w->st->excl_dirs++;
		else
			w->st->excl_files++;
		return SL_OK;
	}
	if (!is_dir) {
		int rc;
		if (walk_skipped(w->o, dev, en->id)) {
			w->st->excluded++;
			return SL_OK;
		}
		rc = ftab_add_file(w->ft, dir, name, w->name.len, en->id, devidx, NULL, err);
		if (rc == SL_OK)
			w->st->files++;
		return rc;
	} else {
		uint32_t id;
		int rc = ftab_add_dir(w->ft, dir, name, w->name.len, &id, err);
		if (rc != SL_OK)
			return rc;
		if (sl_grow(subs, cap, *nsubs + 1, sizeof(**subs)) != 0)
			return SL_FAIL(err, SL_E_NOMEM, 0, "walk: out of memory");
		(*subs)[*nsubs].dir = id;
		(*subs)[*nsubs].name = w->ft->dirs[id].name;
		(*subs)[*nsubs].raw = en->raw;
		(*nsubs)++;
		return SL_OK;
	}
}

/* List with FindFirstFileExW: the fallback.  Returns SL_OK or a fatal code;
 * listing errors are recorded on the directory. */
static int list_find(struct walker *w, uint32_t dir, uint64_t dev, uint16_t devidx,
		     struct pending **subs, size_t *nsubs, size_t *cap, struct sl_err *err)
{
	WIN32_FIND_DATAW fd;
	struct strbuf pat = STRBUF_INIT;
	wchar_t *wp;
	HANDLE fh;
	int rc = SL_OK;

	sb_addf(&pat, "%s%s*", w->path.p, w->path.p[w->path.len - 1] == '/' ? "" : "/");
	wp = pat.oom ? NULL : win_path(pat.p);
	sb_free(&pat);
	if (!wp)
		return SL_FAIL(err, SL_E_NOMEM, 0, "walk: out of memory");
	fh = FindFirstFileExW(wp, FindExInfoBasic, &fd, FindExSearchNameMatch, NULL,
			      FIND_FIRST_EX_LARGE_FETCH);
	free(wp);
	if (fh == INVALID_HANDLE_VALUE) {
		DWORD e = GetLastError();
		if (e == ERROR_FILE_NOT_FOUND)
			return SL_OK;
		return record_dir_error(w, dir, "list directory", win_errno(e), err);
	}
	do {
		struct win_dirent en;
		memset(&en, 0, sizeof(en));
		en.name = fd.cFileName;
		en.len = (int)wcslen(fd.cFileName);
		en.attrs = fd.dwFileAttributes;
		en.tag = fd.dwReserved0;
		rc = take(w, &en, dir, dev, devidx, subs, nsubs, cap, err);
	} while (rc == SL_OK && FindNextFileW(fh, &fd));
	if (rc == SL_OK && GetLastError() != ERROR_NO_MORE_FILES)
		rc = record_dir_error(w, dir, "list directory", win_errno(GetLastError()), err);
	FindClose(fh);
	return rc;
}

/* GetFileInformationByHandleEx's classes for FileIdExtdDirectoryInfo and
 * its restart (Windows 8 on; the headers hide them below 0x0602) */
#define CLS_EXTD ((FILE_INFO_BY_HANDLE_CLASS)19)
#define CLS_EXTD_RESTART ((FILE_INFO_BY_HANDLE_CLASS)20)

/* List with FileIdExtdDirectoryInfo or FileIdBothDirectoryInfo (w->how).
 * Returns SL_OK, a fatal code, or -1 when the file system does not support
 * the class (try the next). */
static int list_ids(struct walker *w, HANDLE h, uint32_t dir, uint64_t dev, uint16_t devidx,
		    struct pending **subs, size_t *nsubs, size_t *cap, struct sl_err *err)
{
	const int extd = w->how == LIST_EXTD;
	FILE_INFO_BY_HANDLE_CLASS cls = extd ? CLS_EXTD_RESTART : FileIdBothDirectoryRestartInfo;
	int rc = SL_OK, first = 1;

	for (;;) {
		const unsigned char *p = w->buf;
		if (!GetFileInformationByHandleEx(h, cls, w->buf, LIST_BUF)) {
			DWORD e = GetLastError();
			if (e == ERROR_NO_MORE_FILES)
				return SL_OK;
			/* Wine answers ERROR_CALL_NOT_IMPLEMENTED for the 128-bit class */
			if (first && (e == ERROR_INVALID_PARAMETER || e == ERROR_NOT_SUPPORTED ||
				      e == ERROR_INVALID_FUNCTION || e == ERROR_INVALID_LEVEL ||
				      e == ERROR_CALL_NOT_IMPLEMENTED))
				return -1;
			return record_dir_error(w, dir, "list directory", win_errno(e), err);
		}
		first = 0;
		cls = extd ? CLS_EXTD : FileIdBothDirectoryInfo;
		for (;;) {
			struct win_dirent en;
			win_dirent(p, extd, &en);
			rc = take(w, &en, dir, dev, devidx, subs, nsubs, cap, err);
			if (rc != SL_OK || en.next == 0)
				break;
			p += en.next;
		}
		if (rc != SL_OK)
			return rc;
	}
}

/* A listed folder that did not open by its name with e (a "not found"
 * error): a folder error, unless its ID shows it was deleted since it was
 * listed.  Returns what descend returns. */
static int unopenable(struct walker *w, const struct pending *p, size_t parent, DWORD e,
		      struct sl_err *err)
{
	static const char what[] = "opendir (listed, but its name does not open on Windows: "
				   "written by another system?)";
	DWORD ide = 0;
	HANDLE h;

	if (e == ERROR_INVALID_NAME || e == ERROR_BAD_PATHNAME || !(p->raw.lo | p->raw.hi))
		return record_dir_error(w, p->dir, what, win_errno(e), err);
	if (w->hint == INVALID_HANDLE_VALUE) {
		struct strbuf root = STRBUF_INIT;
		DWORD he;
		sb_add(&root, w->path.p, parent);
		if (!root.oom)
			w->hint = open_dir(root.p, 0, &he);
		sb_free(&root);
	}
	h = w->hint == INVALID_HANDLE_VALUE
		    ? NULL
		    : win_open_by_id(w->hint, &p->raw, FILE_READ_ATTRIBUTES,
				     FILE_FLAG_BACKUP_SEMANTICS | FILE_FLAG_OPEN_REPARSE_POINT, &ide);
	if (h) {
		CloseHandle(h);
		return record_dir_error(w, p->dir, what, win_errno(e), err);
	}
	if (w->hint != INVALID_HANDLE_VALUE && win_id_gone(ide))
		return SL_OK; /* deleted since it was listed */
	return record_dir_error(w, p->dir, "opendir", win_errno(e), err);
}

static int descend(struct walker *w, const struct pending *p, uint16_t devidx, int depth,
		   struct sl_err *err)
{
	const char *name = ftab_str(w->ft, p->name);
	BY_HANDLE_FILE_INFORMATION bi;
	size_t keep = w->path.len;
	HANDLE h;
	DWORD e;
	uint64_t dev, ino;
	int r;

	if (depth >= WALK_MAX_DEPTH)
		return record_dir_error(w, p->dir, "directory nested too deep; not descended", 0,
					err);
	sb_addf(&w->path, "%s%s", w->path.p[keep - 1] == '/' ? "" : "/", name);
	if (w->path.oom)
		return SL_FAIL(err, SL_E_NOMEM, 0, "walk: out of memory");
	h = open_dir(w->path.p, 0, &e);
	if (h == INVALID_HANDLE_VALUE) {
		int en = win_errno(e);
		if (en == EMFILE) {
			sb_truncate(&w->path, keep);
			return SL_FAIL(err, SL_E_RESOURCE, en, "opendir '%s'", name);
		}
		r = en == ENOENT ? unopenable(w, p, keep, e, err)
				 : record_dir_error(w, p->dir, "opendir", en, err);
		sb_truncate(&w->path, keep);
		return r;
	}
	if (!GetFileInformationByHandle(h, &bi)) {
		e = GetLastError();
		CloseHandle(h);
		sb_truncate(&w->path, keep);
		return record_dir_error(w, p->dir, "stat", win_errno(e), err);
	}
	win_file_id(h, &bi, &dev, &ino);
	r = ftab_seen_dir(w->ft, dev, ino);
	if (r != 0) {
		CloseHandle(h);
		sb_truncate(&w->path, keep);
		if (r < 0)
			return SL_FAIL(err, SL_E_NOMEM, 0, "walk: out of memory");
		w->st->repeats++;
		return SL_OK;
	}
	r = walk_dir(w, h, p->dir, dev, devidx, depth + 1, err);
	sb_truncate(&w->path, keep);
	return r;
}

/* Lists the whole directory before descending, so only one handle per level
 * is open and files keep the file system's order.  Consumes h. */
static int walk_dir(struct walker *w, HANDLE h, uint32_t dir, uint64_t dev, uint16_t devidx,
		    int depth, struct sl_err *err)
{
	struct pending *subs = NULL;
	size_t nsubs = 0, cap = 0, i;
	int rc;

	if (w->o->cancel && atomic_load(w->o->cancel)) {
		CloseHandle(h);
		return SL_FAIL(err, SL_E_CANCELLED, 0, "interrupted during the walk");
	}
	w->st->dirs++;
	if (force_find)
		w->how = LIST_FIND;
	rc = -1;
	while (rc == -1 && w->how != LIST_FIND) {
		rc = list_ids(w, h, dir, dev, devidx, &subs, &nsubs, &cap, err);
		if (rc == -1)
			w->how++;
	}
	CloseHandle(h);
	if (rc == -1)
		rc = list_find(w, dir, dev, devidx, &subs, &nsubs, &cap, err);
	for (i = 0; rc == SL_OK && i < nsubs; i++)
		rc = descend(w, &subs[i], devidx, depth, err);
	free(subs);
	return rc;
}

int walk_root(struct ftab *ft, struct anchor *a, const struct walk_opts *o,
	      struct walk_stats *st, struct sl_err *err)
{
	struct walker w = {ft, o, st, STRBUF_INIT, STRBUF_INIT, STRBUF_INIT, STRBUF_INIT, NULL,
			   LIST_EXTD, INVALID_HANDLE_VALUE};
	BY_HANDLE_FILE_INFORMATION bi;
	uint16_t devidx;
	uint32_t dir;
	uint64_t dev, ino;
	HANDLE h;
	DWORD e;
	int rc, r;

	sb_adds(&w.path, anchor_path(a));
	if (w.path.oom) {
		rc = SL_FAIL(err, SL_E_NOMEM, 0, "walk: out of memory");
		goto out;
	}
	h = open_dir(w.path.p, 1, &e);
	if (h == INVALID_HANDLE_VALUE) {
		rc = SL_FAIL(err, sl_errno_class(win_errno(e)), win_errno(e), "open root '%s'",
			     w.path.p);
		goto out;
	}
	if (!GetFileInformationByHandle(h, &bi)) {
		e = GetLastError();
		CloseHandle(h);
		rc = SL_FAIL(err, SL_E_IO, win_errno(e), "stat root '%s'", w.path.p);
		goto out;
	}
	win_file_id(h, &bi, &dev, &ino);
	rc = ftab_dev(ft, dev, &devidx, err);
	if (rc != SL_OK) {
		CloseHandle(h);
		goto out;
	}
	if (!(bi.dwFileAttributes & FILE_ATTRIBUTE_DIRECTORY)) {
		/* a single file: its folder becomes the root entry */
		char *slash = strrchr(w.path.p, '/');
		size_t plen = (size_t)(slash - w.path.p);
		CloseHandle(h);
		rc = ftab_add_dir(ft, FT_NONE, w.path.p, plen == 2 ? 3 : plen, &dir, err);
		if (rc == SL_OK)
			rc = ftab_set_anchor(ft, dir, a, err);
		if (rc == SL_OK)
			rc = ftab_add_file(ft, dir, slash + 1, strlen(slash + 1), ino, devidx, NULL,
					   err);
		if (rc == SL_OK)
			st->files++;
		goto out;
	}
	r = ftab_seen_dir(ft, dev, ino);
	if (r != 0) {
		CloseHandle(h);
		if (r < 0) {
			rc = SL_FAIL(err, SL_E_NOMEM, 0, "walk: out of memory");
		} else {
			st->repeats++;
			rc = SL_OK;
		}
		goto out;
	}
	w.buf = malloc(LIST_BUF);
	rc = w.buf ? ftab_add_dir(ft, FT_NONE, w.path.p, w.path.len, &dir, err)
		   : SL_FAIL(err, SL_E_NOMEM, 0, "walk: out of memory");
	if (rc == SL_OK)
		rc = ftab_set_anchor(ft, dir, a, err);
	if (rc == SL_OK) {
		ftab_dev_dir(ft, devidx, dir);
		rc = walk_dir(&w, h, dir, dev, devidx, 0, err);
	}
	else
		CloseHandle(h);
out:
	if (w.hint != INVALID_HANDLE_VALUE)
		CloseHandle(w.hint);
	free(w.buf);
	sb_free(&w.msg);
	sb_free(&w.path);
	sb_free(&w.name);
	sb_free(&w.full);
	return rc;
}
