#include "tools/cli.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/sys.h"
#include "db/db.h"
#include "indexer/pipeline.h"

int cli_roots(const char *cmd, char *const *argv, int argc, int skip_missing, struct prep *p)
{
	struct strbuf sb = STRBUF_INIT;
	struct sl_err e;
	int i;

	p->roots = calloc((size_t)argc + 1, sizeof(*p->roots));
	if (!p->roots) {
		fprintf(stderr, "seekless %s: out of memory\n", cmd);
		return SL_E_NOMEM;
	}
	for (i = 0; i < argc; i++) {
		if (walk_canonical(argv[i], &sb, &e) != SL_OK) {
			if (e.code == SL_E_NOMEM) {
				cli_error(cmd, &e);
				sb_free(&sb);
				return SL_E_NOMEM;
			}
			if (skip_missing) {
				fprintf(stderr, "seekless %s: %s; skipped (its records are kept)\n",
					cmd, e.msg);
				continue;
			}
			cli_usage_error(cmd, "%s", e.msg);
			sb_free(&sb);
			return SL_E_USAGE;
		}
		p->roots[p->nroots++] = strdup(sb.p);
		if (!p->roots[p->nroots - 1]) {
			fprintf(stderr, "seekless %s: out of memory\n", cmd);
			sb_free(&sb);
			return SL_E_NOMEM;
		}
	}
	sb_free(&sb);
	if (p->nroots == 0) {
		fprintf(stderr, "seekless %s: none of the roots can be accessed\n", cmd);
		return SL_E_IO;
	}
	return SL_OK;
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

int cli_walk(struct prep *p, int cross_fs, const struct excl *exclude, const char *dbpath,
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
		rc = walk_root(&p->ft, p->roots[i], &wo, &p->ws, err);
		if (rc != SL_OK)
			return rc;
	}
	p->walk_s = sys_now() - t;
	return SL_OK;
}

int cli_prepare(struct prep *p, int cross_fs, const struct excl *exclude, const char *dbpath,
		atomic_int *cancel, struct sl_err *err)
{
	double t;
	int rc = cli_walk(p, cross_fs, exclude, dbpath, cancel, err);
	if (rc != SL_OK)
		return rc;
	t = sys_now();
	rc = locate_all(&p->ft, &p->devs, &p->ls, cancel, err);
	p->locate_s = sys_now() - t;
	return rc;
}

void cli_prep_free(struct prep *p)
{
	size_t i;
	ftab_free(&p->ft);
	free(p->devs);
	for (i = 0; i < p->nroots; i++)
		free(p->roots[i]);
	free(p->roots);
	memset(p, 0, sizeof(*p));
}

int cli_config(const char *cmd, const char *config_path, struct cfg *c)
{
	struct sl_err e;
	int rc = cfg_load(c, config_path, &e);
	if (rc != SL_OK)
		cli_error(cmd, &e);
	return rc;
}

int cli_db_path(const char *cmd, const char *opt, const struct cfg *c, struct strbuf *out)
{
	const char *p = opt ? opt : c ? c->db : NULL;
	int e = 0;

	if (p) {
		sb_reset(out);
		sb_adds(out, p);
		e = out->oom ? ENOMEM : 0;
	} else {
		e = sys_default_db_path(out);
	}
	if (e == ENOMEM) {
		fprintf(stderr, "seekless %s: out of memory\n", cmd);
		return EXIT_FATAL;
	}
	if (e) {
		cli_usage_error(cmd, "no --db given and no home directory for the default");
		return EXIT_USAGE;
	}
	return EXIT_OK;
}

int cli_excludes(const char *cmd, const struct cfg *c, char *const *extra, size_t nextra,
		 struct excl *out)
{
	struct sl_err e;
	size_t i;
	int rc = SL_OK;

	memset(out, 0, sizeof(*out));
	/* before the first pattern: it decides whether '\' quotes */
	out->fold_case = sys_names_fold_case();
	for (i = 0; rc == SL_OK && i < c->nexcludes; i++)
		rc = ex_add(out, c->excludes[i], &e);
	for (i = 0; rc == SL_OK && i < nextra; i++)
		rc = ex_add(out, extra[i], &e);
	if (rc != SL_OK) {
		if (rc == SL_E_USAGE)
			cli_usage_error(cmd, "%s", e.msg);
		else
			cli_error(cmd, &e);
		ex_free(out);
	}
	return rc;
}

int cli_roots_or_config(const char *cmd, char *const *argv, int argc, const struct cfg *c,
			struct prep *p)
{
	if (argc > 0)
		return cli_roots(cmd, argv, argc, 0, p);
	if (c->nroots == 0) {
		if (c->read.len)
			cli_usage_error(cmd, "no ROOT given, and none in %s", c->read.p);
		else
			cli_usage_error(cmd, "no ROOT given, and no configuration file names one");
		return SL_E_USAGE;
	}
	return cli_roots(cmd, c->roots, (int)c->nroots, 1, p);
}

int cli_index_path(const char *cmd, const char *dbopt, const char *config_path,
		   struct strbuf *out)
{
	struct cfg c;
	int rc;

	cfg_init(&c);
	if (!dbopt && cli_config(cmd, config_path, &c) != SL_OK) {
		cfg_free(&c);
		return EXIT_USAGE;
	}
	rc = cli_db_path(cmd, dbopt, &c, out);
	cfg_free(&c);
	return rc;
}

void cli_error(const char *cmd, const struct sl_err *e)
{
	const char *dbg = getenv("SEEKLESS_DEBUG");
	fprintf(stderr, "seekless %s: %s", cmd, e->msg[0] ? e->msg : sl_code_name(e->code));
	if (dbg && dbg[0] == '1' && e->file)
		fprintf(stderr, " [%s:%d, %s]", e->file, e->line, sl_code_name(e->code));
	fputc('\n', stderr);
}

void cli_usage_error(const char *cmd, const char *fmt, ...)
{
	va_list ap;
	fprintf(stderr, "seekless %s: ", cmd);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nTry 'seekless %s --help'.\n", cmd);
}

int cli_exit_code(int rc)
{
	if (rc == SL_OK)
		return EXIT_OK;
	if (rc == SL_E_USAGE)
		return EXIT_USAGE;
	if (rc == SL_E_CANCELLED)
		return EXIT_INTERRUPTED;
	if (sl_code_is_fatal(rc))
		return EXIT_FATAL;
	return EXIT_FILE_ERRORS;
}

int cli_parse_size(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v = strtoull(s, &end, 10);
	uint64_t mult = 1;

	if (end == s)
		return -1;
	switch (*end) {
	case 'k': case 'K': mult = 1024; end++; break;
	case 'm': case 'M': mult = 1024 * 1024; end++; break;
	case 'g': case 'G': mult = 1024ull * 1024 * 1024; end++; break;
	default: break;
	}
	if (*end == 'i' || *end == 'B')
		end++;
	if (*end == 'B')
		end++;
	if (*end != '\0' || (mult > 1 && v > UINT64_MAX / mult))
		return -1;
	*out = (uint64_t)v * mult;
	return 0;
}

int cli_parse_long(const char *s, long lo, long hi, long *out)
{
	char *end;
	long v = strtol(s, &end, 10);

	if (*end || v < lo || v > hi)
		return -1;
	*out = v;
	return 0;
}

void cli_progress(void *label, const struct px_progress *p)
{
	double mbs = p->elapsed > 0 ? (double)p->bytes_done / 1e6 / p->elapsed : 0;
	double eta = mbs > 0 ? ((double)(p->bytes_total - p->bytes_done) / 1e6) / mbs : 0;
	fprintf(stderr, "\r[%s] %" PRIu64 "/%" PRIu64 " files, %.1f/%.1f MB, %.1f MB/s, ETA %.0f s   ",
		(const char *)label, p->files_done, p->files_total, (double)p->bytes_done / 1e6,
		(double)p->bytes_total / 1e6, mbs, eta);
}

void cli_fmt_bytes(uint64_t n, char *buf, size_t cap)
{
	if (n >= 1000000000ull)
		snprintf(buf, cap, "%.2f GB", (double)n / 1e9);
	else if (n >= 1000000ull)
		snprintf(buf, cap, "%.1f MB", (double)n / 1e6);
	else if (n >= 1000ull)
		snprintf(buf, cap, "%.1f kB", (double)n / 1e3);
	else
		snprintf(buf, cap, "%llu B", (unsigned long long)n);
}

void cli_group_fs(const struct prep *p, const struct plan *pl, size_t g, char *buf, size_t cap)
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

uint64_t cli_random_seed(void)
{
	int64_t ns = sys_wall_ns();
	return (uint64_t)ns * 1000000007ull ^ (uint64_t)sys_pid() ^
	       ((uint64_t)(uintptr_t)&ns << 16);
}

int cli_abs_name(const char *path, struct strbuf *out)
{
	const char *a = strrchr(path, '/'), *b = strrchr(path, '\\');
	const char *sep = a > b ? a : b;
	struct strbuf dir = STRBUF_INIT;
	int e;

	if (!sep)
		sb_adds(&dir, ".");
	else
		sb_add(&dir, path, (size_t)(sep - path) + (sep == path));
	e = dir.oom ? ENOMEM : sys_abs_path(dir.p, out);
	if (e == 0) {
		if (out->len && out->p[out->len - 1] != '/')
			sb_addc(out, '/');
		sb_adds(out, sep ? sep + 1 : path);
		if (out->oom)
			e = ENOMEM;
	}
	sb_free(&dir);
	return e;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int cli_files_from(const char *cmd, const char *file, const char *dbpath, struct prep *p,
		   struct sl_err *err)
{
	struct walk_skip skip[NSKIP];
	struct strbuf in = STRBUF_INIT, abs = STRBUF_INIT;
	char **list = NULL, *q, *end, sep, buf[65536];
	size_t n = 0, cap = 0, cap_roots = 0, i, got, nskip;
	uint32_t dir = FT_NONE;
	double t = sys_now();
	FILE *f = strcmp(file, "-") == 0 ? stdin : sys_fopen(file, "rb");
	int rc = SL_OK;

	if (!f)
		return SL_FAIL(err, SL_E_USAGE, errno, "--files-from %s", file);
	while ((got = fread(buf, 1, sizeof(buf), f)) > 0)
		sb_add(&in, buf, got);
	if (f != stdin)
		fclose(f);
	if (in.oom)
		return SL_FAIL(err, SL_E_NOMEM, 0, "--files-from: out of memory");
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
			if (cli_abs_name(q, &abs) != 0) {
				fprintf(stderr, "seekless %s: '%s': its folder cannot be accessed; "
					"skipped\n", cmd, q);
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
		uint64_t dev = 0, ino = 0;
		uint16_t devidx;
		size_t k;
		int skipped = 0;

		if (i > 0 && strcmp(list[i], list[i - 1]) == 0)
			continue;
		if (sys_file_id(list[i], &dev, &ino) == 0)
			for (k = 0; k < nskip; k++)
				skipped |= skip[k].dev == dev && skip[k].ino == ino;
		if (skipped) {
			p->ws.excluded++;
			continue;
		}
		if (dir == FT_NONE || strlen(p->roots[p->nroots - 1]) != dlen ||
		    strncmp(p->roots[p->nroots - 1], list[i], dlen) != 0) {
			if (sl_grow(&p->roots, &cap_roots, p->nroots + 2, sizeof(*p->roots)) != 0 ||
			    !(p->roots[p->nroots] = malloc(dlen + 1))) {
				rc = SL_FAIL(err, SL_E_NOMEM, 0, "--files-from: out of memory");
				break;
			}
			memcpy(p->roots[p->nroots], list[i], dlen);
			p->roots[p->nroots][dlen] = '\0';
			p->nroots++;
			rc = ftab_add_dir(&p->ft, FT_NONE, list[i], dlen, &dir, err);
			if (rc != SL_OK)
				break;
			p->ws.dirs++;
		}
		/* a file that is not there (or not a file) is recorded as such by
		 * the stat pass; its device is then the one of its folder */
		if (!dev && sys_file_id(p->roots[p->nroots - 1], &dev, &ino) != 0)
			dev = 0;
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
	if (rc == SL_OK && p->ws.files == 0) {
		fprintf(stderr, "seekless %s: --files-from %s lists no file\n", cmd, file);
		return SL_E_USAGE;
	}
	return rc;
}

int cli_open_index(const char *cmd, const char *dbopt, const char *config_path, struct db **db)
{
	struct strbuf path = STRBUF_INIT;
	struct sl_err e;
	int rc = cli_index_path(cmd, dbopt, config_path, &path);

	*db = NULL;
	if (rc == EXIT_OK && db_open(path.p, 0, db, &e) != SL_OK) {
		cli_error(cmd, &e);
		rc = EXIT_FATAL;
	}
	sb_free(&path);
	return rc;
}
