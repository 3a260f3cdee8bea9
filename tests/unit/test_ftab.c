/* The compact file table: names, paths, devices, the seen-directory set. */
#include "scanner/ftab.h"

#include <string.h>

#include "tests/unit/test.h"

static void test_paths(void)
{
	struct ftab ft;
	struct strbuf sb = STRBUF_INIT;
	uint32_t root, a, b, f1, f2, slash, f3;
	uint16_t d0, d1, again;

	ftab_init(&ft);
	CHECK_INT(ftab_dev(&ft, 0x801, &d0, NULL), SL_OK);
	CHECK_INT(ftab_dev(&ft, 0x802, &d1, NULL), SL_OK);
	CHECK_INT(ftab_dev(&ft, 0x801, &again, NULL), SL_OK);
	CHECK_INT(d0, again);
	CHECK(d0 != d1);
	CHECK_INT(ft.devs[d0].extents, -1);

	ftab_add_dir(&ft, FT_NONE, "/photos", 7, &root, NULL);
	ftab_add_dir(&ft, root, "2020", 4, &a, NULL);
	ftab_add_dir(&ft, a, "2020-05 Beach", 13, &b, NULL);
	ftab_add_file(&ft, b, "IMG_0001.JPG", 12, 1234, d0, &f1, NULL);
	ftab_add_file(&ft, root, "top.jpg", 7, 99, d1, &f2, NULL);
	ftab_add_dir(&ft, FT_NONE, "/", 1, &slash, NULL);
	ftab_add_file(&ft, slash, "x", 1, 5, d0, &f3, NULL);

	ftab_path(&ft, f1, &sb);
	CHECK_STR(sb.p, "/photos/2020/2020-05 Beach/IMG_0001.JPG");
	sb_reset(&sb);
	ftab_path(&ft, f2, &sb);
	CHECK_STR(sb.p, "/photos/top.jpg");
	sb_reset(&sb);
	ftab_path(&ft, f3, &sb);
	CHECK_STR(sb.p, "/x");
	/* appending after other text (NUL-separated lists) adds no separator */
	sb_addc(&sb, '\0');
	ftab_path(&ft, f2, &sb);
	CHECK_STR(sb.p + 3, "/photos/top.jpg");
	CHECK_INT(ft.files[f1].ino, 1234);
	CHECK_INT(ft.files[f1].err, 0);
	CHECK_STR(ftab_str(&ft, ft.files[f1].err), "");

	CHECK_INT(ftab_fail(&ft, f2, "open: Permission denied", NULL), SL_OK);
	CHECK(ft.files[f2].flags & FT_FAILED);
	CHECK_STR(ftab_str(&ft, ft.files[f2].err), "open: Permission denied");

	/* a failed directory entry names its directory */
	ftab_add_file(&ft, b, "", 0, 0, d0, &f3, NULL);
	ft.files[f3].flags |= FT_DIR;
	sb_reset(&sb);
	ftab_path(&ft, f3, &sb);
	CHECK_STR(sb.p, "/photos/2020/2020-05 Beach");
	sb_free(&sb);
	ftab_free(&ft);
	ftab_free(&ft);
}

static void test_deep(void)
{
	struct ftab ft;
	struct strbuf sb = STRBUF_INIT;
	uint32_t d, f;
	int i;

	ftab_init(&ft);
	ftab_add_dir(&ft, FT_NONE, "/r", 2, &d, NULL);
	for (i = 0; i < 1000; i++) /* deeper than the path builder's stack array */
		ftab_add_dir(&ft, d, "d", 1, &d, NULL);
	ftab_add_file(&ft, d, "f", 1, 1, 0, &f, NULL);
	CHECK_INT(ftab_path(&ft, f, &sb), 0);
	CHECK_INT(sb.len, 2 + 1000 * 2 + 2);
	CHECK(strncmp(sb.p, "/r/d/d/", 7) == 0);
	CHECK_STR(sb.p + sb.len - 4, "/d/f");
	sb_free(&sb);
	ftab_free(&ft);
}

static void test_seen(void)
{
	struct ftab ft;
	uint64_t i;
	int dup = 0;

	ftab_init(&ft);
	for (i = 0; i < 5000; i++)
		dup += ftab_seen_dir(&ft, i % 3, i * 7919);
	CHECK_INT(dup, 0);
	for (i = 0; i < 5000; i++)
		dup += ftab_seen_dir(&ft, i % 3, i * 7919);
	CHECK_INT(dup, 5000);
	CHECK_INT(ftab_seen_dir(&ft, 1, 7919 * 3), 0); /* same ino, other dev */
	CHECK_INT(ftab_seen_dir(&ft, 0, 0), 1);        /* ino 0 is a real key too */
	ftab_free(&ft);
}

static void test_placement(void)
{
	CHECK_STR(ftab_placement(FT_STATED | FT_LOCATED), "physical");
	CHECK_STR(ftab_placement(FT_STATED | FT_NOEXT), "no-extent-map");
	CHECK_STR(ftab_placement(FT_STATED | FT_INLINE), "inline");
	CHECK_STR(ftab_placement(FT_STATED | FT_UNKNOWN), "unallocated");
	CHECK_STR(ftab_placement(FT_STATED | FT_EMPTY), "empty");
	CHECK(sizeof(struct ft_file) <= 72);
}

/* Files known by path (the change journal's list) share their folder's
 * entry and come out with the same full paths a walk would give. */
static void test_add_path(void)
{
	static const char *const rel[] = {"a/b/x.jpg", "a/b/y.jpg", "z.jpg", "a/c/w.jpg",
					  "a/b/deeper/v.jpg"};
	struct strbuf sb = STRBUF_INIT;
	struct ftab ft;
	uint32_t root, id;
	size_t i;

	ftab_init(&ft);
	CHECK_INT(ftab_add_dir(&ft, FT_NONE, "D:/Photos", 9, &root, NULL), SL_OK);
	for (i = 0; i < 5; i++) {
		CHECK_INT(ftab_add_path(&ft, root, rel[i], 100 + i, 0, &id, NULL), SL_OK);
		CHECK_INT(id, i);
		CHECK_INT(ft.files[id].ino, 100 + i);
		sb_reset(&sb);
		CHECK_INT(ftab_path(&ft, id, &sb), 0);
		CHECK(strncmp(sb.p, "D:/Photos/", 10) == 0 && strcmp(sb.p + 10, rel[i]) == 0);
	}
	CHECK_INT(ft.ndirs, 4); /* the root, a/b, a/c, a/b/deeper */
	CHECK_INT(ft.files[0].dir, ft.files[1].dir);
	CHECK_INT(ft.files[2].dir, root);
	sb_free(&sb);
	ftab_free(&ft);
}

/* Reference for test_join_links: files i and j can be joined by flag. */
static int ref_ok(const struct ftab *ft, size_t i, unsigned flag)
{
	const struct ft_file *f = &ft->files[i];
	size_t n;
	return (f->links & flag) && !(f->links & FT_LINK_ALONE) &&
	       !(f->flags & (FT_SKIP | FT_FAILED)) &&
	       (flag != FT_LINK_SHARED || ftab_runs(ft, (uint32_t)i, &n));
}

static int ref_same_inode(const struct ftab *ft, size_t i, size_t j)
{
	const struct ft_file *a = &ft->files[i], *b = &ft->files[j];
	return a->dev == b->dev && a->ino == b->ino && a->mtime_ns == b->mtime_ns;
}

static int ref_same_data(const struct ftab *ft, size_t i, size_t j)
{
	const struct ft_run *x, *y;
	size_t nx, ny;
	x = ftab_runs(ft, (uint32_t)i, &nx);
	y = ftab_runs(ft, (uint32_t)j, &ny);
	return ft->files[i].dev == ft->files[j].dev && ft->files[i].size == ft->files[j].size &&
	       nx == ny && memcmp(x, y, nx * sizeof(*x)) == 0;
}

/* Joining, against a reference: random tables whose files share (dev,
 * ino) keys, some with other times (a number given again to another
 * file), some with shared runs drawn from a few maps, some skipped or
 * failed, some to be read alone.  A file's root is the first joinable name of its inode, and that
 * name's root the first joinable inode-root with the same data; a file is
 * an alias exactly when it is not its own root, and each root's chain
 * holds exactly the files with that root. */
static void test_join_links(void)
{
	static const struct ft_run maps[3][2] = {
		{{0, 4096, 10}, {0, 0, 0}}, {{0, 8192, 5}, {5, 100, 5}}, {{0, 8192, 5}, {5, 200, 5}}};
	uint64_t rng = 19;
	int round;

	for (round = 0; round < 300; round++) {
		struct ftab ft;
		uint32_t dir, id, root1[40], root[40];
		size_t n = 1 + (size_t)(t_rnd(&rng) % 40), i, j, joined, want = 0;

		ftab_init(&ft);
		CHECK_INT(ftab_add_dir(&ft, FT_NONE, "/r", 2, &dir, NULL), SL_OK);
		for (i = 0; i < n; i++) {
			struct ft_file *f;
			uint64_t r = t_rnd(&rng);
			CHECK_INT(ftab_add_file(&ft, dir, "f", 1, 1 + r % 6, (uint16_t)(r >> 8) % 2,
						&id, NULL), SL_OK);
			f = &ft.files[id];
			f->flags = FT_STATED | FT_LOCATED;
			f->size = 10;
			f->mtime_ns = (r >> 12) % 5 == 0 ? 2 : 1;
			f->ctime_ns = 7;
			f->links = (r >> 16) % 7 ? FT_LINK_MANY : 0;
			if ((r >> 20) % 9 == 0)
				f->flags |= FT_SKIP;
			if ((r >> 24) % 11 == 0)
				f->flags |= FT_FAILED;
			if ((r >> 40) % 8 == 0)
				f->links |= FT_LINK_ALONE; /* its record has an error */
			if ((r >> 28) % 3 == 0) {
				size_t m = (size_t)(r >> 32) % 3;
				f->links |= FT_LINK_SHARED;
				CHECK_INT(ftab_set_runs(&ft, id, maps[m], m ? 2 : 1, NULL), SL_OK);
			}
		}
		CHECK_INT(ftab_join_links(&ft, &joined, NULL), SL_OK);
		for (i = 0; i < n; i++) {
			root1[i] = (uint32_t)i;
			for (j = 0; ref_ok(&ft, i, FT_LINK_MANY) && j < i; j++)
				if (ref_ok(&ft, j, FT_LINK_MANY) && ref_same_inode(&ft, i, j)) {
					root1[i] = (uint32_t)j;
					break;
				}
		}
		for (i = 0; i < n; i++) {
			size_t r1 = root1[i];
			root[i] = (uint32_t)r1;
			for (j = 0; ref_ok(&ft, r1, FT_LINK_SHARED) && j < r1; j++)
				if (root1[j] == j && ref_ok(&ft, j, FT_LINK_SHARED) &&
				    ref_same_data(&ft, r1, j)) {
					root[i] = (uint32_t)j;
					break;
				}
		}
		for (i = 0; i < n; i++) {
			uint32_t k;
			size_t len = 0, members = 0;
			CHECK_INT(!!(ft.files[i].links & FT_LINK_ALIAS), root[i] != i);
			want += root[i] != i;
			if (root[i] != i)
				continue;
			for (k = ftab_link_next(&ft, (uint32_t)i); k != FT_NONE && len <= n;
			     k = ftab_link_next(&ft, k), len++)
				CHECK_INT(root[k], i);
			for (j = 0; j < n; j++)
				members += root[j] == i && j != i;
			CHECK_INT(len, members);
		}
		CHECK_INT(joined, want);
		ftab_free(&ft);
	}
}

int main(void)
{
	RUN(test_join_links);
	RUN(test_paths);
	RUN(test_add_path);
	RUN(test_deep);
	RUN(test_seen);
	RUN(test_placement);
	return t_done();
}
