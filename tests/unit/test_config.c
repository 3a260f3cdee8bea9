/* The configuration file: syntax, values, errors with file:line, and the
 * precedence of the system file, the user's file and --config. */
#include <fcntl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "app/config.h"
#include "scanner/plan.h"
#include "tests/unit/test.h"
#include "tests/unit/tfs.h"

static char *dir;

static const char *file(const char *name, const char *text)
{
	static char p[4][4096];
	static int k;
	char *out = p[k++ % 4];
	snprintf(out, 4096, "%s/%s", dir, name);
	t_write(out, text, strlen(text));
	return out;
}

static void test_values(void)
{
	struct cfg c;
	struct sl_err e;
	char where[4200];
	const char *f = file("a.conf",
			     "# comment\n"
			     "\n"
			     "root = /media/photos\n"
			     "  root=/srv/more pics  \n"
			     "exclude = *.tmp\n"
			     "exclude = \" spaced \"\n"
			     "db = ~/idx.db\n"
			     "report = ~/www/photos report.html\n"
			     "schedule = Sun *-*-* 02:00\n"
			     "background = no\n"
			     "order = physical\n"
			     "jobs = 3\n"
			     "phash = off\n"
			     "phash_now = yes\n"
			     "mem = 128M\n"
			     "cross_fs = yes\n"
			     "trust_mtime = yes\n");

	setenv("HOME", "/home/tester", 1);
	cfg_init(&c);
	CHECK_INT(cfg_read_file(&c, f, 0, &e), SL_OK);
	CHECK_INT(c.nroots, 2);
	CHECK_STR(c.roots[0], "/media/photos");
	CHECK_STR(c.roots[1], "/srv/more pics");
	/* where each came from, for what is said about a missing one */
	snprintf(where, sizeof(where), "%s:3", f);
	CHECK_STR(c.root_from[0], where);
	snprintf(where, sizeof(where), "%s:4", f);
	CHECK_STR(c.root_from[1], where);
	CHECK_INT(c.nexcludes, 2);
	CHECK_STR(c.excludes[1], " spaced ");
	CHECK_STR(c.db, "/home/tester/idx.db");
	CHECK_STR(c.report, "/home/tester/www/photos report.html");
	CHECK_STR(c.schedule, "Sun *-*-* 02:00");
	CHECK_INT(c.background, 0);
	CHECK_INT(c.order, PLAN_PHYSICAL);
	CHECK_INT(c.jobs, 3);
	CHECK_INT(c.phash, 0);
	CHECK_INT(c.phash_now, 1);
	CHECK_INT(c.mem, 128u << 20);
	CHECK_INT(c.cross_fs, 1);
	CHECK_INT(c.trust_mtime, 1);
	CHECK_STR(c.read.p, f);
	cfg_free(&c);
	/* off unless set */
	f = file("b.conf", "root = /media/photos\n");
	cfg_init(&c);
	CHECK_INT(cfg_read_file(&c, f, 0, &e), SL_OK);
	CHECK(c.report == NULL);
	cfg_free(&c);
}

static void bad(const char *text, const char *want)
{
	struct cfg c;
	struct sl_err e;
	const char *f = file("bad.conf", text);

	cfg_init(&c);
	CHECK_INT(cfg_read_file(&c, f, 0, &e), SL_E_USAGE);
	if (!strstr(e.msg, want))
		fprintf(stderr, "message '%s' lacks '%s'\n", e.msg, want);
	CHECK(strstr(e.msg, want) != NULL);
	cfg_free(&c);
}

static void test_errors(void)
{
	struct cfg c;
	struct sl_err e;

	bad("root = /a\nrots = /b\n", "bad.conf:2: unknown setting 'rots'");
	bad("root = relative/path\n", "not an absolute path");
	bad("report = www/report.html\n", "bad.conf:1: report 'www/report.html' is not an absolute path");
	bad("background = maybe\n", "background wants yes or no");
	bad("phash_now = soon\n", "phash_now wants yes or no");
	bad("jobs = 0\n", "jobs wants a number from 1 to 256");
	bad("jobs = 4x\n", "jobs wants");
	bad("mem = 10\n", "mem wants a size");
	bad("order = sideways\n", "unknown order 'sideways'");
	bad("exclude = [abc\n", "without ']'");
	bad("just words\n", "bad.conf:1: expected 'key = value'");
	bad("db =\n", "'db' has no value");
	cfg_init(&c);
	{
		char p[4200];
		snprintf(p, sizeof(p), "%s/absent.conf", dir);
		CHECK_INT(cfg_read_file(&c, p, 1, &e), SL_OK);
		CHECK_INT(c.read.len, 0);
		CHECK_INT(cfg_read_file(&c, p, 0, &e), SL_E_USAGE);
		CHECK(strstr(e.msg, "absent.conf") != NULL);
		/* --config names exactly one file, which must exist */
		CHECK_INT(cfg_load(&c, p, &e), SL_E_USAGE);
	}
	cfg_free(&c);
}

static void test_precedence(void)
{
	struct cfg c;
	struct sl_err e;
	char xdg[4200];
	const char *sys = file("sys.conf", "root = /sys1\nroot = /sys2\nexclude = a\ndb = /sys.db\n"
					   "jobs = 2\n");
	const char *user = file("user.conf", "root = /mine\njobs = 5\n");

	/* the user's file over the system's: keys replaced, lists replaced as
	 * a whole, untouched keys kept */
	cfg_init(&c);
	CHECK_INT(cfg_read_file(&c, sys, 1, &e), SL_OK);
	CHECK_INT(cfg_read_file(&c, user, 1, &e), SL_OK);
	CHECK_INT(c.nroots, 1);
	CHECK_STR(c.roots[0], "/mine");
	CHECK(strstr(c.root_from[0], "user.conf:1") != NULL);
	CHECK_INT(c.nexcludes, 1);
	CHECK_STR(c.db, "/sys.db");
	CHECK_INT(c.jobs, 5);
	CHECK(strstr(c.read.p, "sys.conf, ") && strstr(c.read.p, "user.conf"));
	cfg_free(&c);

	/* cfg_load without --config finds the user's file by XDG_CONFIG_HOME */
	snprintf(xdg, sizeof(xdg), "%s/xdg", dir);
	mkdir(xdg, 0700);
	snprintf(xdg, sizeof(xdg), "%s/xdg/seekless", dir);
	mkdir(xdg, 0700);
	snprintf(xdg, sizeof(xdg), "%s/xdg/seekless/config", dir);
	t_write(xdg, "root = /from-xdg\n", 17);
	snprintf(xdg, sizeof(xdg), "%s/xdg", dir);
	setenv("XDG_CONFIG_HOME", xdg, 1);
	cfg_init(&c);
	CHECK_INT(cfg_load(&c, NULL, &e), SL_OK);
	CHECK_INT(c.nroots, 1);
	CHECK_STR(c.roots[0], "/from-xdg");
	cfg_free(&c);
	/* --config: only that file */
	cfg_init(&c);
	CHECK_INT(cfg_load(&c, sys, &e), SL_OK);
	CHECK_INT(c.nroots, 2);
	CHECK_STR(c.read.p, sys);
	cfg_free(&c);
}

/* The system's file, /etc/seekless.conf, under the user's: a child in a
 * mount namespace of its own puts a tmpfs of its own over /etc (nothing it
 * runs needs the machine's) and writes the file there.  The child's exit
 * status: 0, 1 (a check failed), 77 (not possible here: not root). */
static int system_file_child(const char *xdg)
{
	char why[256];
	const char *ours = "root = /sys-a\nroot = /sys-b\nexclude = *.tmp\n";
	struct cfg c;
	struct sl_err e;
	int rc = tfs_enter(why, sizeof(why));

	if (rc != TFS_OK) {
		fprintf(stderr, "%s\n", why);
		return rc == TFS_SKIP ? 77 : 1;
	}
	if (mount("seekless-etc", "/etc", "tmpfs", 0, "size=1m") != 0) {
		fprintf(stderr, "mount tmpfs on /etc: %s\n", strerror(errno));
		return 1;
	}
	t_write("/etc/seekless.conf", ours, strlen(ours));

	/* the user's list of roots replaces the system's whole; the
	 * system's excludes stay, the user's file naming none */
	setenv("XDG_CONFIG_HOME", xdg, 1);
	cfg_init(&c);
	CHECK_INT(cfg_load(&c, NULL, &e), SL_OK);
	CHECK_INT(c.nroots, 1);
	CHECK_STR(c.roots[0], "/from-xdg");
	CHECK_INT(c.nexcludes, 1);
	cfg_free(&c);
	/* no user's file: the system's roots */
	setenv("XDG_CONFIG_HOME", "/seekless-no-such-folder", 1);
	cfg_init(&c);
	CHECK_INT(cfg_load(&c, NULL, &e), SL_OK);
	CHECK_INT(c.nroots, 2);
	CHECK_STR(c.roots[1], "/sys-b");
	cfg_free(&c);
	return t_failures ? 1 : 0;
}

static void test_system_file(void)
{
	char xdg[4200];
	int st = 0;
	pid_t pid;

	snprintf(xdg, sizeof(xdg), "%s/xdg", dir); /* test_precedence's */
	fflush(NULL);
	pid = fork();
	if (pid == 0)
		_exit(system_file_child(xdg));
	CHECK(pid > 0 && waitpid(pid, &st, 0) == pid);
	if (WIFEXITED(st) && WEXITSTATUS(st) == 77) {
		t_skip_part("the system's configuration file (a tmpfs over /etc) needs root");
		return;
	}
	CHECK(WIFEXITED(st));
	CHECK_INT(WEXITSTATUS(st), 0);
}

int main(void)
{
	dir = t_tmpdir("config");
	RUN(test_values);
	RUN(test_errors);
	RUN(test_precedence);
	RUN(test_system_file);
	t_rmtree(dir);
	free(dir);
	return t_done();
}
