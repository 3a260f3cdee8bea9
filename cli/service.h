/* service.h - seekless as a scheduled background job of the system's
 * service manager: systemd units on Linux (service_linux.c), the Windows
 * service (service_win.c).
 *
 * The job runs `seekless scan --scheduled --config FILE`: the roots,
 * excludes, index and schedule live in the configuration file, so editing
 * it changes the next run without reinstalling (except the schedule and
 * the index location, which the units carry; `service install` again
 * rewrites them).
 */
#ifndef SL_SERVICE_H
#define SL_SERVICE_H

#include <stddef.h>

#include "common/err.h"
#include "common/strbuf.h"

struct svc_opts {
	int user;             /* the user's service manager, else the system's */
	const char *dest;     /* write the unit files into this directory and stop
				 there (packaging, tests); NULL: the live system */
	const char *exe;      /* absolute path of the seekless program */
	const char *config;   /* absolute path of the configuration it reads */
	const char *schedule; /* "HH:MM" (daily) or the manager's own syntax */
	const char *db;       /* the index, as the job will open it */
	const char *report;   /* the configuration's report, NULL when unset */
	const char *run_as;   /* system scope: the account the scans run as
				 (NULL: root; Windows: only LocalSystem) */
	int db_in_config;     /* the configuration names it (else the units do) */
	int no_root;          /* install: the configuration names no root yet, and
				 --allow-no-root says go on (an installer
				 registering the service before anyone chose
				 what to index) */
};

/* Write and enable the units.  What was done, and anything the user should
 * know (e.g. that a user timer needs lingering to run while logged out), is
 * appended to report.  Returns SL_OK; SL_E_USAGE for a schedule the manager
 * rejects, or for no_root where the job cannot wait for a root (Linux: the
 * timer's scans would fail every night; the Windows service waits); SL_E_IO
 * when a file cannot be written or the manager refused (report says what
 * was already done). */
int svc_install(const struct svc_opts *o, struct strbuf *report, struct sl_err *err);

/* Disable and remove the units.  Removing what is not installed is not an
 * error.  Returns SL_OK or SL_E_IO. */
int svc_uninstall(const struct svc_opts *o, struct strbuf *report, struct sl_err *err);

/* Installed? enabled? when does it run next, when did it last?  Appends
 * "key: value" lines to report.  Returns SL_OK (even when the manager cannot
 * be asked: report says so). */
int svc_status(const struct svc_opts *o, struct strbuf *report, struct sl_err *err);

/* Where the system-wide service keeps its index unless the configuration
 * names one (Linux: /var/lib/seekless/index.db; Windows:
 * %ProgramData%/seekless/index.db).  Returns 0 or -1. */
int svc_system_db(struct strbuf *out);

/* Be the service: what the service manager starts (`seekless service run
 * --config FILE`); db, when not NULL, is the index instead of the
 * configuration's.  Windows: connect to the SCM and run the scheduled scans
 * until told to stop, logging to seekless-service.log beside the index;
 * never falls back to running in the console.  Linux: systemd starts
 * `seekless scan --scheduled` itself, so this only explains that.  Returns
 * the process exit status. */
int svc_run(const char *config, const char *db);

/* The unit texts install writes (Linux: seekless.service, seekless.timer),
 * for tests and the units shipped in dist/systemd/.  Returns SL_OK,
 * SL_E_USAGE for a bad schedule, SL_E_NOMEM. */
int svc_units(const struct svc_opts *o, struct strbuf *service, struct strbuf *timer,
	      struct sl_err *err);

#endif
