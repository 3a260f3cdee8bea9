/* seekless service - install the nightly scan with the system's service
 * manager (service.h). */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app/prep.h"
#include "cli/cli.h"
#include "cli/service.h"
#include "common/sys.h"
#include "db/db.h"

static const char help[] =
	"usage: seekless service install|uninstall|status [--user|--system]\n"
	"                        [--config FILE] [--dest DIR]\n"
	"                        [--root DIR]... [--at HH:MM] [--db PATH]\n"
	"                        [--run-as USER] [--allow-no-root]\n"
	"\n"
	"install    write the units for a nightly `seekless scan --scheduled` and\n"
	"           enable them (Linux: a systemd service and timer with\n"
	"           Persistent=true and a randomized delay).  The configuration\n"
	"           must name at least one root; its schedule (default 03:00) and\n"
	"           index location are written into the units, so run install\n"
	"           again after changing those two.\n"
	"uninstall  disable and remove the units (a running scan stops after\n"
	"           storing what it read).\n"
	"status     installed? enabled? next and last run, and the index's last\n"
	"           scans.\n"
	"\n"
	"  --system       the system's manager, configuration /etc/seekless.conf,\n"
	"                 index /var/lib/seekless/index.db unless the configuration\n"
	"                 says otherwise (the default for root)\n"
	"  --user         your own manager and ~/.config/seekless/config (the\n"
	"                 default for everyone else)\n"
	"  --config FILE  the configuration the service reads instead\n"
	"  --dest DIR     only write the unit files into DIR (packaging, tests)\n"
	"  --root DIR     (install) set the roots to scan in the configuration\n"
	"                 file; repeat for several\n"
	"  --at HH:MM     (install) set the daily time in the configuration file\n"
	"  --db PATH      the index: install sets it in the configuration file;\n"
	"                 status shows its last scans, uninstall names it as kept\n"
	"                 (default: the configuration's db, else the scope's)\n"
	"  --run-as USER  (install, system) run the scans as this account instead of\n"
	"                 root; it must be able to read the roots, and is given the\n"
	"                 index's folder\n"
	"  --allow-no-root  (install, Windows) register the service though the\n"
	"                 configuration names no root yet (the installer does): it\n"
	"                 scans nothing until one is added; the file is created if\n"
	"                 missing\n"
	"\n"
	"Windows: one system-wide service, 'seekless', run as LocalSystem; install\n"
	"from an elevated prompt.  Configuration %ProgramData%\\seekless\\seekless.conf,\n"
	"index %ProgramData%\\seekless\\index.db, log seekless-service.log beside the\n"
	"index.  `seekless service run --config FILE` is what the service manager\n"
	"starts; it does nothing useful from a console.\n";

/* The sample configuration a package put beside the program at exe, into
 * out; out stays empty (p NULL) when there is none. */
static void sample_beside(const char *exe, struct strbuf *out)
{
	const char *slash = strrchr(exe, '/'), *bslash = strrchr(exe, '\\');
	FILE *f;

	if (bslash && (!slash || bslash > slash))
		slash = bslash;
	sb_free(out);
	if (!slash)
		return;
	sb_add(out, exe, (size_t)(slash - exe) + 1);
	sb_adds(out, "seekless.conf.example");
	f = out->oom ? NULL : sys_fopen(out->p, "r");
	if (f)
		fclose(f);
	else
		sb_free(out);
}

/* One line of `service status`'s last scans: when, how started, how it
 * ended, what it found, how long it took. */
static void print_scan(void *ctx, const struct db_scan_row *r)
{
	FILE *out = ctx;

	fprintf(out,
		"  #%" PRId64 " %s %-9s %-11s %" PRId64 " unchanged, %" PRId64 " changed, %" PRId64
		" new, %" PRId64 " moved, %" PRId64 " deleted; read %" PRId64 " files (%" PRId64
		" errors) in %.1f s",
		r->id, r->started_at ? r->started_at : "?", r->command ? r->command : "?",
		r->status ? r->status : "?", r->unchanged, r->changed, r->added, r->moved,
		r->deleted, r->files, r->errors, r->wall_s);
	if (r->yield_s > 0)
		fprintf(out, ", %.1f s waiting for other I/O", r->yield_s);
	fputc('\n', out);
}

/* Over 150 lines on purpose: the options, the settings every action
 * shares (the configuration file, the program, the index), then the four
 * actions (run, install, uninstall, status), each a short branch; the
 * work is in service.h's implementations. */
int cmd_service(int argc, char **argv)
{
	static const struct option opts[] = {
		{"user", no_argument, NULL, 'u'},
		{"system", no_argument, NULL, 's'},
		{"config", required_argument, NULL, 'C'},
		{"dest", required_argument, NULL, 'D'},
		{"root", required_argument, NULL, 'r'},
		{"at", required_argument, NULL, 'a'},
		{"db", required_argument, NULL, 'd'},
		{"run-as", required_argument, NULL, 'R'},
		{"allow-no-root", no_argument, NULL, 'N'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	struct strbuf cfgpath = STRBUF_INIT, exe = STRBUF_INIT, dbpath = STRBUF_INIT;
	struct strbuf report = STRBUF_INIT, sample = STRBUF_INIT;
	struct svc_opts so;
	struct cfg cfg;
	struct sl_err e;
	const char *action, *config = NULL, *at = NULL, *set_db = NULL, *cmd = "service";
	struct strbuf rootbuf = STRBUF_INIT;
	char **roots = NULL, label[32];
	size_t nroots = 0, cap_roots = 0, nabs = 0;
	int user = -1, writes, creates, c, rc = SL_OK, code = EXIT_OK, allow_no_root = 0;

	memset(&so, 0, sizeof(so));
	cfg_init(&cfg);
	/* "seekless service status: ..." when the action comes first, as it
	 * mostly does; options may come before it too */
	if (argc > 1 && (strcmp(argv[1], "install") == 0 || strcmp(argv[1], "uninstall") == 0 ||
			 strcmp(argv[1], "status") == 0 || strcmp(argv[1], "run") == 0)) {
		snprintf(label, sizeof(label), "service %s", argv[1]);
		cmd = label;
	}
	optind = 1;
	while ((c = cli_getopt(cmd, argc, argv, "", opts)) != -1) {
		switch (c) {
		case 'u': user = 1; break;
		case 's': user = 0; break;
		case 'C': config = optarg; break;
		case 'D': so.dest = optarg; break;
		case 'a': at = optarg; break;
		case 'd': set_db = optarg; break;
		case 'R': so.run_as = optarg; break;
		case 'N': allow_no_root = 1; break;
		case 'r':
			if (sl_grow(&roots, &cap_roots, nroots + 1, sizeof(*roots)) != 0) {
				SL_FAIL(&e, SL_E_NOMEM, 0, "out of memory");
				cli_error("service", &e);
				free(roots);
				return EXIT_FATAL;
			}
			roots[nroots++] = optarg;
			break;
		case 'h': free(roots); fputs(help, stdout); return EXIT_OK;
		default: free(roots); return EXIT_USAGE;
		}
	}
	if (optind >= argc || optind < argc - 1) {
		if (optind >= argc)
			cli_usage_error(cmd, "say install, uninstall or status");
		else
			cli_usage_error(cmd, "unexpected argument '%s'", argv[optind + 1]);
		free(roots);
		return EXIT_USAGE;
	}
	action = argv[optind];
	if (strcmp(action, "install") != 0 && strcmp(action, "uninstall") != 0 &&
	    strcmp(action, "status") != 0 && strcmp(action, "run") != 0) {
		cli_usage_error(cmd, "unknown action '%s'", action);
		free(roots);
		return EXIT_USAGE;
	}
	if ((nroots || at || allow_no_root) && strcmp(action, "install") != 0) {
		cli_usage_error(cmd, "--root, --at and --allow-no-root go with install");
		free(roots);
		return EXIT_USAGE;
	}
	if (strcmp(action, "run") == 0) {
		free(roots);
		return svc_run(config, set_db);
	}
	/* only install writes settings; elsewhere --db only names the index */
	writes = strcmp(action, "install") == 0 && (nroots || at || set_db);
	/* and creates a missing file: to write them, or for a service that
	 * waits for a root */
	creates = writes || (strcmp(action, "install") == 0 && allow_no_root);
	so.user = user >= 0 ? user : !sys_is_admin();
	if (!so.user && !so.dest && !sys_is_admin() && strcmp(action, "status") != 0) {
		cli_usage_error(cmd, "the system's service needs root; use --user for yours");
		free(roots);
		return EXIT_USAGE;
	}

	/* the one configuration file the service will read */
	if (config) {
		if (sys_abs_path(config, &cfgpath) != 0 &&
		    (!creates || prep_abs_name(config, &cfgpath) != 0)) {
			SL_FAIL(&e, SL_E_USAGE, 0, "configuration '%s' not found", config);
			cli_error("service", &e);
			code = EXIT_USAGE;
			goto out;
		}
	} else if (sys_config_path(!so.user, &cfgpath) != 0) {
		cli_usage_error(cmd, "no home directory for the user's configuration");
		code = EXIT_USAGE;
		goto out;
	}
	so.config = cfgpath.p;
	if (sys_self_exe(&exe) != 0) {
		SL_FAIL(&e, SL_E_IO, 0, "cannot tell where this program is");
		cli_error("service", &e);
		code = EXIT_FATAL;
		goto out;
	}
	so.exe = exe.p;
	if (creates && sys_can_write(cfgpath.p) == ENOENT) {
		/* a new file starts as the sample a package put beside the
		 * program, when there is one (Windows: the excludes a drive's
		 * root needs, every key explained) */
		sample_beside(exe.p, &sample);
		rc = cfg_create_file(cfgpath.p, sample.p, &e);
		if (rc != SL_OK) {
			cli_error("service", &e);
			code = EXIT_FATAL;
			goto out;
		}
		sb_addf(&report, "created %s%s%s\n", cfgpath.p, sample.p ? " from " : "",
			sample.p ? sample.p : "");
	}
	if (writes) {
		/* absolute roots: the service does not run where we are */
		size_t i;
		for (i = 0; i < nroots; i++) {
			char *dup;
			if (sys_abs_path(roots[i], &rootbuf) != 0) {
				cli_usage_error(cmd, "root '%s' not found", roots[i]);
				code = EXIT_USAGE;
				goto out;
			}
			if (!(dup = strdup(rootbuf.p))) {
				code = EXIT_FATAL;
				goto out;
			}
			roots[i] = dup;
			nabs = i + 1;
		}
		rc = cfg_update_file(cfgpath.p, roots, nroots, at, set_db, &e);
		if (rc != SL_OK) {
			cli_error("service", &e);
			code = EXIT_FATAL;
			goto out;
		}
	}
	rc = cfg_read_file(&cfg, cfgpath.p, strcmp(action, "install") != 0, &e);
	if (rc != SL_OK) {
		cli_error("service", &e);
		code = EXIT_USAGE;
		goto out;
	}
	so.schedule = cfg.schedule ? cfg.schedule : CFG_DEFAULT_SCHEDULE;
	/* a system service has no home: its index lives in /var/lib */
	so.db_in_config = cfg.db != NULL;
	if (set_db)
		sb_adds(&dbpath, set_db); /* install has just written it there too */
	else if (cfg.db)
		sb_adds(&dbpath, cfg.db);
	else if (!so.user)
		svc_system_db(&dbpath);
	else
		sys_default_db_path(&dbpath);
	so.db = dbpath.p;
	so.report = cfg.report;

	if (strcmp(action, "install") == 0) {
		so.no_root = cfg.nroots == 0;
		if (so.no_root && !allow_no_root) {
			SL_FAIL(&e, SL_E_USAGE, 0,
				"%s names no root: add a line 'root = /path/to/photos' first",
				cfgpath.p);
			cli_error("service", &e);
			code = EXIT_USAGE;
			goto out;
		}
		if (!so.dest && dbpath.p) {
			/* the sandbox lets the service write only there, so it
			 * must exist */
			int err = sys_mkdir_parents(dbpath.p);
			if (err) {
				SL_FAIL(&e, SL_E_IO, err, "create the directory of %s", dbpath.p);
				cli_error("service", &e);
				code = EXIT_FATAL;
				goto out;
			}
		}
		rc = svc_install(&so, &report, &e);
		if (rc == SL_OK)
			printf("seekless service: installed (%s scope)\n", so.user ? "user" : "system");
		printf("%s", report.p ? report.p : "");
		if (rc == SL_OK)
			printf("config: %s: %zu roots, schedule %s, index %s\n", cfgpath.p,
			       cfg.nroots, so.schedule, dbpath.p ? dbpath.p : "?");
	} else if (strcmp(action, "uninstall") == 0) {
		rc = svc_uninstall(&so, &report, &e);
		printf("%s", report.p ? report.p : "");
		if (rc == SL_OK)
			printf("seekless service: uninstalled (%s scope); the index %s is kept\n",
			       so.user ? "user" : "system", dbpath.p ? dbpath.p : "");
	} else {
		struct db *db = NULL;
		rc = svc_status(&so, &report, &e);
		printf("seekless service (%s scope)\n%s", so.user ? "user" : "system",
		       report.p ? report.p : "");
		printf("config: %s%s\n", cfgpath.p, cfg.read.len ? "" : " (does not exist)");
		if (cfg.read.len)
			printf("  %zu roots, %zu excludes, schedule %s, background %s\n", cfg.nroots,
			       cfg.nexcludes, so.schedule, cfg.background == 0 ? "no" : "yes");
		printf("index: %s\n", dbpath.p ? dbpath.p : "?");
		if (dbpath.p && db_open(dbpath.p, DB_READER, &db, &e) == SL_OK) {
			printf("last scans:\n");
			if (db_scans(db, 5, print_scan, stdout, &e) != SL_OK)
				cli_error("service", &e);
			db_close(db);
		} else if (dbpath.p && sys_can_write(dbpath.p) != ENOENT) {
			printf("  %s\n", e.msg); /* there, but not an index it can read */
		} else {
			printf("  (no index yet)\n");
		}
	}
	if (rc != SL_OK) {
		cli_error("service", &e);
		code = rc == SL_E_USAGE ? EXIT_USAGE : EXIT_FATAL;
	}
out:
	while (nabs > 0)
		free(roots[--nabs]);
	free(roots);
	sb_free(&rootbuf);
	cfg_free(&cfg);
	sb_free(&cfgpath);
	sb_free(&exe);
	sb_free(&dbpath);
	sb_free(&report);
	sb_free(&sample);
	return code;
}
