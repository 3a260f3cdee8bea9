/* The compact file table: names, paths, devices, the seen-directory set. */
#include "scanner/ftab.h"
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
	CHECK(sizeof(struct ft_file) <= 64);
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

/* Joining hard links, against a reference: random tables whose files share
 * (dev, ino) keys, some with other times (a number given again to another
 * file), some skipped or failed.  A file is an alias exactly when an
 * earlier eligible file has its whole key; each group's chain runs from its
 * first name through the others in table order. */
static void test_join_links(void)
{
	uint64_t rng = 19;
	int round;

	for (round = 0; round < 300; round++) {
		struct ftab ft;
		uint32_t dir, id;
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
		}
		CHECK_INT(ftab_join_links(&ft, &joined, NULL), SL_OK);
		for (i = 0; i < n; i++) {
			const struct ft_file *f = &ft.files[i];
			int ok = (f->links & FT_LINK_MANY) && !(f->flags & (FT_SKIP | FT_FAILED));
			uint32_t before = FT_NONE, after = FT_NONE;
			for (j = 0; ok && j < n; j++) {
				const struct ft_file *g = &ft.files[j];
				if (j == i || !(g->links & FT_LINK_MANY) ||
				    (g->flags & (FT_SKIP | FT_FAILED)) || g->dev != f->dev ||
				    g->ino != f->ino || g->mtime_ns != f->mtime_ns)
					continue;
				if (j < i)
					before = (uint32_t)j;
				else if (after == FT_NONE)
					after = (uint32_t)j;
			}
			CHECK_INT(!!(f->links & FT_LINK_ALIAS), before != FT_NONE);
			CHECK_INT(ftab_link_next(&ft, (uint32_t)i), after);
			want += before != FT_NONE;
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
