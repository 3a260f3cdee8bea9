"""What seekless read, and in which order, as the kernel saw it: the
command runs under strace -f -y, and the files below a folder are listed
in the order of the first read of their bytes (pread64, preadv, read on a
descriptor strace names).  seekless's own output is not consulted."""
import os
import re
import subprocess
import tempfile

from lib import BIN

READ = re.compile(r"^\d+\s+(?:pread64|preadv2?|read)\(\d+<([^>]*)>", re.M)


def traced(args, under, trace=(), input=None, env=None, cwd=None):
    """Run seekless ARGS under strace; returns (rc, stdout, stderr, order,
    log): order the files below `under` in the order first read, log
    strace's whole record (with trace: more system calls in it).  A scan
    makes every perceptual hash (--phash-now), as lib.run's do."""
    args = [str(a) for a in args]
    if args and args[0] == "scan" and "--phash-now" not in args:
        args.insert(1, "--phash-now")
    env = strace_env(env)
    fd, log = tempfile.mkstemp(prefix="seekless-strace-", suffix=".log")
    os.close(fd)
    try:
        p = subprocess.run(["strace", "-f", "-qq", "-y", "-s", "0", "-o", log,
                            "-e", "trace=" + ",".join(("pread64", "preadv", "preadv2", "read")
                                                      + tuple(trace)),
                            BIN] + args, input=input, capture_output=True,
                           text=not isinstance(input, bytes), env=env, cwd=cwd)
        with open(log, errors="replace") as f:
            text = f.read()
    finally:
        os.unlink(log)
    prefix = under.rstrip("/") + "/"
    order, seen = [], set()
    for path in READ.findall(text):
        if path.startswith(prefix) and path not in seen:
            seen.add(path)
            order.append(path)
    return p.returncode, p.stdout, p.stderr, order, text


def strace_env(env=None):
    """The environment for seekless under strace: in an ASan build the leak
    check at exit (LeakSanitizer) stops the process's threads with ptrace,
    which fails in a process strace already traces; leaks are the other
    runs' to find."""
    env = dict(os.environ if env is None else env)
    opts = env.get("ASAN_OPTIONS", "")
    env["ASAN_OPTIONS"] = (opts + ":" if opts else "") + "detect_leaks=0"
    return env


def have_strace():
    return subprocess.run(["strace", "-V"], capture_output=True).returncode == 0
