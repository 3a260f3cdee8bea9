/* benchruns.c - bench's results in the index (benchruns.h).  A head path
 * is a blob of 16-byte dots, each the time's IEEE double bits and the
 * offset, both little-endian: the same bytes on every platform. */
#include <stdlib.h>
#include <string.h>

#include "common/strbuf.h"
#include "db/benchruns.h"
#include "db/db_int.h"

static void put64(unsigned char *p, uint64_t v)
{
	int i;
	for (i = 0; i < 8; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

static uint64_t get64(const unsigned char *p)
{
	uint64_t v = 0;
	int i;
	for (i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

static void bind_pos(sqlite3_stmt *st, int col, double v)
{
	if (v > 0)
		sqlite3_bind_double(st, col, v);
	else
		sqlite3_bind_null(st, col);
}

int db_bench_put(struct db *db, const struct db_bench *b, struct sl_err *err)
{
	sqlite3_stmt *st = NULL, *ord = NULL;
	unsigned char *blob = NULL;
	int64_t id;
	size_t k, i;
	int rc = SL_OK;

	if (sqlite3_exec(db->h, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK)
		return DB_FAIL(db->h, err, "bench: begin");
	if (sqlite3_prepare_v2(db->h,
			       "INSERT INTO benches(started_at, roots, files, bytes, runs,"
			       " caches_dropped, first_scan, last_scan)"
			       " VALUES(strftime('%Y-%m-%dT%H:%M:%SZ','now'), ?1, ?2, ?3, ?4, ?5, ?6, ?7)",
			       -1, &st, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(db->h,
			       "INSERT INTO bench_orders(bench_id, pos, order_name, wall_s, metadata_s,"
			       " mb_per_s, files_per_s, speedup, pieces, path)"
			       " VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
			       -1, &ord, NULL) != SQLITE_OK) {
		rc = DB_FAIL(db->h, err, "bench: prepare");
		goto out;
	}
	sqlite3_bind_text(st, 1, b->roots ? b->roots : "[]", -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 2, b->files);
	sqlite3_bind_int64(st, 3, b->bytes);
	sqlite3_bind_int(st, 4, b->runs);
	sqlite3_bind_int(st, 5, b->caches_dropped);
	sqlite3_bind_int64(st, 6, b->first_scan);
	sqlite3_bind_int64(st, 7, b->last_scan);
	if (sqlite3_step(st) != SQLITE_DONE) {
		rc = DB_FAIL(db->h, err, "bench: store");
		goto out;
	}
	id = sqlite3_last_insert_rowid(db->h);
	for (k = 0; k < b->norders && rc == SL_OK; k++) {
		const struct db_bench_order *o = &b->orders[k];
		free(blob);
		blob = malloc(o->n ? o->n * 16 : 1);
		if (!blob) {
			rc = SL_FAIL(err, SL_E_NOMEM, 0, "bench: out of memory");
			break;
		}
		for (i = 0; i < o->n; i++) {
			uint64_t bits;
			memcpy(&bits, &o->t[i], sizeof(bits));
			put64(blob + 16 * i, bits);
			put64(blob + 16 * i + 8, o->phys[i]);
		}
		sqlite3_reset(ord);
		sqlite3_bind_int64(ord, 1, id);
		sqlite3_bind_int(ord, 2, (int)k);
		sqlite3_bind_text(ord, 3, o->order, -1, SQLITE_STATIC);
		sqlite3_bind_double(ord, 4, o->wall_s);
		sqlite3_bind_double(ord, 5, o->metadata_s);
		sqlite3_bind_double(ord, 6, o->mb_per_s);
		sqlite3_bind_double(ord, 7, o->files_per_s);
		bind_pos(ord, 8, o->speedup);
		sqlite3_bind_int(ord, 9, o->pieces);
		sqlite3_bind_blob(ord, 10, blob, (int)(o->n * 16), SQLITE_STATIC);
		if (sqlite3_step(ord) != SQLITE_DONE)
			rc = DB_FAIL(db->h, err, "bench: store an order");
	}
out:
	sqlite3_finalize(st);
	sqlite3_finalize(ord);
	free(blob);
	if (rc == SL_OK && sqlite3_exec(db->h, "COMMIT", NULL, NULL, NULL) != SQLITE_OK)
		rc = DB_FAIL(db->h, err, "bench: commit");
	if (rc != SL_OK)
		sqlite3_exec(db->h, "ROLLBACK", NULL, NULL, NULL);
	return rc;
}

/* The orders of bench id, with their paths decoded, into the arrays of
 * *o (which the caller frees: t and phys of each). */
static int load_orders(struct db *db, sqlite3_stmt *ord, int64_t id, struct db_bench_order **out,
		       size_t *n, char ***names, struct sl_err *err)
{
	size_t cap = 0, capn = 0;
	int r;

	*out = NULL;
	*n = 0;
	*names = NULL;
	sqlite3_reset(ord);
	sqlite3_bind_int64(ord, 1, id);
	while ((r = sqlite3_step(ord)) == SQLITE_ROW) {
		struct db_bench_order *o;
		const unsigned char *blob = sqlite3_column_blob(ord, 7);
		size_t len = (size_t)sqlite3_column_bytes(ord, 7), i, dots = len / 16;
		const char *name = (const char *)sqlite3_column_text(ord, 0);
		double *t;
		uint64_t *phys;

		if (sl_grow(out, &cap, *n + 1, sizeof(**out)) != 0 ||
		    sl_grow(names, &capn, *n + 1, sizeof(**names)) != 0)
			return SL_FAIL(err, SL_E_NOMEM, 0, "bench: out of memory");
		o = &(*out)[*n];
		memset(o, 0, sizeof(*o));
		(*names)[*n] = strdup(name ? name : "?");
		t = malloc(dots ? dots * sizeof(*t) : 1);
		phys = malloc(dots ? dots * sizeof(*phys) : 1);
		(*n)++;
		o->t = t;
		o->phys = phys;
		if (!(*names)[*n - 1] || !t || !phys)
			return SL_FAIL(err, SL_E_NOMEM, 0, "bench: out of memory");
		for (i = 0; i < dots; i++) {
			uint64_t bits = get64(blob + 16 * i);
			memcpy(&t[i], &bits, sizeof(bits));
			phys[i] = get64(blob + 16 * i + 8);
		}
		o->order = (*names)[*n - 1];
		o->wall_s = sqlite3_column_double(ord, 1);
		o->metadata_s = sqlite3_column_double(ord, 2);
		o->mb_per_s = sqlite3_column_double(ord, 3);
		o->files_per_s = sqlite3_column_double(ord, 4);
		o->speedup = sqlite3_column_type(ord, 5) == SQLITE_NULL ? 0 : sqlite3_column_double(ord, 5);
		o->pieces = sqlite3_column_int(ord, 6);
		o->n = dots;
	}
	if (r != SQLITE_DONE)
		return DB_FAIL(db->h, err, "bench: orders");
	return SL_OK;
}

int db_bench_list(struct db *db, int limit, int (*fn)(void *ctx, const struct db_bench *b),
		  void *ctx, int64_t *total, struct sl_err *err)
{
	sqlite3_stmt *st = NULL, *ord = NULL, *cnt = NULL;
	int r = SQLITE_DONE, rc = SL_OK;

	*total = 0;
	if (sqlite3_prepare_v2(db->h, "SELECT count(*) FROM benches", -1, &cnt, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(db->h,
			       "SELECT id, started_at, roots, files, bytes, runs, caches_dropped,"
			       " coalesce(first_scan, 0), coalesce(last_scan, 0) FROM benches"
			       " ORDER BY id DESC LIMIT ?1",
			       -1, &st, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(db->h,
			       "SELECT order_name, wall_s, metadata_s, mb_per_s, files_per_s, speedup,"
			       " pieces, path FROM bench_orders WHERE bench_id = ?1 ORDER BY pos",
			       -1, &ord, NULL) != SQLITE_OK) {
		rc = DB_FAIL(db->h, err, "bench: prepare");
		goto out;
	}
	if (sqlite3_step(cnt) == SQLITE_ROW)
		*total = sqlite3_column_int64(cnt, 0);
	sqlite3_bind_int(st, 1, limit);
	while (rc == SL_OK && (r = sqlite3_step(st)) == SQLITE_ROW) {
		struct db_bench b;
		struct db_bench_order *orders = NULL;
		char **names = NULL;
		size_t n = 0, i;

		memset(&b, 0, sizeof(b));
		b.id = sqlite3_column_int64(st, 0);
		b.started_at = (const char *)sqlite3_column_text(st, 1);
		b.roots = (const char *)sqlite3_column_text(st, 2);
		b.files = sqlite3_column_int64(st, 3);
		b.bytes = sqlite3_column_int64(st, 4);
		b.runs = sqlite3_column_int(st, 5);
		b.caches_dropped = sqlite3_column_int(st, 6);
		b.first_scan = sqlite3_column_int64(st, 7);
		b.last_scan = sqlite3_column_int64(st, 8);
		rc = load_orders(db, ord, b.id, &orders, &n, &names, err);
		if (rc == SL_OK) {
			b.orders = orders;
			b.norders = n;
			if (fn(ctx, &b) != 0)
				rc = SL_FAIL(err, SL_E_IO, 0, "report: write error");
		}
		for (i = 0; i < n; i++) {
			free((void *)orders[i].t);
			free((void *)orders[i].phys);
			free(names[i]);
		}
		free(orders);
		free(names);
	}
	if (rc == SL_OK && r != SQLITE_DONE)
		rc = DB_FAIL(db->h, err, "bench: list");
out:
	sqlite3_finalize(cnt);
	sqlite3_finalize(st);
	sqlite3_finalize(ord);
	return rc;
}
