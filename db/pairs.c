/* pairs.c - files that belong together (db.h db_pairs): a RAW and the JPEG
 * or HEIF the camera wrote beside it, a Live Photo's still and movie, a
 * motion photo and the movie inside it.
 *
 * Each kind is one statement ordered so that a group's rows are adjacent
 * (by folder and stem, by content identifier); the grouping is a single
 * pass over them, so memory holds one group. */
#include <stdlib.h>
#include <string.h>

#include "db/db_int.h"

#define RAW_FORMATS "'cr2','cr3','crw','nef','arw','dng','orf','rw2','pef','srw','raf','mrw','x3f','eip'"
#define DEVELOPED_FORMATS "'jpeg','heic','heif'"

struct member {
	char *path;
	char *when;   /* datetime_original, "" when unknown */
	int side;     /* raw+jpeg: 1 RAW, 0 developed; live: 1 movie, 0 still */
};

struct group {
	struct member *m;
	size_t n, cap;
	char *key;
};

static void group_clear(struct group *g)
{
	size_t i;
	for (i = 0; i < g->n; i++) {
		free(g->m[i].path);
		free(g->m[i].when);
	}
	g->n = 0;
	free(g->key);
	g->key = NULL;
}

static int group_add(struct group *g, const char *path, const char *when, int side)
{
	if (g->n == g->cap) {
		size_t nc = g->cap ? g->cap * 2 : 8;
		struct member *nm = realloc(g->m, nc * sizeof(*nm));
		if (!nm)
			return -1;
		g->m = nm, g->cap = nc;
	}
	g->m[g->n].side = side;
	g->m[g->n].path = strdup(path);
	g->m[g->n].when = strdup(when ? when : "");
	if (!g->m[g->n].path || !g->m[g->n].when) {
		free(g->m[g->n].path);
		free(g->m[g->n].when);
		return -1;
	}
	g->n++;
	return 0;
}

/* What a group is handed to: the caller's function (db.h db_pairs). */
struct out {
	void (*fn)(void *ctx, const char *kind, const char *const *paths, size_t n,
		   int64_t embedded);
	void *ctx;
};

/* A folder-and-stem group: each RAW with the developed files of its
 * capture time.  A Live Photo group: its stills and movies, when it has
 * both. */
static int emit_group(struct group *g, int live, const struct out *o, uint64_t *count)
{
	const char **paths;
	size_t i, k, n;
	int movie = 0, still = 0;

	if (g->n < 2)
		return 0;
	paths = malloc(g->n * sizeof(*paths));
	if (!paths)
		return -1;
	if (live) {
		for (i = 0; i < g->n; i++) {
			movie |= g->m[i].side;
			still |= !g->m[i].side;
			paths[i] = g->m[i].path;
		}
		if (movie && still) {
			o->fn(o->ctx, "live", paths, g->n, -1);
			(*count)++;
		}
		free(paths);
		return 0;
	}
	for (i = 0; i < g->n; i++) {
		if (!g->m[i].side || !g->m[i].when[0])
			continue;
		n = 0;
		paths[n++] = g->m[i].path;
		for (k = 0; k < g->n; k++)
			if (!g->m[k].side && strcmp(g->m[k].when, g->m[i].when) == 0)
				paths[n++] = g->m[k].path;
		if (n > 1) {
			o->fn(o->ctx, "raw+jpeg", paths, n, -1);
			(*count)++;
		}
	}
	free(paths);
	return 0;
}

/* sl_group(path): the folder and the stem of a path's name (links.c's
 * split), the key RAW+JPEG pairs share. */
static void fn_group(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	const char *p = (const char *)sqlite3_value_text(argv[0]);
	int n = sqlite3_value_bytes(argv[0]);
	const char *slash;

	(void)argc;
	if (!p) {
		sqlite3_result_null(ctx);
		return;
	}
	slash = strrchr(p, '/');
	slash = slash ? slash + 1 : p;
	sqlite3_result_text(ctx, p, (int)(slash - p) + (int)db_stem_len(slash, (size_t)(p + n - slash)),
			    SQLITE_TRANSIENT);
}

static int run_kind(struct db *db, const char *sql, int live, const struct out *o,
		    uint64_t *count, struct sl_err *err)
{
	struct group g = {0};
	sqlite3_stmt *st = NULL;
	int r, rc = SL_OK;

	if (sqlite3_prepare_v2(db->h, sql, -1, &st, NULL) != SQLITE_OK)
		return DB_FAIL(db->h, err, "prepare pairs");
	while ((r = sqlite3_step(st)) == SQLITE_ROW) {
		const char *key = (const char *)sqlite3_column_text(st, 0);
		const char *path = (const char *)sqlite3_column_text(st, 1);
		const char *when = (const char *)sqlite3_column_text(st, 2);
		int side = sqlite3_column_int(st, 3);
		if (!key || !path)
			continue;
		if (g.key && strcmp(g.key, key) != 0) {
			if (emit_group(&g, live, o, count) != 0)
				goto nomem;
			group_clear(&g);
		}
		if (!g.key && !(g.key = strdup(key)))
			goto nomem;
		if (group_add(&g, path, when, side) != 0)
			goto nomem;
	}
	if (r != SQLITE_DONE)
		rc = DB_FAIL(db->h, err, "pairs");
	else if (emit_group(&g, live, o, count) != 0)
		goto nomem;
	goto out;
nomem:
	rc = SL_FAIL(err, SL_E_NOMEM, 0, "pairs: out of memory");
out:
	group_clear(&g);
	free(g.m);
	sqlite3_finalize(st);
	return rc;
}

int db_pairs(struct db *db,
	     void (*fn)(void *ctx, const char *kind, const char *const *paths, size_t n,
			int64_t embedded),
	     void *ctx, uint64_t *count, struct sl_err *err)
{
	struct out o = {fn, ctx};
	sqlite3_stmt *st = NULL;
	int rc, r;

	*count = 0;
	if (sqlite3_create_function(db->h, "sl_group", 1, SQLITE_UTF8 | SQLITE_DETERMINISTIC, NULL,
				    fn_group, NULL, NULL) != SQLITE_OK)
		return DB_FAIL(db->h, err, "pairs functions");
	rc = run_kind(db,
		      "SELECT sl_group(path) AS k, path, datetime_original, format IN (" RAW_FORMATS
		      ") FROM files WHERE deleted_at IS NULL AND format IN (" RAW_FORMATS ","
		      DEVELOPED_FORMATS ") ORDER BY k, path",
		      0, &o, count, err);
	if (rc == SL_OK)
		rc = run_kind(db,
			      "SELECT content_id, path, NULL, format IN (" DB_VIDEO_FORMATS ")"
			      " FROM files WHERE deleted_at IS NULL AND content_id IS NOT NULL"
			      " ORDER BY content_id, path",
			      1, &o, count, err);
	if (rc == SL_OK &&
	    sqlite3_prepare_v2(db->h,
			       "SELECT path, embedded_video FROM files WHERE deleted_at IS NULL"
			       " AND embedded_video IS NOT NULL ORDER BY path",
			       -1, &st, NULL) != SQLITE_OK)
		rc = DB_FAIL(db->h, err, "prepare pairs");
	while (rc == SL_OK && (r = sqlite3_step(st)) != SQLITE_DONE) {
		const char *path;
		if (r != SQLITE_ROW) {
			rc = DB_FAIL(db->h, err, "pairs");
			break;
		}
		path = (const char *)sqlite3_column_text(st, 0);
		if (path) {
			fn(ctx, "motion", &path, 1, sqlite3_column_int64(st, 1));
			(*count)++;
		}
	}
	sqlite3_finalize(st);
	return rc;
}
