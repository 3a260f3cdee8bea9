/* anchor_win.c - on Windows an anchor is its canonical path: opens below it
 * go by full path, with reparse points on the last name not followed, and
 * the identity check after every open (locate.h, pipeline.h) refuses a
 * file other than the one the walk saw, a junction swapped in on the way
 * included (docs/windows.md).  Relative opens (NtCreateFile with a
 * RootDirectory handle) would close that gap before the open rather than
 * after it; not done yet. */
#include "common/anchor.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <windows.h>

#include "common/anchor_int.h"
#include "common/sys.h"
#include "common/win.h"

void anchor_force_fallback(int on)
{
	(void)on;
}

void anchor_close_handle(struct anchor *a)
{
	(void)a;
}

int anchor_open(const char *path, unsigned flags, struct anchor **out, struct sl_err *err)
{
	struct strbuf abs = STRBUF_INIT;
	const char *leaf = NULL;
	uint64_t dev = 0, ino = 0;
	wchar_t *w = NULL;
	DWORD attrs;
	int e, rc = SL_OK;

	*out = NULL;
	e = sys_abs_path(path, &abs);
	if (e == 0 && !(w = win_path(abs.p)))
		e = errno;
	if (e) {
		rc = SL_FAIL(err, e == ENOMEM ? SL_E_NOMEM : SL_E_IO, e, "cannot access '%s'", path);
		goto out;
	}
	attrs = GetFileAttributesW(w);
	if (attrs == INVALID_FILE_ATTRIBUTES) {
		e = win_errno(GetLastError());
		rc = SL_FAIL(err, SL_E_IO, e, "cannot access '%s'", path);
		goto out;
	}
	if (!(attrs & FILE_ATTRIBUTE_DIRECTORY)) {
		const char *slash = strrchr(abs.p, '/');
		if (!(flags & ANCHOR_FILE) || !slash) {
			rc = SL_FAIL(err, SL_E_IO, 0, "'%s' is not a folder", path);
			goto out;
		}
		leaf = slash + 1;
	}
	sys_file_id(abs.p, &dev, &ino);
	*out = anchor_new(-1, flags, dev, ino, abs.p, leaf);
	if (!*out)
		rc = SL_FAIL(err, SL_E_NOMEM, 0, "out of memory");
out:
	free(w);
	sb_free(&abs);
	return rc;
}
