/* walk.c - the parts of the walk every platform shares (walk.h). */
#include "scanner/walk.h"

#include <string.h>

#include "common/sys.h"

int walk_dir_error(struct ftab *ft, struct walk_stats *st, uint32_t dir, const char *op, int sys,
		   struct strbuf *msg, struct sl_err *err)
{
	uint32_t id;
	char why[160];
	int rc;

	rc = ftab_add_file(ft, dir, "", 0, 0, 0, &id, err);
	if (rc != SL_OK)
		return rc;
	ft->files[id].flags |= FT_DIR;
	sb_reset(msg);
	if (sys) {
		sys_strerror(sys, why, sizeof(why));
		sb_addf(msg, "%s: %s", op, why);
	} else {
		sb_addf(msg, "%s", op);
	}
	if (msg->oom)
		return SL_FAIL(err, SL_E_NOMEM, 0, "walk: out of memory");
	st->dir_errors++;
	return ftab_fail(ft, id, msg->p, err);
}

int walk_skipped(const struct walk_opts *o, uint64_t dev, uint64_t ino)
{
	size_t i;
	for (i = 0; ino && i < o->nskip; i++)
		if (o->skip[i].dev == dev && o->skip[i].ino == ino)
			return 1;
	return 0;
}

int walk_excluded(const struct excl *x, const char *dir, const char *name, struct strbuf *full)
{
	size_t n;

	if (!x || !x->n)
		return 0;
	if (!x->any_path)
		return ex_match(x, NULL, name);
	n = strlen(dir);
	sb_reset(full);
	sb_addf(full, "%s%s%s", dir, n && dir[n - 1] == '/' ? "" : "/", name);
	return !full->oom && ex_match(x, full->p, name);
}

int walk_canonical(const char *root, struct strbuf *out, struct sl_err *err)
{
	struct anchor *a;
	int rc = anchor_open(root, ANCHOR_FILE, &a, err);

	if (rc != SL_OK)
		return rc;
	sb_reset(out);
	sb_adds(out, anchor_path(a));
	anchor_free(a);
	if (out->oom)
		return SL_FAIL(err, SL_E_NOMEM, 0, "out of memory");
	return SL_OK;
}
