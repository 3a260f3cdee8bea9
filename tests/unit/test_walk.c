/* The walk on a real directory tree: symlinks, FIFOs, sockets, loops,
 * overlapping roots, depth limit, bind-mount loop (as root). */
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "scanner/walk.h"
#include "tests/unit/test.h"
#include "tests/unit/tfs.h"

static char *root;

static void mk(const char *rel)
{
	char p[4096];
	snprintf(p, sizeof(p), "%s/%s", root, rel);
	if (rel[strlen(rel) - 1] == '/') {
		p[strlen(p) - 1] = '\0';
		mkdir(p, 0755);
	} else {
		t_write(p, rel, strlen(rel));
	}
}

static int count_named(const struct ftab *ft, const char *suffix)
{
	struct strbuf sb = STRBUF_INIT;
	size_t i;
	int n = 0;
	for (i = 0; i < ft->nfiles; i++) {
		sb_reset(&sb);
		ftab_path(ft, (uint32_t)i, &sb);
		if (sb.len >= strlen(suffix) && strcmp(sb.p + sb.len - strlen(suffix), suffix) == 0)
			n++;
	}
	sb_free(&sb);
	return n;
}

static void build_tree(void)
{
	char p[4096], q[4096];
	struct sockaddr_un sa;
	int s, i;

	root = t_tmpdir("walk");
	mk("a/");
	mk("a/b/");
	mk("c/");
	mk("a/1.jpg");
	mk("a/2.jpg");
	mk("a/b/3.jpg");
	mk("top.jpg");
	snprintf(p, sizeof(p), "%s/link_dir", root);
	CHECK(symlink("a", p) == 0);
	snprintf(p, sizeof(p), "%s/link_file", root);
	CHECK(symlink("top.jpg", p) == 0);
	snprintf(p, sizeof(p), "%s/a/loop", root);
	CHECK(symlink("..", p) == 0);
	snprintf(p, sizeof(p), "%s/fifo", root);
	CHECK(mkfifo(p, 0644) == 0);
	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/sock", root);
	s = socket(AF_UNIX, SOCK_STREAM, 0);
	if (strlen(root) + 6 < sizeof(sa.sun_path))
		CHECK(bind(s, (struct sockaddr *)&sa, sizeof(sa)) == 0);
	close(s);
	/* deeper than WALK_MAX_DEPTH */
	snprintf(p, sizeof(p), "%s/deep", root);
	mkdir(p, 0755);
	if (chdir(p) != 0)
		return;
	for (i = 0; i < WALK_MAX_DEPTH + 5; i++) {
		if (mkdir("d", 0755) != 0 || chdir("d") != 0)
			break;
	}
	t_write("bottom.jpg", "x", 1);
	snprintf(q, sizeof(q), "%s", root);
	if (chdir(q) != 0)
		return;
}

static void test_tree(void)
{
	struct ftab ft;
	struct walk_opts o = {0};
	struct walk_stats st;
	struct sl_err e;
	size_t i, failed = 0;

	memset(&st, 0, sizeof(st));
	ftab_init(&ft);
	CHECK_INT(t_walk_root(&ft, root, &o, &st, &e), SL_OK);
	CHECK_INT(st.files, 4);
	CHECK_INT(st.symlinks, 3);
	CHECK_INT(st.special, strlen(root) + 6 < 108 ? 2 : 1);
	CHECK_INT(st.dir_errors, 1);
	CHECK_INT(count_named(&ft, "/a/1.jpg"), 1);
	CHECK_INT(count_named(&ft, "/a/b/3.jpg"), 1);
	CHECK_INT(count_named(&ft, "/top.jpg"), 1);
	CHECK_INT(count_named(&ft, "bottom.jpg"), 0);
	for (i = 0; i < ft.nfiles; i++) {
		if (ft.files[i].flags & FT_FAILED) {
			failed++;
			CHECK(ft.files[i].flags & FT_DIR);
			CHECK(strstr(ftab_str(&ft, ft.files[i].err), "too deep") != NULL);
		}
	}
	CHECK_INT(failed, 1);
	CHECK_INT(ft.ndevs, 1);

	/* the same root again, and a root inside it: nothing new */
	CHECK_INT(t_walk_root(&ft, root, &o, &st, &e), SL_OK);
	CHECK_INT(st.repeats, 1);
	{
		char sub[4096];
		size_t before = ft.nfiles;
		snprintf(sub, sizeof(sub), "%s/a", root);
		CHECK_INT(t_walk_root(&ft, sub, &o, &st, &e), SL_OK);
		CHECK_INT(ft.nfiles, before);
		CHECK_INT(st.repeats, 2);
	}
	ftab_free(&ft);
}

static void test_single_file_and_missing(void)
{
	struct ftab ft;
	struct walk_opts o = {0};
	struct walk_stats st;
	struct strbuf sb = STRBUF_INIT;
	struct sl_err e;
	char p[4096];

	memset(&st, 0, sizeof(st));
	ftab_init(&ft);
	snprintf(p, sizeof(p), "%s/a/../top.jpg", root);
	CHECK_INT(t_walk_root(&ft, p, &o, &st, &e), SL_OK);
	CHECK_INT(ft.nfiles, 1);
	ftab_path(&ft, 0, &sb);
	snprintf(p, sizeof(p), "%s/top.jpg", root);
	CHECK_STR(sb.p, p); /* canonical */
	snprintf(p, sizeof(p), "%s/nope", root);
	CHECK_INT(t_walk_root(&ft, p, &o, &st, &e), SL_E_IO);
	CHECK(strstr(e.msg, "No such file") != NULL);
	snprintf(p, sizeof(p), "%s/fifo", root);
	CHECK_INT(t_walk_root(&ft, p, &o, &st, &e), SL_E_IO); /* never opened for reading */
	sb_free(&sb);
	ftab_free(&ft);
}

static void test_bind_loop(void)
{
	struct ftab ft;
	struct walk_opts o = {0};
	struct walk_stats st;
	struct sl_err e;
	char target[4096], why[256];
	int rc = tfs_enter(why, sizeof(why));

	/* in a mount namespace of the test's own: the loop goes with it */
	if (rc == TFS_SKIP) {
		t_skip_part(why);
		return;
	}
	if (rc != TFS_OK) {
		fprintf(stderr, "%s\n", why);
		CHECK_INT(rc, TFS_OK);
		return;
	}
	snprintf(target, sizeof(target), "%s/c", root);
	if (mount(root, target, NULL, MS_BIND, NULL) != 0) {
		fprintf(stderr, "bind mount of %s on %s: %s\n", root, target, strerror(errno));
		CHECK(0);
		return;
	}
	memset(&st, 0, sizeof(st));
	ftab_init(&ft);
	CHECK_INT(t_walk_root(&ft, root, &o, &st, &e), SL_OK);
	CHECK_INT(st.files, 4); /* the loop is entered once, then recognised */
	CHECK(st.repeats >= 1);
	umount2(target, MNT_DETACH);
	ftab_free(&ft);
}

static void test_cancel(void)
{
	struct ftab ft;
	atomic_int cancel;
	struct walk_opts o = {.cancel = &cancel};
	struct walk_stats st;
	struct sl_err e;

	atomic_init(&cancel, 1);
	memset(&st, 0, sizeof(st));
	ftab_init(&ft);
	CHECK_INT(t_walk_root(&ft, root, &o, &st, &e), SL_E_CANCELLED);
	CHECK_INT(ft.nfiles, 0);
	ftab_free(&ft);
}

static void test_glob(void)
{
	CHECK(ex_glob("*.jpg", "a.jpg", 0));
	CHECK(!ex_glob("*.jpg", "a.jpeg", 0));
	CHECK(!ex_glob("*.jpg", "a.JPG", 0));
	CHECK(ex_glob("*.jpg", "a.JPG", EX_FOLD));
	CHECK(ex_glob("IMG_????.*", "IMG_0042.CR2", 0));
	CHECK(!ex_glob("IMG_????.*", "IMG_042.CR2", 0));
	CHECK(ex_glob("[!.]*", "photo", 0));
	CHECK(!ex_glob("[!.]*", ".hidden", 0));
	CHECK(ex_glob("[a-c]x", "bx", 0));
	CHECK(!ex_glob("[a-c]x", "dx", 0));
	CHECK(ex_glob("\\*x", "*x", 0));
	CHECK(!ex_glob("\\*x", "ax", 0));
	CHECK(ex_glob("*", "", 0));
	CHECK(!ex_glob("?", "", 0));
	CHECK(ex_glob("a*b*c*d", "a--b--c--d", 0));
	CHECK(!ex_glob("a*b*c*d", "a--b--c--e", 0));
	/* without EX_SLASH_STAR a star stays within one component */
	CHECK(!ex_glob("/p/*.jpg", "/p/sub/x.jpg", 0));
	CHECK(ex_glob("/p/*.jpg", "/p/sub/x.jpg", EX_SLASH_STAR));
	CHECK(ex_glob("*/cache/*", "/home/u/cache/x", EX_SLASH_STAR));
	CHECK(ex_glob("C:\\photos\\*", "c:/Photos/x", EX_FOLD | EX_SLASH_STAR));
	/* many stars against a long miss: must return, not explode */
	CHECK(!ex_glob("*a*a*a*a*a*a*a*a*a*b",
		       "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", 0));
}

static void test_exclude(void)
{
	struct excl x = {0};
	struct ftab ft;
	struct walk_opts o = {0};
	struct walk_stats st;
	struct sl_err e;
	char pat[4200];

	CHECK_INT(ex_add(&x, "", &e), SL_E_USAGE);
	CHECK_INT(ex_add(&x, "[abc", &e), SL_E_USAGE);
	CHECK_INT(ex_add(&x, "2.*", &e), SL_OK);
	CHECK_INT(x.any_path, 0);
	o.exclude = &x;
	memset(&st, 0, sizeof(st));
	ftab_init(&ft);
	CHECK_INT(t_walk_root(&ft, root, &o, &st, &e), SL_OK);
	CHECK_INT(st.files, 3);
	CHECK_INT(st.excl_files, 1);
	CHECK_INT(count_named(&ft, "/a/2.jpg"), 0);
	CHECK_INT(count_named(&ft, "/a/1.jpg"), 1);
	ftab_free(&ft);

	/* a directory by name: not descended at all (deep/ has the failed
	 * too-deep entry, which disappears with it) */
	CHECK_INT(ex_add(&x, "deep", &e), SL_OK);
	memset(&st, 0, sizeof(st));
	ftab_init(&ft);
	CHECK_INT(t_walk_root(&ft, root, &o, &st, &e), SL_OK);
	CHECK_INT(st.excl_dirs, 1);
	CHECK_INT(st.dir_errors, 0);
	ftab_free(&ft);

	/* by path: a/b/ and below, but not a/1.jpg */
	snprintf(pat, sizeof(pat), "%s/a/b", root);
	CHECK_INT(ex_add(&x, pat, &e), SL_OK);
	CHECK_INT(x.any_path, 1);
	memset(&st, 0, sizeof(st));
	ftab_init(&ft);
	CHECK_INT(t_walk_root(&ft, root, &o, &st, &e), SL_OK);
	CHECK_INT(count_named(&ft, "/a/b/3.jpg"), 0);
	CHECK_INT(count_named(&ft, "/a/1.jpg"), 1);
	CHECK_INT(count_named(&ft, "/top.jpg"), 1);
	CHECK_INT(st.files, 2);
	CHECK_INT(st.excl_dirs, 2);
	ftab_free(&ft);
	ex_free(&x);

	/* a path pattern with a star crossing directories */
	CHECK_INT(ex_add(&x, "*/b/*.jpg", &e), SL_OK);
	memset(&st, 0, sizeof(st));
	ftab_init(&ft);
	CHECK_INT(t_walk_root(&ft, root, &o, &st, &e), SL_OK);
	CHECK_INT(count_named(&ft, "/a/b/3.jpg"), 0);
	CHECK_INT(st.excl_files, 1);
	CHECK_INT(st.files, 3);
	ftab_free(&ft);
	ex_free(&x);
}

int main(void)
{
	build_tree();
	RUN(test_tree);
	RUN(test_single_file_and_missing);
	RUN(test_bind_loop);
	RUN(test_cancel);
	RUN(test_glob);
	RUN(test_exclude);
	t_rmtree(root);
	free(root);
	return t_done();
}
