/* scan.h - a scan as a library call: walk -> locate -> diff with the index
 * -> plan -> read and extract -> store, with the configuration and the
 * change journals' policy (scanjn.h).  `seekless scan`, `plan`, `bench`
 * and the tests call it; it prints nothing.
 *
 * Settings come from three places, resolved once, in scan_configure: the
 * caller's scan_args (the command line) over the configuration file
 * (config.h) over the defaults.  An argument left unset (-1, 0 or NULL, as
 * each field says) takes the configuration's value. */
#ifndef SL_SCAN_H
#define SL_SCAN_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "app/config.h"
#include "app/prep.h"
#include "common/err.h"
#include "common/strbuf.h"
#include "db/db.h"
#include "indexer/pipeline.h"
#include "scanner/exclude.h"
#include "scanner/plan.h"

/* The first per-file errors are kept for the summary; all are stored. */
#define SCAN_SHOWN_ERRORS 10

struct scan_args {
	const char *config;       /* only this file; NULL: the default files */
	const char *db;           /* NULL: the configuration's, else the default */
	char *const *roots;       /* none: the configuration's (missing ones skipped) */
	size_t nroots;
	const char *files_from;   /* index exactly these files (prep_files_from) */
	const char *files_list;   /* or these, NUL-separated, files_list_len bytes */
	size_t files_list_len;    /* (prep_files_list; seekless dupes) */
	const char *command;      /* the scan's row's command; NULL: "scan" or "scheduled" */
	char *const *excludes;    /* added to the configuration's */
	size_t nexcludes;
	int order;                /* -1: configuration, else PLAN_AUTO */
	int have_seed;
	uint64_t seed;            /* for PLAN_RANDOM; without have_seed, random */
	int cross_fs;             /* -1: configuration */
	int jobs;                 /* 0: configuration, else one per CPU */
	uint64_t mem;             /* 0: configuration, else the pipeline's */
	int phash;                /* -1: configuration, else on */
	int phash_now;            /* -1: configuration; 1: every hash in this scan; 0: may defer */
	int trust_mtime;          /* -1: configuration */
	int background;           /* -1: configuration's for scheduled runs, else off */
	int scheduled;            /* as the service runs it: recorded so */
	int unconfined;           /* leave the process as it is: scan_run confines
				     its caller for good (confine.h), so a test
				     running several scans in one process asks
				     for none */
	int full;                 /* read every file again */
	int quick;                /* -1: configuration; 1: read large files in
				     part (px_opts.quick); 0: whole */
	int keep_cache;
	atomic_int *cancel;       /* may be NULL */
	/* All may be NULL; called on the caller's thread.  note: something
	 * worth saying that is not an error (a root skipped, a device row not
	 * stored).  phase: "walk" or "locate" starts, over n roots or files. */
	void (*note)(void *ctx, const char *msg);
	void (*phase)(void *ctx, const char *what, size_t n);
	void (*on_slow)(void *ctx, const char *path, const char *disk, double seconds);
	void *ctx;
	px_progress_fn progress;
	void *progress_ctx;
};

/* What scan_configure resolved. */
struct scan_settings {
	struct cfg cfg;
	struct excl ex;
	struct prep p;            /* the roots (files_from: filled by scan_run) */
	struct strbuf dbpath;
	int order, cross_fs, full, trust_mtime, background, scheduled, quick;
	uint64_t seed;
	struct px_opts po;        /* jobs, mem_budget, phash, keep_cache */
};

/* Load the configuration, then the excludes, the roots and the index's
 * path, and resolve every setting.  Zeroes s first; scan_settings_free it
 * whatever this returns.  Returns SL_OK; SL_E_USAGE (a bad configuration
 * or exclude, no root, a root that cannot be accessed, no home directory
 * for the default index); SL_E_IO (no configured root can be accessed, a
 * configuration file that cannot be read); SL_E_NOMEM. */
int scan_configure(const struct scan_args *a, struct scan_settings *s, struct sl_err *err);
void scan_settings_free(struct scan_settings *s);

struct scan_result {
	struct scan_settings set;
	struct plan pl;
	struct px_stats st;
	struct db_diff diff;
	int64_t scan_id;          /* 0 before the index was opened */
	uint64_t marked;          /* marked deleted (or, when skipped, still so) */
	int marked_skipped;       /* a directory could not be read: none marked */
	uint64_t relinked, ctime_changed;
	/* with hashes on: pictures in the whole index still without a
	 * perceptual hash, never tried (db_phash_pending), this scan's
	 * deferred ones (st.phash_deferred) among them */
	uint64_t phash_pending;
	/* live records a quick scan read in part (db_content_pending) */
	uint64_t content_pending, content_pending_bytes;
	double wall_s;
	const char *status;       /* "ok", "errors", "interrupted", "failed" */
	char background_how[200]; /* with set.background */
	char sandbox_how[400];    /* how the scan was confined (confine.h) */
	char sandbox_read_how[400]; /* and, before reading, narrowed */
	struct strbuf journal;    /* one line per volume's change journal, or "" */
	uint64_t nerrors;         /* records stored with a per-file error */
	char *shown[SCAN_SHOWN_ERRORS]; /* the first "path: error" lines */
	int abandoned;            /* a read never returned (px_stats.abandoned) */
	struct sl_err err;        /* when scan_run did not return SL_OK */
};

/* Run a scan, confining the calling process for good on the way (unless
 * a->unconfined): before the index is opened, and again before the first
 * file is read (confine.h; r->sandbox_how, sandbox_read_how say how).
 * Zeroes r first; scan_result_free it afterwards (but not when
 * r->abandoned: a reader still uses its plan and file table, so the caller
 * should end the process).  Returns SL_OK when every file was read and
 * stored (r->st.errors counts files stored with their error), SL_E_USAGE
 * and the others of scan_configure before the index is opened,
 * SL_E_CANCELLED when a->cancel stopped it (what was read is stored), or
 * the fatal error (database, resources).  r->status and the scan's row in
 * the index say the same. */
int scan_run(const struct scan_args *a, struct scan_result *r);
void scan_result_free(struct scan_result *r);

/* Store each plan group's device row for the index's current scan (with
 * its reading figures from st, which may be NULL).  A row that cannot be
 * stored is noted through note (may be NULL), not fatal. */
void scan_store_devices(struct db *db, const struct prep *p, const struct plan *pl,
			const struct px_stats *st, void (*note)(void *ctx, const char *msg),
			void *ctx);

#endif
