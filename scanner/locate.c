#include "scanner/locate.h"

#include <stdlib.h>
#include <string.h>

#include "scanner/extents.h"

struct key {
	uint64_t dev;
	uint64_t ino;
	uint32_t idx;
};

static int cmp_key(const void *a, const void *b)
{
	const struct key *x = a, *y = b;
	if (x->dev != y->dev)
		return x->dev < y->dev ? -1 : 1;
	if (x->ino != y->ino)
		return x->ino < y->ino ? -1 : 1;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/* A path on each device, for dev_probe: grown as devices appear. */
struct hints {
	char **path;
	size_t cap;
};

static int note_hint(struct hints *h, size_t dev, const char *path)
{
	size_t old = h->cap;
	if (dev >= h->cap) {
		if (sl_grow(&h->path, &h->cap, dev + 1, sizeof(*h->path)) != 0)
			return -1;
		memset(h->path + old, 0, (h->cap - old) * sizeof(*h->path));
	}
	if (!h->path[dev] && !(h->path[dev] = strdup(path)))
		return -1;
	return 0;
}

static int locate_one(struct ftab *ft, uint32_t i, struct strbuf *path, struct locate_stats *st,
		      struct hints *hints, struct sl_err *err)
{
	struct ft_file *f = &ft->files[i];
	struct ft_dev *d = &ft->devs[f->dev];
	struct ext_result r;
	struct sl_err fe;
	int rc;

	sb_reset(path);
	if (ftab_path(ft, i, path) != 0)
		return SL_FAIL(err, SL_E_NOMEM, 0, "locate: out of memory");
	rc = ext_locate(path->p, d->extents != 0, &r, &fe);
	if (rc != SL_OK) {
		if (sl_code_is_fatal(rc)) {
			SL_FAIL(err, rc, 0, "locate '%s': %s", path->p, fe.msg);
			err->sys = fe.sys;
			return rc;
		}
		st->failed++;
		return ftab_fail(ft, i, fe.msg, err);
	}
	if (r.dev != d->st_dev) {
		/* a file bind-mounted over another: it lives elsewhere */
		uint16_t idx;
		rc = ftab_dev(ft, r.dev, &idx, err);
		if (rc != SL_OK)
			return rc;
		f = &ft->files[i];
		f->dev = idx;
		d = &ft->devs[idx];
	}
	if (d->extents == -1) {
		if (r.flags & FT_NOEXT) {
			d->extents = 0;
			d->extents_errno = r.noext_errno;
		} else {
			d->extents = 1;
		}
	}
	if (note_hint(hints, f->dev, path->p) != 0)
		return SL_FAIL(err, SL_E_NOMEM, 0, "locate: out of memory");
	f->ino = r.ino;
	f->size = r.size;
	f->mtime_ns = r.mtime_ns;
	f->phys = r.phys;
	f->fragments = r.fragments;
	f->flags = (uint16_t)((f->flags & ~(FT_LOCATED | FT_INLINE | FT_UNKNOWN | FT_ENCODED |
					    FT_EMPTY | FT_NOEXT)) | r.flags);
	st->files++;
	st->bytes += r.size;
	if (r.flags & FT_LOCATED)
		st->located++;
	return SL_OK;
}

int locate_all(struct ftab *ft, struct dev_info **devs, struct locate_stats *st,
	       atomic_int *cancel, struct sl_err *err)
{
	struct strbuf path = STRBUF_INIT;
	struct key *keys = NULL;
	struct dev_info *info = NULL;
	struct hints hints = {NULL, 0};
	size_t i, n = 0;
	int rc = SL_OK;

	memset(st, 0, sizeof(*st));
	*devs = NULL;
	if (ft->nfiles) {
		keys = malloc(ft->nfiles * sizeof(*keys));
		if (!keys)
			return SL_FAIL(err, SL_E_NOMEM, 0, "locate: out of memory");
	}
	for (i = 0; i < ft->nfiles; i++) {
		const struct ft_file *f = &ft->files[i];
		if (f->flags & FT_FAILED)
			continue;
		keys[n].dev = ft->devs[f->dev].st_dev;
		keys[n].ino = f->ino;
		keys[n].idx = (uint32_t)i;
		n++;
	}
	qsort(keys, n, sizeof(*keys), cmp_key);
	for (i = 0; i < n && rc == SL_OK; i++) {
		if (cancel && atomic_load(cancel)) {
			rc = SL_FAIL(err, SL_E_CANCELLED, 0, "locate: cancelled");
			break;
		}
		rc = locate_one(ft, keys[i].idx, &path, st, &hints, err);
	}
	if (rc == SL_OK && ft->ndevs) {
		info = calloc(ft->ndevs, sizeof(*info));
		if (!info)
			rc = SL_FAIL(err, SL_E_NOMEM, 0, "locate: out of memory");
		for (i = 0; rc == SL_OK && i < ft->ndevs; i++)
			rc = dev_probe(ft->devs[i].st_dev, i < hints.cap ? hints.path[i] : NULL,
				       &info[i], err);
	}
	if (rc == SL_OK)
		*devs = info;
	else
		free(info);
	for (i = 0; i < hints.cap; i++)
		free(hints.path[i]);
	free(hints.path);
	free(keys);
	sb_free(&path);
	return rc;
}
