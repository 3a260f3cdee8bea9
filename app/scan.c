/* scan.c - the scan's wiring (scan.h): settings, then the phases in order,
 * each one returning a status the next one checks. */
#include "app/scan.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app/scanjn.h"
#include "common/confine.h"
#include "common/sys.h"
#include "scanner/device.h"
#include "scanner/extents.h"

static int excludes(const struct scan_args *a, struct scan_settings *s, struct sl_err *err)
{
	size_t i;
	int rc = SL_OK;

	/* before the first pattern: it decides whether '\' quotes */
	s->ex.fold_case = sys_names_fold_case();
	for (i = 0; rc == SL_OK && i < s->cfg.nexcludes; i++)
		rc = ex_add(&s->ex, s->cfg.excludes[i], err);
	for (i = 0; rc == SL_OK && i < a->nexcludes; i++)
		rc = ex_add(&s->ex, a->excludes[i], err);
	return rc;
}

/* The roots given, else the configuration's: then a missing one is
 * skipped, not an error (a drive not plugged in), unless none is left. */
static int roots(const struct scan_args *a, struct scan_settings *s, struct sl_err *err)
{
	int cross = a->cross_fs >= 0 ? a->cross_fs : s->cfg.cross_fs > 0;

	if (a->files_from || a->files_list)
		return SL_OK;
	if (a->nroots > 0)
		return prep_roots(&s->p, a->roots, a->nroots, NULL, cross, err);
	if (s->cfg.nroots == 0) {
		if (s->cfg.read.len)
			return SL_FAIL(err, SL_E_USAGE, 0, "no ROOT given, and none in %s",
				       s->cfg.read.p);
		return SL_FAIL(err, SL_E_USAGE, 0,
			       "no ROOT given, and no configuration file names one");
	}
	return prep_roots(&s->p, s->cfg.roots, s->cfg.nroots, s->cfg.root_from, cross, err);
}

int scan_configure(const struct scan_args *a, struct scan_settings *s, struct sl_err *err)
{
	const struct cfg *c = &s->cfg;
	int rc;

	memset(s, 0, sizeof(*s));
	cfg_init(&s->cfg);
	s->p.note = a->note;
	s->p.note_ctx = a->ctx;
	rc = cfg_load(&s->cfg, a->config, err);
	if (rc == SL_OK)
		rc = excludes(a, s, err);
	if (rc == SL_OK)
		rc = roots(a, s, err);
	if (rc == SL_OK)
		rc = cfg_db_path(&s->cfg, a->db, &s->dbpath, err);
	if (rc != SL_OK)
		return rc;
	s->order = a->order >= 0 ? a->order : c->order >= 0 ? c->order : PLAN_AUTO;
	s->cross_fs = a->cross_fs >= 0 ? a->cross_fs : c->cross_fs > 0;
	s->po.jobs = a->jobs ? a->jobs : c->jobs;
	s->po.mem_budget = (size_t)(a->mem ? a->mem : c->mem);
	s->po.phash = a->phash >= 0 ? a->phash : c->phash != 0;
	s->po.phash_defer = !(a->phash_now >= 0 ? a->phash_now : c->phash_now > 0);
	s->po.keep_cache = a->keep_cache;
	s->trust_mtime = a->trust_mtime >= 0 ? a->trust_mtime : c->trust_mtime > 0;
	/* the configuration's `background` is about the service's runs; an
	 * interactive scan is in the foreground unless asked */
	s->background = a->background >= 0 ? a->background : a->scheduled && c->background != 0;
	s->scheduled = a->scheduled;
	s->full = a->full;
	/* --full over a configured quick = yes: the command line wins */
	s->quick = a->quick >= 0 ? a->quick : !a->full && c->quick > 0;
	if (s->quick && s->full)
		return SL_FAIL(err, SL_E_USAGE, 0,
			       "--full reads every file whole, --quick in part: one or the other");
	s->po.quick = s->quick;
	s->seed = a->have_seed ? a->seed : prep_random_seed();
	return SL_OK;
}

void scan_settings_free(struct scan_settings *s)
{
	prep_free(&s->p);
	ex_free(&s->ex);
	cfg_free(&s->cfg);
	sb_free(&s->dbpath);
}

/* The index's folder, into dir. */
static int index_dir(const char *dbpath, struct strbuf *dir)
{
	const char *a = strrchr(dbpath, '/'), *b = strrchr(dbpath, '\\');
	const char *slash = a > b ? a : b;

	if (slash)
		sb_add(dir, dbpath, (size_t)(slash - dbpath) + (slash == dbpath));
	else
		sb_adds(dir, ".");
	return dir->oom ? -1 : 0;
}

/* Every scan runs confined (confine.h), from before it opens the index:
 * the roots read-only (and, where a root is on a mergerfs pool, the pool's
 * branches, where its files are read), the device nodes the roots' file
 * systems were mounted from (their superblocks tell their ids), the
 * index's folder read-write, what the walk and the locate pass read.  Not
 * having a sandbox is said, not fatal. */
static void confine_scan(const struct prep *p, const char *dbpath, char *how, size_t cap)
{
	struct strbuf dir = STRBUF_INIT, nodes = STRBUF_INIT;
	struct anchor **held = calloc(p->nroots * (EXT_POOL_MAX_BRANCHES + 1) + 1, sizeof(*held));
	const char **files = NULL;
	struct confine c = {NULL, 0, NULL, NULL, 0};
	size_t i, k, at = 0;

	for (i = 0; held && i < p->nroots; i++) {
		struct ext_pool *pool = NULL;
		struct sl_err e;
		if (!p->anchors[i])
			continue;
		held[c.nroots++] = p->anchors[i];
		if (ext_pool_open(anchor_dev(p->anchors[i]), &pool, &e) == SL_OK && pool) {
			for (k = 0; ext_pool_branch_at(pool, k); k++)
				held[c.nroots++] = anchor_ref(ext_pool_branch_at(pool, k));
			ext_pool_free(pool);
		}
		dev_sources_under(anchor_dir_path(p->anchors[i]), &nodes);
	}
	for (at = 0, k = 0; !nodes.oom && at < nodes.len; k++)
		at += strlen(nodes.p + at) + 1;
	files = calloc(k + 1, sizeof(*files));
	for (at = 0; files && !nodes.oom && at < nodes.len;) {
		files[c.nread_files++] = nodes.p + at;
		at += strlen(nodes.p + at) + 1;
	}
	c.roots = held;
	c.read_files = files;
	if (held && files && index_dir(dbpath, &dir) == 0 && sys_mkdir_parents(dbpath) == 0) {
		c.write_dir = dir.p;
		confine(CONFINE_SCAN, &c, how, cap);
	} else {
		snprintf(how, cap, "no sandbox: the index's folder cannot be created");
	}
	/* the roots' own references are prep's; the branches' were taken here */
	for (i = 0; held && i < c.nroots; i++) {
		for (k = 0; k < p->nroots && held[i] != p->anchors[k]; k++)
			;
		if (k == p->nroots)
			anchor_free(held[i]);
	}
	free(held);
	free(files);
	sb_free(&nodes);
	sb_free(&dir);
}

/* Before the first file is read and parsed: narrowed to what the file
 * table holds open (the roots, a pool's branches), the index's folder and,
 * for the background mode, the disks' I/O counters; as root, no capability
 * but reading's; the system-call filter. */
static void confine_read(const struct scan_settings *s, const struct plan *pl, char *how,
			 size_t cap)
{
	struct strbuf dir = STRBUF_INIT, files = STRBUF_INIT;
	const char **read_files = NULL;
	struct confine c = {s->p.ft.anchors, s->p.ft.nanchors, NULL, NULL, 0};
	size_t g, n = 0, at = 0;

	px_prepare(); /* what the decoders would load late, loaded now */
	if (s->background)
		read_files = calloc(pl->ngroups + 1, sizeof(*read_files));
	for (g = 0; read_files && g < pl->ngroups; g++)
		if (strncmp(pl->groups[g].name, "fs ", 3) != 0)
			sb_addf(&files, "/sys/block/%s/stat%c", pl->groups[g].name, '\0');
	for (g = 0; read_files && !files.oom && at < files.len; g++) {
		read_files[n++] = files.p + at;
		at += strlen(files.p + at) + 1;
	}
	c.read_files = read_files;
	c.nread_files = n;
	if (index_dir(s->dbpath.p, &dir) == 0) {
		c.write_dir = dir.p;
		confine(CONFINE_READ, &c, how, cap);
	} else {
		snprintf(how, cap, "no sandbox: out of memory");
	}
	free(read_files);
	sb_free(&files);
	sb_free(&dir);
}

/* What a scan carries from phase to phase. */
struct scan {
	const struct scan_args *a;
	struct scan_result *r;
	struct scan_settings *s;
	struct db *db;
	struct scanjn jn;
};

static int sink(void *ctx, const struct px_record *rec, struct sl_err *err)
{
	struct scan *sc = ctx;
	struct scan_result *r = sc->r;

	if (rec->err_code && r->nerrors < SCAN_SHOWN_ERRORS) {
		size_t n = strlen(rec->path) + strlen(rec->error) + 3;
		r->shown[r->nerrors] = malloc(n);
		if (r->shown[r->nerrors])
			snprintf(r->shown[r->nerrors], n, "%s: %s", rec->path, rec->error);
	}
	if (rec->err_code)
		r->nerrors++;
	/* not listed or not read, for a reason that may pass (a lock, an I/O
	 * error, a file replaced): the journal must not vouch for its root
	 * (scanjn.h); a file not on this disk is not read by design */
	if (rec->err_code && !rec->read && rec->err_code != SL_E_UNSUPPORTED)
		sj_failed(&sc->jn, rec->path);
	return db_sink(sc->db, rec, err);
}

static void phase(const struct scan *sc, const char *what, size_t n)
{
	if (sc->a->phase)
		sc->a->phase(sc->a->ctx, what, n);
}

/* Open and lock the index, and begin the scan's row. */
static int open_index(struct scan *sc)
{
	struct scan_settings *s = sc->s;
	struct sl_err *err = &sc->r->err;
	int rc;

	rc = db_open(s->dbpath.p, DB_CREATE, &sc->db, err);
	if (rc == SL_OK)
		rc = db_lock(sc->db, err);
	if (rc == SL_OK)
		rc = db_scan_begin(sc->db, sc->a->command ? sc->a->command
							  : s->scheduled ? "scheduled" : "scan",
				   plan_order_name(s->order), (const char *const *)s->p.roots,
				   s->p.nroots, s->po.jobs ? s->po.jobs : sys_cpu_count(), err);
	if (rc == SL_OK)
		sc->r->scan_id = db_scan_id(sc->db);
	return rc;
}

/* The files to consider: the journal's list, or a walk of the roots that
 * the journals do not show unchanged (with files_from, the list is in). */
static int gather(struct scan *sc)
{
	struct scan_settings *s = sc->s;
	struct sl_err *err = &sc->r->err;
	int rc;

	if (sc->a->files_from || sc->a->files_list)
		return SL_OK;
	rc = sj_decide(&sc->jn, sc->db, &s->p, s->dbpath.p, s->full, err);
	if (rc == SL_OK && sc->jn.listed)
		rc = sj_list(&sc->jn, &s->p, &s->ex, err);
	if (rc == SL_OK && !sc->jn.listed) {
		phase(sc, "walk", s->p.nroots);
		rc = prep_walk(&s->p, s->cross_fs, &s->ex, s->dbpath.p, sc->a->cancel, err);
	}
	return rc;
}

/* Stat everything, diff with the index, then ask for the extent maps of
 * only the files that will be read. */
static int locate(struct scan *sc)
{
	struct scan_settings *s = sc->s;
	struct scan_result *r = sc->r;
	double t = sys_now();
	int rc;

	phase(sc, "locate", s->p.ft.nfiles);
	rc = locate_stat(&s->p.ft, &s->p.devs, &s->p.ls, sc->a->cancel, &r->err);
	if (rc == SL_OK)
		rc = db_map_fs(sc->db, s->p.devs, s->p.ft.ndevs, &r->err);
	if (rc == SL_OK)
		rc = db_diff(sc->db, &s->p.ft, s->p.roots, s->p.nroots,
			     (s->full ? DB_DIFF_FULL : 0) |
				     (s->trust_mtime ? DB_DIFF_TRUST_MTIME : 0) |
				     /* a quick scan reads new and changed files
				      * only, and leaves what is pending */
				     (s->po.phash && !s->quick ? DB_DIFF_PHASH : 0) |
				     (!s->quick ? DB_DIFF_COMPLETE : 0),
			     &r->diff, &r->err);
	/* the journal shows no deletion; a list says nothing of what it
	 * leaves out */
	if (rc == SL_OK && (sc->jn.listed || sc->a->files_from || sc->a->files_list))
		r->diff.nmissing = 0;
	if (rc == SL_OK)
		rc = locate_extents(&s->p.ft, &s->p.ls, sc->a->cancel, &r->err);
	s->p.locate_s = sys_now() - t;
	return rc;
}

/* Plan, apply what the diff found moved, and read. */
static int read_all(struct scan *sc)
{
	const struct scan_args *a = sc->a;
	struct scan_settings *s = sc->s;
	struct scan_result *r = sc->r;
	int rc;

	rc = prep_plan(&s->p, s->order, s->seed, s->po.mem_budget, &r->pl, &r->err);
	if (rc == SL_OK)
		rc = db_apply_moves(sc->db, &s->p.ft, &r->diff, &r->err);
	if (rc == SL_OK)
		rc = db_relink_candidates(sc->db, &r->diff, s->p.roots, s->p.nroots, &r->err);
	if (rc != SL_OK)
		return rc;
	if (!a->unconfined)
		confine_read(s, &r->pl, r->sandbox_read_how, sizeof(r->sandbox_read_how));
	s->po.cancel = a->cancel;
	s->po.on_slow = a->on_slow;
	s->po.on_slow_ctx = a->ctx;
	s->po.progress = a->progress;
	s->po.progress_ctx = a->progress_ctx;
	return px_run(&s->p.ft, &r->pl, &s->po, sink, sc, &r->st, &r->err);
}

/* Commit, then mark what is gone: only a complete scan knows that, and an
 * unreadable directory's files are unknown, not gone. */
static int settle(struct scan *sc)
{
	struct scan_result *r = sc->r;
	int rc = db_commit(sc->db, &r->err);

	if (rc != SL_OK)
		return rc;
	if (sc->s->p.ws.dir_errors) {
		r->marked_skipped = 1;
		rc = db_deleted_count(sc->db, &r->marked, &r->err);
	} else {
		rc = db_mark_deleted(sc->db, &r->diff, &r->marked, &r->err);
	}
	if (rc == SL_OK)
		sj_store(&sc->jn, sc->db, &sc->s->p);
	return rc;
}

void scan_store_devices(struct db *db, const struct prep *p, const struct plan *pl,
			const struct px_stats *st, void (*note_fn)(void *ctx, const char *msg),
			void *ctx)
{
	size_t g;

	for (g = 0; g < pl->ngroups; g++) {
		const struct plan_group *gr = &pl->groups[g];
		const struct px_group_stats *gs = st && g < st->ngroups ? &st->groups[g] : NULL;
		char fs[512];
		struct db_device_row row;
		struct sl_err e;

		prep_group_fs(p, pl, g, fs, sizeof(fs));
		row.device = gr->name;
		row.fstype = fs;
		row.rotational = gr->rotational;
		row.extents = gr->extents;
		row.order = plan_order_name(gr->order);
		row.reason = gr->reason;
		row.files = gs ? gs->files : 0;
		row.bytes = gs ? gs->bytes : 0;
		row.read_s = gs ? gs->read_s : 0;
		if (db_scan_device(db, &row, &e) != SL_OK && note_fn)
			note_fn(ctx, e.msg);
	}
}

/* The scan's row: how it ended, with its figures. */
static int end_scan(struct scan *sc, int rc, double t0)
{
	struct scan_settings *s = sc->s;
	struct scan_result *r = sc->r;
	struct db_scan_end end;
	struct sl_err e2;
	size_t g;

	memset(&end, 0, sizeof(end));
	end.status = r->status;
	end.files = r->st.files;
	end.bytes = r->st.bytes;
	end.errors = r->st.errors;
	end.unchanged = r->diff.unchanged;
	end.changed = r->diff.changed;
	end.added = r->diff.added;
	end.moved = r->diff.moved;
	end.rechecked = r->diff.rechecked;
	end.quick = s->quick;
	end.upgraded = r->diff.upgraded;
	end.retried = r->diff.retried;
	/* deletions stand only when every directory was listed (db.h,
	 * DB_PROVISIONAL_SQL) */
	end.complete = rc == SL_OK && !r->marked_skipped && !sc->a->files_from &&
		       !sc->a->files_list && !sc->jn.listed;
	end.deleted = r->marked;
	end.unavailable = r->diff.unavailable;
	end.background = s->background;
	for (g = 0; g < r->st.ngroups; g++)
		end.yield_s += r->st.groups[g].yield_s;
	end.walk_s = s->p.walk_s;
	end.locate_s = s->p.locate_s;
	end.read_s = r->st.read_s;
	end.extract_s = r->st.extract_s;
	end.store_s = r->st.store_s;
	r->wall_s = end.wall_s = sys_now() - t0;
	end.message = rc != SL_OK ? r->err.msg : NULL;
	if (db_scan_end(sc->db, &end, &e2) != SL_OK) {
		if (rc == SL_OK) {
			r->err = e2;
			r->status = "failed";
			return e2.code;
		}
		prep_note(&s->p, "%s", e2.msg); /* the scan's error is the one to report */
	}
	return rc;
}

static const char *status_of(int rc, const struct px_stats *st)
{
	if (rc == SL_OK)
		return st->errors ? "errors" : "ok";
	return rc == SL_E_CANCELLED ? "interrupted" : "failed";
}

int scan_run(const struct scan_args *a, struct scan_result *r)
{
	struct scan sc;
	double t0 = sys_now();
	int rc, awake = -1;

	memset(r, 0, sizeof(*r));
	memset(&sc, 0, sizeof(sc));
	sc.a = a;
	sc.r = r;
	sc.s = &r->set;
	sj_init(&sc.jn);
	r->status = "failed";
	rc = scan_configure(a, &r->set, &r->err);
	/* the folders of the listed files stand in for roots from here on */
	if (rc == SL_OK && a->files_from)
		rc = prep_files_from(a->files_from, r->set.dbpath.p, &r->set.p, &r->err);
	else if (rc == SL_OK && a->files_list)
		rc = prep_files_list(a->files_list, a->files_list_len, "(candidates)",
				     r->set.dbpath.p, &r->set.p, &r->err);
	if (rc != SL_OK)
		goto out;
	sys_raise_fd_limit();
	if (r->set.background) {
		/* this thread walks, stats and writes the index; the pipeline's
		 * threads lower themselves (pipeline.h) */
		sys_background(r->background_how, sizeof(r->background_how));
		r->set.po.background = 1;
	}
	if (!a->unconfined)
		confine_scan(&r->set.p, r->set.dbpath.p, r->sandbox_how, sizeof(r->sandbox_how));
	/* from the first write to the index until the scan's row is closed:
	 * an idle sleep in between suspends the scan (sys.h) */
	awake = sys_keep_awake(1);
	if (awake != 0 && awake != ENOSYS) {
		char why[160];
		sys_strerror(awake, why, sizeof(why));
		prep_note(&r->set.p, "the system may sleep for idle during the scan (%s)", why);
	}
	rc = open_index(&sc);
	if (rc != SL_OK)
		goto out;
	rc = gather(&sc);
	if (rc == SL_OK)
		rc = locate(&sc);
	if (rc == SL_OK)
		rc = read_all(&sc);
	if (rc == SL_OK)
		rc = settle(&sc);
	r->status = status_of(rc, &r->st);
	if (r->pl.ngroups)
		scan_store_devices(sc.db, &r->set.p, &r->pl, &r->st, a->note, a->ctx);
	rc = end_scan(&sc, rc, t0);
	db_scan_counts(sc.db, &r->relinked, &r->ctime_changed);
	if (r->set.po.phash) {
		struct sl_err e3;
		if (db_phash_pending(sc.db, &r->phash_pending, &e3) != SL_OK)
			r->phash_pending = 0; /* only a figure for the summary */
	}
	{
		struct sl_err e4;
		if (db_content_pending(sc.db, &r->content_pending, &r->content_pending_bytes, &e4) !=
		    SL_OK)
			r->content_pending = r->content_pending_bytes = 0;
	}
	r->abandoned = r->st.abandoned;
out:
	if (awake == 0)
		sys_keep_awake(0);
	if (sc.jn.report.len)
		sb_add(&r->journal, sc.jn.report.p, sc.jn.report.len);
	sj_free(&sc.jn);
	db_close(sc.db);
	return rc;
}

void scan_result_free(struct scan_result *r)
{
	size_t i;

	for (i = 0; i < SCAN_SHOWN_ERRORS; i++)
		free(r->shown[i]);
	px_stats_free(&r->st);
	plan_free(&r->pl);
	db_diff_free(&r->diff);
	sb_free(&r->journal);
	scan_settings_free(&r->set);
	memset(r, 0, sizeof(*r));
}
