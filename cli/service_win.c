/* service_win.c - the Windows service (service.h).
 *
 * One service, "seekless", own process, automatic (delayed) start, run as
 * LocalSystem so it can read every user's photos; restarted by the SCM if it
 * dies.  Its command line is `seekless.exe service run --config FILE`: the
 * explicit `run` means it never ends up in console mode by accident, and
 * when the dispatcher cannot connect (someone ran that line by hand) it
 * says so and exits instead of scanning in the console.
 *
 * The service process waits for the schedule (HH:MM, daily, local time,
 * across daylight-saving changes as slot.h says; on start it catches up at
 * once when the last completed run is older than the latest scheduled
 * time, like systemd's Persistent=true), then runs the
 * `seekless scan --scheduled --config FILE` as a child process (so a crash
 * in a scan does not take the service down).  STOP and SHUTDOWN set an
 * event the child inherits; it raises the scan's interrupt flag, which the
 * pipeline checks between files, so the service stops within a second or
 * two with what was read stored.  After the scan, when the configuration
 * sets `report`, `seekless report --scheduled` writes the page, a second
 * child run the same way.  The children's output and the service's own
 * lines go to seekless-service.log in the index's folder; the time of the
 * last completed run is kept beside it in seekless-service.last.  Start,
 * stop and failures also go to the Event Log. */
#include "cli/service.h"

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <windows.h>

#include "app/config.h"
#include "cli/cli.h"
#include "cli/slot.h"
#include "common/sys.h"
#include "common/win.h"

#define SVC_NAME L"seekless"
#define SVC_DISPLAY L"seekless photo indexer"
#define SVC_DESC L"Indexes photo drives at night, reading files in physical disk order."

int svc_system_db(struct strbuf *out)
{
	sb_reset(out);
	if (win_folder(L"ProgramData", out) != 0)
		return -1;
	sb_adds(out, "/seekless/index.db");
	return out->oom ? -1 : 0;
}

/* "HH:MM" -> minutes after midnight, or -1. */
static int parse_hhmm(const char *s)
{
	int h, m;
	char tail;

	if (!s || sscanf(s, "%2d:%2d%c", &h, &m, &tail) != 2 || h < 0 || h > 23 || m < 0 || m > 59)
		return -1;
	return h * 60 + m;
}

/* Our path -> a native one for display and command lines: '\' separators. */
static void native(const char *path, struct strbuf *out)
{
	const char *p;

	for (p = path; *p; p++)
		sb_addc(out, *p == '/' ? '\\' : *p);
}

int svc_units(const struct svc_opts *o, struct strbuf *service, struct strbuf *timer,
	      struct sl_err *err)
{
	if (parse_hhmm(o->schedule) < 0)
		return SL_FAIL(err, SL_E_USAGE, 0,
			       "schedule '%s': the Windows service takes a daily time, HH:MM",
			       o->schedule ? o->schedule : "");
	sb_reset(service);
	sb_addc(service, '"');
	native(o->exe, service);
	sb_adds(service, "\" service run --config \"");
	native(o->config, service);
	sb_addc(service, '"');
	sb_reset(timer);
	sb_addf(timer, "daily at %s (the service waits for it)", o->schedule);
	if (service->oom || timer->oom)
		return SL_FAIL(err, SL_E_NOMEM, 0, "out of memory");
	return SL_OK;
}

static int scm_fail(struct sl_err *err, const char *what)
{
	int e = win_errno(GetLastError());
	return SL_FAIL(err, SL_E_IO, e, "%s", what);
}

static int check_scope(const struct svc_opts *o, struct sl_err *err)
{
	if (o->dest)
		return SL_FAIL(err, SL_E_USAGE, 0, "--dest writes systemd units; not on Windows");
	if (o->user)
		return SL_FAIL(err, SL_E_USAGE, 0,
			       "Windows services are system-wide: run this from an elevated "
			       "prompt, without --user");
	if (o->run_as)
		return SL_FAIL(err, SL_E_USAGE, 0,
			       "--run-as: the Windows service runs as LocalSystem (see "
			       "docs/windows.md)");
	return SL_OK;
}

/* The bounds the systemd units set with TimeoutStartSec and TimeoutStopSec:
 * a run still going after 23 hours is asked to stop (what it read is
 * stored, the next run goes on), and a scan that has not stopped 2 minutes
 * after being asked (a read on a dying disk that never returns) is ended. */
#define RUN_MAX_MS (23u * 3600u * 1000u)
#define STOP_GRACE_MS (2u * 60u * 1000u)

/* How long a shutdown waits for the service (SERVICE_PRESHUTDOWN_INFO).
 * Since Windows 10 1703 the default is 10 s, where a scan interrupted
 * between two files may still be finishing a large file and then commits
 * its last batch.  Half a minute past the grace after which the service
 * ends the scan itself (stop_child), so that the service, not the system,
 * has the last word. */
#define PRESHUTDOWN_MS (STOP_GRACE_MS + 30u * 1000u)

/* The report after a scan gets what the systemd unit gives its
 * ExecStopPost (TimeoutStopSec): 2 minutes, several times what a million
 * records took (docs/benchmarks.md).  It does not watch its stop event (it
 * has nothing to store), so a stop while it writes ends it after a few
 * seconds, well within a shutdown's wait. */
#define REPORT_MAX_MS STOP_GRACE_MS
#define REPORT_STOP_GRACE_MS (10u * 1000u)

int svc_install(const struct svc_opts *o, struct strbuf *report, struct sl_err *err)
{
	struct strbuf cmd = STRBUF_INIT, when = STRBUF_INIT;
	SERVICE_DESCRIPTIONW desc = {(wchar_t *)SVC_DESC};
	SERVICE_DELAYED_AUTO_START_INFO delayed = {TRUE};
	SERVICE_PRESHUTDOWN_INFO pre = {PRESHUTDOWN_MS};
	SC_ACTION actions[3] = {{SC_ACTION_RESTART, 60000}, {SC_ACTION_RESTART, 60000},
				{SC_ACTION_NONE, 0}};
	SERVICE_FAILURE_ACTIONSW fa = {86400, NULL, NULL, 3, actions};
	SC_HANDLE scm = NULL, svc = NULL;
	wchar_t *wcmd = NULL;
	int rc, created = 0;

	rc = check_scope(o, err);
	if (rc == SL_OK)
		rc = svc_units(o, &cmd, &when, err);
	if (rc != SL_OK)
		goto out;
	wcmd = win_wide(cmd.p);
	if (!wcmd) {
		rc = SL_FAIL(err, SL_E_NOMEM, 0, "out of memory");
		goto out;
	}
	scm = OpenSCManagerW(NULL, NULL, SC_MANAGER_CONNECT | SC_MANAGER_CREATE_SERVICE);
	if (!scm) {
		rc = scm_fail(err, "open the service control manager");
		goto out;
	}
	svc = CreateServiceW(scm, SVC_NAME, SVC_DISPLAY, SERVICE_ALL_ACCESS,
			     SERVICE_WIN32_OWN_PROCESS, SERVICE_AUTO_START, SERVICE_ERROR_NORMAL,
			     wcmd, NULL, NULL, NULL, NULL, NULL);
	if (svc) {
		created = 1;
	} else if (GetLastError() == ERROR_SERVICE_EXISTS) {
		svc = OpenServiceW(scm, SVC_NAME, SERVICE_ALL_ACCESS);
		if (!svc || !ChangeServiceConfigW(svc, SERVICE_WIN32_OWN_PROCESS, SERVICE_AUTO_START,
						  SERVICE_ERROR_NORMAL, wcmd, NULL, NULL, NULL,
						  NULL, NULL, SVC_DISPLAY)) {
			rc = scm_fail(err, "update the existing service");
			goto out;
		}
	} else {
		rc = scm_fail(err, "create the service");
		goto out;
	}
	/* Extras: a failure here leaves a working service, so it is reported,
	 * not fatal. */
	if (!ChangeServiceConfig2W(svc, SERVICE_CONFIG_DESCRIPTION, &desc))
		sb_adds(report, "note: the description was not set\n");
	if (!ChangeServiceConfig2W(svc, SERVICE_CONFIG_DELAYED_AUTO_START_INFO, &delayed))
		sb_adds(report, "note: delayed automatic start was not set\n");
	if (!ChangeServiceConfig2W(svc, SERVICE_CONFIG_FAILURE_ACTIONS, &fa))
		sb_adds(report, "note: the restart-on-failure actions were not set\n");
	if (!ChangeServiceConfig2W(svc, SERVICE_CONFIG_PRESHUTDOWN_INFO, &pre))
		sb_addf(report, "note: the shutdown wait was not set: a shutdown gives a scan the "
			"system's default (10 s since Windows 10 1703) to stop\n");
	sb_addf(report, "%s service 'seekless': %s\n", created ? "created" : "updated", cmd.p);
	if (o->no_root)
		sb_addf(report, "note: %s names no root yet: the service scans nothing until one "
			"is added (`seekless service install --root DIR`, elevated)\n", o->config);
	sb_addf(report, "schedule: %s; it starts with Windows, or now with `sc start seekless`\n",
		when.p);
	rc = SL_OK;
out:
	if (svc)
		CloseServiceHandle(svc);
	if (scm)
		CloseServiceHandle(scm);
	free(wcmd);
	sb_free(&cmd);
	sb_free(&when);
	return rc;
}

static const char *state_name(DWORD s)
{
	switch (s) {
	case SERVICE_STOPPED: return "stopped";
	case SERVICE_START_PENDING: return "starting";
	case SERVICE_STOP_PENDING: return "stopping";
	case SERVICE_RUNNING: return "running";
	case SERVICE_PAUSED: return "paused";
	default: return "changing";
	}
}

int svc_uninstall(const struct svc_opts *o, struct strbuf *report, struct sl_err *err)
{
	SC_HANDLE scm, svc;
	SERVICE_STATUS st;
	int rc, i;

	rc = check_scope(o, err);
	if (rc != SL_OK)
		return rc;
	scm = OpenSCManagerW(NULL, NULL, SC_MANAGER_CONNECT);
	if (!scm)
		return scm_fail(err, "open the service control manager");
	svc = OpenServiceW(scm, SVC_NAME, SERVICE_STOP | SERVICE_QUERY_STATUS | DELETE);
	if (!svc) {
		DWORD e = GetLastError();
		CloseServiceHandle(scm);
		if (e == ERROR_SERVICE_DOES_NOT_EXIST) {
			sb_adds(report, "service 'seekless' was not installed\n");
			return SL_OK;
		}
		SetLastError(e);
		return scm_fail(err, "open the service");
	}
	if (ControlService(svc, SERVICE_CONTROL_STOP, &st)) {
		/* a scan stops between two files and stores what it read */
		for (i = 0; i < 100 && st.dwCurrentState != SERVICE_STOPPED; i++) {
			Sleep(100);
			if (!QueryServiceStatus(svc, &st))
				break;
		}
		sb_addf(report, "stopped the running service (%s)\n", state_name(st.dwCurrentState));
	}
	if (!DeleteService(svc) && GetLastError() != ERROR_SERVICE_MARKED_FOR_DELETE) {
		rc = scm_fail(err, "delete the service");
	} else {
		sb_adds(report, "deleted service 'seekless'\n");
	}
	CloseServiceHandle(svc);
	CloseServiceHandle(scm);
	return rc;
}

/* The log and the last-run stamp live beside the index. */
static int side_file(const char *db, const char *name, struct strbuf *out)
{
	const char *slash = strrchr(db, '/');
	const char *bslash = strrchr(db, '\\');

	if (bslash && (!slash || bslash > slash))
		slash = bslash;
	sb_reset(out);
	if (slash)
		sb_add(out, db, (size_t)(slash - db) + 1);
	sb_adds(out, name);
	return out->oom ? -1 : 0;
}

int svc_status(const struct svc_opts *o, struct strbuf *report, struct sl_err *err)
{
	SERVICE_STATUS_PROCESS st;
	SC_HANDLE scm, svc;
	struct strbuf log = STRBUF_INIT;
	union {
		QUERY_SERVICE_CONFIGW c;
		SERVICE_PRESHUTDOWN_INFO pre;
		unsigned char raw[8192];
	} cfg;
	DWORD n;

	(void)err;
	scm = OpenSCManagerW(NULL, NULL, SC_MANAGER_CONNECT);
	svc = scm ? OpenServiceW(scm, SVC_NAME, SERVICE_QUERY_STATUS | SERVICE_QUERY_CONFIG) : NULL;
	if (!svc) {
		sb_adds(report, "installed: no\n");
	} else {
		sb_adds(report, "installed: yes\n");
		if (QueryServiceStatusEx(svc, SC_STATUS_PROCESS_INFO, (BYTE *)&st, sizeof(st), &n))
			sb_addf(report, "state: %s\n", state_name(st.dwCurrentState));
		if (QueryServiceConfigW(svc, &cfg.c, sizeof(cfg), &n)) {
			sb_addf(report, "start: %s\n",
				cfg.c.dwStartType == SERVICE_AUTO_START ? "automatic"
				: cfg.c.dwStartType == SERVICE_DEMAND_START ? "manual"
				: "disabled");
			sb_adds(report, "command: ");
			win_utf8(cfg.c.lpBinaryPathName, -1, report);
			sb_addc(report, '\n');
		}
		if (QueryServiceConfig2W(svc, SERVICE_CONFIG_PRESHUTDOWN_INFO, cfg.raw,
					 sizeof(cfg), &n))
			sb_addf(report, "shutdown: waits up to %lu s for a scan to stop\n",
				(unsigned long)cfg.pre.dwPreshutdownTimeout / 1000);
		CloseServiceHandle(svc);
	}
	if (scm)
		CloseServiceHandle(scm);
	sb_addf(report, "schedule: daily at %s\n", o->schedule ? o->schedule : "?");
	if (o->db && side_file(o->db, "seekless-service.log", &log) == 0)
		sb_addf(report, "log: %s\n", log.p);
	sb_free(&log);
	return SL_OK;
}

/* ---- the service process ---- */

static SERVICE_STATUS_HANDLE g_handle;
static SERVICE_STATUS g_status;
static HANDLE g_stop;
static const char *g_config;
static const char *g_db; /* the index: the scans' --db, beside it the log and stamp */
static const char *g_db_opt; /* service run --db: instead of the configuration's */
static int g_exit;
static FILE *g_log;
static wchar_t *g_wlog;

static HANDLE g_job;      /* the children: killed with the service (run_child) */
static SRWLOCK g_status_lock = SRWLOCK_INIT;

/* Called from the service's thread and from the control handler's: one at
 * a time, or a checkpoint goes backwards and a state is lost.  Once
 * stopping, the service says so until it has stopped, and takes no more
 * controls (a second STOP must not be answered as if it were running). */
static void report_state(DWORD state, DWORD wait_ms)
{
	static DWORD checkpoint = 1;

	AcquireSRWLockExclusive(&g_status_lock);
	if (g_status.dwCurrentState == SERVICE_STOP_PENDING && state != SERVICE_STOPPED)
		state = SERVICE_STOP_PENDING;
	g_status.dwServiceType = SERVICE_WIN32_OWN_PROCESS;
	g_status.dwCurrentState = state;
	/* PRESHUTDOWN: a shutdown waits for us (up to the system's preshutdown
	 * timeout) where SHUTDOWN alone gives a few seconds, too few for a
	 * scan to store its last batch */
	g_status.dwControlsAccepted =
		state == SERVICE_RUNNING
			? SERVICE_ACCEPT_STOP | SERVICE_ACCEPT_SHUTDOWN | SERVICE_ACCEPT_PRESHUTDOWN
			: 0;
	g_status.dwWaitHint = wait_ms;
	g_status.dwCheckPoint =
		(state == SERVICE_RUNNING || state == SERVICE_STOPPED) ? 0 : checkpoint++;
	SetServiceStatus(g_handle, &g_status);
	ReleaseSRWLockExclusive(&g_status_lock);
}

static void logf_(const char *fmt, ...) SL_PRINTF(1, 2);
static void logf_(const char *fmt, ...)
{
	char stamp[32];
	time_t now = time(NULL);
	struct tm tm;
	va_list ap;

	if (!g_log)
		return;
	localtime_s(&tm, &now);
	strftime(stamp, sizeof(stamp), "%Y-%m-%d %H:%M:%S", &tm);
	fprintf(g_log, "%s seekless service: ", stamp);
	va_start(ap, fmt);
	vfprintf(g_log, fmt, ap);
	va_end(ap);
	fputs("\n", g_log);
	fflush(g_log);
}

/* The few events an administrator looks for in the Event Log (Application,
 * source "seekless"): start, stop, a scan that failed, and a
 * configuration that cannot be read.  No message file is registered, so
 * Event Viewer shows the text as the event's insertion string. */
static void event(WORD type, const char *fmt, ...) SL_PRINTF(2, 3);
static void event(WORD type, const char *fmt, ...)
{
	char text[600];
	const wchar_t *strings[1];
	wchar_t *w;
	HANDLE src;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	src = RegisterEventSourceW(NULL, SVC_NAME);
	w = win_wide(text);
	if (src && w) {
		strings[0] = w;
		ReportEventW(src, type, 0, 1, NULL, 1, 0, strings, NULL);
	}
	if (src)
		DeregisterEventSource(src);
	free(w);
}

static DWORD WINAPI on_control(DWORD ctl, DWORD type, void *data, void *ctx)
{
	(void)type;
	(void)data;
	(void)ctx;
	switch (ctl) {
	case SERVICE_CONTROL_STOP:
	case SERVICE_CONTROL_SHUTDOWN:
	case SERVICE_CONTROL_PRESHUTDOWN:
		report_state(SERVICE_STOP_PENDING, 3000);
		SetEvent(g_stop); /* a running scan stops after its current file */
		return NO_ERROR;
	case SERVICE_CONTROL_INTERROGATE:
		return NO_ERROR;
	default:
		return ERROR_CALL_NOT_IMPLEMENTED;
	}
}

static time_t read_stamp(const char *path)
{
	FILE *f = sys_fopen(path, "r");
	long long v = 0;

	if (!f)
		return 0;
	if (fscanf(f, "%lld", &v) != 1)
		v = 0;
	fclose(f);
	return (time_t)v;
}

static void write_stamp(const char *path, time_t t)
{
	FILE *f = sys_fopen(path, "w");
	if (f) {
		fprintf(f, "%lld\n", (long long)t);
		fclose(f);
	}
}

/* Ask a child (what: "scan", "report") to stop, and end it if it has not
 * within grace_ms.  While the service itself is stopping, the SCM is told
 * it still is. */
static void stop_child(HANDLE proc, HANDLE run_stop, const char *what, DWORD grace_ms)
{
	DWORD waited = 0;

	SetEvent(run_stop);
	while (WaitForSingleObject(proc, 2000) != WAIT_OBJECT_0) {
		waited += 2000;
		if (WaitForSingleObject(g_stop, 0) == WAIT_OBJECT_0)
			report_state(SERVICE_STOP_PENDING, 3000);
		if (waited >= grace_ms) {
			logf_("the %s did not stop within %lu s of being asked (a read that "
			      "never returns?): ending it", what, (unsigned long)grace_ms / 1000);
			TerminateProcess(proc, EXIT_INTERRUPTED);
			WaitForSingleObject(proc, 30000);
			return;
		}
	}
}

/* Wait for epoch second `when` (ms from now as a fallback), or the stop
 * event; 1 when asked to stop.  An absolute waitable timer, not a relative
 * wait: since Windows 8 a relative wait does not count the time the
 * machine sleeps, so the nightly run slipped by every night spent asleep.
 * The absolute one fires at the wall-clock time, or at once on a wake
 * that passed it.  It does not wake the machine (fResume FALSE): an
 * indexer that spins up a laptop's disks at night is not what was asked. */
static int wait_until(time_t when, DWORD ms)
{
	HANDLE t = CreateWaitableTimerW(NULL, TRUE, NULL), w[2];
	LARGE_INTEGER due;
	DWORD r;

	/* positive: an absolute UTC FILETIME */
	due.QuadPart = (LONGLONG)when * 10000000LL + 116444736000000000LL;
	if (!t || !SetWaitableTimer(t, &due, 0, NULL, NULL, FALSE)) {
		if (t)
			CloseHandle(t);
		return WaitForSingleObject(g_stop, ms) == WAIT_OBJECT_0;
	}
	w[0] = g_stop;
	w[1] = t;
	r = WaitForMultipleObjects(2, w, FALSE, INFINITE);
	CloseHandle(t);
	return r == WAIT_OBJECT_0;
}

/* A child of the service: `seekless VERB --scheduled --config FILE --db
 * INDEX` (VERB: scan, report), with its output appended to the log and a
 * stop event of its own inherited (SEEKLESS_STOP_EVENT, sys_on_interrupt),
 * set when the service stops or the child runs longer than max_ms; one
 * that has not ended grace_ms after that is ended.  A crash in the child
 * (a parser bug meeting a hostile file) ends that child, not the service.
 * Returns its exit status, or -1 when it could not be started. */
static int run_child(const char *verb, DWORD max_ms, DWORD grace_ms)
{
	SECURITY_ATTRIBUTES sa = {sizeof(sa), NULL, TRUE};
	STARTUPINFOW si;
	PROCESS_INFORMATION pi;
	struct strbuf cmd = STRBUF_INIT, cfg = STRBUF_INIT, db = STRBUF_INIT;
	wchar_t exe[32768], ev[32], *wcmd = NULL;
	HANDLE log, run_stop, waits[2];
	DWORD code = (DWORD)-1, w;
	BOOL ok;

	if (!GetModuleFileNameW(NULL, exe, sizeof(exe) / sizeof(exe[0])))
		return -1;
	run_stop = CreateEventW(&sa, TRUE, FALSE, NULL);
	if (!run_stop)
		return -1;
	log = CreateFileW(g_wlog, FILE_APPEND_DATA, FILE_SHARE_READ | FILE_SHARE_WRITE, &sa,
			  OPEN_ALWAYS, FILE_ATTRIBUTE_NORMAL, NULL);
	if (log == INVALID_HANDLE_VALUE) {
		CloseHandle(run_stop);
		return -1;
	}
	native(g_config, &cfg);
	native(g_db, &db);
	sb_adds(&cmd, "\"");
	win_utf8(exe, -1, &cmd);
	/* --db always: a configuration without `db` means the service's own
	 * index in %ProgramData%, where the log and stamp are; the child alone
	 * would take its user's default, SYSTEM's profile */
	sb_addf(&cmd, "\" %s --scheduled --config \"%s\" --db \"%s\"", verb, cfg.p ? cfg.p : "",
		db.p ? db.p : "");
	wcmd = cmd.oom ? NULL : win_wide(cmd.p);
	swprintf(ev, sizeof(ev) / sizeof(ev[0]), L"%llu", (unsigned long long)(uintptr_t)run_stop);
	SetEnvironmentVariableW(L"SEEKLESS_STOP_EVENT", ev);
	memset(&si, 0, sizeof(si));
	si.cb = sizeof(si);
	si.dwFlags = STARTF_USESTDHANDLES;
	si.hStdOutput = si.hStdError = log;
	/* started suspended and put in the service's job before it runs: a
	 * scan must not outlive a service that crashed, or the restarted
	 * service finds the index locked by an orphan */
	ok = wcmd && CreateProcessW(exe, wcmd, NULL, NULL, TRUE, CREATE_NO_WINDOW | CREATE_SUSPENDED,
				    NULL, NULL, &si, &pi);
	if (ok) {
		if (g_job && !AssignProcessToJobObject(g_job, pi.hProcess))
			logf_("the %s could not be put in the service's job (Windows error "
			      "%lu): it would outlive a crash of the service",
			      verb, (unsigned long)GetLastError());
		ResumeThread(pi.hThread);
	}
	SetEnvironmentVariableW(L"SEEKLESS_STOP_EVENT", NULL);
	CloseHandle(log);
	free(wcmd);
	sb_free(&cmd);
	sb_free(&cfg);
	sb_free(&db);
	if (!ok) {
		CloseHandle(run_stop);
		return -1;
	}
	CloseHandle(pi.hThread);
	waits[0] = pi.hProcess;
	waits[1] = g_stop;
	w = WaitForMultipleObjects(2, waits, FALSE, max_ms);
	if (w == WAIT_TIMEOUT)
		logf_("the %s has run for %lu min: asking it to stop", verb,
		      (unsigned long)max_ms / 60000u);
	if (w != WAIT_OBJECT_0)
		stop_child(pi.hProcess, run_stop, verb, grace_ms);
	GetExitCodeProcess(pi.hProcess, &code);
	CloseHandle(pi.hProcess);
	CloseHandle(run_stop);
	return (int)code;
}

/* After each scan, finished or failed, as the systemd unit's ExecStopPost:
 * the report, when the configuration sets one (`report --scheduled` reads
 * it, and does nothing without it, so a change needs no new service).  Not
 * when the service is stopping: a page is not worth holding a shutdown up
 * for.  Its failure is logged and is not the scan's: the stamp, the retry
 * and the Event Log go by the scan alone. */
static void run_report(void)
{
	int code;

	if (WaitForSingleObject(g_stop, 0) == WAIT_OBJECT_0)
		return;
	code = run_child("report", REPORT_MAX_MS, REPORT_STOP_GRACE_MS);
	if (code == -1)
		logf_("the report could not be started");
	else if (code != EXIT_OK)
		logf_("the report failed (exit status %d): the scan's result stands", code);
}

/* Whether the configuration names a root now.  Read before every run, not
 * once: the installer registers the service before anyone chose what to
 * index, and a root added later (`service install --root`, or an edit)
 * counts from the next slot on, without a restart.  A file that cannot be
 * read counts as naming one: the scan then says what is wrong, in the log
 * and the Event Log. */
static int has_root(void)
{
	struct cfg cfg;
	struct sl_err e;
	int yes;

	cfg_init(&cfg);
	yes = cfg_load(&cfg, g_config, &e) != SL_OK || cfg.nroots > 0;
	cfg_free(&cfg);
	return yes;
}

static void WINAPI service_main(DWORD argc, wchar_t **argv)
{
	struct strbuf db = STRBUF_INIT, log = STRBUF_INIT, stamp = STRBUF_INIT;
	struct cfg cfg;
	struct sl_err e;
	int minutes;

	(void)argc;
	(void)argv;
	/* the service's own stop, there before any control can arrive; each
	 * child gets an event of its own (run_child) */
	g_stop = CreateEventW(NULL, TRUE, FALSE, NULL);
	g_handle = RegisterServiceCtrlHandlerExW(SVC_NAME, on_control, NULL);
	if (!g_handle || !g_stop)
		return;
	report_state(SERVICE_START_PENDING, 5000);
	g_job = CreateJobObjectW(NULL, NULL);
	if (g_job) {
		JOBOBJECT_EXTENDED_LIMIT_INFORMATION lim;
		memset(&lim, 0, sizeof(lim));
		lim.BasicLimitInformation.LimitFlags = JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE;
		SetInformationJobObject(g_job, JobObjectExtendedLimitInformation, &lim,
					sizeof(lim));
	}

	cfg_init(&cfg);
	if (cfg_load(&cfg, g_config, &e) != SL_OK) {
		/* no log file yet: only the Event Log can say why */
		event(EVENTLOG_ERROR_TYPE, "seekless service: %s", e.msg);
		g_exit = EXIT_USAGE;
		goto stop;
	}
	if (g_db_opt)
		sb_adds(&db, g_db_opt);
	else if (cfg.db)
		sb_adds(&db, cfg.db);
	else
		svc_system_db(&db);
	g_db = db.p;
	if (!g_db) {
		event(EVENTLOG_ERROR_TYPE, "seekless service: no index path (%%ProgramData%% unset?)");
		g_exit = EXIT_FATAL;
		goto stop;
	}
	side_file(db.p ? db.p : "", "seekless-service.log", &log);
	side_file(db.p ? db.p : "", "seekless-service.last", &stamp);
	sys_mkdir_parents(log.p);
	g_wlog = win_path(log.p);
	g_log = g_wlog ? _wfopen(g_wlog, L"a") : NULL;
	minutes = parse_hhmm(cfg.schedule ? cfg.schedule : CFG_DEFAULT_SCHEDULE);
	if (minutes < 0) {
		logf_("schedule '%s' is not HH:MM; not running", cfg.schedule);
		event(EVENTLOG_ERROR_TYPE, "seekless service: schedule '%s' is not HH:MM",
		      cfg.schedule);
		g_exit = EXIT_USAGE;
		goto stop;
	}
	report_state(SERVICE_RUNNING, 0);
	event(EVENTLOG_INFORMATION_TYPE, "seekless service started; log: %s", log.p);
	logf_("started (pid %ld): config %s, index %s, daily at %02d:%02d", sys_pid(), g_config,
	      db.p ? db.p : "?", minutes / 60, minutes % 60);

	for (;;) {
		time_t now = time(NULL), slot, next;
		DWORD ms;
		int code;

		slot_around(minutes, now, &slot, &next);
		if (read_stamp(stamp.p) < slot && has_root()) {
			logf_("scan starts%s", read_stamp(stamp.p) ? "" : " (no completed run yet)");
			code = run_child("scan", RUN_MAX_MS, STOP_GRACE_MS);
			logf_("scan ended with exit status %d", code);
			if (code != EXIT_OK && code != EXIT_FILE_ERRORS && code != EXIT_INTERRUPTED)
				event(EVENTLOG_ERROR_TYPE, "seekless service: a scan failed (exit "
				      "status %d); see %s", code, log.p);
			if (code == EXIT_OK || code == EXIT_FILE_ERRORS)
				write_stamp(stamp.p, time(NULL));
			run_report();
			if (WaitForSingleObject(g_stop, 0) == WAIT_OBJECT_0)
				break;
			if (code != EXIT_OK && code != EXIT_FILE_ERRORS &&
			    WaitForSingleObject(g_stop, 15 * 60 * 1000) == WAIT_OBJECT_0)
				break; /* failed: try again in 15 minutes, not in a loop */
			continue;
		}
		/* nothing to index is not a failure: no Event Log error, and
		 * no retry every 15 minutes; the next slot looks again */
		if (read_stamp(stamp.p) < slot)
			logf_("%s names no root yet: nothing to scan (add one: `seekless service "
			      "install --root DIR`, elevated)", g_config);
		ms = (DWORD)((next - now) * 1000); /* next > now: slot.h */
		logf_("next scan in %ld min", (long)((next - now) / 60));
		if (wait_until(next, ms))
			break;
	}
	logf_("stopped");
	event(EVENTLOG_INFORMATION_TYPE, "seekless service stopped");
stop:
	if (g_log)
		fclose(g_log);
	free(g_wlog);
	cfg_free(&cfg);
	sb_free(&db);
	sb_free(&log);
	sb_free(&stamp);
	AcquireSRWLockExclusive(&g_status_lock);
	g_status.dwWin32ExitCode = g_exit ? ERROR_SERVICE_SPECIFIC_ERROR : NO_ERROR;
	g_status.dwServiceSpecificExitCode = (DWORD)g_exit;
	g_status.dwCurrentState = SERVICE_STOPPED;
	g_status.dwControlsAccepted = 0;
	g_status.dwCheckPoint = 0;
	SetServiceStatus(g_handle, &g_status);
	ReleaseSRWLockExclusive(&g_status_lock);
}

int svc_run(const char *config, const char *db)
{
	SERVICE_TABLE_ENTRYW table[] = {{(wchar_t *)SVC_NAME, service_main}, {NULL, NULL}};

	g_config = config;
	g_db_opt = db;
	if (!config) {
		fprintf(stderr, "seekless service run: --config FILE is required\n");
		return EXIT_USAGE;
	}
	if (!StartServiceCtrlDispatcherW(table)) {
		char why[200];
		sys_strerror(win_errno(GetLastError()), why, sizeof(why));
		fprintf(stderr,
			"seekless service run: not started by the service manager (%s); "
			"use `seekless scan --scheduled` to scan from a console\n",
			why);
		return EXIT_USAGE;
	}
	return g_exit;
}
