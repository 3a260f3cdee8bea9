"""Helpers for the Windows tests: run the cross-built seekless.exe under
Wine from the Linux side, and translate paths (Wine shows the host's / as
drive Z:).  tools/win/cross-build.sh starts the wineserver these rely on."""
import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "integration"))
from lib import check, done, skip, xxh128  # noqa: E402,F401

EXE = os.environ.get("SEEKLESS_EXE", "")
MKCORPUS = os.environ.get("MKCORPUS_BIN", "")
ENV = dict(os.environ, WINEDEBUG="-all")


def winpath(p):
    """Host path -> the same file as Windows programs under Wine see it."""
    return "Z:" + os.path.abspath(p).replace("/", "\\")


def ourpath(p):
    """Host path -> the form seekless stores: drive letter, '/' separators."""
    return "Z:" + os.path.abspath(p)


def wine(*args, timeout=120):
    """Run a Windows program (seekless.exe unless args[0] names another);
    returns (rc, stdout, stderr) with Wine's own noise removed."""
    cmd = ["wine"] + [str(a) for a in args]
    p = subprocess.run(cmd, capture_output=True, text=True, env=ENV, timeout=timeout,
                       errors="replace")
    err = "\n".join(l for l in p.stderr.splitlines()
                    if not l.startswith("wine: ") and "fixme:" not in l)
    return p.returncode, p.stdout, err


def seekless(*args, timeout=120):
    return wine(EXE, *args, timeout=timeout)


def need_tools():
    if not EXE or not os.path.exists(EXE):
        skip("SEEKLESS_EXE (the cross-built seekless.exe) not found")
    if not MKCORPUS or not os.path.exists(MKCORPUS):
        skip("MKCORPUS_BIN (the host's mkcorpus) not found")


def tmpdir(tag):
    return tempfile.mkdtemp(prefix="seekless-win-%s-" % tag)


def corpus(dest, files, seed=1, median="40k"):
    subprocess.run([MKCORPUS, "--files", str(files), "--median", median, "--seed", str(seed),
                    "--no-sync", dest], check=True, capture_output=True)


def prefix_path(*parts):
    """A path inside the Wine prefix's C: drive, as the host sees it."""
    return os.path.join(os.environ.get("WINEPREFIX", os.path.expanduser("~/.wine")),
                        "drive_c", *parts)


def read_text(path):
    """A file's text as it is now ('' while it does not exist yet)."""
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read()
    except FileNotFoundError:
        return ""


def wait_for(pred, timeout, step=0.1):
    """Seconds until pred() held, or None after timeout seconds."""
    t0 = time.time()
    while time.time() - t0 < timeout:
        if pred():
            return time.time() - t0
        time.sleep(step)
    return None


def svc_state():
    """The service's state as `sc query` names it (RUNNING, STOPPED...), or
    NONE when there is no such service."""
    rc, out, _ = wine("sc", "query", "seekless")
    for line in out.splitlines():
        if "STATE" in line:
            return line.split()[-1]
    return "NONE"


def svc_start():
    """sc start; Wine's service manager may still be settling (after
    wineboot, or a service just deleted): retry a few times before calling
    it a failure.  Returns whether it runs."""
    for attempt in range(10):
        rc, out, err = wine("sc", "start", "seekless")
        if rc == 0 or svc_state() in ("RUNNING", "START_PENDING"):
            break
        print("sc start attempt %d: %d %s %s" % (attempt, rc, out.strip(), err.strip()))
        time.sleep(1)
    return check(rc == 0 or svc_state() == "RUNNING", "sc start: %d %s %s" % (rc, out, err))
