#include "scanner/plan.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/sys.h"
#include "scanner/chunkmap.h"
#include "scanner/extents.h"

static const char *const order_names[] = {"auto", "physical", "inode",  "fs",
					  "path", "random",   "first-extent"};

const char *plan_order_name(int order)
{
	if (order < 0 || order >= PLAN_NORDERS)
		return "?";
	return order_names[order];
}

int plan_order_parse(const char *s, int *order)
{
	int i;
	for (i = 0; i < PLAN_NORDERS; i++) {
		if (strcmp(s, order_names[i]) == 0) {
			*order = i;
			return 0;
		}
	}
	return -1;
}

/* Why files cannot be placed, into why. */
static void why_unplaced(const struct plan_facts *f, char *why, size_t cap)
{
	char e1[96], e2[96];

	if (f->ext_errno)
		sys_strerror(f->ext_errno, e1, sizeof(e1));
	else
		snprintf(e1, sizeof(e1), "not available");
	if (f->bmap_errno == EPERM) {
		snprintf(why, cap, "no extent map on %s (%s), and FIBMAP needs CAP_SYS_RAWIO", f->fstype,
			 e1);
		return;
	}
	if (f->bmap_errno) {
		sys_strerror(f->bmap_errno, e2, sizeof(e2));
		snprintf(why, cap, "no extent map on %s (%s), nor FIBMAP (%s)", f->fstype, e1, e2);
		return;
	}
	snprintf(why, cap, "no extent map on %s (%s)", f->fstype, e1);
}

static const char *root_hint(const struct plan_facts *f)
{
	return f->bmap_errno == EPERM ? "; run as root (or as the service) for physical order" : "";
}

int plan_decide(int requested, const struct plan_facts *f, char *reason, size_t cap)
{
	char why[384] = "";
	const char *map = f->by == FT_BY_BMAP ? "FIBMAP places files (no extent map)"
					      : "extent maps available";

	if (!f->extents)
		why_unplaced(f, why, sizeof(why));
	switch (requested) {
	case PLAN_AUTO:
		if (f->rotational == 0) {
			snprintf(reason, cap, "no seek penalty (%s): enumeration order", f->how);
			return PLAN_FS;
		}
		if (f->extents) {
			snprintf(reason, cap, "%s (%s) and %s: by first physical offset",
				 f->rotational == 1 ? "rotational" : "seek penalty unknown, assumed",
				 f->how, map);
			return PLAN_PHYSICAL;
		}
		snprintf(reason, cap, "%s: by inode number instead%s", why, root_hint(f));
		return PLAN_INODE;
	case PLAN_PHYSICAL:
	case PLAN_FIRST:
		if (f->extents) {
			snprintf(reason, cap, "requested; by first physical offset%s%s",
				 f->by == FT_BY_BMAP ? " (from FIBMAP)" : "",
				 requested == PLAN_FIRST ? ", each file whole" : "");
			return requested;
		}
		snprintf(reason, cap, "physical requested, but %s: fell back to inode order%s", why,
			 root_hint(f));
		return PLAN_INODE;
	default:
		snprintf(reason, cap, "requested");
		return requested;
	}
}

/* Whether every file system of group g is a pool (ft_dev.pool). */
static int group_is_pool(const struct ftab *ft, const struct plan *p, size_t g)
{
	size_t i;
	int any = 0;
	for (i = 0; i < ft->ndevs; i++) {
		if (p->dev_group[i] != g)
			continue;
		if (ft->devs[i].pool != 1)
			return 0;
		any = 1;
	}
	return any;
}

/* A btrfs in a physically ordered group: say whether its positions are on
 * the device (chunkmap.h) or stayed logical, and why. */
static void note_btrfs(const struct ftab *ft, const struct dev_info *devs, struct plan *p,
		       size_t g)
{
	struct plan_group *gr = &p->groups[g];
	size_t i, l;

	for (i = 0; i < ft->ndevs; i++) {
		if (p->dev_group[i] != g || ft->devs[i].extents != 1 ||
		    strcmp(devs[i].fstype, "btrfs") != 0)
			continue;
		l = strlen(gr->reason);
		if (ft->devs[i].logical)
			snprintf(gr->reason + l, sizeof(gr->reason) - l,
				 "; btrfs positions are logical addresses (%s)",
				 chunkmap_why(ft->devs[i].logical));
		else
			snprintf(gr->reason + l, sizeof(gr->reason) - l,
				 "; btrfs positions through its chunk map");
		return;
	}
}

/* The orders that sort by first physical offset. */
static int by_position(int order)
{
	return order == PLAN_PHYSICAL || order == PLAN_FIRST;
}

struct key {
	uint64_t k0, k1, k2;
	uint32_t idx;
};

static int cmp_key(const void *a, const void *b)
{
	const struct key *x = a, *y = b;
	if (x->k0 != y->k0)
		return x->k0 < y->k0 ? -1 : 1;
	if (x->k1 != y->k1)
		return x->k1 < y->k1 ? -1 : 1;
	if (x->k2 != y->k2)
		return x->k2 < y->k2 ? -1 : 1;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

static int sort_by_keys(const struct ftab *ft, const struct dev_info *devs, uint32_t *seq, size_t n,
			int order, size_t *located)
{
	struct key *k = malloc((n ? n : 1) * sizeof(*k));
	size_t i;

	if (!k)
		return -1;
	*located = 0;
	for (i = 0; i < n; i++) {
		const struct ft_file *f = &ft->files[seq[i]];
		uint64_t dev = ft->devs[f->dev].st_dev;
		k[i].idx = seq[i];
		if (by_position(order) && (f->flags & FT_LOCATED)) {
			k[i].k0 = 0;
			k[i].k1 = devs[f->dev].part_start + f->phys;
			k[i].k2 = f->ino;
			(*located)++;
		} else {
			k[i].k0 = 1;
			k[i].k1 = dev;
			k[i].k2 = ext_inode_rank(f->ino);
		}
	}
	qsort(k, n, sizeof(*k), cmp_key);
	for (i = 0; i < n; i++)
		seq[i] = k[i].idx;
	free(k);
	return 0;
}

static const char *path_base;
static const uint32_t *path_off;

static int cmp_path(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	int c = strcmp(path_base + path_off[x], path_base + path_off[y]);
	return c ? c : (x < y ? -1 : x > y);
}

/* Bytewise order of full paths; builds them once, for this order only. */
static int sort_by_path(const struct ftab *ft, uint32_t *seq, size_t n)
{
	struct strbuf all = STRBUF_INIT;
	uint32_t *off = NULL, *pos = NULL;
	size_t i;
	int rc = -1;

	off = malloc((n ? n : 1) * sizeof(*off));
	pos = malloc((n ? n : 1) * sizeof(*pos));
	if (!off || !pos)
		goto out;
	for (i = 0; i < n; i++) {
		off[i] = (uint32_t)all.len;
		if (ftab_path(ft, seq[i], &all) != 0 || sb_addc(&all, '\0') != 0 ||
		    all.len > UINT32_MAX)
			goto out;
		pos[i] = (uint32_t)i;
	}
	/* qsort has no context argument in C11; this runs on one thread. */
	path_base = all.p;
	path_off = off;
	qsort(pos, n, sizeof(*pos), cmp_path);
	path_base = NULL;
	path_off = NULL;
	for (i = 0; i < n; i++)
		off[i] = seq[pos[i]];
	memcpy(seq, off, n * sizeof(*seq));
	rc = 0;
out:
	free(off);
	free(pos);
	sb_free(&all);
	return rc;
}

static uint64_t splitmix(uint64_t *s)
{
	uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

static void shuffle(uint32_t *seq, size_t n, uint64_t seed)
{
	uint64_t s = seed;
	size_t i;
	for (i = n; i > 1; i--) {
		size_t j = (size_t)(splitmix(&s) % i);
		uint32_t t = seq[i - 1];
		seq[i - 1] = seq[j];
		seq[j] = t;
	}
}

void plan_free(struct plan *p)
{
	size_t g;

	if (!p)
		return;
	for (g = 0; g < p->ngroups; g++)
		free(p->groups[g].ops);
	free(p->seq);
	free(p->groups);
	free(p->dev_group);
	memset(p, 0, sizeof(*p));
}

static void group_name(const struct dev_info *d, char *buf, size_t cap)
{
	if (d->disk[0]) {
		snprintf(buf, cap, "%s", d->disk);
	} else {
		char num[32];
		dev_number(d->st_dev, num, sizeof(num));
		snprintf(buf, cap, "fs %s", num);
	}
}

static int cmp_group(const void *a, const void *b)
{
	return strcmp(((const struct plan_group *)a)->name, ((const struct plan_group *)b)->name);
}

int plan_build(const struct ftab *ft, const struct dev_info *devs, int order, uint64_t seed,
	       struct plan *out, struct sl_err *err)
{
	struct plan p;
	size_t *fill = NULL, i, g;
	size_t cap_groups = 0;
	uint16_t *remap = NULL;

	memset(&p, 0, sizeof(p));
	memset(out, 0, sizeof(*out));
	p.requested = order;
	p.seed = seed;
	p.dev_group = calloc(ft->ndevs ? ft->ndevs : 1, sizeof(*p.dev_group));
	if (!p.dev_group)
		goto nomem;

	for (i = 0; i < ft->ndevs; i++) {
		char name[64];
		group_name(&devs[i], name, sizeof(name));
		for (g = 0; g < p.ngroups; g++)
			if (strcmp(p.groups[g].name, name) == 0)
				break;
		if (g == p.ngroups) {
			if (sl_grow(&p.groups, &cap_groups, p.ngroups + 1, sizeof(*p.groups)) != 0)
				goto nomem;
			memset(&p.groups[g], 0, sizeof(p.groups[g]));
			snprintf(p.groups[g].name, sizeof(p.groups[g].name), "%s", name);
			p.groups[g].rotational = devs[i].rotational;
			p.ngroups++;
		} else if (devs[i].rotational == 1) {
			p.groups[g].rotational = 1;
		}
		if (ft->devs[i].extents == 1)
			p.groups[g].extents = 1;
		p.dev_group[i] = (uint16_t)g;
	}
	/* Report groups in name order so plans are reproducible. */
	if (p.ngroups > 1) {
		struct plan_group *copy = malloc(p.ngroups * sizeof(*copy));
		remap = malloc(p.ngroups * sizeof(*remap));
		if (!copy || !remap) {
			free(copy);
			goto nomem;
		}
		memcpy(copy, p.groups, p.ngroups * sizeof(*copy));
		qsort(p.groups, p.ngroups, sizeof(*p.groups), cmp_group);
		for (g = 0; g < p.ngroups; g++) {
			size_t h;
			for (h = 0; h < p.ngroups; h++)
				if (strcmp(copy[g].name, p.groups[h].name) == 0)
					remap[g] = (uint16_t)h;
		}
		for (i = 0; i < ft->ndevs; i++)
			p.dev_group[i] = remap[p.dev_group[i]];
		free(copy);
	}

	for (i = 0; i < ft->nfiles; i++) {
		const struct ft_file *f = &ft->files[i];
		if (f->flags & (FT_FAILED | FT_SKIP))
			continue;
		if (f->links & FT_LINK_ALIAS) { /* its record comes from its first name */
			p.aliases++;
			continue;
		}
		p.groups[p.dev_group[f->dev]].count++;
		p.groups[p.dev_group[f->dev]].bytes += f->size;
		p.n++;
	}
	p.seq = malloc((p.n ? p.n : 1) * sizeof(*p.seq));
	fill = calloc(p.ngroups ? p.ngroups : 1, sizeof(*fill));
	if (!p.seq || !fill)
		goto nomem;
	for (g = 0, i = 0; g < p.ngroups; g++) {
		p.groups[g].first = i;
		fill[g] = i;
		i += p.groups[g].count;
	}
	for (i = 0; i < ft->nfiles; i++) {
		const struct ft_file *f = &ft->files[i];
		if (!(f->flags & (FT_FAILED | FT_SKIP)) && !(f->links & FT_LINK_ALIAS))
			p.seq[fill[p.dev_group[f->dev]]++] = (uint32_t)i;
	}

	for (g = 0; g < p.ngroups; g++) {
		struct plan_group *gr = &p.groups[g];
		uint32_t *s = p.seq + gr->first;
		const struct dev_info *d = NULL;
		struct plan_facts facts = {0};
		int probed = 0, bmap_only = 0, mapped = 0;

		for (i = 0; i < ft->ndevs; i++) {
			const struct ft_dev *fd = &ft->devs[i];
			if (p.dev_group[i] != g)
				continue;
			if (!d || fd->extents == 0)
				d = &devs[i];
			if (fd->extents == 0) {
				facts.ext_errno = fd->extents_errno;
				facts.bmap_errno = fd->bmap_errno;
			}
			gr->written_back += fd->written_back;
			gr->synced_fs |= fd->synced;
			gr->writeback_s += fd->writeback_s;
			bmap_only |= fd->extents == 1 && fd->by == FT_BY_BMAP;
			mapped |= fd->extents == 1 && fd->by != FT_BY_BMAP;
			probed |= fd->extents != -1;
		}
		/* Extent maps are only asked for files to read: with none (a
		 * rescan that found nothing new) they are unknown, not missing,
		 * and the order is the one these files would have had. */
		facts.rotational = gr->rotational;
		facts.how = d ? d->how : "?";
		facts.fstype = d ? d->fstype : "?";
		facts.extents = probed ? gr->extents : 1;
		facts.by = bmap_only && !mapped ? FT_BY_BMAP : FT_BY_MAP;
		gr->order = plan_decide(order, &facts, gr->reason, sizeof(gr->reason));
		if (gr->count == 0)
			snprintf(gr->reason, sizeof(gr->reason), "%s",
				 group_is_pool(ft, &p, g)
					 ? "nothing to read: a pool (mergerfs), its files are read "
					   "on their branches' disks"
					 : "nothing to read");
		switch (gr->order) {
		case PLAN_PHYSICAL:
		case PLAN_FIRST:
		case PLAN_INODE:
			if (sort_by_keys(ft, devs, s, gr->count, gr->order, &gr->located) != 0)
				goto nomem;
			break;
		case PLAN_PATH:
			if (sort_by_path(ft, s, gr->count) != 0)
				goto nomem;
			break;
		case PLAN_RANDOM:
			shuffle(s, gr->count, seed + g);
			break;
		default:
			break; /* fs: enumeration order as walked */
		}
		if (by_position(gr->order))
			note_btrfs(ft, devs, &p, g);
		if (by_position(gr->order) && (gr->written_back || gr->synced_fs)) {
			size_t l = strlen(gr->reason);
			snprintf(gr->reason + l, sizeof(gr->reason) - l,
				 "; data not yet on the disk (delayed allocation) written back "
				 "first to place it: %zu %s alone%s (%.2f s)",
				 gr->written_back, gr->written_back == 1 ? "file" : "files",
				 gr->synced_fs ? ", then the whole file system" : "", gr->writeback_s);
		}
		if (by_position(gr->order) && gr->located < gr->count) {
			size_t l = strlen(gr->reason);
			snprintf(gr->reason + l, sizeof(gr->reason) - l,
				 "; %zu of %zu files have no position (inline, unallocated or "
				 "empty) and follow by inode",
				 gr->count - gr->located, gr->count);
		}
	}
	free(fill);
	free(remap);
	*out = p;
	return SL_OK;
nomem:
	free(fill);
	free(remap);
	plan_free(&p);
	return SL_FAIL(err, SL_E_NOMEM, 0, "plan: out of memory");
}

/* Group g's files as the schedule sees them, disk-absolute; *runs holds
 * their runs (free both).  Both stay NULL when no file of the group keeps
 * runs (nothing to sweep).  -1 when out of memory. */
static int sched_files(const struct plan *p, const struct ftab *ft, const struct dev_info *devs,
		       size_t g, uint64_t whole_max, struct sched_file **out, struct ft_run **runs,
		       size_t *nfrag)
{
	const struct plan_group *gr = &p->groups[g];
	struct sched_file *sf;
	struct ft_run *rv;
	size_t i, total = 0, at = 0;

	for (i = 0; i < gr->count; i++) {
		size_t n;
		ftab_runs(ft, p->seq[gr->first + i], &n);
		total += n;
	}
	if (total == 0)
		return 0;
	sf = calloc(gr->count, sizeof(*sf));
	rv = malloc(total * sizeof(*rv));
	if (!sf || !rv) {
		free(sf);
		free(rv);
		return -1;
	}
	for (i = 0; i < gr->count; i++) {
		uint32_t k = p->seq[gr->first + i];
		const struct ft_file *f = &ft->files[k];
		uint64_t base = devs[f->dev].part_start;
		const struct ft_run *r;
		size_t n, j;

		sf[i].size = f->size;
		sf[i].placed = (f->flags & FT_LOCATED) != 0;
		sf[i].phys = base + f->phys;
		sf[i].streamed = f->size > whole_max;
		r = sf[i].placed ? ftab_runs(ft, k, &n) : NULL;
		if (!r)
			continue;
		sf[i].runs = rv + at;
		sf[i].nruns = (uint32_t)n;
		*nfrag += n > 1; /* one run is kept of a file sharing its data */
		for (j = 0; j < n; j++, at++) {
			rv[at] = r[j];
			rv[at].phys += base;
		}
	}
	*out = sf;
	*runs = rv;
	return 0;
}

/* A group the schedule is for: one reader follows its physical order. */
static int sweepable(const struct plan_group *gr)
{
	return gr->order == PLAN_PHYSICAL && gr->rotational != 0 && gr->count > 1;
}

int plan_schedule(struct plan *p, const struct ftab *ft, const struct dev_info *devs,
		  const struct plan_mem *m, struct sl_err *err)
{
	struct sched_file **sf = calloc(p->ngroups ? p->ngroups : 1, sizeof(*sf));
	struct ft_run **rv = calloc(p->ngroups ? p->ngroups : 1, sizeof(*rv));
	size_t *nfrag = calloc(p->ngroups ? p->ngroups : 1, sizeof(*nfrag));
	size_t g, swept = 0;
	int rc = SL_OK;

	if (!sf || !rv || !nfrag) {
		free(sf);
		free(rv);
		free(nfrag);
		return SL_FAIL(err, SL_E_NOMEM, 0, "plan: out of memory");
	}
	for (g = 0; g < p->ngroups && rc == SL_OK; g++) {
		if (!sweepable(&p->groups[g]) || !ft->run_at)
			continue;
		if (sched_files(p, ft, devs, g, m->whole_max, &sf[g], &rv[g], &nfrag[g]) != 0)
			rc = SL_FAIL(err, SL_E_NOMEM, 0, "plan: out of memory");
		else if (sf[g] && sched_needed(sf[g], p->groups[g].count))
			swept++;
		else {
			free(sf[g]);
			free(rv[g]);
			sf[g] = NULL;
			rv[g] = NULL;
		}
	}
	for (g = 0; g < p->ngroups && rc == SL_OK; g++) {
		struct plan_group *gr = &p->groups[g];
		struct sched_limits lim;
		size_t l;

		if (!sf[g])
			continue;
		lim.window = m->window / swept;
		lim.max_open = m->max_open;
		if (m->fds / swept < lim.max_open)
			lim.max_open = m->fds / swept > 8 ? (uint32_t)(m->fds / swept) : 8;
		lim.grain = m->grain;
		lim.head = m->head;
		rc = sched_build(sf[g], gr->count, &lim, &gr->ops, &gr->nops, &gr->sched, err);
		if (rc != SL_OK)
			break;
		gr->window = lim.window;
		l = strlen(gr->reason);
		snprintf(gr->reason + l, sizeof(gr->reason) - l,
			 "; %zu files fragmented: %u sweep%s over the extents (%zu pieces, %zu "
			 "files read across a sweep)",
			 nfrag[g], gr->sched.passes, gr->sched.passes == 1 ? "" : "s",
			 gr->sched.pieces, gr->sched.spread);
	}
	if (rc == SL_OK) {
		p->whole_max = m->whole_max;
		p->head = m->head;
		p->mem = m->total;
	}
	for (g = 0; g < p->ngroups; g++) {
		free(sf[g]);
		free(rv[g]);
		if (rc != SL_OK) {
			free(p->groups[g].ops);
			p->groups[g].ops = NULL;
			p->groups[g].nops = 0;
		}
	}
	free(sf);
	free(rv);
	free(nfrag);
	return rc;
}
