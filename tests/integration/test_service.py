"""The configuration file and the service, end to end: scans driven by a
configuration (roots, excludes, db; a root that is not there is skipped
and its records kept), its errors, `export --scans`, SIGTERM (exit 4, run
recorded as interrupted, the next one resumes), and the systemd units:
written by `service install --dest`, clean under `systemd-analyze verify`,
identical to the ones shipped in dist/systemd/ but for the paths.

The report after a scan (issue 47, `report = PATH`), as the installed
system unit runs it.  Covered: the unit `service install` writes (its
ExecStart, ExecStopPost and ReadWritePaths lines read back from the file,
not assumed), run with the mount confinement of ProtectSystem=strict,
ProtectHome=read-only, ReadWritePaths= and PrivateTmp= (emulated: CONFINE),
with its UMask=, CapabilityBoundingSet= and NoNewPrivileges=, the scan
under its own Landlock and seccomp (--scheduled); a report whose directory
was set at install is written (the index's file count, read with sqlite3);
one moved to another directory after the install fails on the read-only
file system while the scan succeeds, and the report's line carries the '-'
that keeps its status out of the unit's; without the setting nothing is
written.  Not covered, for want of systemd as PID 1 here (systemd-run
cannot start a transient unit without it): systemd's own execution of the
unit, so its SystemCallFilter, PrivateNetwork, DevicePolicy, ProtectProc
and the other Protect* settings, MemoryDenyWriteExecute, Nice and the idle
I/O class, TimeoutStopSec bounding the report, systemd's parsing of the
quoted words, and what it does with the '-' (checked present, not
obeyed).  The confined tree is outside /tmp and /dev: PrivateTmp would
hide the one and ProtectSystem leaves the other writable."""
import json
import os
import re
import shlex
import shutil
import signal
import sqlite3
import subprocess
import time

from lib import (BIN, check, db_rows, done, export, mkcorpus, regular_files, run, skip_part,
                 tempdir, xxh128)

SHIPPED = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "dist", "systemd")

with tempdir("svc", base="/dev/shm") as work:
    a = os.path.join(work, "a")
    b = os.path.join(work, "b")
    mkcorpus(a, "--files", 60, "--median", "20k", "--seed", 3, "--no-sync")
    mkcorpus(b, "--files", 40, "--median", "20k", "--seed", 4, "--no-sync")
    os.makedirs(os.path.join(a, ".thumbnails"))
    with open(os.path.join(a, ".thumbnails", "t.jpg"), "wb") as f:
        f.write(b"thumb")
    with open(os.path.join(b, "junk.tmp"), "wb") as f:
        f.write(b"tmp")
    db = os.path.join(work, "idx.db")
    conf = os.path.join(work, "seekless.conf")
    with open(conf, "w") as f:
        f.write("# test\nroot = %s\nroot = %s\nexclude = .thumbnails\nexclude = *.tmp\n"
                "db = %s\nschedule = 04:15\njobs = 2\n" % (a, b, db))
    want = sorted(p for p in regular_files(a) + regular_files(b)
                  if "/.thumbnails/" not in p and not p.endswith(".tmp"))

    # a file changed within a timestamp tick (20 ms on tmpfs) of being read
    # is rightly read again by the next scan (racy); the checks below want
    # none, so the tree ages past a tick first
    time.sleep(0.05)
    # a scan that names no root takes the configuration's, excludes and all
    rc, out, err = run("scan", "--config", conf, check_rc=0)
    check("excluded by pattern: 1 files, 1 directories" in out, "excludes counted: " + out)
    check(sorted(r["path"] for r in export(db)) == want, "the configured roots, minus excludes")
    # export and purge find the index through the same file
    rc, out, err = run("export", "--config", conf, check_rc=0)
    check(len(out.splitlines()) == len(want), "export --config finds the index")
    rc, out, err = run("export", "--config", conf, "--scans", check_rc=0)
    scans = [json.loads(line) for line in out.splitlines()]
    check(len(scans) == 1 and scans[0]["status"] == "ok" and scans[0]["added"] == len(want)
          and scans[0]["command"] == "scan" and scans[0]["background"] == 0,
          "export --scans: %s" % scans)
    rc, out, err = run("export", "--config", conf, "--scans", "--format", "csv", check_rc=0)
    check(out.splitlines()[0].startswith("id,started_at,finished_at,status,command"),
          "scans as CSV: " + out[:200])

    # the user's file, found through XDG_CONFIG_HOME, when --config is not given
    xdg = os.path.join(work, "xdg")
    os.makedirs(os.path.join(xdg, "seekless"))
    shutil.copy(conf, os.path.join(xdg, "seekless", "config"))
    env = dict(os.environ, XDG_CONFIG_HOME=xdg)
    rc, out, err = run("scan", "--scheduled", env=env, check_rc=0)
    check(re.search(r"index\s+%d unchanged" % len(want), out), "user's config found: " + out)
    # the service's scans run confined: roots read-only, the index's folder
    # read-write (test_sandbox checks that it holds)
    check(re.search(r"sandbox\s+Landlock ABI \d+: roots and system files read-only, "
                    r"%s read-write" % re.escape(work), out), "sandboxed: " + out[-300:])
    check("background: I/O class idle" in out, "--scheduled runs in the background: " + out)
    check(db_rows(db, "SELECT command, background FROM scans ORDER BY id DESC LIMIT 1")
          == [("scheduled", 1)], "recorded as scheduled, background")

    # a configured root that is not there (a drive unplugged): skipped, kept
    os.rename(b, b + ".away")
    rc, out, err = run("scan", "--config", conf, check_rc=0)
    check("skipped (its records are kept)" in err, "missing root reported: " + err)
    check(len(export(db)) == len(want), "its records kept: %d" % len(export(db)))
    os.rename(b + ".away", b)
    # on the command line, a missing root is still an error
    rc, out, err = run("scan", "--config", conf, os.path.join(work, "nope"))
    check(rc == 2 and "nope" in err, "missing command-line root: %d %s" % (rc, err))

    # mistakes in the file stop everything, with file and line
    bad = os.path.join(work, "bad.conf")
    with open(bad, "w") as f:
        f.write("root = %s\nbackground = sometimes\n" % a)
    rc, out, err = run("scan", "--config", bad)
    check(rc == 2 and "bad.conf:2: background wants yes or no" in err, "bad value: " + err)
    rc, out, err = run("scan", "--config", os.path.join(work, "absent.conf"))
    check(rc == 2 and "absent.conf" in err, "absent --config: " + err)
    empty = os.path.join(work, "empty.conf")
    open(empty, "w").close()
    rc, out, err = run("scan", "--config", empty)
    check(rc == 2 and "no ROOT given, and none in" in err, "no roots anywhere: " + err)

    # SIGTERM: stops after storing what was read, exit 4, resumable
    big = os.path.join(work, "big")
    mkcorpus(big, "--files", 3000, "--median", "40k", "--seed", 8, "--no-sync")
    bdb = os.path.join(work, "big.db")
    for sig, full in ((signal.SIGTERM, []), (signal.SIGINT, ["--full"])):
        before = (db_rows(bdb, "SELECT coalesce(max(id), 0) FROM scans")[0][0]
                  if os.path.exists(bdb) else 0)
        p = subprocess.Popen([BIN, "scan", "--jobs", "1", "--db", bdb] + full + [big],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        # once this scan has stored something (a fixed delay was too short
        # under ASan on a busy machine; the previous scan's records do not
        # count: the signal would come before the handlers), and well before
        # the end
        deadline = time.time() + 60
        while p.poll() is None and time.time() < deadline:
            time.sleep(0.02)
            try:
                if os.path.exists(bdb) and db_rows(
                        bdb, "SELECT count(*) FROM files WHERE last_scan ="
                             " (SELECT max(id) FROM scans) AND last_scan > ?", (before,))[0][0]:
                    break
            except sqlite3.OperationalError as e:
                # not created yet, or its schema not made yet; anything
                # else is a failure of its own
                if not any(m in str(e) for m in ("no such table", "unable to open", "is locked")):
                    raise
        p.send_signal(sig)
        out, err = p.communicate()
        check(p.returncode == 4, "%s: exit 4, got %d: %s" % (sig.name, p.returncode, err[-300:]))
        check("interrupted" in out, "%s: summary says interrupted" % sig.name)
        st = db_rows(bdb, "SELECT status, files FROM scans ORDER BY id DESC LIMIT 1")
        check(st and st[0][0] == "interrupted" and st[0][1] > 0,
              "%s: recorded interrupted, with what it stored: %s" % (sig.name, st))
    stored = db_rows(bdb, "SELECT count(*) FROM files")[0][0]
    rc, out, err = run("scan", "--db", bdb, big, check_rc=0)
    check(re.search(r"index\s+%d unchanged" % stored, out), "resumed where it stopped: " + out)
    truth = xxh128(regular_files(big))
    recs = export(bdb)
    check(len(recs) == len(truth) and all(truth[r["path"]] == r["content_hash"] for r in recs),
          "complete and right after the resume")

    # the units
    units = os.path.join(work, "units")
    rc, out, err = run("service", "install", "--system", "--config", conf, "--dest", units,
                       check_rc=0)
    service = open(os.path.join(units, "seekless.service")).read()
    timer = open(os.path.join(units, "seekless.timer")).read()
    check("ExecStart=%s scan --scheduled --config %s\n" % (BIN if os.path.isabs(BIN)
                                                             else shutil.which(BIN), conf)
          in service, "ExecStart: " + service)
    check("ReadWritePaths=%s\n" % work in service, "writes only the index's directory")
    check("OnCalendar=*-*-* 04:15:00\n" in timer and "Persistent=true\n" in timer
          and "RandomizedDelaySec=" in timer, "timer: " + timer)
    if shutil.which("systemd-analyze"):
        p = subprocess.run(["systemd-analyze", "verify", os.path.join(units, "seekless.service"),
                            os.path.join(units, "seekless.timer")],
                           capture_output=True, text=True)
        check(p.returncode == 0 and not p.stdout.strip() and not p.stderr.strip(),
              "systemd-analyze verify is silent: %s %s" % (p.stdout, p.stderr))
    else:
        skip_part("systemd-analyze is not installed: the units are not verified")

    # the shipped units are what install writes for the default system setup
    sysconf = os.path.join(work, "sys.conf")
    with open(sysconf, "w") as f:
        f.write("root = /srv/photos\n")
    d2 = os.path.join(work, "units2")
    run("service", "install", "--system", "--config", sysconf, "--dest", d2, check_rc=0)
    exe = BIN if os.path.isabs(BIN) else shutil.which(BIN)
    for name in ("seekless.service", "seekless.timer"):
        got = open(os.path.join(d2, name)).read().replace(exe, "/usr/local/bin/seekless")
        got = got.replace(sysconf, "/etc/seekless.conf")
        check(got == open(os.path.join(SHIPPED, name)).read(),
              "dist/systemd/%s matches what install writes:\n%s" % (name, got))
    # systemd's own rating of the system unit's hardening (docs/security.md
    # records it: 1.6 "OK" with systemd 252; 10 is a unit with none)
    if shutil.which("systemd-analyze"):
        p = subprocess.run(["systemd-analyze", "security", "--offline=yes",
                            os.path.join(d2, "seekless.service")], capture_output=True,
                           text=True)
        m = re.search(r"Overall exposure level for seekless.service: ([0-9.]+)", p.stdout)
        check(m is not None and float(m.group(1)) <= 2.0,
              "systemd-analyze security rates the unit 2.0 or better: %s"
              % (m and m.group(1) or p.stdout[-300:] + p.stderr[-300:]))

    # user scope: no sandbox options (a user manager cannot apply them)
    d3 = os.path.join(work, "units3")
    run("service", "install", "--user", "--config", conf, "--dest", d3, check_rc=0)
    us = open(os.path.join(d3, "seekless.service")).read()
    check("ProtectSystem" not in us and "IOSchedulingClass=idle" in us, "user unit: " + us)

    # refusals
    with open(sysconf, "a") as f:
        f.write("schedule = 25:99\n")
    rc, out, err = run("service", "install", "--system", "--config", sysconf, "--dest", d2)
    check(rc == 2 and "no such time of day" in err, "bad schedule: " + err)
    rc, out, err = run("service", "install", "--system", "--config", empty, "--dest", d2)
    check(rc == 2 and "names no root" in err, "no roots: " + err)
    # the Windows installer's service waits for a root; a timer's scans
    # would fail every night instead
    rc, out, err = run("service", "install", "--system", "--config", empty, "--dest", d2,
                       "--allow-no-root")
    check(rc == 2 and "is for the Windows service" in err, "--allow-no-root on Linux: " + err)
    rc, out, err = run("service", "status", "--allow-no-root")
    check(rc == 2 and "go with install" in err, "--allow-no-root goes with install: " + err)
    rc, out, err = run("service", "uninstall", "--system", "--config", conf, "--dest", units,
                       check_rc=0)
    check(not os.path.exists(os.path.join(units, "seekless.timer")), "uninstall removed")
    rc, out, err = run("service", "status", "--system", "--config", conf, "--dest", units,
                       check_rc=0)
    check("units: not installed" in out and "last scans:" in out and "#1 " in out,
          "status: " + out)
    # each scan's line says what the scans table holds, newest first
    want = db_rows(db, "SELECT id, started_at, command, status, unchanged, changed, added,"
                   " moved, deleted, files, errors FROM scans ORDER BY id DESC LIMIT 5")
    got = re.findall(r"^  #(\d+) (\S+) (\S+) +(\S+) +(\d+) unchanged, (\d+) changed, (\d+) new,"
                     r" (\d+) moved, (\d+) deleted; read (\d+) files \((\d+) errors\) in [\d.]+ s",
                     out, re.M)
    check([tuple(int(x) if x.isdigit() else x for x in g) for g in got] ==
          [tuple(0 if v is None else v for v in w) for w in want],
          "status lists the last scans as stored: %s against %s" % (got, want))

    # install --root/--at/--db write the configuration file (created here,
    # comments and other settings of an existing one kept), then the units
    fresh = os.path.join(work, "fresh.conf")
    d4 = os.path.join(work, "units4")
    rc, out, err = run("service", "install", "--system", "--config", fresh, "--dest", d4,
                       "--root", a, "--root", b, "--at", "05:45", "--db",
                       os.path.join(work, "f.db"), check_rc=0)
    with open(fresh) as f:
        text = f.read()
    check("root = %s\nroot = %s\n" % (a, b) in text and "schedule = 05:45" in text
          and "db = %s" % os.path.join(work, "f.db") in text, "config written: " + text)
    with open(os.path.join(d4, "seekless.timer")) as f:
        check("OnCalendar=*-*-* 05:45:00" in f.read(), "the timer takes --at")
    run("service", "install", "--system", "--config", fresh, "--dest", d4, "--at", "06:00",
        check_rc=0)
    with open(fresh) as f:
        text2 = f.read()
    check("schedule = 06:00" in text2 and "05:45" not in text2 and text2.count("root = ") == 2
          and text2.startswith("# seekless configuration"),
          "a second install replaces only what it names: " + text2)
    rc, out, err = run("service", "status", "--system", "--config", fresh, "--root", a)
    check(rc == 2 and "go with install" in err, "--root is for install only: %d %s" % (rc, err))
    rc, out, err = run("service", "install", "--system", "--config", fresh, "--dest", d4,
                       "--root", os.path.join(work, "nope"))
    check(rc == 2 and "not found" in err, "a root that is not there: %d %s" % (rc, err))

    def live_install(acct):
        """A live install (no --dest) in a mount namespace whose
        /etc/systemd/system is a tmpfs, so the machine's units are not
        touched.  The index's folder, and the index a root scan left there,
        pass to the account, which can then scan into it.  Without a running
        systemd the install ends with exit 3 and says how to enable."""
        import pwd
        uid = pwd.getpwnam(acct).pw_uid
        live = os.path.join(work, "live")
        os.makedirs(live)
        os.chmod(work, 0o755)  # the account must reach the roots and the index
        ldb = os.path.join(live, "index.db")
        run("scan", "--db", ldb, a, check_rc=0)
        owned = sorted(os.listdir(live))
        check({"index.db", "index.db.lock"} <= set(owned),
              "root's index and its lock are there: %s" % owned)
        check(all(os.stat(os.path.join(live, n)).st_uid == 0 for n in owned),
              "root owns them before the install")
        units = "/etc/systemd/system"
        before = sorted(os.listdir(units)) if os.path.isdir(units) else None
        script = ('mount -t tmpfs seekless-test %s && "$0" service install --system '
                  '--config "$1" --root "$2" --db "$3" --run-as "$4"; echo "rc=$?"; '
                  'ls %s' % (units, units))
        p = subprocess.run(["unshare", "--mount", "--propagation", "private", "sh", "-c", script,
                            BIN, os.path.join(work, "live.conf"), a, ldb, acct],
                           capture_output=True, text=True)
        if before is None or "rc=" not in p.stdout:
            check(False, "a mount namespace with a tmpfs at %s: %s %s" % (units, p.stdout,
                                                                          p.stderr))
            return
        check("seekless.service" in p.stdout and "seekless.timer" in p.stdout,
              "the live install wrote its units: " + p.stdout)
        check("the index's folder now belongs to %s" % acct in p.stdout,
              "the install says who owns the index: " + p.stdout)
        check("rc=0" in p.stdout or ("rc=3" in p.stdout and "could not enable" in p.stderr),
              "installed, or written but not enabled without systemd: %s %s"
              % (p.stdout, p.stderr))
        check(os.stat(live).st_uid == uid, "the index's folder belongs to the account")
        check(all(os.stat(os.path.join(live, n)).st_uid == uid for n in owned),
              "so do the index and its lock: %s" %
              [(n, os.stat(os.path.join(live, n)).st_uid) for n in owned])
        check(sorted(os.listdir(units)) == before, "the machine's units are untouched")
        # the account, not root, scans into the index it now owns
        mkcorpus(os.path.join(a, "later"), "--files", 3, "--median", "10k", "--seed", 9,
                 "--no-sync")
        rc, out, err = run("scan", "--db", ldb, a, user=acct)
        check(rc == 0 and re.search(r"\b3 new\b", out), "the account scans into its index: "
              "%d %s %s" % (rc, out[-400:], err[-400:]))
        shutil.rmtree(os.path.join(a, "later"))

    # --run-as: the system service without root (the account is given the
    # index's folder at a live install, which live_install checks)
    acct = "seekless-t%d" % os.getpid()
    made = subprocess.run(["useradd", "--system", "--no-create-home", acct],
                          capture_output=True).returncode == 0
    if made:
        try:
            d5 = os.path.join(work, "units5")
            run("service", "install", "--system", "--config", fresh, "--dest", d5, "--run-as",
                acct, check_rc=0)
            with open(os.path.join(d5, "seekless.service")) as f:
                unit = f.read()
            check("\nUser=%s\n" % acct in unit and "ProtectSystem=strict" in unit,
                  "the unit runs as the account, still sandboxed")
            v = subprocess.run(["systemd-analyze", "verify", os.path.join(d5, "seekless.service")],
                               capture_output=True, text=True)
            check(v.returncode == 0 and "seekless.service" not in v.stderr,
                  "the unit verifies: " + v.stderr[-300:])
            live_install(acct)
        finally:
            subprocess.run(["userdel", acct], capture_output=True)
    else:
        check(os.geteuid() != 0, "useradd works as root")
    rc, out, err = run("service", "install", "--system", "--config", fresh, "--dest", d4,
                       "--run-as", "no-such-account-here")
    check(rc == 2 and "no account named" in err, "an unknown account: %d %s" % (rc, err))
    rc, out, err = run("service", "install", "--user", "--config", fresh, "--dest", d4,
                       "--run-as", "root")
    check(rc == 2 and "system's service" in err, "--run-as with --user: %d %s" % (rc, err))


def unit_settings(path):
    """A unit file's [Service] settings: name -> list of values, in order."""
    got = {}
    with open(path) as f:
        for line in f:
            line = line.rstrip("\n")
            if "=" in line and not line.startswith("#") and not line.startswith("["):
                k, v = line.split("=", 1)
                got.setdefault(k, []).append(v)
    return got


# The unit's mount confinement as systemd sets it up, for a machine without
# systemd as PID 1 (a container: systemd-run cannot start a transient
# unit): ProtectSystem=strict makes every mount read-only but /dev, /proc
# and /sys; ReadWritePaths (a '-' one only if there) are bound writable
# again; PrivateTmp gives /tmp and /var/tmp of their own.  Then the command
# lines, each under the unit's UMask, capability bounding set and
# NoNewPrivileges.  A file outside ReadWritePaths must be unwritable, or
# this shows nothing: PROBE says whether it was.
CONFINE = r"""
set -u
while read -r _ _ _ _ mp _; do
  mp=$(printf '%b' "$(printf '%s' "$mp" | sed 's/\\\([0-7]\{3\}\)/\\0\1/g')")
  # (below /tmp and /var/tmp: hidden by PrivateTmp's below)
  case "$mp" in /dev|/dev/*|/proc|/proc/*|/sys|/sys/*|/tmp/*|/var/tmp/*) continue ;; esac
  mount -o remount,bind,ro "$mp" 2>/dev/null
done < /proc/self/mountinfo
for rw in $RW; do
  opt=${rw%%:*} dir=${rw#*:}
  [ -d "$dir" ] || { [ "$opt" = - ] && continue; echo "no $dir" >&2; exit 90; }
  mount --bind "$dir" "$dir" && mount -o remount,bind,rw "$dir" || exit 91
done
mount -t tmpfs tmpfs /tmp && mount -t tmpfs tmpfs /var/tmp || exit 92
if ( : > "$OUTSIDE" ) 2>/dev/null; then echo PROBE=writable; else echo PROBE=read-only; fi
umask "$UMASK"
# ExecStart=, then ExecStopPost= whatever the scan did
setpriv $PRIV sh -c "$START"; echo "START=$?"
setpriv $PRIV sh -c "$STOPPOST"; echo "STOPPOST=$?"
"""


def run_unit(unit, outside):
    """ExecStart then ExecStopPost of an installed system unit, confined as
    CONFINE says.  Returns (scan status, report status, '-' on the report,
    whether OUTSIDE could be written, the output)."""
    u = unit_settings(unit)
    check(u.get("ProtectSystem") == ["strict"] and u.get("PrivateTmp") == ["yes"],
          "the unit is the one CONFINE emulates: %s" % u)
    rw = []
    for v in u.get("ReadWritePaths", []):
        for w in shlex.split(v):
            rw.append("-:" + w[1:] if w.startswith("-") else "+:" + w)
    caps = ",".join("+" + c.lower()[4:] for c in u["CapabilityBoundingSet"][0].split())
    priv = "--bounding-set -all," + caps + (" --no-new-privs"
                                            if u.get("NoNewPrivileges") == ["yes"] else "")
    start, post = u["ExecStart"][0], u["ExecStopPost"][0]
    ignore = post.startswith("-")
    env = dict(os.environ, RW=" ".join(rw), OUTSIDE=outside, UMASK=u["UMask"][0], PRIV=priv,
               START=" ".join(shlex.quote(w) for w in shlex.split(start)),
               STOPPOST=" ".join(shlex.quote(w) for w in shlex.split(post.lstrip("-"))))
    p = subprocess.run(["unshare", "--mount", "--propagation", "private", "sh", "-c", CONFINE],
                       capture_output=True, text=True, env=env)
    out = p.stdout + p.stderr
    st = dict(m for m in re.findall(r"^(START|STOPPOST|PROBE)=(\S+)$", p.stdout, re.M))
    check("START" in st and "STOPPOST" in st and st.get("PROBE") == "read-only",
          "the unit's command lines ran, confined: %s" % out[-1500:])
    return (int(st.get("START", -1)), int(st.get("STOPPOST", -1)), ignore,
            st.get("PROBE") == "writable", out)


# the report after a scan, as the installed unit runs it (the docstring says
# what is and is not covered)
with tempdir("svc-unit", base=os.path.dirname(os.path.abspath(BIN))) as top:
    photos, var, www = (os.path.join(top, d) for d in ("photos", "var", "www"))
    mkcorpus(photos, "--files", 25, "--median", "20k", "--seed", 11, "--no-sync")
    os.makedirs(var)
    os.makedirs(www)
    idx = os.path.join(var, "index.db")
    page = os.path.join(www, "photos.html")
    uconf = os.path.join(top, "unit.conf")
    base_conf = "root = %s\ndb = %s\nschedule = 03:00\n" % (photos, idx)
    with open(uconf, "w") as f:
        f.write(base_conf + "report = %s\n" % page)
    udir = os.path.join(top, "units")
    run("service", "install", "--system", "--config", uconf, "--dest", udir, check_rc=0)
    unit = os.path.join(udir, "seekless.service")
    u = unit_settings(unit)
    check(u.get("ExecStopPost", [""])[0].startswith("-") and
          " report --scheduled --config %s" % uconf in u["ExecStopPost"][0],
          "the report after the scan, its failure not the unit's: %s" % u.get("ExecStopPost"))
    check(u.get("ReadWritePaths") == [var, "-" + www],
          "the index's folder and the report's: %s" % u.get("ReadWritePaths"))

    # set at install: the page, of the index the scan just wrote
    outside = os.path.join(top, "outside")
    scan_rc, rep_rc, ignore, _, out = run_unit(unit, outside)
    check(scan_rc == 0 and rep_rc == 0, "scan and report succeed confined: " + out[-1500:])
    check("sandbox" in out and "Landlock" in out, "the scan confined itself too: " + out[-600:])
    html = open(page, encoding="utf-8").read() if os.path.exists(page) else ""
    n = db_rows(idx, "SELECT count(*) FROM files WHERE deleted_at IS NULL")[0][0] if \
        os.path.exists(idx) else -1
    check(n == 25 and html.startswith("<!DOCTYPE html>") and
          'id="total-files" data-v="%d"' % n in html,
          "the report holds the index's %d files (%d chars)" % (n, len(html)))
    check(os.stat(page).st_mode & 0o077 == 0 if html else False, "written under UMask=0077")

    # moved after the install (not installed again): the unit may not
    # write there; the report fails, the scan's status stands
    elsewhere = os.path.join(top, "elsewhere")
    os.makedirs(elsewhere)
    with open(uconf, "w") as f:
        f.write(base_conf + "report = %s\n" % os.path.join(elsewhere, "photos.html"))
    scan_rc, rep_rc, ignore, _, out = run_unit(unit, outside)
    check(scan_rc == 0 and rep_rc == 3 and "Read-only file system" in out and
          "elsewhere/photos.html" in out,
          "the report fails, said why: %d %s" % (rep_rc, out[-800:]))
    check(ignore and scan_rc in (0, 1, 4), "and the unit succeeds by its scan: '-' on the report")
    check(os.listdir(elsewhere) == [], "nothing written there")

    # unset: the report does nothing
    os.remove(page)
    with open(uconf, "w") as f:
        f.write(base_conf)
    scan_rc, rep_rc, ignore, _, out = run_unit(unit, outside)
    check(scan_rc == 0 and rep_rc == 0 and "report:" not in out,
          "without the setting the report says and writes nothing: " + out[-600:])
    check(os.listdir(www) == [] and os.listdir(elsewhere) == [], "no page anywhere")

done()
