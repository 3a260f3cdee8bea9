#include "scanner/ftab.h"

#include <stdlib.h>
#include <string.h>

void ftab_init(struct ftab *ft)
{
	memset(ft, 0, sizeof(*ft));
}

void ftab_free(struct ftab *ft)
{
	if (!ft)
		return;
	free(ft->files);
	free(ft->dirs);
	free(ft->names);
	free(ft->devs);
	free(ft->seen);
	free(ft->via);
	while (ft->nanchors > 0)
		anchor_free(ft->anchors[--ft->nanchors]);
	free(ft->anchors);
	free(ft->dir_anchor);
	free(ft->link_next);
	free(ft->runs);
	free(ft->run_at);
	memset(ft, 0, sizeof(*ft));
}

static int add_name(struct ftab *ft, const char *s, size_t len, uint32_t *off)
{
	if (ft->names_len == 0) {
		/* offset 0 is the empty string, so err == 0 reads as "none" */
		if (sl_grow(&ft->names, &ft->names_cap, 1, 1) != 0)
			return -1;
		ft->names[0] = '\0';
		ft->names_len = 1;
	}
	if (ft->names_len + len + 1 > UINT32_MAX)
		return -1;
	if (sl_grow(&ft->names, &ft->names_cap, ft->names_len + len + 1, 1) != 0)
		return -1;
	memcpy(ft->names + ft->names_len, s, len);
	ft->names[ft->names_len + len] = '\0';
	*off = (uint32_t)ft->names_len;
	ft->names_len += len + 1;
	return 0;
}

int ftab_add_dir(struct ftab *ft, uint32_t parent, const char *name, size_t len, uint32_t *id,
		 struct sl_err *err)
{
	struct ft_dir *d;

	if (ft->ndirs >= FT_NONE ||
	    sl_grow(&ft->dirs, &ft->cap_dirs, ft->ndirs + 1, sizeof(*ft->dirs)) != 0)
		return SL_FAIL(err, SL_E_NOMEM, 0, "directory table: out of memory");
	d = &ft->dirs[ft->ndirs];
	if (add_name(ft, name, len, &d->name) != 0)
		return SL_FAIL(err, SL_E_NOMEM, 0, "name arena: out of memory");
	d->parent = parent;
	*id = (uint32_t)ft->ndirs++;
	return SL_OK;
}

int ftab_add_path(struct ftab *ft, uint32_t root_dir, const char *rel, uint64_t ino,
		  uint16_t dev, uint32_t *id, struct sl_err *err)
{
	const char *slash = strrchr(rel, '/');
	uint32_t dir = root_dir;
	size_t i, dlen;

	if (slash) {
		/* the lists are short (a night's changes): a linear search,
		 * newest directories first, finds the folder of the last file */
		dlen = (size_t)(slash - rel);
		dir = FT_NONE;
		for (i = ft->ndirs; i-- > 0;) {
			const char *name = ft->names + ft->dirs[i].name;
			if (ft->dirs[i].parent == root_dir && strncmp(name, rel, dlen) == 0 &&
			    name[dlen] == '\0') {
				dir = (uint32_t)i;
				break;
			}
		}
		if (dir == FT_NONE) {
			int rc = ftab_add_dir(ft, root_dir, rel, dlen, &dir, err);
			if (rc != SL_OK)
				return rc;
		}
		rel = slash + 1;
	}
	return ftab_add_file(ft, dir, rel, strlen(rel), ino, dev, id, err);
}

int ftab_add_file(struct ftab *ft, uint32_t dir, const char *name, size_t len, uint64_t ino,
		  uint16_t dev, uint32_t *id, struct sl_err *err)
{
	struct ft_file *f;

	if (ft->nfiles >= FT_NONE ||
	    sl_grow(&ft->files, &ft->cap_files, ft->nfiles + 1, sizeof(*ft->files)) != 0)
		return SL_FAIL(err, SL_E_NOMEM, 0, "file table: out of memory");
	f = &ft->files[ft->nfiles];
	memset(f, 0, sizeof(*f));
	if (add_name(ft, name, len, &f->name) != 0)
		return SL_FAIL(err, SL_E_NOMEM, 0, "name arena: out of memory");
	f->dir = dir;
	f->ino = ino;
	f->dev = dev;
	if (id)
		*id = (uint32_t)ft->nfiles;
	ft->nfiles++;
	return SL_OK;
}

int ftab_dev(struct ftab *ft, uint64_t st_dev, uint16_t *idx, struct sl_err *err)
{
	size_t i;

	for (i = 0; i < ft->ndevs; i++) {
		if (ft->devs[i].st_dev == st_dev) {
			*idx = (uint16_t)i;
			return SL_OK;
		}
	}
	if (ft->ndevs >= UINT16_MAX)
		return SL_FAIL(err, SL_E_UNSUPPORTED, 0, "more than %u file systems", UINT16_MAX);
	if (sl_grow(&ft->devs, &ft->cap_devs, ft->ndevs + 1, sizeof(*ft->devs)) != 0)
		return SL_FAIL(err, SL_E_NOMEM, 0, "device table: out of memory");
	memset(&ft->devs[ft->ndevs], 0, sizeof(ft->devs[ft->ndevs]));
	ft->devs[ft->ndevs].st_dev = st_dev;
	ft->devs[ft->ndevs].extents = -1;
	ft->devs[ft->ndevs].pool = -1;
	ft->devs[ft->ndevs].dir = FT_NONE;
	*idx = (uint16_t)ft->ndevs++;
	return SL_OK;
}

void ftab_dev_dir(struct ftab *ft, uint16_t idx, uint32_t dir)
{
	if (idx < ft->ndevs && ft->devs[idx].dir == FT_NONE)
		ft->devs[idx].dir = dir;
}

int ftab_fail(struct ftab *ft, uint32_t file, const char *msg, struct sl_err *err)
{
	uint32_t off;

	if (add_name(ft, msg, strlen(msg), &off) != 0)
		return SL_FAIL(err, SL_E_NOMEM, 0, "name arena: out of memory");
	ft->files[file].err = off;
	ft->files[file].flags |= FT_FAILED;
	return SL_OK;
}

/* A side array of the files (via, run_at), grown to hold file, the new
 * entries zeroed: none.  Returns 0, or -1 when memory ran out. */
static int side_slot(const struct ftab *ft, void *arr, size_t *cap, uint32_t file, size_t elem)
{
	size_t old = *cap;

	if (file < *cap)
		return 0;
	if (sl_grow(arr, cap, ft->nfiles > file ? ft->nfiles : file + 1, elem) != 0)
		return -1;
	memset((char *)*(void **)arr + old * elem, 0, (*cap - old) * elem);
	return 0;
}

/* Index of a in ft->anchors, holding a reference, added if new (*idx is
 * 0 on failure). */
static int hold_anchor(struct ftab *ft, struct anchor *a, uint32_t *idx, struct sl_err *err)
{
	size_t i;

	*idx = 0;
	for (i = 0; i < ft->nanchors; i++) {
		if (ft->anchors[i] == a) {
			*idx = (uint32_t)i;
			return SL_OK;
		}
	}
	if (sl_grow(&ft->anchors, &ft->anchors_cap, ft->nanchors + 1, sizeof(*ft->anchors)) != 0)
		return SL_FAIL(err, SL_E_NOMEM, 0, "file table: out of memory");
	ft->anchors[ft->nanchors] = anchor_ref(a);
	*idx = (uint32_t)ft->nanchors++;
	return SL_OK;
}

int ftab_set_anchor(struct ftab *ft, uint32_t dir, struct anchor *a, struct sl_err *err)
{
	size_t old = ft->dir_anchor_cap;
	uint32_t idx;
	int rc;

	if (dir >= ft->dir_anchor_cap) {
		if (sl_grow(&ft->dir_anchor, &ft->dir_anchor_cap, (size_t)dir + 1,
			    sizeof(*ft->dir_anchor)) != 0)
			return SL_FAIL(err, SL_E_NOMEM, 0, "file table: out of memory");
		memset(ft->dir_anchor + old, 0, (ft->dir_anchor_cap - old) * sizeof(*ft->dir_anchor));
	}
	rc = hold_anchor(ft, a, &idx, err);
	if (rc == SL_OK)
		ft->dir_anchor[dir] = idx + 1;
	return rc;
}

int ftab_anchor_root(struct ftab *ft, uint32_t dir, unsigned flags, struct sl_err *err)
{
	struct anchor *a;
	int rc = anchor_open(ftab_str(ft, ft->dirs[dir].name), flags, &a, err);

	if (rc != SL_OK)
		return rc;
	rc = ftab_set_anchor(ft, dir, a, err);
	anchor_free(a);
	return rc;
}

int ftab_set_via(struct ftab *ft, uint32_t file, struct anchor *branch, const char *rel,
		 struct sl_err *err)
{
	struct strbuf whole = STRBUF_INIT;
	uint32_t off, idx;
	size_t n;
	int rc;

	if (side_slot(ft, &ft->via, &ft->via_cap, file, sizeof(*ft->via)) != 0)
		return SL_FAIL(err, SL_E_NOMEM, 0, "file table: out of memory");
	if (anchor_join(branch, "", &whole) != 0) {
		sb_free(&whole);
		return SL_FAIL(err, SL_E_NOMEM, 0, "name arena: out of memory");
	}
	n = whole.len + (whole.len > 0 && whole.p[whole.len - 1] != '/');
	whole.len = 0;
	rc = anchor_join(branch, rel, &whole) != 0 || whole.len < n ||
		     add_name(ft, whole.p, whole.len, &off) != 0
		     ? SL_FAIL(err, SL_E_NOMEM, 0, "name arena: out of memory")
		     : hold_anchor(ft, branch, &idx, err);
	sb_free(&whole);
	if (rc != SL_OK)
		return rc;
	ft->via[file].path = off;
	ft->via[file].rel = off + (uint32_t)n;
	ft->via[file].anchor = idx;
	return SL_OK;
}

int ftab_set_runs(struct ftab *ft, uint32_t file, const struct ft_run *runs, size_t n,
		  struct sl_err *err)
{
	if (side_slot(ft, &ft->run_at, &ft->run_at_cap, file, sizeof(*ft->run_at)) != 0)
		return SL_FAIL(err, SL_E_NOMEM, 0, "file table: out of memory");
	ft->run_at[file].count = 0;
	if (n == 0)
		return SL_OK;
	/* earlier runs of this file stay in the pool unused: a file is
	 * located once a scan */
	if (n > UINT32_MAX || ft->nruns + n > UINT32_MAX ||
	    sl_grow(&ft->runs, &ft->runs_cap, ft->nruns + n, sizeof(*ft->runs)) != 0)
		return SL_FAIL(err, SL_E_NOMEM, 0, "file table: out of memory");
	memcpy(ft->runs + ft->nruns, runs, n * sizeof(*runs));
	ft->run_at[file].first = (uint32_t)ft->nruns;
	ft->run_at[file].count = (uint32_t)n;
	ft->nruns += n;
	return SL_OK;
}

/* Where file's runs begin in ft->runs, *n of them (0: none). */
static size_t runs_at(const struct ftab *ft, uint32_t file, size_t *n)
{
	*n = file < ft->run_at_cap ? ft->run_at[file].count : 0;
	return *n ? ft->run_at[file].first : 0;
}

struct ft_run *ftab_runs_mut(struct ftab *ft, uint32_t file, size_t *n)
{
	size_t at = runs_at(ft, file, n);
	return *n ? ft->runs + at : NULL;
}

const struct ft_run *ftab_runs(const struct ftab *ft, uint32_t file, size_t *n)
{
	size_t at = runs_at(ft, file, n);
	return *n ? ft->runs + at : NULL;
}

static const struct ftab *cmp_ft;

/* By file (device, inode, times, size), then by table order. */
static int cmp_inode(const void *a, const void *b)
{
	uint32_t i = *(const uint32_t *)a, j = *(const uint32_t *)b;
	const struct ft_file *x = &cmp_ft->files[i], *y = &cmp_ft->files[j];

	if (x->dev != y->dev)
		return x->dev < y->dev ? -1 : 1;
	if (x->ino != y->ino)
		return x->ino < y->ino ? -1 : 1;
	if (x->size != y->size)
		return x->size < y->size ? -1 : 1;
	if (x->mtime_ns != y->mtime_ns)
		return x->mtime_ns < y->mtime_ns ? -1 : 1;
	if (x->ctime_ns != y->ctime_ns)
		return x->ctime_ns < y->ctime_ns ? -1 : 1;
	if (x->btime_ns != y->btime_ns)
		return x->btime_ns < y->btime_ns ? -1 : 1;
	return i < j ? -1 : i > j;
}

/* By data (device, size, runs), 0 for the same bytes; no tie-break. */
static int cmp_data_key(uint32_t i, uint32_t j)
{
	const struct ft_file *x = &cmp_ft->files[i], *y = &cmp_ft->files[j];
	const struct ft_run *rx, *ry;
	size_t nx, ny, k;

	if (x->dev != y->dev)
		return x->dev < y->dev ? -1 : 1;
	if (x->size != y->size)
		return x->size < y->size ? -1 : 1;
	rx = ftab_runs(cmp_ft, i, &nx);
	ry = ftab_runs(cmp_ft, j, &ny);
	if (nx != ny)
		return nx < ny ? -1 : 1;
	for (k = 0; k < nx; k++) {
		if (rx[k].phys != ry[k].phys)
			return rx[k].phys < ry[k].phys ? -1 : 1;
		if (rx[k].logical != ry[k].logical)
			return rx[k].logical < ry[k].logical ? -1 : 1;
		if (rx[k].len != ry[k].len)
			return rx[k].len < ry[k].len ? -1 : 1;
	}
	return 0;
}

static int cmp_data(const void *a, const void *b)
{
	uint32_t i = *(const uint32_t *)a, j = *(const uint32_t *)b;
	int c = cmp_data_key(i, j);
	return c ? c : i < j ? -1 : i > j;
}

/* A file to be read that carries flag (and, for data, its runs). */
static int joinable(const struct ftab *ft, uint32_t i, unsigned flag)
{
	const struct ft_file *f = &ft->files[i];
	size_t n;

	if (!(f->links & flag) || (f->links & (FT_LINK_ALIAS | FT_LINK_ALONE)) ||
	    !(f->flags & FT_STATED) ||
	    (f->flags & (FT_FAILED | FT_SKIP | FT_DIR)))
		return 0;
	return flag != FT_LINK_SHARED || ftab_runs(ft, i, &n) != NULL;
}

/* One pass: the joinable files sorted by cmp; each run of equal ones (by
 * same) is appended, chain by chain, to the chain of its first. */
static void join_pass(struct ftab *ft, uint32_t *v, unsigned flag,
		      int (*cmp)(const void *, const void *), int (*same)(uint32_t, uint32_t),
		      size_t *joined)
{
	size_t i, n = 0, head = 0;
	uint32_t tail;

	for (i = 0; i < ft->nfiles; i++)
		if (joinable(ft, (uint32_t)i, flag))
			v[n++] = (uint32_t)i;
	if (n < 2)
		return;
	/* qsort has no context argument in C11; this runs on one thread */
	cmp_ft = ft;
	qsort(v, n, sizeof(*v), cmp);
	tail = v[0];
	for (i = 1; i < n; i++) {
		if (!same(v[head], v[i])) {
			head = i;
			tail = v[i];
		} else {
			while (ft->link_next[tail] != FT_NONE)
				tail = ft->link_next[tail];
			ft->link_next[tail] = v[i];
			ft->files[v[i]].links |= FT_LINK_ALIAS;
			(*joined)++;
		}
		while (ft->link_next[tail] != FT_NONE)
			tail = ft->link_next[tail];
	}
	cmp_ft = NULL;
}

static int same_inode(uint32_t i, uint32_t j)
{
	const struct ft_file *a = &cmp_ft->files[i], *b = &cmp_ft->files[j];
	return a->dev == b->dev && a->ino == b->ino && a->size == b->size &&
	       a->mtime_ns == b->mtime_ns && a->ctime_ns == b->ctime_ns &&
	       a->btime_ns == b->btime_ns;
}

static int same_data(uint32_t i, uint32_t j)
{
	return cmp_data_key(i, j) == 0;
}

int ftab_join_links(struct ftab *ft, size_t *joined, struct sl_err *err)
{
	uint32_t *v;
	size_t i, n = 0;

	*joined = 0;
	for (i = 0; i < ft->nfiles; i++)
		ft->files[i].links &= (uint8_t)~FT_LINK_ALIAS;
	for (i = 0; ft->link_next && i < ft->link_cap; i++)
		ft->link_next[i] = FT_NONE;
	for (i = 0; i < ft->nfiles; i++)
		n += joinable(ft, (uint32_t)i, FT_LINK_MANY | FT_LINK_SHARED);
	if (n < 2)
		return SL_OK;
	v = malloc(n * sizeof(*v));
	if (!v || side_slot(ft, &ft->link_next, &ft->link_cap, (uint32_t)(ft->nfiles - 1),
			    sizeof(*ft->link_next)) != 0) {
		free(v);
		return SL_FAIL(err, SL_E_NOMEM, 0, "file table: out of memory");
	}
	for (i = 0; i < ft->link_cap; i++)
		ft->link_next[i] = FT_NONE;
	/* names of one inode first: the data pass then joins whole chains */
	join_pass(ft, v, FT_LINK_MANY, cmp_inode, same_inode, joined);
	join_pass(ft, v, FT_LINK_SHARED, cmp_data, same_data, joined);
	free(v);
	return SL_OK;
}

uint32_t ftab_link_next(const struct ftab *ft, uint32_t file)
{
	return ft->link_next && file < ft->link_cap ? ft->link_next[file] : FT_NONE;
}

const char *ftab_via(const struct ftab *ft, uint32_t file)
{
	return file < ft->via_cap && ft->via[file].path ? ft->names + ft->via[file].path : NULL;
}

/* Open addressing over (dev, ino) pairs packed as two slots; a zero pair is
 * the empty marker, so ino 0 (never a real directory) is shifted. */
static uint64_t mix(uint64_t a, uint64_t b)
{
	uint64_t h = a * 0x9E3779B97F4A7C15ull ^ (b + 0x632BE59BD9B4E019ull);
	h ^= h >> 31;
	h *= 0xBF58476D1CE4E5B9ull;
	return h ^ (h >> 29);
}

static int seen_insert(uint64_t *tab, size_t cap, uint64_t dev, uint64_t ino)
{
	size_t i = (size_t)(mix(dev, ino) & (cap - 1));

	for (;;) {
		uint64_t *slot = &tab[2 * i];
		if (slot[0] == 0 && slot[1] == 0) {
			slot[0] = dev + 1;
			slot[1] = ino;
			return 0;
		}
		if (slot[0] == dev + 1 && slot[1] == ino)
			return 1;
		i = (i + 1) & (cap - 1);
	}
}

int ftab_seen_dir(struct ftab *ft, uint64_t dev, uint64_t ino)
{
	int r;

	if ((ft->seen_used + 1) * 2 > ft->seen_cap) {
		size_t ncap = ft->seen_cap ? ft->seen_cap * 2 : 256, i;
		uint64_t *nt = calloc(ncap, 2 * sizeof(uint64_t));
		if (!nt)
			return -1;
		for (i = 0; i < ft->seen_cap; i++) {
			uint64_t *s = &ft->seen[2 * i];
			if (s[0] || s[1])
				seen_insert(nt, ncap, s[0] - 1, s[1]);
		}
		free(ft->seen);
		ft->seen = nt;
		ft->seen_cap = ncap;
	}
	r = seen_insert(ft->seen, ft->seen_cap, dev, ino);
	if (r == 0)
		ft->seen_used++;
	return r;
}

/* Append the names from dir's root down to dir to sb, '/' between them;
 * the root's own name (its absolute path) only when with_root.  *root gets
 * the root directory.  Returns 0, or -1 when memory ran out. */
static int chain_path(const struct ftab *ft, uint32_t dir, int with_root, struct strbuf *sb,
		      uint32_t *root)
{
	uint32_t chain[256];
	uint32_t *stack = chain;
	size_t n = 0, cap = sizeof(chain) / sizeof(chain[0]);
	uint32_t d;
	size_t start = sb->len; /* appending: separators only after what we add */
	int rc = 0;

	for (d = dir; d != FT_NONE; d = ft->dirs[d].parent) {
		if (n == cap) {
			uint32_t *ns;
			if (stack == chain) {
				ns = malloc(2 * cap * sizeof(*ns));
				if (ns)
					memcpy(ns, chain, sizeof(chain));
			} else {
				ns = realloc(stack, 2 * cap * sizeof(*ns));
			}
			if (!ns) {
				rc = -1;
				goto out;
			}
			stack = ns;
			cap *= 2;
		}
		stack[n++] = d;
		*root = d;
	}
	if (!with_root && n > 0)
		n--;
	while (n > 0) {
		const char *name = ft->names + ft->dirs[stack[--n]].name;
		if (sb->len > start && sb->p[sb->len - 1] != '/')
			sb_addc(sb, '/');
		sb_adds(sb, name);
	}
	rc = sb->oom ? -1 : 0;
out:
	if (stack != chain)
		free(stack);
	return rc;
}

int ftab_dir_path(const struct ftab *ft, uint32_t dir, struct strbuf *sb)
{
	uint32_t root;
	return chain_path(ft, dir, 1, sb, &root);
}

const struct anchor *ftab_at(const struct ftab *ft, uint32_t file, struct strbuf *rel)
{
	const struct ft_file *f = &ft->files[file];
	uint32_t root = FT_NONE;
	size_t start = rel->len;

	if (chain_path(ft, f->dir, 0, rel, &root) != 0)
		return NULL;
	if (rel->len > start)
		sb_addc(rel, '/');
	sb_adds(rel, ft->names + f->name);
	if (rel->oom || root == FT_NONE)
		return NULL;
	return ftab_at_dir(ft, root);
}

const struct anchor *ftab_at_dir(const struct ftab *ft, uint32_t dir)
{
	if (dir >= ft->dir_anchor_cap || !ft->dir_anchor[dir])
		return NULL;
	return ft->anchors[ft->dir_anchor[dir] - 1];
}

const struct anchor *ftab_dir_at(const struct ftab *ft, uint32_t dir, struct strbuf *rel)
{
	uint32_t root = FT_NONE;

	if (sb_add(rel, "", 0) != 0 || chain_path(ft, dir, 0, rel, &root) != 0 || root == FT_NONE)
		return NULL;
	return ftab_at_dir(ft, root);
}

const struct anchor *ftab_read_at(const struct ftab *ft, uint32_t file, struct strbuf *rel)
{
	if (file < ft->via_cap && ft->via[file].path) {
		if (sb_adds(rel, ft->names + ft->via[file].rel) != 0)
			return NULL;
		return ft->anchors[ft->via[file].anchor];
	}
	return ftab_at(ft, file, rel);
}

int ftab_path(const struct ftab *ft, uint32_t file, struct strbuf *sb)
{
	const struct ft_file *f = &ft->files[file];

	if (ftab_dir_path(ft, f->dir, sb) != 0)
		return -1;
	if (f->flags & FT_DIR)
		return 0; /* the entry names its own directory */
	if (sb->len > 0 && sb->p[sb->len - 1] != '/')
		sb_addc(sb, '/');
	sb_adds(sb, ft->names + f->name);
	return sb->oom ? -1 : 0;
}

const char *ftab_placement(uint16_t flags)
{
	if (flags & FT_LOCATED)
		return "physical";
	if (flags & FT_NOEXT)
		return "no-extent-map";
	if (flags & FT_INLINE)
		return "inline";
	if (flags & FT_UNKNOWN)
		return "unallocated";
	if (flags & FT_ENCODED)
		return "encoded";
	if (flags & FT_EMPTY)
		return "empty";
	return "unknown";
}
