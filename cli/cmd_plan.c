/* seekless plan - the read plan, without reading. */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app/scan.h"
#include "cli/cli.h"
#include "common/parse.h"
#include "common/sys.h"
#include "scanner/chunkmap.h"
#include "scanner/verify.h"

static const char help[] =
	"usage: seekless plan [--order ORDER] [--json | --print0] [--verify] [--seed N]\n"
	"                     [--mem SIZE] [--cross-fs] [--exclude GLOB] [--config FILE]\n"
	"                     [--db PATH] [ROOT...]\n"
	"\n"
	"Walk ROOTs (default: the configuration's roots), locate every file on\n"
	"disk and print the order a scan would read them in, disk by disk, with\n"
	"the order chosen for each disk and why.  Nothing is read and the index\n"
	"is not touched; its files, when below a ROOT, are left out as scan\n"
	"leaves them out.\n"
	"\n"
	"  --order ORDER   auto (default), physical, first-extent, inode,\n"
	"                  fs, path or random\n"
	"  --json          one JSON document instead of a table\n"
	"  -0, --print0    only the paths, in reading order (disk after disk),\n"
	"                  each ending in a NUL byte, for other tools:\n"
	"                    seekless plan -0 /photos | xargs -0 tar cf photos.tar\n"
	"                  reads the photos in disk order\n"
	"  --verify        prove the positions: for each placed file compare its\n"
	"                  first bytes (up to 4 KiB) read through the file with\n"
	"                  the same bytes read from the raw disk at its planned\n"
	"                  offset (needs root); per device 'verified N of M;\n"
	"                  K differ; J not checked' and why.  Exit 0 when nothing\n"
	"                  differs, 1 when something does, 3 when no device could\n"
	"                  be read\n"
	"  --seed N        seed for --order random\n"
	"  --mem SIZE      plan the extent schedule as `scan --mem SIZE` would\n"
	"                  (default: the configuration's, else as scan's)\n"
	"  --cross-fs      descend into file systems mounted below a root\n"
	"  --exclude GLOB  leave out what matches (repeatable; adds to the\n"
	"                  configuration's; docs/usage.md)\n"
	"  --config FILE   read this configuration file only\n"
	"  --db PATH       the index whose files to leave out, as scan does\n"
	"                  (default: the configuration's db, else\n"
	"                  $XDG_DATA_HOME/seekless/index.db)\n"
	"\n"
	"Text columns: phys_offset (first physical byte on its file system, '-'\n"
	"when the file has none), fragments ('N+' where FIBMAP's count stopped\n"
	"short: at least N), size, device, path.\n";

/* Whether the group's files are placed by FIBMAP alone. */
static int group_bmap_only(const struct prep *p, const struct plan *pl, size_t g)
{
	size_t i;
	int bmap = 0;
	for (i = 0; i < p->ft.ndevs; i++) {
		if (pl->dev_group[i] != g || p->ft.devs[i].extents != 1)
			continue;
		if (p->ft.devs[i].by != FT_BY_BMAP)
			return 0;
		bmap = 1;
	}
	return bmap;
}

static const char *group_how(const struct prep *p, const struct plan *pl, size_t g)
{
	size_t i;
	for (i = 0; i < p->ft.ndevs; i++)
		if (pl->dev_group[i] == g)
			return p->devs[i].how;
	return "?";
}

/* A file's or file system's way to its position, as a JSON value. */
static const char *by_name(int by)
{
	return by == FT_BY_BMAP ? "\"fibmap\"" : by == FT_BY_MAP ? "\"extent_map\"" : "null";
}

static void json_errno(struct strbuf *o, const char *key, int e)
{
	char why[128];
	sb_adds(o, key);
	if (!e) {
		sb_adds(o, "null");
		return;
	}
	sys_strerror(e, why, sizeof(why));
	sb_add_json(o, why, strlen(why));
}

/* A fragmented file's runs as [logical, position, length], positions on
 * its file system as phys_offset; null when it keeps none (extents.h). */
static void json_runs(struct strbuf *o, const struct ftab *ft, uint32_t file)
{
	size_t n, k;
	const struct ft_run *r = ftab_runs(ft, file, &n);

	if (!r) {
		sb_adds(o, ",\"runs\":null");
		return;
	}
	sb_adds(o, ",\"runs\":[");
	for (k = 0; k < n; k++)
		sb_addf(o, "%s[%" PRIu64 ",%" PRIu64 ",%" PRIu64 "]", k ? "," : "", r[k].logical,
			r[k].phys, r[k].len);
	sb_addc(o, ']');
}

/* The group's extent schedule (sched.h): its figures, and every op as
 * [file, kind, offset, length, disk position], file being the op's index
 * in the plan's "files" list. */
static void json_schedule(struct strbuf *o, const struct plan_group *gr)
{
	const struct sched_stats *st = &gr->sched;
	size_t i;

	if (!gr->ops) {
		sb_adds(o, "null");
		return;
	}
	sb_addf(o,
		"{\"window\":%" PRIu64 ",\"pieces\":%zu,\"read_whole\":%zu,\"read_across\":%zu,"
		"\"kept_ahead\":%zu,\"read_back\":%zu,\"peak_held\":%" PRIu64
		",\"peak_open\":%u,\"passes\":%u,\"ops\":[",
		gr->window, st->pieces, st->whole, st->spread, st->ahead, st->back, st->peak_held,
		st->peak_open, st->passes);
	for (i = 0; i < gr->nops; i++) {
		const struct sched_op *op = &gr->ops[i];
		sb_addf(o, "%s[%zu,\"%s\",%" PRIu64 ",%" PRIu64 ",%" PRIu64 "]", i ? "," : "",
			gr->first + op->file, sched_kind_name(op->kind), op->off, op->len, op->phys);
	}
	sb_adds(o, "]}");
}

static void json_device(struct strbuf *o, const struct prep *p, const struct plan *pl, size_t g)
{
	const struct plan_group *gr = &pl->groups[g];
	const char *how = group_how(p, pl, g);
	size_t i;
	int first = 1;

	sb_adds(o, "{\"name\":");
	sb_add_json(o, gr->name, strlen(gr->name));
	sb_addf(o, ",\"rotational\":%s,\"rotational_source\":",
		gr->rotational < 0 ? "null" : gr->rotational ? "true" : "false");
	sb_add_json(o, how, strlen(how));
	sb_addf(o, ",\"extents\":%s,\"order\":\"%s\",\"reason\":", gr->extents ? "true" : "false",
		plan_order_name(gr->order));
	sb_add_json(o, gr->reason, strlen(gr->reason));
	sb_addf(o, ",\"files\":%zu,\"bytes\":%" PRIu64 ",\"located\":%zu,\"written_back\":%zu,"
		"\"synced_fs\":%s,\"writeback_s\":%.3f,\"file_systems\":[",
		gr->count, gr->bytes, gr->located, gr->written_back,
		gr->synced_fs ? "true" : "false", gr->writeback_s);
	for (i = 0; i < p->ft.ndevs; i++) {
		const struct dev_info *d = &p->devs[i];
		const struct ft_dev *fd = &p->ft.devs[i];
		char num[32];
		if (pl->dev_group[i] != g)
			continue;
		dev_number(d->st_dev, num, sizeof(num));
		sb_addf(o, "%s{\"dev\":\"%s\",\"id\":", first ? "" : ",", num);
		sb_add_json(o, d->fs_id, strlen(d->fs_id));
		sb_adds(o, ",\"fstype\":");
		sb_add_json(o, d->fstype, strlen(d->fstype));
		sb_adds(o, ",\"mount\":");
		sb_add_json(o, d->mount, strlen(d->mount));
		sb_adds(o, ",\"source\":");
		sb_add_json(o, d->source, strlen(d->source));
		sb_addf(o, ",\"partition_offset\":%" PRIu64 ",\"extents\":%s,\"located_by\":%s",
			d->part_start, fd->extents == 1 ? "true" : "false",
			fd->extents != 1 ? "null" : by_name(fd->by));
		json_errno(o, ",\"extents_error\":", fd->extents == 0 ? fd->extents_errno : 0);
		json_errno(o, ",\"fibmap_error\":", fd->extents == 0 ? fd->bmap_errno : 0);
		sb_addf(o, ",\"positions\":\"%s\",\"logical_why\":",
			fd->logical ? "logical" : "device");
		if (fd->logical)
			sb_add_json(o, chunkmap_why(fd->logical), strlen(chunkmap_why(fd->logical)));
		else
			sb_adds(o, "null");
		sb_addc(o, '}');
		first = 0;
	}
	sb_adds(o, "],\"schedule\":");
	json_schedule(o, gr);
	sb_addc(o, '}');
}

static int print_json(FILE *out, const struct prep *p, const struct plan *pl)
{
	struct strbuf o = STRBUF_INIT, path = STRBUF_INIT;
	size_t g, i;
	int first = 1, rc = 0;
	uint32_t k;

	sb_addf(&o, "{\"order_requested\":\"%s\",\"seed\":%" PRIu64 ",\"mem\":%" PRIu64
		    ",\"joined\":%zu,\"roots\":[",
		plan_order_name(pl->requested), pl->seed, pl->mem, pl->aliases);
	for (i = 0; i < p->nroots; i++) {
		if (i)
			sb_addc(&o, ',');
		sb_add_json(&o, p->roots[i], strlen(p->roots[i]));
	}
	sb_adds(&o, "],\"devices\":[");
	for (g = 0; g < pl->ngroups; g++) {
		if (g)
			sb_addc(&o, ',');
		json_device(&o, p, pl, g);
	}
	sb_adds(&o, "],\"files\":[");
	/* files can be millions: flush as we go */
	for (g = 0; g < pl->ngroups; g++) {
		const struct plan_group *gr = &pl->groups[g];
		for (i = gr->first; i < gr->first + gr->count; i++) {
			const struct ft_file *f = &p->ft.files[pl->seq[i]];
			const char *via = ftab_via(&p->ft, pl->seq[i]);
			sb_reset(&path);
			ftab_path(&p->ft, pl->seq[i], &path);
			sb_adds(&o, first ? "\n{\"path\":" : ",\n{\"path\":");
			first = 0;
			sb_add_json(&o, path.p, path.len);
			sb_adds(&o, ",\"device\":");
			sb_add_json(&o, gr->name, strlen(gr->name));
			if (f->flags & FT_LOCATED)
				sb_addf(&o, ",\"phys_offset\":%" PRIu64, f->phys);
			else
				sb_adds(&o, ",\"phys_offset\":null");
			if (f->flags & FT_NOEXT)
				sb_adds(&o, ",\"fragments\":null,\"fragments_exact\":null");
			else
				sb_addf(&o, ",\"fragments\":%u,\"fragments_exact\":%s", f->fragments,
					f->frag_min ? "false" : "true");
			sb_addf(&o, ",\"located_by\":%s",
				(f->flags & FT_LOCATED) ? by_name(f->by) : "null");
			json_runs(&o, &p->ft, pl->seq[i]);
			sb_adds(&o, ",\"read_from\":");
			if (via)
				sb_add_json(&o, via, strlen(via));
			else
				sb_adds(&o, "null");
			sb_addf(&o, ",\"size\":%" PRIu64 ",\"inode\":%" PRIu64 ",\"placement\":\"%s\"",
				f->size, f->ino, ftab_placement(f->flags));
			/* names read with this one (hard links, reflink copies) */
			sb_adds(&o, ",\"other_names\":[");
			for (k = ftab_link_next(&p->ft, pl->seq[i]); k != FT_NONE;
			     k = ftab_link_next(&p->ft, k)) {
				sb_reset(&path);
				ftab_path(&p->ft, k, &path);
				if (o.p[o.len - 1] != '[')
					sb_addc(&o, ',');
				sb_add_json(&o, path.p, path.len);
			}
			sb_adds(&o, "]}");
			if (o.len > 1 << 16) {
				fwrite(o.p, 1, o.len, out);
				sb_reset(&o);
			}
		}
	}
	sb_adds(&o, "],\"errors\":[");
	first = 1;
	for (i = 0; i < p->ft.nfiles; i++) {
		const struct ft_file *f = &p->ft.files[i];
		if (!(f->flags & FT_FAILED))
			continue;
		sb_reset(&path);
		ftab_path(&p->ft, (uint32_t)i, &path);
		sb_adds(&o, first ? "\n{\"path\":" : ",\n{\"path\":");
		first = 0;
		sb_add_json(&o, path.p, path.len);
		sb_adds(&o, ",\"error\":");
		sb_add_json(&o, ftab_str(&p->ft, f->err), strlen(ftab_str(&p->ft, f->err)));
		sb_addc(&o, '}');
	}
	sb_adds(&o, "]}\n");
	if (o.oom || path.oom)
		rc = -1;
	else
		fwrite(o.p, 1, o.len, out);
	sb_free(&o);
	sb_free(&path);
	return rc;
}

/* The paths alone, NUL-terminated (any byte but NUL may be in a name).
 * Every name: a file the scan reads once under its first name (hard
 * links, reflink copies: pl->aliases) is listed under each of its other
 * names right after, since a list for tar or rsync that left them out
 * would lose them. */
static int print_null(FILE *out, const struct prep *p, const struct plan *pl)
{
	struct strbuf path = STRBUF_INIT;
	size_t i;
	int rc = 0;

	/* groups are laid out one after another in seq: disk after disk */
	for (i = 0; i < pl->n && rc == 0; i++) {
		uint32_t k;
		for (k = pl->seq[i]; k != FT_NONE && rc == 0; k = ftab_link_next(&p->ft, k)) {
			sb_reset(&path);
			if (ftab_path(&p->ft, k, &path) != 0)
				rc = -1;
			else if (fwrite(path.p, 1, path.len + 1, out) != path.len + 1)
				rc = -1;
		}
	}
	sb_free(&path);
	return rc;
}

static int print_text(FILE *out, const struct prep *p, const struct plan *pl)
{
	struct strbuf path = STRBUF_INIT;
	size_t g, i;

	fprintf(out, "# order requested: %s", plan_order_name(pl->requested));
	if (pl->requested == PLAN_RANDOM)
		fprintf(out, " (seed %" PRIu64 ")", pl->seed);
	if (pl->mem) /* as --mem counts: M is MiB */
		fprintf(out, "; memory for file bytes: %.0fM", (double)pl->mem / (1 << 20));
	if (pl->aliases)
		fprintf(out, "; %zu file%s whose bytes are a listed file's (hard links, shared "
			     "extents), not read again",
			pl->aliases, pl->aliases == 1 ? "" : "s");
	fputc('\n', out);
	for (g = 0; g < pl->ngroups; g++) {
		const struct plan_group *gr = &pl->groups[g];
		char fs[512], bytes[32];
		prep_group_fs(p, pl, g, fs, sizeof(fs));
		cli_fmt_bytes(gr->bytes, bytes, sizeof(bytes));
		fprintf(out, "# device %s (%s): %s, %s; %zu files, %s\n", gr->name, fs,
			gr->rotational == 1 ? "rotational" : gr->rotational == 0 ? "non-rotational"
										  : "rotational unknown",
			!gr->extents		  ? "extent maps unavailable"
			: group_bmap_only(p, pl, g) ? "positions from FIBMAP"
						  : "extent maps available",
			gr->count, bytes);
		fprintf(out, "#   order %s: %s\n", plan_order_name(gr->order), gr->reason);
	}
	fprintf(out, "phys_offset\tfragments\tsize\tdevice\tpath\n");
	for (g = 0; g < pl->ngroups; g++) {
		const struct plan_group *gr = &pl->groups[g];
		for (i = gr->first; i < gr->first + gr->count; i++) {
			const struct ft_file *f = &p->ft.files[pl->seq[i]];
			sb_reset(&path);
			if (ftab_path(&p->ft, pl->seq[i], &path) != 0)
				break;
			if (f->flags & FT_LOCATED)
				fprintf(out, "%" PRIu64, f->phys);
			else
				fputc('-', out);
			if (f->flags & FT_NOEXT)
				fprintf(out, "\t-");
			else
				fprintf(out, "\t%u%s", f->fragments, f->frag_min ? "+" : "");
			fprintf(out, "\t%" PRIu64 "\t%s\t%s\n", f->size, gr->name, path.p);
		}
	}
	for (i = 0; i < p->ft.nfiles; i++) {
		const struct ft_file *f = &p->ft.files[i];
		if (!(f->flags & FT_FAILED))
			continue;
		sb_reset(&path);
		ftab_path(&p->ft, (uint32_t)i, &path);
		fprintf(out, "# error: %s: %s\n", path.p ? path.p : "?", ftab_str(&p->ft, f->err));
	}
	sb_free(&path);
	return path.oom ? -1 : 0;
}

/* ---- --verify ---- */

struct differing {
	FILE *out;
	const struct prep *p;
	int json;
	struct strbuf *o; /* JSON: the list of one group's differing files */
};

static void differs(void *ctx, size_t group, uint32_t file, uint64_t pos, size_t at)
{
	struct differing *d = ctx;
	struct strbuf path = STRBUF_INIT;

	ftab_path(&d->p->ft, file, &path);
	if (d->json) {
		(void)group; /* JSON verifies one group at a time */
		sb_adds(d->o, d->o->len ? ",{\"path\":" : "{\"path\":");
		sb_add_json(d->o, path.p ? path.p : "", path.len);
		sb_addf(d->o, ",\"phys_offset\":%" PRIu64 ",\"first_difference\":%zu}", pos, at);
	} else {
		fprintf(d->out, "# differs: %s at %" PRIu64 ", from byte %zu of its head\n",
			path.p ? path.p : "?", pos, at);
	}
	sb_free(&path);
}

static size_t not_checked(const struct verify_group *v)
{
	size_t n = 0;
	int w;
	for (w = 0; w < VS_N; w++)
		n += v->skipped[w];
	return n;
}

static void text_group(FILE *out, const struct plan_group *gr, const struct verify_group *v)
{
	int w, first = 1;

	fprintf(out, "verify %s (%s): verified %zu of %zu; %zu differ; %zu not checked", gr->name,
		v->device[0] ? v->device : "no device", v->verified, v->files, v->differ,
		not_checked(v));
	for (w = 0; w < VS_N; w++) {
		if (!v->skipped[w])
			continue;
		fprintf(out, "%s%zu %s", first ? ": " : ", ", v->skipped[w], verify_skip_name(w));
		if (w == VS_DEVICE && v->device_error[0])
			fprintf(out, " (%s)", v->device_error);
		if (w == VS_LOGICAL)
			fprintf(out, " (%s)", chunkmap_why(v->logical_why));
		first = 0;
	}
	fputc('\n', out);
}

static void json_group(struct strbuf *o, const struct plan_group *gr, const struct verify_group *v,
		       const struct strbuf *diff)
{
	int w, first = 1;

	sb_adds(o, "{\"device\":");
	sb_add_json(o, gr->name, strlen(gr->name));
	sb_adds(o, ",\"read\":");
	if (v->device[0])
		sb_add_json(o, v->device, strlen(v->device));
	else
		sb_adds(o, "null");
	sb_addf(o, ",\"files\":%zu,\"verified\":%zu,\"differ\":%zu,\"not_checked\":%zu,\"why\":{",
		v->files, v->verified, v->differ, not_checked(v));
	for (w = 0; w < VS_N; w++) {
		const char *name = verify_skip_name(w);
		if (!v->skipped[w])
			continue;
		sb_adds(o, first ? "" : ",");
		sb_add_json(o, name, strlen(name));
		sb_addf(o, ":%zu", v->skipped[w]);
		first = 0;
	}
	sb_adds(o, "},\"device_error\":");
	if (v->device_error[0])
		sb_add_json(o, v->device_error, strlen(v->device_error));
	else
		sb_adds(o, "null");
	sb_adds(o, ",\"logical_why\":");
	if (v->skipped[VS_LOGICAL])
		sb_add_json(o, chunkmap_why(v->logical_why), strlen(chunkmap_why(v->logical_why)));
	else
		sb_adds(o, "null");
	sb_adds(o, ",\"differing\":[");
	sb_add(o, diff->p ? diff->p : "", diff->len);
	sb_adds(o, "]}");
}

/* Returns the exit status: 0 nothing differs, 1 something does, 3 no
 * device could be read; -1 out of memory. */
static int verify(FILE *out, const struct prep *p, const struct plan *pl, int json)
{
	struct strbuf o = STRBUF_INIT, diff = STRBUF_INIT;
	struct differing d = {out, p, json, &diff};
	struct verify_cb cb = {&d, differs};
	struct verify_group *v = calloc(pl->ngroups ? pl->ngroups : 1, sizeof(*v));
	size_t g, read = 0, differ = 0;
	struct sl_err e;
	int rc;

	if (!v)
		return -1;
	if (json) {
		/* one group at a time, so that the differing list is its own */
		sb_adds(&o, "{\"verify\":[");
		for (g = 0; g < pl->ngroups; g++) {
			struct plan one = *pl;
			/* a group with nothing planned (a pool, whose files are
			 * its branches') has nothing to say */
			if (!pl->groups[g].count)
				continue;
			one.groups = (struct plan_group *)&pl->groups[g];
			one.ngroups = 1;
			sb_reset(&diff);
			if (verify_plan(&p->ft, p->devs, &one, &v[g], &cb, &e) != SL_OK)
				goto nomem;
			if (o.p[o.len - 1] != '[')
				sb_addc(&o, ',');
			json_group(&o, &pl->groups[g], &v[g], &diff);
		}
	} else if (verify_plan(&p->ft, p->devs, pl, v, &cb, &e) != SL_OK) {
		goto nomem;
	}
	for (g = 0; g < pl->ngroups; g++) {
		read += v[g].devices_read;
		differ += v[g].differ;
		if (!json && pl->groups[g].count)
			text_group(out, &pl->groups[g], &v[g]);
	}
	rc = differ ? 1 : read ? 0 : 3;
	if (json) {
		sb_addf(&o, "],\"differ\":%zu,\"exit\":%d}\n", differ, rc);
		if (o.oom || diff.oom)
			goto nomem;
		fwrite(o.p, 1, o.len, out);
	} else if (rc == 3) {
		fprintf(out, "# nothing was verified: no device was read\n");
	}
	free(v);
	sb_free(&o);
	sb_free(&diff);
	return rc;
nomem:
	free(v);
	sb_free(&o);
	sb_free(&diff);
	return -1;
}

static void note(void *ctx, const char *msg)
{
	fprintf(stderr, "seekless plan: %s\n", msg);
}

int cmd_plan(int argc, char **argv)
{
	static const struct option opts[] = {
		{"order", required_argument, NULL, 'o'},
		{"json", no_argument, NULL, 'j'},
		{"print0", no_argument, NULL, '0'},
		{"verify", no_argument, NULL, 'v'},
		{"seed", required_argument, NULL, 's'},
		{"mem", required_argument, NULL, 'm'},
		{"cross-fs", no_argument, NULL, 'x'},
		{"db", required_argument, NULL, 'd'},
		{"config", required_argument, NULL, 'C'},
		{"exclude", required_argument, NULL, 'e'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	struct scan_args a;
	struct scan_settings set;
	struct plan pl;
	struct sl_err e;
	char **extra = NULL;
	int json = 0, print0 = 0, check = 0, failed, c, rc, vrc = 0;
	uint64_t mem = 0;

	memset(&a, 0, sizeof(a));
	a.order = a.cross_fs = a.phash = a.phash_now = a.trust_mtime = a.background = -1;
	extra = calloc((size_t)argc + 1, sizeof(*extra));
	if (!extra)
		return EXIT_FATAL;
	memset(&pl, 0, sizeof(pl));
	optind = 1;
	while ((c = cli_getopt("plan", argc, argv, "0", opts)) != -1) {
		switch (c) {
		case '0': print0 = 1; break;
		case 'v': check = 1; break;
		case 'o':
			if (plan_order_parse(optarg, &a.order) != 0) {
				cli_usage_error("plan", "unknown order '%s'", optarg);
				free(extra);
				return EXIT_USAGE;
			}
			break;
		case 'j': json = 1; break;
		case 's':
			a.seed = strtoull(optarg, NULL, 10);
			a.have_seed = 1;
			break;
		case 'm':
			if (parse_size(optarg, &mem) != 0 || mem < (1u << 20)) {
				cli_usage_error("plan", "--mem wants a size of at least 1M");
				free(extra);
				return EXIT_USAGE;
			}
			a.mem = mem;
			break;
		case 'x': a.cross_fs = 1; break;
		case 'd': a.db = optarg; break;
		case 'C': a.config = optarg; break;
		case 'e': extra[a.nexcludes++] = optarg; break;
		case 'h': free(extra); fputs(help, stdout); return EXIT_OK;
		default: free(extra); return EXIT_USAGE;
		}
	}
	if ((json || check) && print0) {
		cli_usage_error("plan", "--print0 excludes --json and --verify");
		free(extra);
		return EXIT_USAGE;
	}
	a.roots = argv + optind;
	a.nroots = (size_t)(argc - optind);
	a.excludes = extra;
	a.note = note;
	rc = scan_configure(&a, &set, &e);
	free(extra);
	if (rc != SL_OK) {
		if (rc == SL_E_USAGE)
			cli_usage_error("plan", "%s", e.msg);
		else
			cli_error("plan", &e);
		scan_settings_free(&set);
		return rc == SL_E_USAGE ? EXIT_USAGE : EXIT_FATAL;
	}
	/* as scan does: the sweeps' open files come from the descriptors
	 * (px_mem), and the index's own files are left out: the plan shown is
	 * to be the one scan follows */
	sys_raise_fd_limit();
	rc = prep_walk_locate(&set.p, set.cross_fs, &set.ex, set.dbpath.p, NULL, &e);
	if (rc == SL_OK)
		rc = prep_plan(&set.p, set.order, set.seed, set.po.mem_budget, &pl, &e);
	if (rc != SL_OK) {
		cli_error("plan", &e);
	} else if (check) {
		vrc = verify(stdout, &set.p, &pl, json);
		if (vrc < 0 || fflush(stdout) != 0) {
			SL_FAIL(&e, SL_E_NOMEM, 0, "cannot write the verification");
			cli_error("plan", &e);
			rc = SL_E_NOMEM;
		}
	} else if ((print0 ? print_null(stdout, &set.p, &pl)
		    : json ? print_json(stdout, &set.p, &pl) : print_text(stdout, &set.p, &pl)) != 0 ||
		   fflush(stdout) != 0) {
		SL_FAIL(&e, SL_E_NOMEM, 0, "cannot write the plan");
		cli_error("plan", &e);
		rc = SL_E_NOMEM;
	}
	failed = set.p.ws.dir_errors || set.p.ls.failed;
	plan_free(&pl);
	scan_settings_free(&set);
	if (rc != SL_OK)
		return EXIT_FATAL;
	if (check)
		return vrc; /* 0, 1 or 3, as the help says */
	return failed ? EXIT_FILE_ERRORS : EXIT_OK;
}
