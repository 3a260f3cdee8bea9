"""The Windows service under Wine's service control manager: install with
--root/--at/--db (written to the configuration), refusal to run from a
console, start (a catch-up scan at once), status, STOP in the middle of a
scan (within seconds, what was read kept), uninstall.  The report after a
scheduled scan (`report = PATH`): none while unset, the page written when
set (its file count the index's), and one that cannot be written named in
the log without failing the scan.  Needs the persistent
wineserver tools/win/cross-build.sh starts."""
import os
import shutil
import sqlite3
import time

from winlib import (read_text, check, done, need_tools, seekless, wine, tmpdir, corpus, winpath, prefix_path,
                    wait_for, svc_state as state, svc_start as start)

need_tools()
base = tmpdir("svc")
tree = os.path.join(base, "tree")
corpus(tree, 30)
conf = os.path.join(base, "seekless.conf")
db = os.path.join(base, "index.db")
log = os.path.join(base, "seekless-service.log")


def log_text():
    return read_text(log)


def html_files():
    found = []
    for d, _, names in os.walk(base):
        found += [os.path.join(d, n) for n in names if n.endswith(".html")]
    return found


def scheduled_run(why):
    """Forget the last run and start the service: a catch-up scan, then the
    report child.  Returns the log written by this run once the service
    is idle again ("next scan in", logged after the report has ended)."""
    before = len(log_text())
    stamp = os.path.join(base, "seekless-service.last")
    if os.path.exists(stamp):
        os.remove(stamp)
    start()
    took = wait_for(lambda: "next scan in" in log_text()[before:], 180)
    check(took is not None, why + ": the run ended: " + log_text()[before:])
    return log_text()[before:]


def stop():
    wine("sc", "stop", "seekless")
    return check(wait_for(lambda: state() == "STOPPED", 60) is not None, "the service stops")


# whatever an earlier run left
seekless("service", "uninstall")

rc, out, err = seekless("service", "install", "--config", winpath(conf), "--root", winpath(tree),
                        "--at", "03:00", "--db", winpath(db))
print(out, err)
check(rc == 0 and "created service 'seekless'" in out, "install: %d %s %s" % (rc, out, err))
with open(conf) as f:
    text = f.read()
check("root = Z:" + tree in text and "schedule = 03:00" in text and "db = " in text,
      "install wrote the settings into the configuration: " + text)

start()
took = wait_for(lambda: "scan ended with exit status" in log_text(), 120)
check(took is not None, "the catch-up scan ran: " + log_text())
check("scan ended with exit status 0" in log_text(), "and succeeded: " + log_text())
check("seekless scan: ok: 30 files" in log_text(), "the scan's output is in the log")
con = sqlite3.connect(db)
n = con.execute("SELECT count(*) FROM files").fetchone()[0]
cmd = con.execute("SELECT command FROM scans ORDER BY id DESC").fetchone()
con.close()
check(n == 30 and cmd == ("scheduled",), "the index holds the tree: %d %r" % (n, cmd))
check(os.path.exists(os.path.join(base, "seekless-service.last")), "the run was stamped")
# report unset: the report child runs and writes nothing (the service is
# idle again once it has ended)
check(wait_for(lambda: "next scan in" in log_text(), 60) is not None, "idle after the run")
check("report: " not in log_text() and "the report" not in log_text() and html_files() == [],
      "no report without the setting: %s %s" % (html_files(), log_text()[-400:]))

rc, out, err = seekless("service", "status", "--config", winpath(conf))
check("state: running" in out and "start: automatic" in out and "log: " in out,
      "status: " + out)
# the shutdown wait set at install, read back with QueryServiceConfig2W
# (the system's default is 10 s since Windows 10 1703; Wine's is 180 s)
check("shutdown: waits up to 150 s for a scan to stop" in out,
      "a shutdown waits for the scan: " + out)

# an idle STOP (how long it takes is printed, not checked: Wine on a loaded
# machine is no measure of a service's stop; that it stops at all, and how,
# is the contract)
t0 = time.time()
wine("sc", "stop", "seekless")
took = wait_for(lambda: state() == "STOPPED", 60)
print("idle stop took %.2f s" % (time.time() - t0))
check(took is not None, "an idle stop stops it")
check(log_text().rstrip().endswith("stopped"), "the log says it stopped")

# report = PATH: after the scan, the page (a folder with a space, as
# "Public Documents" would be)
www = os.path.join(base, "shared pages")
os.makedirs(www)
page_path = os.path.join(www, "photos report.html")
with open(conf) as f:
    plain = f.read()
with open(conf, "w") as f:
    f.write(plain + "report = %s\n" % winpath(page_path))
ran = scheduled_run("report set")
check("scan ended with exit status 0" in ran, "the scan succeeded: " + ran)
check("report: wrote " in ran and "the report failed" not in ran, "the report ran: " + ran)
page = read_text(page_path)
con = sqlite3.connect(db)
n = con.execute("SELECT count(*) FROM files WHERE deleted_at IS NULL").fetchone()[0]
con.close()
check(page.startswith("<!DOCTYPE html>") and page.rstrip().endswith("</html>"),
      "the report is a whole HTML page: %d chars" % len(page))
check('id="total-files" data-v="%d"' % n in page, "its file count is the index's %d" % n)
stop()

# one that cannot be written (its folder is not there): the scan still
# succeeds and is stamped, the log names the report's failure and path
os.remove(page_path)
os.rmdir(www)
with open(conf, "w") as f:
    f.write(plain + "report = %s\n" % winpath(page_path))
ran = scheduled_run("report unwritable")
check("scan ended with exit status 0" in ran, "the scan succeeded: " + ran)
check(os.path.exists(os.path.join(base, "seekless-service.last")), "and was stamped")
check("the report failed (exit status 3)" in ran and "photos report.html" in ran,
      "the log names the report's failure: " + ran)
check(not os.path.exists(www), "nothing was made: %s" % html_files())
check(state() == "RUNNING", "the service goes on: " + state())
stop()
with open(conf, "w") as f:
    f.write(plain)

# a STOP in the middle of a scan: more files, a forgotten last run
corpus(os.path.join(tree, "more"), 4000, seed=2, median="8k")
with open(conf, "a") as f:
    f.write("jobs = 1\n")  # a slower scan, so the stop lands in the middle
os.remove(os.path.join(base, "seekless-service.last"))
before = log_text().count("scan starts")
wine("sc", "start", "seekless")
started = wait_for(lambda: log_text().count("scan starts") > before, 60, 0.05)
check(started is not None, "the second scan started")


def stored_files():
    try:
        c = sqlite3.connect(db, timeout=5)
        n = c.execute("SELECT count(*) FROM files").fetchone()[0]
        c.close()
        return n
    except sqlite3.Error:
        return 0


# stop once the first batch of the new files has been committed
check(wait_for(lambda: stored_files() > 30, 60, 0.05) is not None, "the scan is storing")
t0 = time.time()
wine("sc", "stop", "seekless")
took = wait_for(lambda: state() == "STOPPED", 60, 0.05)
stop_s = time.time() - t0
print("stop during a scan took %.2f s" % stop_s)
# stopped by the stop, not by the scan's end: exit 4, interrupted, part stored
check(took is not None, "a stop during a scan stops it")
check("scan ended with exit status 4" in log_text(),
      "the scan was interrupted, not killed: " + log_text()[-800:])
con = sqlite3.connect(db)
status = con.execute("SELECT status FROM scans ORDER BY id DESC").fetchone()
stored = con.execute("SELECT count(*) FROM files").fetchone()[0]
con.close()
check(status == ("interrupted",), "the scan row says interrupted: %r" % (status,))
check(30 < stored < 4030, "what was read is stored: %d" % stored)
check(not os.path.exists(os.path.join(base, "seekless-service.last")),
      "an interrupted run is not stamped complete")

rc, out, err = seekless("service", "uninstall")
check(rc == 0 and "deleted service 'seekless'" in out, "uninstall: %s %s" % (out, err))
check(state() == "NONE", "the service is gone")

# a configuration that names no index: the service's own, in %ProgramData%,
# beside its log; every scan is told so (it used to start them without
# --db, and they wrote to SYSTEM's profile while the log was in ProgramData)
with open(conf) as f:
    lines = [l for l in f if not l.startswith("db =") and not l.startswith("jobs =")]
with open(conf, "w") as f:
    f.writelines(lines)
pdata = prefix_path("ProgramData", "seekless")
sysdb, syslog = os.path.join(pdata, "index.db"), os.path.join(pdata, "seekless-service.log")
for f in (sysdb, syslog, os.path.join(pdata, "seekless-service.last")):
    if os.path.exists(f):
        os.remove(f)
rc, out, err = seekless("service", "install", "--config", winpath(conf))
check(rc == 0, "install without --db: %d %s %s" % (rc, out, err))
start()


def sys_log():
    return read_text(syslog)


check(wait_for(lambda: "scan ended with exit status" in sys_log(), 120) is not None,
      "the scan ran: " + sys_log()[-600:])
check("scan ended with exit status 0" in sys_log(), "and succeeded: " + sys_log()[-600:])
check(os.path.exists(sysdb), "the index is in ProgramData, beside the log: %s" % sysdb)
if os.path.exists(sysdb):
    con = sqlite3.connect(sysdb)
    n = con.execute("SELECT count(*) FROM files").fetchone()[0]
    con.close()
    check(n == 4030, "it holds the tree: %d" % n)
wine("sc", "stop", "seekless")
wait_for(lambda: state() == "STOPPED", 30)
rc, out, err = seekless("service", "uninstall")
check(rc == 0 and state() == "NONE", "uninstall again: %s %s" % (out, err))

# the service program refuses to run from a console (last: under Wine a
# dispatcher that found no service start leaves the service manager
# refusing starts for a while)
t0 = time.time()
rc, out, err = seekless("service", "run", "--config", winpath(conf), timeout=60)
check(rc != 0 and "not started by the service manager" in err,
      "service run from a console refuses: %d %s" % (rc, err))
print("console refusal took %.1f s" % (time.time() - t0))

shutil.rmtree(base, ignore_errors=True)  # the service is gone, nothing holds it
# start: no run completed yet, so it scans at once
done()
