#include "tools/cli.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/sys.h"

int cli_roots(const char *cmd, char *const *argv, int argc, int skip_missing, struct prep *p)
{
	struct strbuf sb = STRBUF_INIT;
	struct sl_err e;
	int i;

	p->roots = calloc((size_t)argc + 1, sizeof(*p->roots));
	if (!p->roots)
		return SL_E_NOMEM;
	for (i = 0; i < argc; i++) {
		if (walk_canonical(argv[i], &sb, &e) != SL_OK) {
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

int cli_walk(struct prep *p, int cross_fs, const struct excl *exclude, const char *dbpath,
	     atomic_int *cancel, struct sl_err *err)
{
	static const char *const suffixes[] = {"", "-wal", "-shm", "-journal", ".lock"};
	struct walk_skip skip[5];
	struct walk_opts wo = {.cross_fs = cross_fs, .cancel = cancel, .skip = skip,
			       .exclude = exclude};
	struct strbuf sb = STRBUF_INIT;
	double t;
	size_t i;
	int rc;

	/* The index must not index itself: it changes while being read. */
	for (i = 0; dbpath && i < sizeof(suffixes) / sizeof(suffixes[0]); i++) {
		sb_reset(&sb);
		sb_addf(&sb, "%s%s", dbpath, suffixes[i]);
		if (!sb.oom && sys_file_id(sb.p, &skip[wo.nskip].dev, &skip[wo.nskip].ino) == 0)
			wo.nskip++;
	}
	sb_free(&sb);

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

int cli_db_path(const char *opt, const struct cfg *c, struct strbuf *out)
{
	const char *p = opt ? opt : c ? c->db : NULL;
	if (p) {
		sb_reset(out);
		sb_adds(out, p);
		return out->oom ? -1 : 0;
	}
	return sys_default_db_path(out);
}

int cli_excludes(const char *cmd, const struct cfg *c, char *const *extra, size_t nextra,
		 struct excl *out)
{
	struct sl_err e;
	size_t i;
	int rc = SL_OK;

	memset(out, 0, sizeof(*out));
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
	rc = cli_db_path(dbopt, &c, out);
	cfg_free(&c);
	if (rc != 0) {
		cli_usage_error(cmd, "no --db given and no home directory for the default");
		return EXIT_USAGE;
	}
	return EXIT_OK;
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
