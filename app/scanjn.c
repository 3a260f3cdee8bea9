/* scanjn.c - see scanjn.h. */
#include "app/scanjn.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/sys.h"

void sj_init(struct scanjn *j)
{
	memset(j, 0, sizeof(*j));
}

void sj_free(struct scanjn *j)
{
	size_t v;

	for (v = 0; v < j->nvols; v++) {
		usn_tally_free(&j->vols[v].t);
		free(j->vols[v].root);
	}
	for (v = 0; v < j->nroots; v++)
		free(j->roots[v].path);
	free(j->vols);
	free(j->roots);
	sb_free(&j->report);
	memset(j, 0, sizeof(*j));
}

/* The file ID of the index's folder, and the volume it is on: our own
 * writes there are not changes. */
static size_t index_folder(const char *dbpath, uint64_t *dev, uint64_t *id)
{
	struct strbuf dir = STRBUF_INIT;
	const char *a, *b, *slash;
	size_t n = 0;

	a = strrchr(dbpath, '/');
	b = strrchr(dbpath, '\\');
	slash = a > b ? a : b;
	if (slash) {
		sb_add(&dir, dbpath, (size_t)(slash - dbpath) + (slash == dbpath));
		if (!dir.oom && sys_file_id(dir.p, dev, id) == 0)
			n = 1;
	}
	sb_free(&dir);
	return n;
}

/* Where a root's position is kept (scanjn.h). */
static int key_of(const struct sj_vol *v, const struct sj_root *r, struct strbuf *key)
{
	sb_reset(key);
	sb_addf(key, "%s|%s", v->now.volume, r->path);
	return key->oom ? -1 : 0;
}

/* Whether the stored positions of the roots on volume vi allow reading its
 * journal, and from where (the oldest of them): 1, or 0 with the reason
 * in the report.  *rc gets a database error. */
static int positions(struct scanjn *j, size_t vi, struct db *db, int64_t *from,
		     struct sl_err *err, int *rc)
{
	struct sj_vol *v = &j->vols[vi];
	struct strbuf key = STRBUF_INIT;
	size_t r;
	int ok = 1;

	*from = INT64_MAX;
	for (r = 0; ok && *rc == SL_OK && r < j->nroots; r++) {
		const struct sj_root *root = &j->roots[r];
		uint64_t id = 0;
		int64_t pos = 0;
		double days = -1;
		int found = 0;

		if (root->vol != vi)
			continue;
		if (key_of(v, root, &key) != 0) {
			*rc = SL_FAIL(err, SL_E_NOMEM, 0, "out of memory");
			break;
		}
		*rc = db_journal_get(db, key.p, &id, &pos, &days, &found, err);
		if (*rc != SL_OK)
			break;
		ok = 0;
		if (!found)
			sb_addf(&j->report, "  journal     %s: no complete scan of %s recorded its "
				"position yet; walked\n", v->now.volume, root->path);
		else if (id != v->now.journal_id)
			sb_addf(&j->report, "  journal     %s: recreated since the last scan; walked\n",
				v->now.volume);
		else if (days < 0)
			sb_addf(&j->report, "  journal     %s: when %s was last walked is not known, "
				"and a journal misses what other systems write; walked\n",
				v->now.volume, root->path);
		else if (days > SJ_WALK_DAYS)
			sb_addf(&j->report, "  journal     %s: %s was last walked %.0f days ago, and a "
				"journal misses what other systems write; walked (every %d days)\n",
				v->now.volume, root->path, days, SJ_WALK_DAYS);
		else
			ok = 1;
		if (ok && pos < *from)
			*from = pos;
	}
	sb_free(&key);
	return ok && *rc == SL_OK;
}

static void judge(struct scanjn *j, size_t vi, struct db *db, int full, const uint64_t *ignore,
		  size_t nignore, struct sl_err *err, int *rc)
{
	struct sj_vol *v = &j->vols[vi];
	char why[256];
	int64_t from;
	int e;

	v->verdict = SJ_WALK;
	*rc = SL_OK;
	if (full) {
		sb_addf(&j->report, "  journal     %s: --full; walked\n", v->now.volume);
		return;
	}
	if (!positions(j, vi, db, &from, err, rc))
		return;
	v->t.max_ids = SJ_MAX_LISTED;
	e = jn_read(v->root, &v->now, from, ignore, nignore, &v->t, why, sizeof(why));
	if (e) {
		sb_addf(&j->report, "  journal     %s: %s; walked\n", v->now.volume, why);
	} else if (usn_quiet(&v->t)) {
		v->verdict = SJ_SKIP;
		sb_addf(&j->report, "  journal     %s: no change since the last scan (%" PRIu64
			" records, %" PRIu64 " of them the index's own, %" PRIu64
			" of files not on this disk): not walked\n",
			v->now.volume, v->t.records, v->t.ignored, v->t.remote);
	} else if (usn_listable(&v->t)) {
		usn_ids_unique(&v->t);
		v->verdict = SJ_LIST;
		sb_addf(&j->report, "  journal     %s: only %zu files created or written since the "
			"last scan: read from the journal's list", v->now.volume, v->t.nids);
	} else {
		sb_addf(&j->report, "  journal     %s: changed since the last scan (%" PRIu64
			" renamed, %" PRIu64 " deleted%s); walked\n", v->now.volume, v->t.renamed,
			v->t.deleted, v->t.overflow ? ", more files than are worth listing" : "");
	}
	if (v->verdict != SJ_LIST)
		usn_tally_free(&v->t);
}

int sj_decide(struct scanjn *j, struct db *db, struct prep *p, const char *dbpath, int full,
	      struct sl_err *err)
{
	uint64_t ignore[1], index_dev = 0;
	size_t nignore, i, v, kept;
	long *on;
	int rc = SL_OK, any_walk = 0, any_list = 0;
	char why[256];

	if (!p->nroots)
		return SL_OK;
	nignore = index_folder(dbpath, &index_dev, &ignore[0]);
	on = malloc(p->nroots * sizeof(*on));
	if (!on)
		return SL_FAIL(err, SL_E_NOMEM, 0, "out of memory");
	for (i = 0; i < p->nroots; i++) {
		struct jn_state now;
		on[i] = -1;
		if (jn_query(p->roots[i], &now, why, sizeof(why)) != 0) {
			if (why[0])
				sb_addf(&j->report, "  journal     %s: %s; walked\n", p->roots[i], why);
			continue;
		}
		for (v = 0; v < j->nvols; v++)
			if (strcmp(j->vols[v].now.volume, now.volume) == 0)
				break;
		if (v == j->nvols) {
			if (sl_grow(&j->vols, &j->cap, j->nvols + 1, sizeof(*j->vols)) != 0) {
				free(on);
				return SL_FAIL(err, SL_E_NOMEM, 0, "out of memory");
			}
			memset(&j->vols[v], 0, sizeof(*j->vols));
			j->vols[v].now = now;
			j->vols[v].root = strdup(p->roots[i]);
			j->nvols++;
			if (!j->vols[v].root) {
				free(on);
				return SL_FAIL(err, SL_E_NOMEM, 0, "out of memory");
			}
		}
		on[i] = (long)v;
		if (sl_grow(&j->roots, &j->rcap, j->nroots + 1, sizeof(*j->roots)) != 0 ||
		    !(j->roots[j->nroots].path = strdup(p->roots[i]))) {
			free(on);
			return SL_FAIL(err, SL_E_NOMEM, 0, "out of memory");
		}
		j->roots[j->nroots].vol = v;
		j->roots[j->nroots++].failed = 0;
	}
	/* File IDs are unique on one volume only: a photo folder elsewhere may
	 * carry the index folder's ID, and its changes are not ours */
	for (v = 0; v < j->nvols && rc == SL_OK; v++) {
		uint64_t dev, ino;
		int here = nignore && sys_file_id(j->vols[v].root, &dev, &ino) == 0 &&
			   dev == index_dev;
		judge(j, v, db, full, ignore, here ? nignore : 0, err, &rc);
	}
	if (rc != SL_OK) {
		free(on);
		return rc;
	}
	for (i = 0; i < p->nroots; i++) {
		if (on[i] < 0 || j->vols[on[i]].verdict == SJ_WALK)
			any_walk = 1;
		else if (j->vols[on[i]].verdict == SJ_LIST)
			any_list = 1;
	}
	/* listing and walking do not mix (scanjn.h): list only alone */
	for (v = 0; v < j->nvols; v++) {
		if (j->vols[v].verdict != SJ_LIST)
			continue;
		sb_adds(&j->report, any_walk ? "; walked with the other roots instead\n" : "\n");
		if (any_walk) {
			j->vols[v].verdict = SJ_WALK;
			usn_tally_free(&j->vols[v].t);
		}
	}
	j->listed = any_list && !any_walk;
	/* take the quiet volumes' roots out */
	for (i = 0, kept = 0; i < p->nroots; i++) {
		if (on[i] >= 0 && j->vols[on[i]].verdict == SJ_SKIP) {
			free(p->roots[i]);
			anchor_free(p->anchors[i]);
		} else {
			p->anchors[kept] = p->anchors[i];
			p->roots[kept++] = p->roots[i];
		}
	}
	p->nroots = kept;
	free(on);
	return SL_OK;
}

struct list_ctx {
	struct prep *p;
	const struct excl *ex;
	uint32_t *root_dir; /* per root: its ftab directory, FT_NONE until used */
	struct sl_err *err;
	int rc;
};

/* Whether the walk would have left path out: the file itself, or any
 * folder between the root and it, matching a pattern. */
static int excluded(const struct excl *ex, const char *path, const char *rel, const char *base)
{
	struct strbuf sb = STRBUF_INIT;
	const char *c = rel, *slash;
	int hit = 0;

	if (!ex || !ex->n)
		return 0;
	while (!hit && (slash = strchr(c, '/')) != NULL) {
		struct strbuf name = STRBUF_INIT;
		sb_reset(&sb);
		sb_add(&sb, path, (size_t)(slash - path));
		sb_add(&name, c, (size_t)(slash - c));
		hit = !sb.oom && !name.oom && name.p && ex_match(ex, sb.p, name.p);
		sb_free(&name);
		c = slash + 1;
	}
	sb_free(&sb);
	return hit || ex_match(ex, path, base);
}

/* One listed file: under which root, excluded or not, into the table. */
static int take(const char *path, uint64_t id, void *ctxp)
{
	struct list_ctx *c = ctxp;
	struct prep *p = c->p;
	const char *base = strrchr(path, '/');
	size_t i;

	base = base ? base + 1 : path;
	for (i = 0; i < p->nroots; i++) {
		const char *rel;
		uint64_t dev, ino;
		uint16_t devidx;
		size_t n;

		/* as the platform compares names: the journal names files in
		 * the disk's case, which a root need not share */
		if (sys_path_prefix(path, p->roots[i], &n) != 0) {
			c->rc = SL_FAIL(c->err, SL_E_NOMEM, 0, "out of memory");
			return 1;
		}
		if (!n)
			continue;
		rel = path + n;
		if (*rel == '/')
			rel++;
		if (!*rel)
			continue; /* the root itself, not a file under it */
		if (excluded(c->ex, path, rel, base)) {
			p->ws.excl_files++;
			return 0;
		}
		if (sys_file_id(p->roots[i], &dev, &ino) != 0)
			return 0;
		c->rc = ftab_dev(&p->ft, dev, &devidx, c->err);
		if (c->rc == SL_OK && c->root_dir[i] == FT_NONE) {
			c->rc = ftab_add_dir(&p->ft, FT_NONE, p->roots[i], strlen(p->roots[i]),
					     &c->root_dir[i], c->err);
			if (c->rc == SL_OK)
				c->rc = ftab_anchor_root(&p->ft, c->root_dir[i], 0, c->err);
		}
		if (c->rc == SL_OK)
			c->rc = ftab_add_path(&p->ft, c->root_dir[i], rel, id, devidx, NULL, c->err);
		if (c->rc != SL_OK)
			return 1;
		p->ws.files++;
		return 0;
	}
	return 0; /* elsewhere on the volume: not ours to index */
}

int sj_list(struct scanjn *j, struct prep *p, const struct excl *ex, struct sl_err *err)
{
	struct list_ctx c = {p, ex, NULL, err, SL_OK};
	double t = sys_now();
	char why[256];
	size_t i, v;

	ftab_init(&p->ft);
	c.root_dir = malloc((p->nroots ? p->nroots : 1) * sizeof(*c.root_dir));
	if (!c.root_dir)
		return SL_FAIL(err, SL_E_NOMEM, 0, "out of memory");
	for (i = 0; i < p->nroots; i++)
		c.root_dir[i] = FT_NONE;
	for (v = 0; v < j->nvols && c.rc == SL_OK; v++) {
		struct sj_vol *vol = &j->vols[v];
		int e;
		if (vol->verdict != SJ_LIST)
			continue;
		e = jn_paths(vol->root, vol->t.ids, vol->t.nids, take, &c, why, sizeof(why));
		if (e && c.rc == SL_OK) {
			/* the list cannot be trusted whole: walk after all */
			sb_addf(&j->report, "  journal     %s: %s; walking instead\n",
				vol->now.volume, why);
			j->listed = 0;
			break;
		}
	}
	for (v = 0; !j->listed && v < j->nvols; v++)
		if (j->vols[v].verdict == SJ_LIST)
			j->vols[v].verdict = SJ_WALK; /* what sj_store must know */
	free(c.root_dir);
	if (!j->listed) {
		ftab_free(&p->ft);
		memset(&p->ws, 0, sizeof(p->ws));
	}
	p->walk_s = sys_now() - t;
	return c.rc;
}

void sj_failed(struct scanjn *j, const char *path)
{
	size_t r, n;

	for (r = 0; r < j->nroots; r++)
		if (sys_path_prefix(path, j->roots[r].path, &n) != 0 || n > 0)
			j->roots[r].failed = 1; /* out of memory: the safe side */
}

void sj_store(struct scanjn *j, struct db *db, const struct prep *p)
{
	struct strbuf key = STRBUF_INIT;
	struct sl_err e;
	size_t r, v;
	int rc;

	for (r = 0; r < j->nroots; r++) {
		const struct sj_root *root = &j->roots[r];
		const struct sj_vol *vol = &j->vols[root->vol];

		if (key_of(vol, root, &key) != 0) {
			prep_note(p, "out of memory: the journal position of %s is not stored",
				  root->path);
			continue;
		}
		if (!root->failed) {
			rc = db_journal_put(db, key.p, vol->now.journal_id, vol->now.next_usn,
					    vol->verdict == SJ_WALK, &e);
		} else if (vol->verdict == SJ_LIST) {
			sb_addf(&j->report, "  journal     %s: a file listed under %s was not read: "
				"the next scan reads the journal from the same point\n",
				vol->now.volume, root->path);
			continue;
		} else {
			rc = db_journal_forget(db, key.p, &e);
			sb_addf(&j->report, "  journal     %s: a folder or file under %s was not "
				"read: the next scan walks it\n", vol->now.volume, root->path);
		}
		if (rc != SL_OK)
			prep_note(p, "%s", e.msg);
	}
	/* positions kept per volume before they were kept per root: never
	 * read again */
	for (v = 0; v < j->nvols; v++)
		db_journal_forget(db, j->vols[v].now.volume, &e);
	sb_free(&key);
}
