/* report.c - the HTML report (report.h).  The page is built whole in
 * memory (it is small by design: every list is capped) and written once. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "app/headpath.h"
#include "app/report.h"
#include "common/anchor.h"
#include "common/strbuf.h"
#include "common/sys.h"
#include "db/benchruns.h"
#include "db/db.h"
#include "db/report.h"
#include "indexer/extract.h"
#include "indexer/reader.h"
#include "indexer/formats/thumb.h"

#define HISTORY_MAX 1000        /* scans in the chart */
#define BENCHES_SHOWN 5
#define PIC_BOX 160             /* pixels, the longer side */
#define PIC_READ_MAX (48u << 20) /* a file is decoded whole up to this size */
#define PIC_HEAD (1u << 20)     /* else only its head is read, for a thumbnail */

struct page {
	struct strbuf o;
	struct db *db;
	const struct report_opts *opt;
	int rows;
	int in_table;               /* a db_stats section's table is open */
	/* the history, oldest first */
	struct hist {
		double t;               /* seconds since 1970, from started_at */
		double mbs, wall;
		size_t row_at, row_len; /* its table row in rows_html */
	} *hist;
	size_t nhist, cap_hist;
	struct strbuf rows_html;
	/* dupes */
	uint64_t groups, files, gain, shown;
	int64_t bench_total;
};

/* ---- escaping ---- */

/* s[0..n) as HTML text (attr 0) or inside a double-quoted attribute
 * (attr 1).  Markup characters become references; bytes that are not
 * UTF-8, control characters and the direction overrides that could make a
 * name read as another become visible escapes. */
static void esc(struct strbuf *o, const char *s, size_t n, int attr)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t i = 0;

	while (i < n) {
		unsigned c = u[i];
		size_t k = c < 0x80 ? 1 : c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3
			   : c >= 0xf0 && c <= 0xf4 ? 4 : 0;

		if (k == 1) {
			if (c < 0x20 || c == 0x7f)
				sb_addf(o, attr ? "\\x%02X" : "<span class=\"x\">\\x%02X</span>", c);
			else if (c == '&')
				sb_adds(o, "&amp;");
			else if (c == '<')
				sb_adds(o, "&lt;");
			else if (c == '>')
				sb_adds(o, "&gt;");
			else if (c == '"')
				sb_adds(o, "&quot;");
			else if (c == '\'')
				sb_adds(o, "&#39;");
			else
				sb_addc(o, (char)c);
			i++;
			continue;
		}
		if (k && i + k <= n && sl_utf8_valid(s + i, k)) {
			/* U+202A-202E, U+2066-2069: bidirectional overrides */
			if (k == 3 && c == 0xe2 &&
			    ((u[i + 1] == 0x80 && u[i + 2] >= 0xaa && u[i + 2] <= 0xae) ||
			     (u[i + 1] == 0x81 && u[i + 2] >= 0xa6 && u[i + 2] <= 0xa9))) {
				unsigned cp = ((c & 0x0f) << 12) | ((u[i + 1] & 0x3fu) << 6) |
					      (u[i + 2] & 0x3fu);
				sb_addf(o, attr ? "\\u%04X" : "<span class=\"x\">\\u%04X</span>", cp);
			} else {
				sb_add(o, s + i, k);
			}
			i += k;
			continue;
		}
		sb_addf(o, attr ? "\\x%02X" : "<span class=\"x\">\\x%02X</span>", c);
		i++;
	}
}

static void esc_s(struct strbuf *o, const char *s)
{
	if (s)
		esc(o, s, strlen(s), 0);
}

/* ---- figures ---- */

static void human_bytes(struct strbuf *o, double b)
{
	if (b >= 1e12)
		sb_addf(o, "%.2f TB", b / 1e12);
	else if (b >= 1e9)
		sb_addf(o, "%.2f GB", b / 1e9);
	else if (b >= 1e6)
		sb_addf(o, "%.1f MB", b / 1e6);
	else if (b >= 1e3)
		sb_addf(o, "%.1f kB", b / 1e3);
	else
		sb_addf(o, "%.0f B", b);
}

static void td_int(struct strbuf *o, int64_t v)
{
	sb_addf(o, "<td class=\"n\" data-v=\"%" PRId64 "\">%" PRId64 "</td>", v, v);
}

static void td_opt(struct strbuf *o, int64_t v)
{
	if (v < 0)
		sb_adds(o, "<td class=\"n\" data-v=\"-1\">-</td>");
	else
		td_int(o, v);
}

static void td_bytes(struct strbuf *o, int64_t v)
{
	sb_addf(o, "<td class=\"n\" data-v=\"%" PRId64 "\">", v);
	human_bytes(o, (double)v);
	sb_adds(o, "</td>");
}

static void td_real(struct strbuf *o, double v, int decimals)
{
	sb_addf(o, "<td class=\"n\" data-v=\"%.6g\">%.*f</td>", v, decimals, v);
}

static void td_text(struct strbuf *o, const char *s, size_t n)
{
	sb_adds(o, "<td>");
	esc(o, s, n, 0);
	sb_adds(o, "</td>");
}

static void td_s(struct strbuf *o, const char *s)
{
	td_text(o, s ? s : "", s ? strlen(s) : 0);
}

/* A table that sorts by a click on its heading; cols "|"-separated. */
static void table_open(struct strbuf *o, const char *id, const char *cols)
{
	const char *c = cols;

	sb_addf(o, "<table class=\"sort\" id=\"%s\"><thead><tr>", id);
	while (*c) {
		const char *e = strchr(c, '|');
		size_t n = e ? (size_t)(e - c) : strlen(c);
		sb_adds(o, "<th>");
		sb_add(o, c, n);
		sb_adds(o, "</th>");
		c += n + (e != NULL);
	}
	sb_adds(o, "</tr></thead><tbody>\n");
}

static void table_close(struct strbuf *o)
{
	sb_adds(o, "</tbody></table>\n");
}

/* "showing the first N of M" under a capped list */
static void capped(struct strbuf *o, const char *id, int64_t shown, int64_t total,
		   const char *what)
{
	sb_addf(o, "<p class=\"cap\" id=\"%s\" data-shown=\"%" PRId64 "\" data-total=\"%" PRId64
		"\">", id, shown, total);
	if (shown < total)
		sb_addf(o, "Showing %" PRId64 " of %" PRId64 " %s (seekless query and dupes --json"
			" list them all).", shown, total, what);
	else
		sb_addf(o, "%" PRId64 " %s.", total, what);
	sb_adds(o, "</p>\n");
}

/* ---- at a glance (db_stats) ---- */

static void on_totals(void *ctx, int64_t files, int64_t bytes, int64_t errors, int64_t deleted,
		      int64_t pending, int64_t content_pending, int64_t pending_bytes)
{
	struct page *P = ctx;
	struct strbuf *o = &P->o;

	sb_adds(o, "<section id=\"glance\"><h2>The index at a glance</h2>\n<dl class=\"totals\">");
	sb_addf(o, "<div><dt>files</dt><dd id=\"total-files\" data-v=\"%" PRId64 "\">%" PRId64
		"</dd></div>", files, files);
	sb_addf(o, "<div><dt>size</dt><dd id=\"total-bytes\" data-v=\"%" PRId64 "\">", bytes);
	human_bytes(o, (double)bytes);
	sb_adds(o, "</dd></div>");
	sb_addf(o, "<div><dt>with errors</dt><dd id=\"total-errors\" data-v=\"%" PRId64 "\">"
		"<a href=\"#errors\">%" PRId64 "</a></dd></div>", errors, errors);
	sb_addf(o, "<div><dt>marked deleted</dt><dd id=\"total-deleted\" data-v=\"%" PRId64 "\">%"
		PRId64 "</dd></div>", deleted, deleted);
	sb_addf(o, "<div><dt>pictures without a perceptual hash yet</dt><dd id=\"total-pending\" "
		"data-v=\"%" PRId64 "\">%" PRId64 "</dd></div>", pending, pending);
	sb_addf(o, "<div><dt>read in part, content hash pending</dt><dd id=\"total-quick\" "
		"data-v=\"%" PRId64 "\">%" PRId64 " (", content_pending, content_pending);
	human_bytes(o, (double)pending_bytes);
	sb_adds(o, ")</dd></div>");
	sb_adds(o, "</dl>\n<div class=\"grid\">\n");
}

static void on_section(void *ctx, const char *key, const char *title)
{
	struct page *P = ctx;

	if (!key) {
		if (P->in_table)
			table_close(&P->o);
		if (P->in_table)
			sb_adds(&P->o, "</div>\n");
		P->in_table = 0;
		return;
	}
	if (strcmp(key, "scans") == 0)
		return; /* the history has them */
	sb_addf(&P->o, "<div class=\"card\"><h3>%s</h3>", title ? title : key);
	if (strcmp(key, "file_systems") == 0)
		table_open(&P->o, "t-file_systems", "file system|type|last mount point|last walked|"
			   "files|size|marked deleted");
	else
		sb_addf(&P->o, "<table class=\"sort\" id=\"t-%s\"><thead><tr><th>%s</th><th>files</th>"
			"<th>size</th></tr></thead><tbody>\n", key,
			strcmp(key, "formats") == 0 ? "format" : strcmp(key, "cameras") == 0 ? "camera"
			: strcmp(key, "years") == 0 ? "year" : strcmp(key, "ratings") == 0 ? "rating"
			: "keyword");
	P->in_table = 1;
}

static void on_group(void *ctx, const char *label, size_t len, int64_t files, int64_t bytes)
{
	struct page *P = ctx;

	sb_adds(&P->o, "<tr>");
	td_text(&P->o, label, len);
	td_int(&P->o, files);
	td_bytes(&P->o, bytes);
	sb_adds(&P->o, "</tr>\n");
}

static void on_fs(void *ctx, const struct db_stats_fs *f)
{
	struct page *P = ctx;

	sb_adds(&P->o, "<tr>");
	td_s(&P->o, f->ident);
	td_s(&P->o, f->fstype);
	td_s(&P->o, f->mount);
	td_s(&P->o, f->last_walked ? f->last_walked : "never");
	td_int(&P->o, f->files);
	td_bytes(&P->o, f->bytes);
	td_int(&P->o, f->deleted);
	sb_adds(&P->o, "</tr>\n");
}

static void on_scan(void *ctx, const struct db_stats_scan *s)
{
	(void)ctx, (void)s;
}

static void on_device(void *ctx, const char *d, const char *order, int64_t f, int64_t b, double s)
{
	(void)ctx, (void)d, (void)order, (void)f, (void)b, (void)s;
}

static int glance(struct page *P, struct sl_err *err)
{
	const struct db_stats_out out = {on_totals, on_section, on_group, on_fs, on_scan, on_device, P};
	int rc = db_stats(P->db, 0, &out, err);

	sb_adds(&P->o, "</div></section>\n");
	return rc;
}

/* ---- history ---- */

/* Seconds since 1970 of "YYYY-MM-DDTHH:MM:SS..." (UTC), or -1. */
static double iso_seconds(const char *s)
{
	int y, mo, d, h, mi, se;
	int64_t days;

	if (!s || sscanf(s, "%4d-%2d-%2dT%2d:%2d:%2d", &y, &mo, &d, &h, &mi, &se) != 6)
		return -1;
	/* days from civil (proleptic Gregorian), March-based years */
	y -= mo <= 2;
	{
		int64_t era = (y >= 0 ? y : y - 399) / 400;
		int64_t yoe = y - era * 400;
		int64_t doy = (153 * (mo + (mo > 2 ? -3 : 9)) + 2) / 5 + d - 1;
		int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
		days = era * 146097 + doe - 719468;
	}
	return (double)days * 86400 + h * 3600 + mi * 60 + se;
}

static int on_hscan(void *ctx, const struct db_report_scan *s)
{
	struct page *P = ctx;
	struct strbuf *o = &P->rows_html;
	struct hist *h;

	if (sl_grow(&P->hist, &P->cap_hist, P->nhist + 1, sizeof(*P->hist)) != 0) {
		P->o.oom = 1;
		return -1;
	}
	if (P->nhist) { /* the last row ends: its disks are in */
		struct hist *l = &P->hist[P->nhist - 1];
		sb_adds(o, "</ul></td></tr>\n");
		l->row_len = o->len - l->row_at;
	}
	h = &P->hist[P->nhist++];
	h->t = iso_seconds(s->started_at);
	h->mbs = s->read_s > 0 ? (double)s->bytes / 1e6 / s->read_s : 0;
	h->wall = s->wall_s;
	h->row_at = o->len;
	h->row_len = 0;
	sb_addf(o, "<tr data-scan=\"%" PRId64 "\">", s->id);
	td_int(o, s->id);
	td_s(o, s->started_at);
	td_s(o, s->command);
	td_s(o, s->status);
	td_int(o, s->files);
	td_bytes(o, s->bytes);
	td_real(o, s->wall_s, 1);
	td_real(o, h->mbs, 1);
	td_opt(o, s->added);
	td_opt(o, s->changed);
	td_opt(o, s->moved);
	td_opt(o, s->deleted);
	td_int(o, s->errors);
	sb_adds(o, "<td><ul class=\"devs\">");
	return 0;
}

static int on_hdev(void *ctx, const struct db_report_dev *d)
{
	struct page *P = ctx;
	struct strbuf *o = &P->rows_html;

	sb_adds(o, "<li><b>");
	esc_s(o, d->device);
	sb_adds(o, "</b> ");
	if (d->fstype) {
		esc_s(o, d->fstype);
		sb_adds(o, ", ");
	}
	sb_adds(o, d->rotational == 1 ? "spinning, " : d->rotational == 0 ? "solid state, " : "");
	sb_adds(o, "order <i>");
	esc_s(o, d->order);
	sb_adds(o, "</i>: ");
	esc_s(o, d->reason);
	sb_addf(o, "; %" PRId64 " files, ", d->files);
	human_bytes(o, (double)d->bytes);
	if (d->read_s > 0)
		sb_addf(o, " at %.1f MB/s", (double)d->bytes / 1e6 / d->read_s);
	sb_adds(o, "</li>");
	return 0;
}

/* Two lines over time: MB/s (left axis) and the scan's duration (right). */
static void history_chart(struct strbuf *o, const struct hist *h, size_t n)
{
	const double W = 900, H = 260, L = 60, R = 60, T = 20, B = 40;
	double t0 = h[0].t, t1 = h[n - 1].t, mmax = 0, wmax = 0;
	int by_index = 0, k;
	size_t i;

	for (i = 0; i < n; i++) {
		if (h[i].t < 0)
			by_index = 1;
		if (h[i].mbs > mmax)
			mmax = h[i].mbs;
		if (h[i].wall > wmax)
			wmax = h[i].wall;
	}
	if (t1 <= t0)
		by_index = 1;
	if (mmax <= 0)
		mmax = 1;
	if (wmax <= 0)
		wmax = 1;
	sb_addf(o, "<svg id=\"history-chart\" class=\"chart\" width=\"%.0f\" height=\"%.0f\" "
		   "viewBox=\"0 0 %.0f %.0f\" role=\"img\" aria-label=\"MB/s and duration of each scan\">\n",
		W, H, W, H);
	sb_addf(o, "<rect x=\"%.0f\" y=\"%.0f\" width=\"%.0f\" height=\"%.0f\" fill=\"none\" "
		   "stroke=\"#bbb\"/>\n", L, T, W - L - R, H - T - B);
	for (k = 0; k <= 4; k++) {
		double y = T + (H - T - B) * k / 4;
		/* a tenth where whole numbers would all read the same */
		sb_addf(o, "<text x=\"%.0f\" y=\"%.1f\" class=\"ax mbs\" text-anchor=\"end\">%.*f</text>"
			   "<text x=\"%.0f\" y=\"%.1f\" class=\"ax wall\">%.*f s</text>\n",
			L - 5, y + 4, mmax < 10 ? 1 : 0, mmax * (4 - k) / 4, W - R + 5, y + 4,
			wmax < 10 ? 1 : 0, wmax * (4 - k) / 4);
	}
	sb_addf(o, "<text x=\"%.0f\" y=\"12\" class=\"ax mbs\">MB/s</text>"
		   "<text x=\"%.0f\" y=\"12\" class=\"ax wall\" text-anchor=\"end\">duration</text>\n",
		L, W - R);
	for (k = 0; k < 2; k++) {
		sb_addf(o, "<polyline class=\"%s\" fill=\"none\" points=\"", k ? "wall" : "mbs");
		for (i = 0; i < n; i++) {
			double x = L + (W - L - R) * (by_index ? (n > 1 ? (double)i / (double)(n - 1) : 0.5)
							       : (h[i].t - t0) / (t1 - t0));
			double v = k ? h[i].wall / wmax : h[i].mbs / mmax;
			sb_addf(o, "%.1f,%.1f ", x, T + (H - T - B) * (1 - v));
		}
		sb_adds(o, "\"/>\n");
		/* a dot per scan as well: one scan alone draws no line */
		sb_addf(o, "<g class=\"%s\">", k ? "wall" : "mbs");
		for (i = 0; i < n; i++) {
			double x = L + (W - L - R) * (by_index ? (n > 1 ? (double)i / (double)(n - 1) : 0.5)
							       : (h[i].t - t0) / (t1 - t0));
			double v = k ? h[i].wall / wmax : h[i].mbs / mmax;
			sb_addf(o, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"2.5\"/>", x, T + (H - T - B) * (1 - v));
		}
		sb_adds(o, "</g>\n");
	}
	/* the first and last dates under the axis */
	if (!by_index) {
		char a[32], b[32];
		time_t ta = (time_t)t0, tb = (time_t)t1;
		struct tm ga, gb;
		ga = *gmtime(&ta);
		gb = *gmtime(&tb);
		strftime(a, sizeof(a), "%Y-%m-%d", &ga);
		strftime(b, sizeof(b), "%Y-%m-%d", &gb);
		sb_addf(o, "<text x=\"%.0f\" y=\"%.0f\" class=\"ax\">%s</text><text x=\"%.0f\" y=\"%.0f\" "
			   "class=\"ax\" text-anchor=\"end\">%s</text>\n", L, H - B + 16, a, W - R,
			H - B + 16, b);
	}
	sb_adds(o, "</svg>\n");
}

static int history(struct page *P, struct sl_err *err)
{
	struct strbuf *o = &P->o;
	int64_t total = 0;
	size_t i, shown = 0;
	int rc;

	rc = db_report_scans(P->db, HISTORY_MAX, on_hscan, on_hdev, P, &total, err);
	if (rc != SL_OK)
		return rc;
	if (P->nhist) {
		struct hist *l = &P->hist[P->nhist - 1];
		sb_adds(&P->rows_html, "</ul></td></tr>\n");
		l->row_len = P->rows_html.len - l->row_at;
	}
	sb_adds(o, "<section id=\"history\"><h2>Nightly history</h2>\n");
	if (!P->nhist) {
		sb_adds(o, "<p>No scan yet.</p></section>\n");
		return SL_OK;
	}
	sb_adds(o, "<p>Every scan's reading speed (<span class=\"mbs\">MB/s</span>: bytes read "
		   "over the disks' reading time) and how long it took (<span class=\"wall\">"
		   "duration</span>).</p>\n");
	history_chart(o, P->hist, P->nhist);
	table_open(o, "t-history", "#|started (UTC)|command|status|files read|bytes read|wall s|"
		   "MB/s|new|changed|moved|deleted|errors|disks: order and why");
	for (i = P->nhist; i-- > 0 && shown < (size_t)P->rows; shown++)
		sb_add(o, P->rows_html.p + P->hist[i].row_at, P->hist[i].row_len);
	table_close(o);
	capped(o, "history-count", (int64_t)shown, total, "scans");
	sb_adds(o, "</section>\n");
	return SL_OK;
}

/* ---- bench ---- */

static int on_bench(void *ctx, const struct db_bench *b)
{
	struct page *P = ctx;
	struct strbuf *o = &P->o;
	struct hp_panel *pn = calloc(b->norders ? b->norders : 1, sizeof(*pn));
	struct strbuf names = STRBUF_INIT;
	size_t *at = calloc(b->norders ? b->norders : 1, sizeof(*at));
	size_t k;

	if (!pn || !at) {
		free(pn);
		free(at);
		o->oom = 1;
		return -1;
	}
	sb_addf(o, "<div class=\"bench\" data-bench=\"%" PRId64 "\"><h3>", b->id);
	esc_s(o, b->started_at);
	sb_addf(o, ": %" PRId64 " files, ", b->files);
	human_bytes(o, (double)b->bytes);
	sb_addf(o, ", median of %d cold run%s per order%s</h3>\n<p class=\"roots\">roots ", b->runs,
		b->runs == 1 ? "" : "s",
		b->caches_dropped ? "" : " (not root: the kernel's caches were kept)");
	esc_s(o, b->roots);
	sb_addf(o, "; runs are scans #%" PRId64 " to #%" PRId64 "</p>\n", b->first_scan,
		b->last_scan);
	sb_addf(o, "<table class=\"sort\" id=\"t-bench-%" PRId64 "\"><thead><tr><th>order</th>"
		   "<th>wall s</th><th>MB/s</th><th>files/s</th><th>speedup over fs</th>"
		   "<th>metadata s</th></tr></thead><tbody>\n", b->id);
	for (k = 0; k < b->norders; k++) {
		const struct db_bench_order *r = &b->orders[k];
		sb_adds(o, "<tr>");
		td_s(o, r->order);
		td_real(o, r->wall_s, 2);
		td_real(o, r->mb_per_s, 1);
		td_real(o, r->files_per_s, 0);
		if (r->speedup > 0)
			sb_addf(o, "<td class=\"n\" data-v=\"%.4f\">%.2fx</td>", r->speedup, r->speedup);
		else
			sb_adds(o, "<td class=\"n\" data-v=\"0\">-</td>");
		td_real(o, r->metadata_s, 2);
		sb_adds(o, "</tr>\n");
		/* the names go into the picture escaped: they come from the index */
		at[k] = names.len;
		esc_s(&names, r->order);
		sb_addc(&names, '\0');
	}
	sb_adds(o, "</tbody></table>\n");
	for (k = 0; k < b->norders && !names.oom; k++) {
		pn[k].order = names.p + at[k];
		pn[k].wall = b->orders[k].wall_s;
		pn[k].t = b->orders[k].t;
		pn[k].phys = b->orders[k].phys;
		pn[k].n = b->orders[k].n;
		pn[k].pieces = b->orders[k].pieces;
	}
	if (!names.oom) {
		sb_adds(o, "<div class=\"headpath\">");
		hp_svg(o, pn, b->norders);
		sb_adds(o, "</div>");
	}
	sb_adds(o, "</div>\n");
	if (names.oom)
		o->oom = 1;
	sb_free(&names);
	free(pn);
	free(at);
	return 0;
}

static int benches(struct page *P, struct sl_err *err)
{
	struct strbuf *o = &P->o;
	size_t mark;
	int rc;

	sb_adds(o, "<section id=\"bench\"><h2>Sorted against unsorted</h2>\n"
		   "<p>What <code>seekless bench</code> measured: the same files read cold in each"
		   " order, and where on the disk each piece was when it arrived (a sweep is one"
		   " rising line; an unsorted order jumps across the disk).</p>\n");
	mark = o->len;
	rc = db_bench_list(P->db, BENCHES_SHOWN, on_bench, P, &P->bench_total, err);
	if (rc != SL_OK)
		return rc;
	if (o->len == mark)
		sb_adds(o, "<p>No bench runs stored yet: <code>seekless bench ROOT</code> adds one.</p>\n");
	capped(o, "bench-count", P->bench_total < BENCHES_SHOWN ? P->bench_total : BENCHES_SHOWN,
	       P->bench_total, "benches");
	sb_adds(o, "</section>\n");
	return SL_OK;
}

/* ---- duplicates ---- */

static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

static void base64(struct strbuf *o, const unsigned char *p, size_t n)
{
	size_t i;

	for (i = 0; i + 2 < n; i += 3) {
		char q[4] = {b64[p[i] >> 2], b64[((p[i] & 3) << 4) | (p[i + 1] >> 4)],
			     b64[((p[i + 1] & 15) << 2) | (p[i + 2] >> 6)], b64[p[i + 2] & 63]};
		sb_add(o, q, 4);
	}
	if (n - i == 1) {
		char q[4] = {b64[p[i] >> 2], b64[(p[i] & 3) << 4], '=', '='};
		sb_add(o, q, 4);
	} else if (n - i == 2) {
		char q[4] = {b64[p[i] >> 2], b64[((p[i] & 3) << 4) | (p[i + 1] >> 4)],
			     b64[(p[i + 1] & 15) << 2], '='};
		sb_add(o, q, 4);
	}
}

/* The picture of the file at path into jpeg, or why there is none into
 * why (a sentence). */
static void picture(struct db *db, const char *path, size_t len, struct strbuf *jpeg,
		    struct strbuf *why)
{
	struct db_report_file rec;
	struct anchor *a = NULL;
	struct rd_file *f = NULL;
	struct rd_info info;
	struct x_meta m;
	struct sl_err e;
	unsigned char *buf = NULL;
	size_t want, got = 0;
	int found = 0, rc;

	memset(&m, 0, sizeof(m));
	if (strlen(path) != len || db_report_file(db, path, len, &rec, &found, &e) != SL_OK ||
	    !found) {
		sb_adds(why, "no record");
		return;
	}
	if (anchor_open(path, ANCHOR_FILE, &a, &e) != SL_OK || !anchor_leaf(a) ||
	    rd_open(a, anchor_leaf(a), &f, &info, &e) != SL_OK) {
		sb_adds(why, "not there now (moved or deleted since the scan)");
		goto out;
	}
	if ((int64_t)info.size != rec.size || info.mtime_ns != rec.mtime_ns) {
		sb_adds(why, "changed since the scan: scan again to see it");
		goto out;
	}
	want = info.size <= PIC_READ_MAX ? (size_t)info.size : PIC_HEAD;
	buf = malloc(want ? want : 1);
	if (!buf || rd_read(f, buf, want, 0, &got, &e) != SL_OK || got != want) {
		sb_adds(why, "could not be read");
		goto out;
	}
	x_extract(buf, got, info.size, &m, &e);
	if (strcmp(rec.phash_src, "exif-thumbnail") == 0 && m.pics.thumb_len &&
	    m.pics.thumb_off < got && m.pics.thumb_len <= got - m.pics.thumb_off)
		/* the scan found the thumbnail shows the picture: its hash is of it */
		rc = thumb_jpeg(buf + m.pics.thumb_off, (size_t)m.pics.thumb_len, rec.orientation,
				PIC_BOX, jpeg, &e);
	else if (strcmp(rec.phash_src, "preview") == 0 && m.pics.preview_len &&
		 m.pics.preview_off < got && m.pics.preview_len <= got - m.pics.preview_off)
		rc = thumb_jpeg(buf + m.pics.preview_off, (size_t)m.pics.preview_len, rec.orientation,
				PIC_BOX, jpeg, &e);
	else if ((strcmp(rec.format, "jpeg") == 0 || strcmp(rec.format, "mpo") == 0) &&
		 got == info.size)
		rc = thumb_jpeg(buf, got, rec.orientation, PIC_BOX, jpeg, &e);
	else
		rc = SL_E_UNSUPPORTED;
	if (rc == SL_E_UNSUPPORTED && !jpeg->len) {
		sb_adds(why, "no picture of this format in the report");
	} else if (rc != SL_OK) {
		sb_adds(why, "cannot be decoded: ");
		sb_adds(why, e.msg);
	}
out:
	x_meta_release(&m);
	free(buf);
	rd_close(f, 0);
	anchor_free(a);
}

static int on_identical(void *ctx, const struct db_dupe_group *g)
{
	struct page *P = ctx;
	struct strbuf *o = &P->o;
	size_t i;

	P->groups++;
	P->files += g->n;
	P->gain += (uint64_t)g->size * (g->n - 1);
	if (P->shown >= (uint64_t)P->rows)
		return 0;
	P->shown++;
	sb_adds(o, "<tr class=\"group\">");
	td_bytes(o, g->size);
	td_int(o, (int64_t)g->n);
	td_bytes(o, g->size * (int64_t)(g->n - 1));
	sb_adds(o, "<td class=\"paths\">");
	for (i = 0; i < g->n && i < REPORT_GROUP_FILES; i++) {
		sb_adds(o, "<div class=\"path\">");
		esc(o, g->paths[i], g->lens[i], 0);
		sb_adds(o, "</div>");
	}
	if (g->n > REPORT_GROUP_FILES)
		sb_addf(o, "<div class=\"more\">and %zu more</div>", g->n - REPORT_GROUP_FILES);
	sb_adds(o, "</td></tr>\n");
	return 0;
}

static int on_near(void *ctx, const struct db_dupe_group *g)
{
	struct page *P = ctx;
	struct strbuf *o = &P->o;
	size_t i;

	P->groups++;
	P->files += g->n;
	if (P->shown >= REPORT_NEAR_GROUPS)
		return 0;
	P->shown++;
	sb_addf(o, "<div class=\"near\" data-files=\"%zu\">", g->n);
	for (i = 0; i < g->n && i < REPORT_GROUP_FILES; i++) {
		struct strbuf jpeg = STRBUF_INIT, why = STRBUF_INIT;
		if (P->opt->pictures)
			picture(P->db, g->paths[i], g->lens[i], &jpeg, &why);
		else
			sb_adds(&why, "pictures left out (--no-pictures)");
		sb_adds(o, "<figure>");
		if (jpeg.len && !jpeg.oom) {
			sb_adds(o, "<img alt=\"\" src=\"data:image/jpeg;base64,");
			base64(o, (const unsigned char *)jpeg.p, jpeg.len);
			sb_adds(o, "\">");
		} else {
			sb_adds(o, "<div class=\"nopic\">");
			esc(o, why.p ? why.p : "", why.len, 0);
			sb_adds(o, "</div>");
		}
		sb_adds(o, "<figcaption>");
		esc(o, g->paths[i], g->lens[i], 0);
		sb_adds(o, "</figcaption></figure>");
		sb_free(&jpeg);
		sb_free(&why);
	}
	if (g->n > REPORT_GROUP_FILES)
		sb_addf(o, "<p class=\"more\">and %zu more</p>", g->n - REPORT_GROUP_FILES);
	sb_adds(o, "</div>\n");
	return 0;
}

static int dupes(struct page *P, struct sl_err *err)
{
	struct strbuf *o = &P->o;
	uint64_t n = 0;
	int rc;

	sb_adds(o, "<section id=\"dupes\"><h2>Duplicates</h2>\n<h3>Identical files</h3>\n");
	table_open(o, "t-identical", "size|copies|space to gain|paths");
	P->groups = P->files = P->gain = P->shown = 0;
	rc = db_dupes(P->db, -1, on_identical, P, &n, err);
	if (rc != SL_OK)
		return rc;
	table_close(o);
	sb_addf(o, "<p id=\"identical-summary\" data-groups=\"%" PRIu64 "\" data-files=\"%" PRIu64
		"\" data-gain=\"%" PRIu64 "\">%" PRIu64 " groups of identical files, %" PRIu64
		" files; keeping one of each would free ", P->groups, P->files, P->gain, P->groups,
		P->files);
	human_bytes(o, (double)P->gain);
	sb_adds(o, ".</p>\n");
	capped(o, "identical-count", (int64_t)P->shown, (int64_t)P->groups, "groups");
	if (P->opt->near_bits < 0) {
		sb_adds(o, "</section>\n");
		return SL_OK;
	}
	sb_addf(o, "<h3>Pictures that look alike</h3>\n<p>Perceptual hashes within %d bits in any"
		   " orientation (<code>seekless dupes --near</code>): re-saved, resized and turned"
		   " copies.  Each row is one group.</p>\n", P->opt->near_bits);
	P->groups = P->files = P->gain = P->shown = 0;
	rc = db_dupes(P->db, P->opt->near_bits, on_near, P, &n, err);
	if (rc != SL_OK)
		return rc;
	sb_addf(o, "<p id=\"near-summary\" data-groups=\"%" PRIu64 "\" data-files=\"%" PRIu64
		"\">%" PRIu64 " groups, %" PRIu64 " files.</p>\n", P->groups, P->files, P->groups,
		P->files);
	capped(o, "near-count", (int64_t)P->shown, (int64_t)P->groups, "groups");
	sb_adds(o, "</section>\n");
	return SL_OK;
}

/* ---- errors ---- */

static int on_error_row(void *ctx, const struct db_report_error *e)
{
	struct page *P = ctx;
	struct strbuf *o = &P->o;

	sb_adds(o, "<tr>");
	td_text(o, e->path, e->path_len);
	td_text(o, e->error, e->error_len);
	td_s(o, e->format);
	td_bytes(o, e->size);
	td_s(o, e->fs);
	td_int(o, e->last_scan);
	sb_adds(o, "</tr>\n");
	return 0;
}

static int errors(struct page *P, struct sl_err *err)
{
	struct strbuf *o = &P->o;
	int64_t total = 0;
	int rc;

	sb_adds(o, "<section id=\"errors\"><h2>Files with errors</h2>\n<p>Every file a scan"
		   " recorded with an error (each scan tries them again).</p>\n");
	table_open(o, "t-errors", "path|error|format|size|file system|last scan");
	rc = db_report_errors(P->db, P->rows, on_error_row, P, &total, err);
	if (rc != SL_OK)
		return rc;
	table_close(o);
	capped(o, "errors-count", total < P->rows ? total : P->rows, total, "files with errors");
	sb_adds(o, "</section>\n");
	return SL_OK;
}

/* ---- the page ---- */

static const char style[] =
	"body{font:14px/1.4 system-ui,sans-serif;margin:0 auto;max-width:1200px;padding:0 16px;"
	"color:#222}h1{margin:16px 0 0}h2{border-bottom:2px solid #ddd;margin-top:32px}"
	"nav a{margin-right:12px}.meta{color:#666}"
	"dl.totals{display:flex;flex-wrap:wrap;gap:12px}dl.totals div{background:#f3f5f8;"
	"padding:8px 14px;border-radius:6px}dt{color:#666;font-size:12px}dd{margin:0;"
	"font-size:20px;font-weight:600}"
	".grid{display:flex;flex-wrap:wrap;gap:16px}.card{flex:1 1 320px;overflow:auto}"
	"table{border-collapse:collapse;margin:8px 0}th,td{padding:3px 8px;border-bottom:1px solid"
	" #eee;text-align:left;vertical-align:top}td.n{text-align:right;"
	"font-variant-numeric:tabular-nums}th{cursor:pointer;background:#f3f5f8;position:sticky;"
	"top:0}th:hover{background:#e4e8ee}td.paths,td:first-child{word-break:break-all}"
	".x{color:#b00;font-family:monospace}.cap{color:#666}ul.devs{margin:0;padding-left:16px}"
	".chart .mbs,span.mbs{stroke:#2471a3;color:#2471a3;fill:#2471a3}.chart .wall,span.wall{"
	"stroke:#ca6f1e;color:#ca6f1e;fill:#ca6f1e}.chart polyline{fill:none}.chart polyline{stroke-width:2}.chart text{font-size:11px;fill:#555;"
	"stroke:none}.headpath svg{max-width:100%;height:auto}"
	".near{display:flex;flex-wrap:wrap;gap:10px;padding:10px 0;border-bottom:1px solid #eee}"
	"figure{margin:0;width:170px}figure img{display:block;max-width:160px;max-height:160px;"
	"border:1px solid #ccc}figcaption{font-size:11px;word-break:break-all;color:#444}"
	".nopic{width:160px;height:100px;background:#f6f6f6;color:#888;font-size:12px;"
	"display:flex;align-items:center;justify-content:center;text-align:center;padding:4px;"
	"box-sizing:border-box}";

/* Tables sort by the clicked column: numbers by their data-v, the rest as
 * text; a second click reverses. */
static const char script[] =
	"document.querySelectorAll('table.sort th').forEach(function(th){"
	"th.addEventListener('click',function(){var t=th.closest('table'),b=t.tBodies[0],"
	"i=th.cellIndex,d=th.getAttribute('data-dir')==='1'?-1:1;"
	"th.setAttribute('data-dir',d===1?'1':'0');"
	"var r=Array.prototype.slice.call(b.rows);r.sort(function(x,y){var a=x.cells[i],"
	"c=y.cells[i];if(!a||!c)return 0;var p=a.getAttribute('data-v'),q=c.getAttribute('data-v');"
	"if(p!==null&&q!==null)return d*(Number(p)-Number(q));"
	"return d*a.textContent.localeCompare(c.textContent);});"
	"r.forEach(function(e){b.appendChild(e);});});});";

int report_write(struct db *db, const struct report_opts *opt, FILE *out, struct sl_err *err)
{
	struct page P;
	char when[32];
	time_t now = time(NULL);
	struct tm g;
	int rc;

	memset(&P, 0, sizeof(P));
	P.db = db;
	P.opt = opt;
	P.rows = opt->rows > 0 ? opt->rows : REPORT_ROWS;
	g = *gmtime(&now);
	strftime(when, sizeof(when), "%Y-%m-%d %H:%M UTC", &g);
	sb_adds(&P.o, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
		      "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none';"
		      " img-src data:; style-src 'unsafe-inline'; script-src 'unsafe-inline'\">\n"
		      "<meta name=\"viewport\" content=\"width=device-width\">\n"
		      "<title>seekless report</title>\n<style>");
	sb_adds(&P.o, style);
	sb_adds(&P.o, "</style></head><body>\n<h1>seekless report</h1>\n<p class=\"meta\">Index ");
	esc_s(&P.o, opt->dbpath ? opt->dbpath : "?");
	sb_addf(&P.o, ", written %s by seekless %s.</p>\n", when, SEEKLESS_VERSION);
	sb_adds(&P.o, "<nav><a href=\"#glance\">At a glance</a><a href=\"#history\">History</a>"
		      "<a href=\"#bench\">Sorted against unsorted</a><a href=\"#dupes\">Duplicates</a>"
		      "<a href=\"#errors\">Errors</a></nav>\n");
	rc = glance(&P, err);
	if (rc == SL_OK)
		rc = history(&P, err);
	if (rc == SL_OK)
		rc = benches(&P, err);
	if (rc == SL_OK)
		rc = dupes(&P, err);
	if (rc == SL_OK)
		rc = errors(&P, err);
	sb_adds(&P.o, "<script>");
	sb_adds(&P.o, script);
	sb_adds(&P.o, "</script>\n</body></html>\n");
	if (rc == SL_OK && (P.o.oom || P.rows_html.oom))
		rc = SL_FAIL(err, SL_E_NOMEM, 0, "report: out of memory");
	if (rc == SL_OK && fwrite(P.o.p, 1, P.o.len, out) != P.o.len)
		rc = SL_FAIL(err, SL_E_IO, 0, "report: write error");
	sb_free(&P.o);
	sb_free(&P.rows_html);
	free(P.hist);
	return rc;
}

/* Written beside its place and then put there in one step: a report cut
 * off (a full disk, a service stopped at its time limit) leaves the last
 * whole one, and a browser reloading it never shows half a page. */
int report_file(struct db *db, const struct report_opts *o, const char *path, struct sl_err *err)
{
	struct strbuf tmp = STRBUF_INIT;
	FILE *f;
	int rc, e;

	sb_addf(&tmp, "%s.%ld.part", path, sys_pid());
	if (tmp.oom) {
		sb_free(&tmp);
		return SL_FAIL(err, SL_E_NOMEM, ENOMEM, "report: out of memory");
	}
	f = sys_fopen(tmp.p, "wb");
	if (!f) {
		rc = SL_FAIL(err, SL_E_IO, errno, "report: cannot write %s", tmp.p);
		sb_free(&tmp);
		return rc;
	}
	rc = report_write(db, o, f, err);
	if (fclose(f) != 0 && rc == SL_OK)
		rc = SL_FAIL(err, SL_E_IO, errno, "report: cannot write %s", tmp.p);
	if (rc == SL_OK && (e = sys_replace(tmp.p, path)) != 0)
		rc = SL_FAIL(err, SL_E_IO, e, "report: cannot put %s in place of %s", tmp.p, path);
	if (rc != SL_OK)
		sys_remove(tmp.p);
	sb_free(&tmp);
	return rc;
}
