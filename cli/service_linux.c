/* service_linux.c - systemd units: a oneshot service and a timer
 * (service.h).  System scope: /etc/systemd/system, sandboxed read-only but
 * for the index's directory; user scope: ~/.config/systemd/user (no
 * sandboxing: a user manager cannot apply it without user namespaces). */
#include "cli/service.h"

#include <errno.h>
#include <pwd.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/anchor_linux.h"
#include "common/sys.h"

#define UNIT "seekless"

/* One word of a unit file's command line or path list: quoted when it has
 * anything systemd would split or expand. */
static void unit_word(struct strbuf *sb, const char *w)
{
	const char *p;
	int quote = !*w || strpbrk(w, " \t\"'\\;") != NULL;

	if (quote)
		sb_addc(sb, '"');
	for (p = w; *p; p++) {
		if (*p == '%')
			sb_adds(sb, "%%");
		else if (*p == '$')
			sb_adds(sb, "$$");
		else if (quote && (*p == '"' || *p == '\\')) {
			sb_addc(sb, '\\');
			sb_addc(sb, *p);
		} else
			sb_addc(sb, *p);
	}
	if (quote)
		sb_addc(sb, '"');
}

/* Run argv (no shell); its output goes to out when not NULL, else to our
 * stderr.  Returns the exit status, or -1 when it could not run. */
static int run(char *const argv[], struct strbuf *out)
{
	int fds[2] = {-1, -1}, status;
	pid_t pid;

	if (out && pipe(fds) != 0)
		return -1;
	pid = fork();
	if (pid < 0) {
		if (out) {
			close(fds[0]);
			close(fds[1]);
		}
		return -1;
	}
	if (pid == 0) {
		int null = open("/dev/null", O_RDONLY);
		if (null >= 0)
			dup2(null, 0);
		if (out) {
			dup2(fds[1], 1);
			dup2(fds[1], 2);
		} else {
			dup2(2, 1);
		}
		execvp(argv[0], argv);
		_exit(127);
	}
	if (out) {
		char buf[4096];
		ssize_t n;
		close(fds[1]);
		while ((n = read(fds[0], buf, sizeof(buf))) > 0 ||
		       (n < 0 && errno == EINTR))
			if (n > 0)
				sb_add(out, buf, (size_t)n);
		close(fds[0]);
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static int have(const char *prog)
{
	const char *path = getenv("PATH");
	char buf[4096];

	if (!path)
		path = "/usr/bin:/bin";
	while (*path) {
		size_t n = strcspn(path, ":");
		snprintf(buf, sizeof(buf), "%.*s/%s", (int)n, path, prog);
		if (access(buf, X_OK) == 0)
			return 1;
		path += n;
		if (*path == ':')
			path++;
	}
	return 0;
}

/* "HH:MM" -> a daily OnCalendar; anything else is systemd's own syntax,
 * checked by systemd-analyze where it exists. */
static int calendar(const char *schedule, struct strbuf *out, struct sl_err *err)
{
	unsigned h, m;
	char tail;

	sb_reset(out);
	if (sscanf(schedule, "%2u:%2u%c", &h, &m, &tail) == 2) {
		if (h > 23 || m > 59)
			return SL_FAIL(err, SL_E_USAGE, 0, "schedule '%s': no such time of day",
				       schedule);
		sb_addf(out, "*-*-* %02u:%02u:00", h, m);
	} else {
		if (strpbrk(schedule, "\n\r"))
			return SL_FAIL(err, SL_E_USAGE, 0, "schedule: one line, please");
		if (have("systemd-analyze")) {
			struct strbuf msg = STRBUF_INIT;
			char *argv[] = {(char *)"systemd-analyze", (char *)"calendar",
					(char *)schedule, NULL};
			if (run(argv, &msg) != 0) {
				SL_FAIL(err, SL_E_USAGE, 0,
					"schedule '%s' is neither HH:MM nor a systemd calendar "
					"expression: %s", schedule, msg.p ? msg.p : "");
				sb_free(&msg);
				return SL_E_USAGE;
			}
			sb_free(&msg);
		}
		sb_adds(out, schedule);
	}
	return out->oom ? SL_FAIL(err, SL_E_NOMEM, 0, "out of memory") : SL_OK;
}

int svc_units(const struct svc_opts *o, struct strbuf *service, struct strbuf *timer,
	      struct sl_err *err)
{
	struct strbuf cal = STRBUF_INIT, dir = STRBUF_INIT;
	const char *slash;
	int rc = calendar(o->schedule, &cal, err);

	if (rc != SL_OK) {
		sb_free(&cal);
		return rc;
	}
	sb_reset(service);
	sb_reset(timer);
	sb_adds(service,
		"# Written by `seekless service install`; `seekless service uninstall` removes it.\n"
		"[Unit]\n"
		"Description=seekless: index photo drives in physical disk order\n"
		"After=local-fs.target remote-fs.target\n"
		"\n"
		"[Service]\n"
		"Type=oneshot\n"
		"ExecStart=");
	unit_word(service, o->exe);
	sb_adds(service, " scan --scheduled --config ");
	unit_word(service, o->config);
	if (o->db && !o->db_in_config) {
		sb_adds(service, " --db ");
		unit_word(service, o->db);
	}
	/* After the scan, finished or not (a failed or stopped one still
	 * left an index worth looking at, its errors first): the report,
	 * when the configuration asks for one.  '-': its failure is logged
	 * and is not the scan's.  Always there, so that setting report later
	 * needs no new unit, except for where it may write (below). */
	sb_adds(service, "\nExecStopPost=-");
	unit_word(service, o->exe);
	sb_adds(service, " report --scheduled --config ");
	unit_word(service, o->config);
	if (o->db && !o->db_in_config) {
		sb_adds(service, " --db ");
		unit_word(service, o->db);
	}
	sb_adds(service,
		"\n"
		"# Idle from the first instruction; the scan also lowers itself and\n"
		"# waits while anyone else uses the disk (--scheduled).\n"
		"Nice=19\n"
		"IOSchedulingClass=idle\n"
		"CPUSchedulingPolicy=idle\n"
		"# On SIGTERM the scan stores what it read and exits 4; the next run\n"
		"# goes on from there.  1: finished, some files unreadable (recorded).\n"
		"TimeoutStopSec=2min\n"
		"SuccessExitStatus=1 4\n"
		"# A run still going after 23 hours (a disk whose reads stopped\n"
		"# returning) is stopped the same way, before the next night's.\n"
		"TimeoutStartSec=23h\n");
	if (!o->user && o->run_as) {
		sb_adds(service, "# An unprivileged account: it must be able to read the roots.\nUser=");
		unit_word(service, o->run_as);
		sb_addc(service, '\n');
	}
	if (!o->user) {
		/* the index's directory is the only place it writes */
		slash = o->db ? strrchr(o->db, '/') : NULL;
		if (slash && slash != o->db)
			sb_add(&dir, o->db, (size_t)(slash - o->db));
		sb_adds(service,
			"# Reads everything, writes nothing but the index (and the report).\n"
			"ProtectSystem=strict\n"
			"ProtectHome=read-only\n");
		if (dir.len) {
			sb_adds(service, "ReadWritePaths=");
			unit_word(service, dir.p);
			sb_addc(service, '\n');
		}
		/* and the report's directory, as set when the unit was written
		 * ('-': a directory gone does not stop the scan) */
		slash = o->report ? strrchr(o->report, '/') : NULL;
		if (slash && slash != o->report) {
			sb_reset(&dir);
			sb_add(&dir, o->report, (size_t)(slash - o->report));
			sb_adds(service, "ReadWritePaths=-");
			unit_word(service, dir.p);
			sb_addc(service, '\n');
		}
		sb_adds(service,
			"PrivateTmp=yes\n"
			"# What a scan needs, and no more (docs/security.md): read every\n"
			"# file (DAC_READ_SEARCH), leave access times alone (FOWNER:\n"
			"# O_NOATIME), place files on NTFS (SYS_RAWIO: FIBMAP).  Before\n"
			"# reading the scan keeps only the first two, and filters its\n"
			"# own system calls further.\n"
			"CapabilityBoundingSet=CAP_DAC_READ_SEARCH CAP_FOWNER CAP_SYS_RAWIO\n"
			"NoNewPrivileges=yes\n"
			"PrivateNetwork=yes\n"
			"IPAddressDeny=any\n"
			"RestrictAddressFamilies=none\n"
			"DevicePolicy=closed\n"
			"ProtectKernelTunables=yes\n"
			"ProtectKernelModules=yes\n"
			"ProtectKernelLogs=yes\n"
			"ProtectControlGroups=yes\n"
			"ProtectClock=yes\n"
			"ProtectHostname=yes\n"
			"ProtectProc=invisible\n"
			"ProcSubset=pid\n"
			"RestrictNamespaces=yes\n"
			"RestrictRealtime=yes\n"
			"RestrictSUIDSGID=yes\n"
			"LockPersonality=yes\n"
			"MemoryDenyWriteExecute=yes\n"
			"KeyringMode=private\n"
			"UMask=0077\n"
			"SystemCallArchitectures=native\n"
			"PrivateMounts=yes\n"
			"SystemCallFilter=@system-service\n"
			"SystemCallFilter=~@privileged @mount @swap @reboot @module @obsolete\n"
			"SystemCallFilter=~@cpu-emulation @debug\n"
			"# the scan drops its own capabilities\n"
			"SystemCallFilter=capset capget\n"
			"SystemCallErrorNumber=EPERM\n");
	}
	sb_addf(timer,
		"# Written by `seekless service install`; `seekless service uninstall` removes it.\n"
		"[Unit]\n"
		"Description=Nightly seekless scan\n"
		"\n"
		"[Timer]\n"
		"OnCalendar=%s\n"
		"# Not every machine at the same minute; a run missed while the\n"
		"# machine was off happens at the next boot.\n"
		"RandomizedDelaySec=30min\n"
		"Persistent=true\n"
		"\n"
		"[Install]\n"
		"WantedBy=timers.target\n",
		cal.p);
	sb_free(&cal);
	sb_free(&dir);
	if (service->oom || timer->oom)
		return SL_FAIL(err, SL_E_NOMEM, 0, "out of memory");
	return SL_OK;
}

static int unit_dir(const struct svc_opts *o, struct strbuf *out, struct sl_err *err)
{
	const char *xdg = getenv("XDG_CONFIG_HOME");
	const char *home = sys_home();

	sb_reset(out);
	if (o->dest)
		sb_adds(out, o->dest);
	else if (!o->user)
		sb_adds(out, "/etc/systemd/system");
	else if (xdg && xdg[0] == '/')
		sb_addf(out, "%s/systemd/user", xdg);
	else if (home)
		sb_addf(out, "%s/.config/systemd/user", home);
	else
		return SL_FAIL(err, SL_E_USAGE, 0, "no home directory for the user's units");
	return out->oom ? SL_FAIL(err, SL_E_NOMEM, 0, "out of memory") : SL_OK;
}

/* Write via a temporary file and rename, so a unit is never half written. */
static int write_file(const char *dir, const char *name, const struct strbuf *text,
		      struct sl_err *err)
{
	char path[4096], tmp[4200];
	FILE *f;
	int e;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	f = fopen(tmp, "w");
	if (!f)
		return SL_FAIL(err, SL_E_IO, errno, "write %s", tmp);
	fchmod(fileno(f), 0644);
	if (fwrite(text->p, 1, text->len, f) != text->len || fflush(f) != 0 ||
	    fsync(fileno(f)) != 0) {
		e = errno;
		fclose(f);
		unlink(tmp);
		return SL_FAIL(err, SL_E_IO, e, "write %s", tmp);
	}
	if (fclose(f) != 0 || rename(tmp, path) != 0) {
		e = errno;
		unlink(tmp);
		return SL_FAIL(err, SL_E_IO, e, "write %s", path);
	}
	return SL_OK;
}

static int systemctl(const struct svc_opts *o, const char *a, const char *b, const char *c,
		     struct strbuf *out)
{
	char *argv[6];
	int n = 0;

	argv[n++] = (char *)"systemctl";
	if (o->user)
		argv[n++] = (char *)"--user";
	argv[n++] = (char *)a;
	if (b)
		argv[n++] = (char *)b;
	if (c)
		argv[n++] = (char *)c;
	argv[n] = NULL;
	return run(argv, out);
}

static const char *scope(const struct svc_opts *o)
{
	return o->user ? "systemctl --user" : "systemctl";
}

/* Give name in folder dfd to pw, through a descriptor of what is really
 * there: a link is never followed and a file with other names never given
 * (the account owned the folder before, and may have put either there to
 * be handed a file of root's).  0, or an errno value (ELOOP, EMLINK,
 * EINVAL: not a regular file). */
static int give_one(int dfd, const char *name, const struct passwd *pw)
{
	struct stat st;
	int fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC), e = 0;

	if (fd < 0)
		return errno == ENOENT ? 0 : errno;
	if (fstat(fd, &st) != 0)
		e = errno;
	else if (!S_ISREG(st.st_mode))
		e = EINVAL;
	else if (st.st_nlink > 1)
		e = EMLINK;
	else if (fchown(fd, pw->pw_uid, pw->pw_gid) != 0)
		e = errno;
	close(fd);
	return e;
}

/* The account the system service runs as owns the index's folder and what
 * is in it, so the scans can write there without root. */
static int give_index(const struct svc_opts *o, struct passwd *pw, struct strbuf *report,
		      struct sl_err *err)
{
	static const char *const suffixes[] = {"", "-wal", "-shm", ".lock"};
	struct strbuf p = STRBUF_INIT, name = STRBUF_INIT;
	const char *slash = o->db ? strrchr(o->db, '/') : NULL;
	struct anchor *a = NULL;
	struct stat st;
	size_t i;
	int dfd = -1, rc, e = 0;

	if (!slash || slash == o->db)
		return SL_OK;
	sb_add(&p, o->db, (size_t)(slash - o->db));
	if (p.oom)
		return SL_FAIL(err, SL_E_NOMEM, 0, "out of memory");
	/* the folder resolved once (as root: only links root owns), then
	 * everything in it by descriptor */
	rc = anchor_open(p.p, 0, &a, err);
	if (rc == SL_E_IO && err->sys == ENOENT)
		rc = SL_OK, a = NULL; /* nothing there yet: the first scan makes it */
	if (rc != SL_OK || !a)
		goto out;
	dfd = openat(anchor_fd(a), ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0 || fstat(dfd, &st) != 0 || fchown(dfd, pw->pw_uid, pw->pw_gid) != 0) {
		rc = SL_FAIL(err, SL_E_IO, errno, "give %s to %s", p.p, pw->pw_name);
		goto out;
	}
	for (i = 0; !e && i < sizeof(suffixes) / sizeof(suffixes[0]); i++) {
		sb_reset(&name);
		sb_addf(&name, "%s%s", slash + 1, suffixes[i]);
		e = name.oom ? ENOMEM : give_one(dfd, name.p, pw);
	}
	if (e == ELOOP || e == EMLINK || e == EINVAL)
		rc = SL_FAIL(err, SL_E_IO, 0, "give %s/%s to %s: it is %s; left as it is (remove it "
			     "and install again)", p.p, name.p, pw->pw_name,
			     e == ELOOP ? "a symbolic link" : e == EMLINK ? "a file with other names "
			     "(hard links)" : "not a regular file");
	else if (e)
		rc = SL_FAIL(err, SL_E_IO, e, "give %s/%s to %s", p.p, name.p, pw->pw_name);
	if (rc == SL_OK)
		sb_addf(report, "the index's folder now belongs to %s\n", pw->pw_name);
out:
	if (dfd >= 0)
		close(dfd);
	anchor_free(a);
	sb_free(&p);
	sb_free(&name);
	return rc;
}

int svc_install(const struct svc_opts *o, struct strbuf *report, struct sl_err *err)
{
	struct strbuf dir = STRBUF_INIT, svc = STRBUF_INIT, tmr = STRBUF_INIT, out = STRBUF_INIT;
	struct passwd *pw = NULL;
	int rc, e;

	if (o->no_root)
		return SL_FAIL(err, SL_E_USAGE, 0,
			       "%s names no root: the timer's scans would fail every night; add a "
			       "line 'root = /path/to/photos' first (--allow-no-root is for the "
			       "Windows service, which waits for one)",
			       o->config);
	if (o->run_as) {
		if (o->user)
			return SL_FAIL(err, SL_E_USAGE, 0, "--run-as is for the system's service");
		pw = getpwnam(o->run_as);
		if (!pw)
			return SL_FAIL(err, SL_E_USAGE, 0, "no account named '%s'", o->run_as);
	}
	rc = svc_units(o, &svc, &tmr, err);
	if (rc == SL_OK)
		rc = unit_dir(o, &dir, err);
	if (rc == SL_OK) {
		sb_addf(&dir, "/%s", UNIT ".service");
		e = sys_mkdir_parents(dir.p);
		sb_truncate(&dir, dir.len - strlen("/" UNIT ".service"));
		if (e)
			rc = SL_FAIL(err, SL_E_IO, e, "create %s", dir.p);
	}
	if (rc == SL_OK)
		rc = write_file(dir.p, UNIT ".service", &svc, err);
	if (rc == SL_OK)
		rc = write_file(dir.p, UNIT ".timer", &tmr, err);
	if (rc != SL_OK)
		goto out;
	sb_addf(report, "units: %s/%s.service, %s.timer\n", dir.p, UNIT, UNIT);
	if (o->dest)
		goto out;
	if (pw && (rc = give_index(o, pw, report, err)) != SL_OK)
		goto out;
	if (systemctl(o, "daemon-reload", NULL, NULL, &out) != 0 ||
	    (sb_reset(&out), systemctl(o, "enable", "--now", UNIT ".timer", &out)) != 0) {
		rc = SL_FAIL(err, SL_E_IO, 0,
			     "the units are written, but %s could not enable them: %s"
			     "run '%s daemon-reload && %s enable --now %s.timer' once systemd runs",
			     scope(o), out.p ? out.p : "", scope(o), scope(o), UNIT);
		goto out;
	}
	sb_addf(report, "enabled: %s.timer (%s list-timers %s.timer shows the next run)\n",
		UNIT, scope(o), UNIT);
	if (o->user) {
		const char *user = getenv("USER");
		sb_reset(&out);
		if (user) {
			char *argv[] = {(char *)"loginctl", (char *)"show-user", (char *)user,
					(char *)"--property=Linger", NULL};
			if (run(argv, &out) == 0 && out.p && strstr(out.p, "Linger=no"))
				sb_addf(report,
					"note: a user timer runs only while you are logged in; "
					"'loginctl enable-linger %s' lets it run at night\n", user);
		}
	}
out:
	sb_free(&dir);
	sb_free(&svc);
	sb_free(&tmr);
	sb_free(&out);
	return rc;
}

int svc_uninstall(const struct svc_opts *o, struct strbuf *report, struct sl_err *err)
{
	struct strbuf dir = STRBUF_INIT, out = STRBUF_INIT;
	static const char *const names[] = {UNIT ".timer", UNIT ".service"};
	int rc, i, removed = 0;

	rc = unit_dir(o, &dir, err);
	if (rc != SL_OK)
		goto out;
	if (!o->dest) {
		/* a running scan gets SIGTERM: it stores what it read */
		if (systemctl(o, "disable", "--now", UNIT ".timer", &out) == 0)
			sb_addf(report, "disabled: %s.timer\n", UNIT);
		sb_reset(&out);
		systemctl(o, "stop", UNIT ".service", NULL, &out);
	}
	for (i = 0; i < 2; i++) {
		char path[4200];
		snprintf(path, sizeof(path), "%s/%s", dir.p, names[i]);
		if (unlink(path) == 0) {
			sb_addf(report, "removed: %s\n", path);
			removed++;
		} else if (errno != ENOENT) {
			rc = SL_FAIL(err, SL_E_IO, errno, "remove %s", path);
			goto out;
		}
	}
	if (!removed)
		sb_addf(report, "not installed (no units in %s)\n", dir.p);
	if (!o->dest) {
		sb_reset(&out);
		systemctl(o, "daemon-reload", NULL, NULL, &out);
	}
out:
	sb_free(&dir);
	sb_free(&out);
	return rc;
}

/* Value of `key=` in systemctl show output, or "". */
static void show_value(const char *text, const char *key, char *buf, size_t cap)
{
	size_t kl = strlen(key);
	const char *p = text;

	buf[0] = '\0';
	while (p && *p) {
		if (strncmp(p, key, kl) == 0 && p[kl] == '=') {
			size_t n = strcspn(p + kl + 1, "\n");
			snprintf(buf, cap, "%.*s", (int)n, p + kl + 1);
			return;
		}
		p = strchr(p, '\n');
		if (p)
			p++;
	}
}

int svc_status(const struct svc_opts *o, struct strbuf *report, struct sl_err *err)
{
	struct strbuf dir = STRBUF_INIT, out = STRBUF_INIT;
	char path[4200], v[256];
	struct stat st;
	int rc = unit_dir(o, &dir, err);

	if (rc != SL_OK)
		goto out;
	snprintf(path, sizeof(path), "%s/%s.timer", dir.p, UNIT);
	sb_addf(report, "units: %s\n", stat(path, &st) == 0 ? path : "not installed");
	if (o->dest)
		goto out;
	if (systemctl(o, "show", UNIT ".timer",
		      "--property=UnitFileState,ActiveState,NextElapseUSecRealtime,LastTriggerUSec",
		      &out) != 0) {
		size_t n = out.p ? strcspn(out.p, "\n") : 0;
		sb_addf(report, "systemd: cannot ask (%.*s)\n", (int)n, n ? out.p : "no systemctl");
		goto out;
	}
	show_value(out.p, "UnitFileState", v, sizeof(v));
	sb_addf(report, "timer: %s", v[0] ? v : "unknown");
	show_value(out.p, "ActiveState", v, sizeof(v));
	sb_addf(report, ", %s\n", v[0] ? v : "unknown");
	show_value(out.p, "NextElapseUSecRealtime", v, sizeof(v));
	if (v[0])
		sb_addf(report, "next run: %s\n", v);
	show_value(out.p, "LastTriggerUSec", v, sizeof(v));
	if (v[0] && strcmp(v, "n/a") != 0)
		sb_addf(report, "last run: %s\n", v);
	sb_reset(&out);
	if (systemctl(o, "show", UNIT ".service", "--property=ActiveState,Result,ExecMainStatus",
		      &out) == 0) {
		char a[64], r[64], x[16];
		show_value(out.p, "ActiveState", a, sizeof(a));
		show_value(out.p, "Result", r, sizeof(r));
		show_value(out.p, "ExecMainStatus", x, sizeof(x));
		sb_addf(report, "service: %s, last result %s (exit status %s)\n", a, r, x);
	}
out:
	sb_free(&dir);
	sb_free(&out);
	return rc;
}

int svc_system_db(struct strbuf *out)
{
	sb_reset(out);
	sb_adds(out, "/var/lib/seekless/index.db");
	return out->oom ? -1 : 0;
}

int svc_run(const char *config, const char *db)
{
	(void)config;
	(void)db;
	fprintf(stderr, "seekless service run: only for the Windows service manager; systemd runs "
			"`seekless scan --scheduled` itself (see `seekless service status`)\n");
	return 2;
}
