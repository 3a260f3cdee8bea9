#include "app/prep.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/sys.h"
#include "indexer/pipeline.h"
#include "scanner/extents.h"

void prep_note(const struct prep *p, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	if (!p->note)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	p->note(p->note_ctx, msg);
}

int prep_roots(struct prep *p, char *const *paths, size_t n, char *const *from, int cross_fs,
	       struct sl_err *err)
{
	unsigned flags = ANCHOR_FILE | (cross_fs ? ANCHOR_CROSS_FS : 0);
	struct strbuf missed = STRBUF_INIT, all = STRBUF_INIT; /* "file:line: reason\n" each */
	char *line, *end;
	struct sl_err e;
	size_t i, nmissed = 0;
	int rc = SL_OK;

	p->roots = calloc(n + 1, sizeof(*p->roots));
	p->anchors = calloc(n + 1, sizeof(*p->anchors));
	if (!p->roots || !p->anchors)
		return SL_FAIL(err, SL_E_NOMEM, 0, "out of memory");
	for (i = 0; rc == SL_OK && i < n; i++) {
		struct anchor *a;
		if (anchor_open(paths[i], flags, &a, &e) != SL_OK) {
			if (e.code == SL_E_NOMEM || !from) {
				*err = e;
				rc = e.code == SL_E_NOMEM ? SL_E_NOMEM : SL_E_USAGE;
				err->code = rc;
			} else {
				sb_addf(&missed, "%s: %s\n", from[i], e.msg);
				nmissed++;
			}
			continue;
		}
		p->roots[p->nroots] = strdup(anchor_path(a));
		p->anchors[p->nroots] = a;
		if (!p->roots[p->nroots]) {
			anchor_free(a);
			p->anchors[p->nroots] = NULL;
			rc = SL_FAIL(err, SL_E_NOMEM, 0, "out of memory");
		} else {
			p->nroots++;
		}
	}
	if (rc == SL_OK && missed.oom)
		rc = SL_FAIL(err, SL_E_NOMEM, 0, "out of memory");
	for (line = missed.p; rc == SL_OK && line && *line; line = end + 1) {
		end = strchr(line, '\n');
		*end = '\0';
		if (p->nroots > 0)
			prep_note(p, "%s; skipped (its records are kept)", line);
		else if (nmissed == 1)
			rc = SL_FAIL(err, SL_E_USAGE, 0, "%s", line);
		else /* one line, whatever their number */
			sb_addf(&all, "%s%s", all.len ? "; " : "", line);
	}
	if (rc == SL_OK && p->nroots == 0)
		rc = SL_FAIL(err, SL_E_USAGE, 0, "none of the configured roots can be accessed: %s",
			     all.p ? all.p : "");
	sb_free(&missed);
	sb_free(&all);
	return rc;
}

#define NSKIP 5

/* The index's own files, by identity: the index must not index itself (it
 * changes while being read).  Returns how many exist. */
static size_t own_files(const char *dbpath, struct walk_skip skip[NSKIP])
{
	static const char *const suffixes[NSKIP] = {"", "-wal", "-shm", "-journal", ".lock"};
	struct strbuf sb = STRBUF_INIT;
	size_t i, n = 0;

	for (i = 0; dbpath && i < NSKIP; i++) {
		sb_reset(&sb);
		sb_addf(&sb, "%s%s", dbpath, suffixes[i]);
		if (!sb.oom && sys_file_id(sb.p, &skip[n].dev, &skip[n].ino) == 0)
			n++;
	}
	sb_free(&sb);
	return n;
}

int prep_walk(struct prep *p, int cross_fs, const struct excl *exclude, const char *dbpath,
	     atomic_int *cancel, struct sl_err *err)
{
	struct walk_skip skip[NSKIP];
	struct walk_opts wo = {.cross_fs = cross_fs, .cancel = cancel, .skip = skip,
			       .exclude = exclude};
	double t;
	size_t i;
	int rc;

	wo.nskip = own_files(dbpath, skip);

	ftab_init(&p->ft);
	t = sys_now();
	for (i = 0; i < p->nroots; i++) {
		rc = walk_root(&p->ft, p->anchors[i], &wo, &p->ws, err);
		if (rc != SL_OK)
			return rc;
	}
	p->walk_s = sys_now() - t;
	return SL_OK;
}

int prep_walk_locate(struct prep *p, int cross_fs, const struct excl *exclude, const char *dbpath,
		atomic_int *cancel, struct sl_err *err)
{
	double t;
	int rc = prep_walk(p, cross_fs, exclude, dbpath, cancel, err);
	if (rc != SL_OK)
		return rc;
	t = sys_now();
	rc = locate_all(&p->ft, &p->devs, &p->ls, cancel, err);
	p->locate_s = sys_now() - t;
	return rc;
}

void prep_free(struct prep *p)
{
	size_t i;
	ftab_free(&p->ft);
	free(p->devs);
	for (i = 0; i < p->nroots; i++) {
		free(p->roots[i]);
		if (p->anchors)
			anchor_free(p->anchors[i]);
	}
	free(p->roots);
	free(p->anchors);
	memset(p, 0, sizeof(*p));
}

void prep_group_fs(const struct prep *p, const struct plan *pl, size_t g, char *buf, size_t cap)
{
	size_t i, used = 0;

	buf[0] = '\0';
	for (i = 0; i < p->ft.ndevs && used + 1 < cap; i++) {
		const struct dev_info *d = &p->devs[i];
		if (pl->dev_group[i] != g)
			continue;
		used += (size_t)snprintf(buf + used, cap - used, "%s%s on %s", used ? ", " : "",
					 d->fstype, d->mount[0] ? d->mount : "?");
		if (used >= cap)
			break;
	}
}

uint64_t prep_random_seed(void)
{
	int64_t ns = sys_wall_ns();
	return (uint64_t)ns * 1000000007ull ^ (uint64_t)sys_pid() ^
	       ((uint64_t)(uintptr_t)&ns << 16);
}

int prep_abs_name(const char *path, struct strbuf *out)
{
	const char *a = strrchr(path, '/'), *b = strrchr(path, '\\');
	const char *sep = a > b ? a : b;
	struct strbuf dir = STRBUF_INIT;
	struct sl_err e;
	int rc;

	if (!sep)
		sb_adds(&dir, ".");
	else
		sb_add(&dir, path, (size_t)(sep - path) + (sep == path));
	rc = dir.oom ? SL_E_NOMEM : walk_canonical(dir.p, out, &e);
	if (rc == SL_OK) {
		if (out->len && out->p[out->len - 1] != '/')
			sb_addc(out, '/');
		sb_adds(out, sep ? sep + 1 : path);
		if (out->oom)
			rc = SL_E_NOMEM;
	}
	sb_free(&dir);
	return rc == SL_OK ? 0 : rc == SL_E_NOMEM ? ENOMEM : e.sys ? e.sys : EACCES;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int prep_files_from(const char *file, const char *dbpath, struct prep *p,
		   struct sl_err *err)
{
	struct strbuf in = STRBUF_INIT;
	char buf[65536];
	size_t got;
	FILE *f = strcmp(file, "-") == 0 ? stdin : sys_fopen(file, "rb");
	int rc;

	if (!f)
		return SL_FAIL(err, SL_E_USAGE, errno, "--files-from %s", file);
	while ((got = fread(buf, 1, sizeof(buf), f)) > 0)
		sb_add(&in, buf, got);
	if (f != stdin)
		fclose(f);
	if (in.oom)
		return SL_FAIL(err, SL_E_NOMEM, 0, "--files-from: out of memory");
	rc = prep_files_list(in.p ? in.p : "", in.len, file, dbpath, p, err);
	sb_free(&in);
	return rc;
}

int prep_files_list(const char *text, size_t text_len, const char *what, const char *dbpath,
		    struct prep *p, struct sl_err *err)
{
	struct walk_skip skip[NSKIP];
	struct strbuf in = STRBUF_INIT, abs = STRBUF_INIT;
	char **list = NULL, *q, *end, sep;
	size_t n = 0, cap = 0, cap_roots = 0, cap_anchors = 0, i, nskip;
	uint32_t dir = FT_NONE;
	double t = sys_now();
	int rc = SL_OK;

	sb_add(&in, text, text_len);
	if (in.oom || !in.p) {
		int oom = in.oom;
		sb_free(&in);
		return oom ? SL_FAIL(err, SL_E_NOMEM, 0, "--files-from: out of memory")
			   : SL_FAIL(err, SL_E_USAGE, 0, "--files-from %s lists no file", what);
	}
	/* NUL-separated when there is any NUL (plan -0), else one per line */
	sep = in.len && memchr(in.p, '\0', in.len) ? '\0' : '\n';
	for (q = in.p, end = in.p + in.len; rc == SL_OK && q && q < end;) {
		char *e = memchr(q, sep, (size_t)(end - q));
		size_t len = e ? (size_t)(e - q) : (size_t)(end - q);
		if (e)
			*e = '\0';
		else
			in.p[in.len] = '\0';
		if (len) {
			sb_reset(&abs);
			if (prep_abs_name(q, &abs) != 0) {
				prep_note(p, "'%s': its folder cannot be accessed; skipped", q);
			} else if (sl_grow(&list, &cap, n + 1, sizeof(*list)) != 0 ||
				   !(list[n] = strdup(abs.p))) {
				rc = SL_FAIL(err, SL_E_NOMEM, 0, "--files-from: out of memory");
			} else {
				n++;
			}
		}
		q = e ? e + 1 : NULL;
	}
	sb_free(&in);
	sb_free(&abs);
	/* folder by folder, each file once; the plan decides the reading order */
	if (n)
		qsort(list, n, sizeof(*list), cmp_str);
	nskip = own_files(dbpath, skip);
	ftab_init(&p->ft);
	for (i = 0; rc == SL_OK && i < n; i++) {
		char *slash = strrchr(list[i], '/');
		size_t dlen = (size_t)(slash - list[i]) + (slash == list[i]);
		const struct anchor *at;
		struct ext_result er;
		struct sl_err fe;
		uint64_t dev, ino = 0;
		uint16_t devidx;
		size_t k;
		int skipped = 0;

		if (i > 0 && strcmp(list[i], list[i - 1]) == 0)
			continue;
		if (dir == FT_NONE || strlen(p->roots[p->nroots - 1]) != dlen ||
		    strncmp(p->roots[p->nroots - 1], list[i], dlen) != 0) {
			if (sl_grow(&p->roots, &cap_roots, p->nroots + 2, sizeof(*p->roots)) != 0 ||
			    sl_grow(&p->anchors, &cap_anchors, p->nroots + 2, sizeof(*p->anchors)) != 0 ||
			    !(p->roots[p->nroots] = malloc(dlen + 1))) {
				rc = SL_FAIL(err, SL_E_NOMEM, 0, "--files-from: out of memory");
				break;
			}
			memcpy(p->roots[p->nroots], list[i], dlen);
			p->roots[p->nroots][dlen] = '\0';
			p->anchors[p->nroots] = NULL;
			p->nroots++;
			rc = ftab_add_dir(&p->ft, FT_NONE, list[i], dlen, &dir, err);
			if (rc != SL_OK)
				break;
			p->ws.dirs++;
			/* the folder is resolved once, now; its files are opened
			 * relative to it from here on (anchor.h) */
			rc = ftab_anchor_root(&p->ft, dir, 0, &fe);
			if (rc == SL_E_NOMEM) {
				*err = fe;
				break;
			}
			if (rc != SL_OK)
				prep_note(p, "%s; the files listed in it are skipped", fe.msg);
			else
				p->anchors[p->nroots - 1] =
					anchor_ref((struct anchor *)ftab_at_dir(&p->ft, dir));
			rc = SL_OK;
		}
		at = ftab_at_dir(&p->ft, dir);
		if (!at)
			continue;
		/* a file that is not there (or not a file) is recorded as such by
		 * the stat pass; its device is then the one of its folder */
		dev = anchor_dev(at);
		if (ext_stat(at, slash + 1, &er, &fe) == SL_OK) {
			dev = er.dev;
			ino = er.ino;
			for (k = 0; k < nskip; k++)
				skipped |= skip[k].dev == dev && skip[k].ino == ino;
		}
		if (skipped) {
			p->ws.excluded++;
			continue;
		}
		rc = ftab_dev(&p->ft, dev, &devidx, err);
		if (rc == SL_OK)
			rc = ftab_add_file(&p->ft, dir, slash + 1, strlen(slash + 1), ino, devidx, NULL,
					   err);
		if (rc == SL_OK)
			p->ws.files++;
	}
	for (i = 0; i < n; i++)
		free(list[i]);
	free(list);
	p->walk_s = sys_now() - t;
	if (rc == SL_OK && p->ws.files == 0)
		rc = SL_FAIL(err, SL_E_USAGE, 0, "--files-from %s lists no file", what);
	return rc;
}


int prep_plan(struct prep *p, int order, uint64_t seed, size_t mem_budget,
	      struct plan *pl, struct sl_err *err)
{
	struct plan_mem m;
	size_t joined;
	int rc = ftab_join_links(&p->ft, &joined, err);

	if (rc == SL_OK)
		rc = plan_build(&p->ft, p->devs, order, seed, pl, err);

	if (rc != SL_OK)
		return rc;
	px_mem(mem_budget, &m);
	return plan_schedule(pl, &p->ft, p->devs, &m, err);
}
