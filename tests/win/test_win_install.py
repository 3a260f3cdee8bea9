"""The Windows packages under Wine (tools/win/package.sh makes them):
the MSI installed quietly with msiexec, first as a double-click would
(nothing given: the service registered with no root, waiting), then
with ROOT and SCHEDULE; the service registered exactly as `seekless
service install` registers it, started (its catch-up scan fills the index
in ProgramData) and stopped; seekless.exe run from Program Files; msiexec
/x removing the service and every program file and keeping the index and
the configuration.  Then the portable zip: the same files, and its
seekless.exe scans.  Both name the version and commit of the build.
Needs the persistent wineserver tools/win/cross-build.sh starts."""
import os
import re
import shutil
import sqlite3
import subprocess
import uuid
import zipfile

from winlib import (read_text, check, done, need_tools, seekless, wine, tmpdir, corpus, winpath, prefix_path,
                    skip, svc_state, svc_start, wait_for)

need_tools()
MSI = os.environ.get("SEEKLESS_MSI", "")
ZIP = os.environ.get("SEEKLESS_ZIP", "")
VERSION = os.environ.get("SEEKLESS_VERSION", "")
COMMIT = os.environ.get("SEEKLESS_BUILD_COMMIT", "")
for what, path in (("SEEKLESS_MSI", MSI), ("SEEKLESS_ZIP", ZIP)):
    if not path or not os.path.exists(path):
        skip("%s (%s) not found: make the packages with tools/win/package.sh" % (what, path))
if not shutil.which("msiinfo"):
    skip("msiinfo (msitools) not installed")
SRC = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))

base = tmpdir("msi")
tree = os.path.join(base, "tree")
other = os.path.join(base, "other")
corpus(tree, 20)
corpus(other, 12, seed=3)
pf = prefix_path("Program Files", "seekless")
pdata = prefix_path("ProgramData", "seekless")
exe = os.path.join(pf, "seekless.exe")
conf = os.path.join(pdata, "seekless.conf")
sysdb = os.path.join(pdata, "index.db")
syslog = os.path.join(pdata, "seekless-service.log")
KEY = r"HKLM\System\CurrentControlSet\Services\seekless"
ENVKEY = r"HKLM\System\CurrentControlSet\Control\Session Manager\Environment"


def files_under(top):
    """Every file below top, as relative paths with '/'."""
    return sorted(os.path.relpath(os.path.join(d, f), top).replace(os.sep, "/")
                  for d, _, fs in os.walk(top) for f in fs)


def count(db):
    con = sqlite3.connect(db)
    n = con.execute("SELECT count(*) FROM files").fetchone()[0]
    con.close()
    return n


def msiexec(*args):
    rc, out, err = wine("msiexec", *args, timeout=180)
    print("msiexec %s: %d %s %s" % (" ".join(args), rc, out.strip(), err.strip()))
    return rc


def service_key():
    """The service's registry values, {name: (type, value)}; {} when it is
    not registered.  Wine's `sc qc` prints nothing, so the registry is
    where its settings can be read back."""
    rc, out, _ = wine("reg", "query", KEY)
    vals = {}
    for line in out.splitlines():
        m = re.match(r"\s+(\S+)\s+(REG_\w+)\s+(.*)$", line)
        if rc == 0 and m:
            vals[m.group(1)] = (m.group(2), m.group(3).strip())
    return vals


def version_ok(where, out):
    """`seekless --version` names the version and the commit this build
    was configured at (one of this checkout's history)."""
    want = "seekless %s (commit %s)" % (VERSION, COMMIT) if COMMIT else "seekless %s" % VERSION
    check(VERSION and out.strip() == want, "%s --version: %r, expected %r" % (where, out, want))
    if COMMIT and shutil.which("git") and os.path.exists(os.path.join(SRC, ".git")):
        known = subprocess.run(["git", "-C", SRC, "merge-base", "--is-ancestor", COMMIT, "HEAD"],
                               capture_output=True).returncode == 0
        check(known, "%s names a commit of this checkout: %s" % (where, COMMIT))


# --- the package itself: version, the fixed UpgradeCode, a product code
# per version, per machine, 64-bit
props = {}
p = subprocess.run(["msiinfo", "export", MSI, "Property"], capture_output=True, text=True)
for line in p.stdout.splitlines():
    k, _, v = line.partition("\t")
    props[k] = v
with open(os.path.join(SRC, "dist", "windows", "seekless.wxs")) as f:
    upgrade = re.search(r'UpgradeCode="([0-9A-Fa-f-]+)"', f.read()).group(1).upper()
check(props.get("ProductVersion") == VERSION, "ProductVersion %r" % props.get("ProductVersion"))
check(props.get("UpgradeCode") == "{%s}" % upgrade, "UpgradeCode %r" % props.get("UpgradeCode"))
product = str(uuid.uuid5(uuid.UUID(upgrade), "seekless " + VERSION)).upper()
check(props.get("ProductCode") == "{%s}" % product,
      "ProductCode %r: derived from the UpgradeCode and the version" % props.get("ProductCode"))
check(props.get("ALLUSERS") == "1", "per-machine (ALLUSERS=1)")
check({"ROOT", "SCHEDULE"} <= set(props.get("SecureCustomProperties", "").split(";")),
      "ROOT and SCHEDULE pass to the elevated install: %r" % props.get("SecureCustomProperties"))
# the service's actions: deferred, as LocalSystem (3090 = an EXE from the
# File table, in the script, not impersonated); the rollbacks (3410: the
# same, on rollback, exit status ignored) are there, though Wine never runs
# them (docs/windows.md)
p = subprocess.run(["msiinfo", "export", MSI, "CustomAction"], capture_output=True, text=True)
actions = {l.split("\t")[0]: l.split("\t")[1:4] for l in p.stdout.splitlines() if "\t" in l}
for name, typ, target in (("ServiceInstall", "3090", "service install --allow-no-root"),
                          ("ServiceUninstall", "3090", "service uninstall"),
                          ("ServiceInstallRollback", "3410", "service uninstall"),
                          ("ServiceUninstallRollback", "3410", "service install --allow-no-root")):
    a = actions.get(name)
    check(a and a[0] == typ and a[1] == "seekless.exe" and a[2].startswith(target),
          "custom action %s: %r" % (name, a))
p = subprocess.run(["msiinfo", "suminfo", MSI], capture_output=True, text=True)
check("Template: x64;1033" in p.stdout, "a 64-bit package: " + p.stdout)
check(not COMMIT or "commit %s" % COMMIT in p.stdout, "its comments name the commit: " + p.stdout)

# --- a clean machine: no service, nothing in ProgramData (test_win_service
# leaves its index, log and last-run stamp there)
msiexec("/x", winpath(MSI), "/qn")
seekless("service", "uninstall")
shutil.rmtree(pdata, ignore_errors=True)
check(svc_state() == "NONE" and not os.path.exists(pf), "nothing installed to begin with")
# Wine leaves the separator behind when it takes a folder out of PATH, and
# its cmd stops looking at an empty entry: tidy what an earlier run left
rc, out, err = wine("reg", "query", ENVKEY, "/v", "Path")
m = re.search(r"Path\s+(REG_\w+)\s+(.*)", out)
if m and ";;" in m.group(2) + ";":
    wine("reg", "add", ENVKEY, "/v", "Path", "/t", m.group(1), "/f", "/d",
         ";".join(p for p in m.group(2).split(";") if p))

# --- 1. as a double-click installs it: no ROOT
check(msiexec("/i", winpath(MSI), "/qn") == 0, "msiexec /i /qn exits 0")
check(os.path.isfile(exe), "seekless.exe in Program Files: " + exe)
installed = files_under(pf) if os.path.isdir(pf) else []
for f in ("seekless.exe", "README.txt", "NOTICE.txt", "seekless.conf.example", "docs/windows.txt",
          "docs/usage.txt", "licenses/libjpeg-turbo.txt"):
    check(f in installed, "installed: %s (%r)" % (f, installed))
# the configuration the service reads starts as the sample installed
# beside the program: every key explained, the excludes a drive's root needs
with open(os.path.join(SRC, "dist", "windows", "seekless.conf")) as f:
    sample = f.read()
check(read_text(conf) == sample, "the configuration was created from the sample: %r"
      % read_text(conf)[:300])
key = service_key()
print("registered:", key)
want = {
    "ImagePath": ("REG_SZ", '"C:\\Program Files\\seekless\\seekless.exe" service run --config '
                            '"C:\\ProgramData\\seekless\\seekless.conf"'),
    "Start": ("REG_DWORD", "0x2"),            # automatic
    "Type": ("REG_DWORD", "0x10"),            # own process
    "ErrorControl": ("REG_DWORD", "0x1"),
    "ObjectName": ("REG_SZ", "LocalSystem"),
    "PreshutdownTimeout": ("REG_DWORD", "0x249f0"),  # 150 s
    "DisplayName": ("REG_SZ", "seekless photo indexer"),
}
for name, val in want.items():
    check(key.get(name) == val, "service %s: %r, expected %r" % (name, key.get(name), val))
check(key.get("Description", ("", ""))[1].startswith("Indexes photo drives"),
      "service description: %r" % (key.get("Description"),))

# the program folder is on the system PATH: `seekless` in a new prompt
rc, out, err = wine("reg", "query", ENVKEY, "/v", "Path")
check("C:\\Program Files\\seekless\\" in out, "on the system PATH: " + out)
rc, out, err = wine("cmd", "/c", "seekless --version")
check(rc == 0 and out.startswith("seekless %s" % VERSION), "seekless found on PATH: %r %r"
      % (out, err))

check(svc_start(), "the service starts with no root configured")
said = wait_for(lambda: "names no root yet: nothing to scan" in read_text(syslog), 30)
check(said is not None, "its log says it waits for a root: " + read_text(syslog))
check(svc_state() == "RUNNING", "and it keeps running (no failed scan, no retry): " + svc_state())
check("scan starts" not in read_text(syslog), "no scan was started: " + read_text(syslog))
wine("sc", "stop", "seekless")
check(wait_for(lambda: svc_state() == "STOPPED", 15) is not None, "it stops")

check(msiexec("/x", winpath(MSI), "/qn") == 0, "msiexec /x /qn exits 0")
check(svc_state() == "NONE" and not service_key(), "the service is gone")
check(not os.path.exists(pf), "Program Files\\seekless is gone: %r"
      % (files_under(pf) if os.path.exists(pf) else None))
check(os.path.isfile(conf), "the configuration is kept")
rc, out, err = wine("reg", "query", ENVKEY, "/v", "Path")
check(rc == 0 and "seekless" not in out, "the PATH is as it was: " + out)

# --- 2. with a root (a trailing backslash, which the installer must not
# let quote the closing quote) and a time
check(msiexec("/i", winpath(MSI), "/qn", "ROOT=" + winpath(tree) + "\\", "SCHEDULE=04:30") == 0,
      "msiexec /i ROOT=... SCHEDULE=... exits 0")
text = read_text(conf)
check("root = Z:%s\n" % tree in text and "schedule = 04:30\n" in text,
      "ROOT and SCHEDULE are in the configuration: " + text)
check(text.count("schedule =") == 1 and "exclude = $RECYCLE.BIN\n" in text,
      "in place of the sample's schedule, its other lines kept: " + text)
key = service_key()
check(key.get("ImagePath") == want["ImagePath"] and key.get("Start") == want["Start"],
      "registered again: %r" % (key,))
rc, out, err = wine(exe, "service", "status")
print(out, err)
check("installed: yes" in out and "start: automatic" in out and
      "shutdown: waits up to 150 s" in out and "schedule: daily at 04:30" in out,
      "service status from Program Files: " + out)
# what `seekless service install` itself registers, run by hand from an
# elevated prompt: the same, value for value
rc, out, err = wine(exe, "service", "install")
check(rc == 0 and "updated service 'seekless'" in out, "service install: %d %s %s" % (rc, out, err))
check(service_key() == key, "the installer registered what `service install` does: %r != %r"
      % (key, service_key()))

rc, out, err = wine("reg", "query", ENVKEY, "/v", "Path")
check("C:\\Program Files\\seekless\\" in out, "on the system PATH again: " + out)

# the first start catches up at once: the tree goes into ProgramData's index
check(svc_start(), "the service starts")
check(wait_for(lambda: "scan ended with exit status" in read_text(syslog), 120) is not None,
      "the catch-up scan ran: " + read_text(syslog)[-800:])
check("scan ended with exit status 0" in read_text(syslog), "and succeeded: " + read_text(syslog))
check(os.path.isfile(sysdb) and count(sysdb) == 20, "the index in ProgramData holds the tree")
wine("sc", "stop", "seekless")
check(wait_for(lambda: svc_state() == "STOPPED", 15) is not None, "it stops")

# the installed program, run from where it was installed
rc, out, err = wine(exe, "--version")
version_ok("Program Files\\seekless\\seekless.exe", out)
own = os.path.join(base, "own.db")
rc, out, err = wine(exe, "scan", "--db", winpath(own), winpath(other))
check(rc == 0 and "ok: 12 files" in out, "a scan from Program Files: %d %s %s" % (rc, out, err))
check(os.path.isfile(own) and count(own) == 12, "it recorded the files")

# removed while the service runs (its run done: it waits for 04:30)
check(svc_start(), "the service starts again")
check(wait_for(lambda: "next scan in" in read_text(syslog).rsplit("started", 1)[-1], 15)
      is not None and svc_state() == "RUNNING",
      "and waits for the next run: " + read_text(syslog)[-400:])
check(msiexec("/x", winpath(MSI), "/qn") == 0, "msiexec /x /qn exits 0")
check(svc_state() == "NONE" and not service_key(), "the service is gone")
check(not os.path.exists(pf), "Program Files\\seekless is gone")
check(os.path.isfile(sysdb) and count(sysdb) == 20, "the index is kept, whole")
check("root = Z:%s\n" % tree in read_text(conf), "the configuration is kept")
check(os.path.isfile(syslog), "the service's log is kept")
rc, out, err = wine("reg", "query", ENVKEY, "/v", "Path")
check(rc == 0 and "seekless" not in out, "and the PATH is as it was: " + out)

# --- 3. the portable zip: the same files in one folder
unz = os.path.join(base, "zip")
with zipfile.ZipFile(ZIP) as z:
    z.extractall(unz)
top = os.listdir(unz)
check(top == ["seekless-%s-x64" % VERSION], "one folder in the zip: %r" % top)
port = os.path.join(unz, top[0]) if len(top) == 1 else unz
check(files_under(port) == installed, "the zip holds what the MSI installs: %r != %r"
      % (files_under(port), installed))
rc, out, err = seekless("--version")
version_ok("the build's seekless.exe", out)
rc, out, err = wine(os.path.join(port, "seekless.exe"), "--version")
version_ok("the zip's seekless.exe", out)
zdb = os.path.join(base, "zip.db")
rc, out, err = wine(os.path.join(port, "seekless.exe"), "scan", "--db", winpath(zdb), winpath(other))
check(rc == 0 and os.path.isfile(zdb) and count(zdb) == 12,
      "a scan with the zip's seekless.exe: %d %s %s" % (rc, out, err))

shutil.rmtree(base, ignore_errors=True)
shutil.rmtree(pdata, ignore_errors=True)
done()
