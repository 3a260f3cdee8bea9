/* config.c - key = value files (config.h). */
#include "app/config.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/parse.h"
#include "common/sys.h"
#include "scanner/exclude.h"
#include "scanner/plan.h"

void cfg_init(struct cfg *c)
{
	memset(c, 0, sizeof(*c));
	c->background = -1;
	c->order = -1;
	c->phash = -1;
	c->phash_now = -1;
	c->quick = -1;
	c->cross_fs = -1;
	c->trust_mtime = -1;
}

static void free_list(char **v, size_t n)
{
	size_t i;
	for (i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

void cfg_free(struct cfg *c)
{
	if (!c)
		return;
	free_list(c->roots, c->nroots);
	free_list(c->root_from, c->nroots);
	free_list(c->excludes, c->nexcludes);
	free(c->db);
	free(c->schedule);
	free(c->report);
	sb_free(&c->read);
	cfg_init(c);
}

static char *trim(char *s)
{
	char *e;
	while (*s == ' ' || *s == '\t')
		s++;
	e = s + strlen(s);
	while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r' || e[-1] == '\n'))
		*--e = '\0';
	return s;
}

static int yes_no(const char *v)
{
	static const char *const yes[] = {"yes", "true", "on", "1"};
	static const char *const no[] = {"no", "false", "off", "0"};
	size_t i;
	for (i = 0; i < 4; i++) {
		if (strcmp(v, yes[i]) == 0)
			return 1;
		if (strcmp(v, no[i]) == 0)
			return 0;
	}
	return -1;
}

/* "~/x" -> "$HOME/x"; other values copied.  NULL when out of memory or no
 * home is known for a "~/" value. */
static char *expand(const char *v)
{
	struct strbuf sb = STRBUF_INIT;
	if (v[0] == '~' && (v[1] == '/' || v[1] == '\0')) {
		const char *home = sys_home();
		if (!home)
			return NULL;
		sb_addf(&sb, "%s%s", home, v + 1);
	} else {
		sb_adds(&sb, v);
	}
	if (sb.oom) {
		sb_free(&sb);
		return NULL;
	}
	return sb.p;
}

static int push(char ***v, size_t *n, size_t *cap, char *s)
{
	if (!s || sl_grow(v, cap, *n + 1, sizeof(**v)) != 0) {
		free(s);
		return -1;
	}
	(*v)[(*n)++] = s;
	return 0;
}

#define BAD(...) SL_FAIL(err, SL_E_USAGE, 0, __VA_ARGS__)

static int set_key(struct cfg *c, const char *key, const char *val, const char *where,
		   int *replaced_roots, int *replaced_excl, struct sl_err *err)
{
	size_t n;
	int b;

	if (strcmp(key, "root") == 0) {
		char *p = expand(val);
		if (!p)
			return BAD("%s: root '%s': no home directory to expand '~'", where, val);
		if (p[0] != '/' && !(isalpha((unsigned char)p[0]) && p[1] == ':')) {
			free(p);
			return BAD("%s: root '%s' is not an absolute path", where, val);
		}
		if (!*replaced_roots) {
			free_list(c->roots, c->nroots);
			free_list(c->root_from, c->nroots);
			c->roots = c->root_from = NULL;
			c->nroots = c->cap_roots = c->cap_root_from = 0;
			*replaced_roots = 1;
		}
		n = c->nroots;
		if (push(&c->root_from, &n, &c->cap_root_from, strdup(where)) != 0) {
			free(p);
			return SL_FAIL(err, SL_E_NOMEM, 0, "out of memory");
		}
		if (push(&c->roots, &c->nroots, &c->cap_roots, p) != 0) {
			free(c->root_from[c->nroots]);
			return SL_FAIL(err, SL_E_NOMEM, 0, "out of memory");
		}
	} else if (strcmp(key, "exclude") == 0) {
		struct excl probe = {0};
		struct sl_err pe;
		int rc;
		/* checked as the scan will read it ('\' quotes only on Linux) */
		probe.fold_case = sys_names_fold_case();
		rc = ex_add(&probe, val, &pe);
		ex_free(&probe);
		if (rc != SL_OK)
			return BAD("%s: %s", where, pe.msg);
		if (!*replaced_excl) {
			free_list(c->excludes, c->nexcludes);
			c->excludes = NULL;
			c->nexcludes = c->cap_excludes = 0;
			*replaced_excl = 1;
		}
		if (push(&c->excludes, &c->nexcludes, &c->cap_excludes, strdup(val)) != 0)
			return SL_FAIL(err, SL_E_NOMEM, 0, "out of memory");
	} else if (strcmp(key, "db") == 0) {
		char *p = expand(val);
		if (!p)
			return BAD("%s: db '%s': no home directory to expand '~'", where, val);
		free(c->db);
		c->db = p;
	} else if (strcmp(key, "report") == 0) {
		char *p = expand(val);
		if (!p)
			return BAD("%s: report '%s': no home directory to expand '~'", where, val);
		/* the service writes it from another folder than the user's
		 * (Linux: /, Windows: System32) and opens only its folder to it */
		if (p[0] != '/' && !(isalpha((unsigned char)p[0]) && p[1] == ':')) {
			free(p);
			return BAD("%s: report '%s' is not an absolute path", where, val);
		}
		free(c->report);
		c->report = p;
	} else if (strcmp(key, "schedule") == 0) {
		free(c->schedule);
		c->schedule = strdup(val);
		if (!c->schedule)
			return SL_FAIL(err, SL_E_NOMEM, 0, "out of memory");
	} else if (strcmp(key, "background") == 0 || strcmp(key, "phash") == 0 ||
		   strcmp(key, "phash_now") == 0 || strcmp(key, "cross_fs") == 0 ||
		   strcmp(key, "trust_mtime") == 0 || strcmp(key, "quick") == 0) {
		if ((b = yes_no(val)) < 0)
			return BAD("%s: %s wants yes or no, not '%s'", where, key, val);
		if (strcmp(key, "background") == 0)
			c->background = b;
		else if (strcmp(key, "phash") == 0)
			c->phash = b;
		else if (strcmp(key, "phash_now") == 0)
			c->phash_now = b;
		else if (strcmp(key, "trust_mtime") == 0)
			c->trust_mtime = b;
		else if (strcmp(key, "quick") == 0)
			c->quick = b;
		else
			c->cross_fs = b;
	} else if (strcmp(key, "order") == 0) {
		if (plan_order_parse(val, &c->order) != 0)
			return BAD("%s: unknown order '%s'", where, val);
	} else if (strcmp(key, "jobs") == 0) {
		char *end;
		long j = strtol(val, &end, 10);
		if (*end || j < 1 || j > 256)
			return BAD("%s: jobs wants a number from 1 to 256, not '%s'", where, val);
		c->jobs = (int)j;
	} else if (strcmp(key, "mem") == 0) {
		if (parse_size(val, &c->mem) != 0 || c->mem < (1u << 20))
			return BAD("%s: mem wants a size of at least 1M, not '%s'", where, val);
	} else {
		return BAD("%s: unknown setting '%s'", where, key);
	}
	return SL_OK;
}

int cfg_read_file(struct cfg *c, const char *path, int missing_ok, struct sl_err *err)
{
	char line[4096], where[4200];
	int lineno = 0, rc = SL_OK, replaced_roots = 0, replaced_excl = 0;
	FILE *f = sys_fopen(path, "r");

	if (!f) {
		if (missing_ok && errno == ENOENT)
			return SL_OK;
		return SL_FAIL(err, errno == ENOENT ? SL_E_USAGE : SL_E_IO, errno,
			       "configuration '%s'", path);
	}
	while (rc == SL_OK && fgets(line, sizeof(line), f)) {
		char *s, *eq, *key, *val;
		size_t n;
		lineno++;
		snprintf(where, sizeof(where), "%s:%d", path, lineno);
		n = strlen(line);
		if (n == sizeof(line) - 1 && line[n - 1] != '\n') {
			rc = BAD("%s: line too long", where);
			break;
		}
		s = trim(line);
		if (!*s || *s == '#')
			continue;
		eq = strchr(s, '=');
		if (!eq) {
			rc = BAD("%s: expected 'key = value', got '%s'", where, s);
			break;
		}
		*eq = '\0';
		key = trim(s);
		val = trim(eq + 1);
		n = strlen(val);
		if (n >= 2 && val[0] == '"' && val[n - 1] == '"') {
			val[n - 1] = '\0';
			val++;
		}
		if (!*val) {
			rc = BAD("%s: '%s' has no value", where, key);
			break;
		}
		rc = set_key(c, key, val, where, &replaced_roots, &replaced_excl, err);
	}
	if (rc == SL_OK && ferror(f))
		rc = SL_FAIL(err, SL_E_IO, errno, "read configuration '%s'", path);
	fclose(f);
	if (rc == SL_OK) {
		sb_addf(&c->read, "%s%s", c->read.len ? ", " : "", path);
		if (c->read.oom)
			rc = SL_FAIL(err, SL_E_NOMEM, 0, "out of memory");
	}
	return rc;
}

int cfg_load(struct cfg *c, const char *path, struct sl_err *err)
{
	struct strbuf p = STRBUF_INIT;
	int rc, i;

	if (path)
		return cfg_read_file(c, path, 0, err);
	for (i = 1, rc = SL_OK; i >= 0 && rc == SL_OK; i--) {
		if (sys_config_path(i, &p) != 0)
			continue;
		rc = cfg_read_file(c, p.p, 1, err);
	}
	sb_free(&p);
	return rc;
}

/* The key of a `key = value` line, or "" for comments and blank lines. */
static void line_key(const char *line, char *key, size_t cap)
{
	size_t n = 0;

	while (*line == ' ' || *line == '\t')
		line++;
	while (n + 1 < cap && (isalnum((unsigned char)*line) || *line == '_'))
		key[n++] = *line++;
	key[n] = '\0';
	while (*line == ' ' || *line == '\t')
		line++;
	if (*line != '=')
		key[0] = '\0';
}

static void put_setting(struct strbuf *sb, const char *key, const char *val)
{
	size_t n = strlen(val);
	int quote = n && (isspace((unsigned char)val[0]) || isspace((unsigned char)val[n - 1]));
	sb_addf(sb, quote ? "%s = \"%s\"\n" : "%s = %s\n", key, val);
}

/* Replace the file at path (and make its folder) with text. */
static int write_whole(const char *path, const struct strbuf *text, struct sl_err *err)
{
	int rc = SL_OK, e = sys_mkdir_parents(path);
	FILE *f = e ? NULL : sys_fopen(path, "w");

	if (!f)
		return SL_FAIL(err, SL_E_IO, e ? e : errno, "write %s", path);
	if (text->len && fwrite(text->p, 1, text->len, f) != text->len)
		rc = SL_FAIL(err, SL_E_IO, errno, "write %s", path);
	if (fclose(f) != 0 && rc == SL_OK)
		rc = SL_FAIL(err, SL_E_IO, errno, "write %s", path);
	return rc;
}

#define CFG_HEADER "# seekless configuration (docs/usage.md)\n"

int cfg_create_file(const char *path, const char *sample, struct sl_err *err)
{
	struct strbuf out = STRBUF_INIT;
	char buf[4096];
	FILE *f = sample ? sys_fopen(sample, "r") : NULL;
	size_t n;
	int rc;

	if (!f)
		sb_adds(&out, CFG_HEADER);
	while (f && (n = fread(buf, 1, sizeof(buf), f)) > 0)
		sb_add(&out, buf, n);
	if (f && ferror(f)) {
		rc = SL_FAIL(err, SL_E_IO, errno, "read %s", sample);
		fclose(f);
		sb_free(&out);
		return rc;
	}
	if (f)
		fclose(f);
	rc = out.oom ? SL_FAIL(err, SL_E_NOMEM, 0, "out of memory") : write_whole(path, &out, err);
	sb_free(&out);
	return rc;
}

int cfg_update_file(const char *path, char *const *roots, size_t nroots, const char *schedule,
		    const char *db, struct sl_err *err)
{
	struct strbuf out = STRBUF_INIT;
	char line[4096], key[32];
	FILE *f = sys_fopen(path, "r");
	size_t i;
	int rc;

	if (!f && errno != ENOENT)
		return SL_FAIL(err, SL_E_IO, errno, "read %s", path);
	if (!f)
		sb_adds(&out, CFG_HEADER);
	while (f && fgets(line, sizeof(line), f)) {
		line_key(line, key, sizeof(key));
		if ((nroots && strcmp(key, "root") == 0) || (schedule && strcmp(key, "schedule") == 0) ||
		    (db && strcmp(key, "db") == 0))
			continue;
		sb_adds(&out, line);
		if (out.len && out.p[out.len - 1] != '\n')
			sb_addc(&out, '\n');
	}
	if (f)
		fclose(f);
	for (i = 0; i < nroots; i++)
		put_setting(&out, "root", roots[i]);
	if (schedule)
		put_setting(&out, "schedule", schedule);
	if (db)
		put_setting(&out, "db", db);
	rc = out.oom ? SL_FAIL(err, SL_E_NOMEM, 0, "out of memory") : write_whole(path, &out, err);
	sb_free(&out);
	return rc;
}

int cfg_db_path(const struct cfg *c, const char *opt, struct strbuf *out, struct sl_err *err)
{
	const char *p = opt ? opt : c->db;
	int e;

	sb_reset(out);
	if (p) {
		sb_adds(out, p);
		e = out->oom ? ENOMEM : 0;
	} else {
		e = sys_default_db_path(out);
	}
	if (e == ENOMEM)
		return SL_FAIL(err, SL_E_NOMEM, 0, "out of memory");
	if (e)
		return SL_FAIL(err, SL_E_USAGE, 0,
			       "no --db given and no home directory for the default");
	return SL_OK;
}
