/* seekless query - the indexed files that match, as paths or records. */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "common/strbuf.h"
#include "db/db.h"

static const char help[] =
	"usage: seekless query [--camera TEXT] [--lens TEXT] [--from DATE] [--to DATE]\n"
	"                      [--near LAT,LON,KM] [--format F] [--errors]\n"
	"                      [--rating N[..M]] [--label L] [--keyword K]... [--video]\n"
	"                      [--json | --csv | -0] [--db PATH] [--config FILE]\n"
	"       seekless query --pairs [--json] [--db PATH] [--config FILE]\n"
	"\n"
	"The indexed files that match every condition given, by path: their paths\n"
	"one per line (as stored), or their records.\n"
	"\n"
	"  --camera TEXT   make or model contains TEXT (any case): --camera 'eos 80'\n"
	"  --lens TEXT     lens model contains TEXT\n"
	"  --from DATE     taken on or after DATE (YYYY, YYYY-MM or YYYY-MM-DD,\n"
	"                  a day that exists: 2024-02-29 but not 2023-02-29)\n"
	"  --to DATE       taken on or before DATE (--to 2020: through 2020)\n"
	"  --near LAT,LON,KM  taken within KM kilometres of LAT,LON (degrees)\n"
	"  --format F      jpeg, png, heif, dng, cr2, nef... (as `stats` lists them;\n"
	"                  any case, and jpg, tif... for jpeg, tiff...)\n"
	"  --errors        only files that could not be read or parsed\n"
	"  --rating N[..M] rated N (or N to M; N.. and ..M leave a side open):\n"
	"                  -1 rejected, 0 unrated, 1 to 5 stars\n"
	"  --label L       colour label L (any case): --label red\n"
	"  --keyword K     tagged K (any case), as a keyword, a hierarchical keyword\n"
	"                  (Places|Coast|Sea) or its leaf (Sea); repeat: all of them\n"
	"  --video         movies only (MOV, MP4, M4V, 3GP, AVI)\n"
	"  --pairs         instead: files that belong together, a group a line\n"
	"                  (tab-separated kind and paths): raw+jpeg (a RAW and the\n"
	"                  JPEG or HEIF of the same folder, name and capture time),\n"
	"                  live (a Live Photo's still and movie: one content id),\n"
	"                  motion (a motion photo, with its movie's bytes)\n"
	"  --json          records as JSON lines (as `export` writes them)\n"
	"  --csv           records as CSV\n"
	"  -0, --print0    paths ending in NUL bytes (for xargs -0)\n"
	"\n"
	"An XMP sidecar's rating, label and keywords count over the file's own\n"
	"(and a sidecar that speaks for an image is found as that image).\n";

/* N, N..M, N.. or ..M: the syntax only; db_query_check owns the range
 * (values far outside it are clamped so that they stay outside it as int). */
static int parse_rating(const char *s, struct db_query *q)
{
	const char *dots = strstr(s, "..");
	char *end;
	long lo = -1, hi = 5;

	if (dots != s) {
		lo = strtol(s, &end, 10);
		if (end == s || (dots ? end != dots : *end != '\0'))
			return -1;
		hi = dots ? 5 : lo;
	}
	if (dots && dots[2]) {
		hi = strtol(dots + 2, &end, 10);
		if (*end)
			return -1;
	}
	lo = lo < -1000 ? -1000 : lo > 1000 ? 1000 : lo;
	hi = hi < -1000 ? -1000 : hi > 1000 ? 1000 : hi;
	q->rating = 1;
	q->rating_lo = (int)lo;
	q->rating_hi = (int)hi;
	return 0;
}

static int parse_near(const char *s, struct db_query *q)
{
	char *end;

	q->lat = strtod(s, &end);
	if (*end != ',')
		return -1;
	q->lon = strtod(end + 1, &end);
	if (*end != ',')
		return -1;
	q->km = strtod(end + 1, &end);
	if (*end)
		return -1;
	q->near = 1;
	return 0;
}

/* The names the extractors store (indexer/: x_sniff, bmff's brands,
 * tiff_kind, jpeg.c, eip.c), and the file-name extensions people type for
 * them.  --format is compared with the stored name, so without the
 * aliases `--format jpg` found nothing and said nothing; a name outside
 * both lists can only find nothing, so it is refused instead. */
static const char *const formats[] = {
	"3g2",  "3gp",  "arw",  "avi",  "avif", "bigtiff", "bmp", "cr2", "cr3",
	"crw",  "dng",  "eip",  "exv",  "gif",  "heic",    "heif", "jp2", "jpeg",
	"m4v",  "mov",  "mp4",  "mpo",  "mrw",  "nef",     "orf", "pef", "png",
	"psd",  "raf",  "rw2",  "srw",  "tiff", "webp",    "x3f", "xmp", "zip",
};
static const struct {
	const char *alias, *name;
} format_aliases[] = {
	{"jpg", "jpeg"}, {"jpe", "jpeg"}, {"jfif", "jpeg"}, {"tif", "tiff"},
	{"hif", "heif"}, {"qt", "mov"},   {"dib", "bmp"},
};

/* The stored name F stands for (ASCII case ignored), or NULL. */
static const char *format_name(const char *f)
{
	char low[16];
	size_t i;

	for (i = 0; f[i]; i++) {
		if (i + 1 >= sizeof(low))
			return NULL;
		low[i] = f[i] >= 'A' && f[i] <= 'Z' ? (char)(f[i] - 'A' + 'a') : f[i];
	}
	low[i] = '\0';
	for (i = 0; i < sizeof(formats) / sizeof(formats[0]); i++)
		if (strcmp(low, formats[i]) == 0)
			return formats[i];
	for (i = 0; i < sizeof(format_aliases) / sizeof(format_aliases[0]); i++)
		if (strcmp(low, format_aliases[i].alias) == 0)
			return format_aliases[i].name;
	return NULL;
}

static void unknown_format(const char *f)
{
	struct strbuf list = STRBUF_INIT;
	size_t i;

	for (i = 0; i < sizeof(formats) / sizeof(formats[0]); i++)
		sb_addf(&list, "%s%s", i ? ", " : "", formats[i]);
	sb_adds(&list, "; or");
	for (i = 0; i < sizeof(format_aliases) / sizeof(format_aliases[0]); i++)
		sb_addf(&list, "%s %s", i ? "," : "", format_aliases[i].alias);
	cli_usage_error("query", "--format %s: not a known format (%s)", f,
			list.oom ? "see seekless stats" : list.p);
	sb_free(&list);
}

/* query --pairs: one group per line, tab-separated (its kind, then its
 * paths, then a motion photo's movie bytes) or as a JSON line ({"kind",
 * "files", "embedded_video"}). */
struct pairs_out {
	struct strbuf o;
	int json;
};

static void pair_line(void *ctx, const char *kind, const char *const *paths, size_t n,
		      int64_t bytes)
{
	struct pairs_out *po = ctx;
	struct strbuf *o = &po->o;
	size_t i;

	if (po->json) {
		sb_addf(o, "{\"kind\":\"%s\",\"files\":[", kind);
		for (i = 0; i < n; i++) {
			if (i)
				sb_addc(o, ',');
			sb_add_json(o, paths[i], strlen(paths[i]));
		}
		sb_addc(o, ']');
		if (bytes >= 0)
			sb_addf(o, ",\"embedded_video\":%" PRId64, bytes);
		sb_adds(o, "}\n");
		return;
	}
	sb_adds(o, kind);
	for (i = 0; i < n; i++) {
		sb_addc(o, '\t');
		sb_adds(o, paths[i]);
	}
	if (bytes >= 0)
		sb_addf(o, "\t%" PRId64, bytes);
	sb_addc(o, '\n');
}

int cmd_query(int argc, char **argv)
{
	static const struct option opts[] = {
		{"camera", required_argument, NULL, 'c'},
		{"lens", required_argument, NULL, 'l'},
		{"from", required_argument, NULL, 'f'},
		{"to", required_argument, NULL, 't'},
		{"near", required_argument, NULL, 'n'},
		{"format", required_argument, NULL, 'F'},
		{"errors", no_argument, NULL, 'E'},
		{"rating", required_argument, NULL, 'r'},
		{"label", required_argument, NULL, 'L'},
		{"keyword", required_argument, NULL, 'k'},
		{"video", no_argument, NULL, 'V'},
		{"pairs", no_argument, NULL, 'P'},
		{"json", no_argument, NULL, 'j'},
		{"csv", no_argument, NULL, 'v'},
		{"print0", no_argument, NULL, '0'},
		{"db", required_argument, NULL, 'd'},
		{"config", required_argument, NULL, 'C'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	const char *dbopt = NULL, *config = NULL;
	struct db_query q;
	struct db *db = NULL;
	struct sl_err e;
	int c, rc, format = DB_PATHS, outputs = 0, pairs = 0, filters = 0;

	memset(&q, 0, sizeof(q));
	optind = 1;
	while ((c = cli_getopt("query", argc, argv, "0", opts)) != -1) {
		switch (c) {
		case 'c': q.camera = optarg; break;
		case 'l': q.lens = optarg; break;
		case 'f': q.from = optarg; break;
		case 't': q.to = optarg; break;
		case 'F':
			if (!(q.format = format_name(optarg))) {
				unknown_format(optarg);
				return EXIT_USAGE;
			}
			break;
		case 'E': q.errors = 1; break;
		case 'r':
			if (parse_rating(optarg, &q) != 0) {
				cli_usage_error("query", "--rating wants N, N..M, N.. or ..M,"
							 " not '%s'", optarg);
				return EXIT_USAGE;
			}
			break;
		case 'L': q.label = optarg; break;
		case 'k':
			if (q.nkeywords == DB_QUERY_KEYWORDS) {
				cli_usage_error("query", "at most %d --keyword", DB_QUERY_KEYWORDS);
				return EXIT_USAGE;
			}
			q.keywords[q.nkeywords++] = optarg;
			break;
		case 'V': q.video = 1; break;
		case 'P': pairs = 1; break;
		case 'n':
			if (parse_near(optarg, &q) != 0) {
				cli_usage_error("query", "--near wants LAT,LON,KM, e.g. 48.86,2.35,5");
				return EXIT_USAGE;
			}
			break;
		case 'j': format = DB_JSONL; outputs++; break;
		case 'v': format = DB_CSV; outputs++; break;
		case '0': format = DB_PATHS | DB_NUL; outputs++; break;
		case 'd': dbopt = optarg; break;
		case 'C': config = optarg; break;
		case 'h': fputs(help, stdout); return EXIT_OK;
		default: return EXIT_USAGE;
		}
	}
	if (optind < argc) {
		cli_usage_error("query", "unexpected argument '%s'", argv[optind]);
		return EXIT_USAGE;
	}
	filters = q.camera || q.lens || q.from || q.to || q.format || q.errors || q.near ||
		  q.rating || q.label || q.nkeywords || q.video;
	if (pairs && (filters || (outputs && format != DB_JSONL))) {
		cli_usage_error("query", "--pairs takes no conditions, and only --json");
		return EXIT_USAGE;
	}
	if (outputs > 1) {
		cli_usage_error("query", "choose one of --json, --csv and --print0");
		return EXIT_USAGE;
	}
	if (db_query_check(&q, &e) != SL_OK) {
		cli_usage_error("query", "%s", e.msg);
		return EXIT_USAGE;
	}
	if ((rc = cli_read_index("query", dbopt, config, &db)) != EXIT_OK)
		return rc;
	if (pairs) {
		struct pairs_out po = {STRBUF_INIT, format == DB_JSONL};
		uint64_t n;
		rc = db_pairs(db, pair_line, &po, &n, &e);
		/* all or nothing: written once every group is in */
		if (rc == SL_OK && po.o.oom)
			rc = SL_FAIL(&e, SL_E_NOMEM, 0, "pairs: out of memory");
		if (rc == SL_OK && ((po.o.len && fwrite(po.o.p, 1, po.o.len, stdout) != po.o.len) ||
				    fflush(stdout) != 0))
			rc = SL_FAIL(&e, SL_E_IO, 0, "pairs: write error");
		sb_free(&po.o);
	} else {
		rc = db_query(db, &q, stdout, format, &e);
	}
	if (rc != SL_OK)
		cli_error("query", &e);
	db_close(db);
	return rc == SL_OK ? EXIT_OK : rc == SL_E_USAGE ? EXIT_USAGE : EXIT_FATAL;
}
