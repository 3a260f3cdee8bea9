"""One scan per index: while a scan (or a purge) holds an index, a second
`seekless scan`, `scan --files-from` and `purge` are refused at once with
exit status 3 (docs: fatal, the index cannot be used now), one line that
names the process holding it, and change nothing; `purge --dry-run`, which
changes nothing, is answered.  Once the holder goes on, it finishes as if
alone.

The holder is held deterministically, not by timing: it runs under strace,
which delays its return from flock(2) (the only flock seekless makes: SQLite
locks with fcntl) far beyond anything this test waits for, and detaches on
SIGTERM (-I1), when the holder goes on.  The event waited for is the
kernel's: /proc/locks shows a write flock on the index's lock file held by
the holder's pid.  The references: that pid (the kernel's, and the child
this test started), sqlite3 on the index for what was changed, xxhsum for
the holder's records.  Held right after flock, the holder has not yet written
its pid into the lock file: the file still names the previous scan, a
process long gone, which is the wrong answer."""
import ctypes
import os
import re
import signal
import subprocess
import time

from lib import (BIN, check, db_rows, done, export, mkcorpus, need_root, regular_files, run,
                 skip, tempdir, xxh128)
from readorder import have_strace

need_root()  # strace's ptrace of a process that drops capabilities and sandboxes itself
if not have_strace():
    skip("no strace")

# strace -D runs as an orphaned grandchild: make this process the reaper of
# orphaned descendants, so that strace is waited for here and no zombie stays
PR_SET_CHILD_SUBREAPER = 36
libc = ctypes.CDLL(None, use_errno=True)
check(libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0, "prctl(PR_SET_CHILD_SUBREAPER)")


def flock_holders(path):
    """The pids holding a write flock on path, as the kernel lists them."""
    st = os.stat(path)
    want = (os.major(st.st_dev), os.minor(st.st_dev), st.st_ino)
    pids = []
    with open("/proc/locks") as f:
        for line in f:
            m = re.match(r"\d+: FLOCK\s+\S+\s+WRITE\s+(\d+)\s+([0-9a-f]+):([0-9a-f]+):(\d+)\s",
                         line)
            if m and (int(m.group(2), 16), int(m.group(3), 16), int(m.group(4))) == want:
                pids.append(int(m.group(1)))
    return pids


class Held:
    """seekless ARGS under strace, stopped on its way out of flock(2).  With
    -D strace is a grandchild and seekless this process's own child, whose
    exit status Popen reads; strace, orphaned, is reaped here (the
    subreaper above)."""

    def __init__(self, lockfile, *args):
        self.proc = subprocess.Popen(
            ["strace", "-D", "-I1", "-f", "-qq", "-o", "/dev/null", "-e", "trace=flock",
             "-e", "inject=flock:delay_exit=3600s", BIN] + [str(a) for a in args],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        self.pid = self.proc.pid
        self.tracer = None
        self.status = None
        # the event: the kernel lists seekless's flock on the lock file.  The
        # deadline only turns a hang into a failure.
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline and self.proc.poll() is None:
            if os.path.exists(lockfile) and self.pid in flock_holders(lockfile):
                with open("/proc/%d/status" % self.pid) as f:
                    self.tracer = int(re.search(r"^TracerPid:\s+(\d+)", f.read(), re.M)
                                      .group(1)) or None
                check(self.tracer is not None, "held under strace")
                return
            time.sleep(0.01)
        self.pid = None
        check(False, "%s: the held process took the lock: exit %s" % (args[0], self.proc.poll()))

    def release(self):
        """Let it go on; its exit status and standard error."""
        if self.tracer:
            os.kill(self.tracer, signal.SIGTERM)
            os.waitpid(self.tracer, 0)
            self.tracer = None
        if self.proc.poll() is None and self.pid is None:
            self.proc.kill()
        _, err = self.proc.communicate()
        return self.proc.returncode, err


def refused(args, holder, db, what):
    rc, out, err = run(*args)
    lines = err.splitlines()
    check(rc == 3, "%s while %s holds the index: exit 3 (fatal), got %d: %r"
          % (args[0], what, rc, err))
    check(len(lines) == 1 and lines[0].startswith("seekless %s: " % args[0])
          and "pid %d)" % holder in lines[0] and db in lines[0],
          "%s: one line naming the holder's pid %d and the index: %r" % (args[0], holder, err))
    check(out == "", "%s refused: nothing on stdout: %r" % (args[0], out))
    # scans and purges take the same lock: the message may not say which
    # the holder is doing by guessing
    check(what != "a purge" or "scanning" not in err,
          "a purge holds it, and the message does not say it is scanning: %r" % err)


with tempdir("lock", base="/dev/shm") as work:
    root = os.path.join(work, "photos")
    mkcorpus(root, "--files", 24, "--median", "20k", "--seed", 48, "--no-sync")
    db = os.path.join(work, "i.db")
    lock = db + ".lock"
    run("scan", "--db", db, root, check_rc=0)
    gone = sorted(regular_files(root))[:2]
    for p in gone:
        os.unlink(p)
    run("scan", "--db", db, root, check_rc=0)
    mkcorpus(os.path.join(root, "new"), "--files", 3, "--median", "20k", "--seed", 49,
             "--no-sync")
    listed = os.path.join(work, "list")
    with open(listed, "w") as f:
        f.write(sorted(regular_files(root))[0] + "\n")

    def state():
        return (db_rows(db, "SELECT id, status FROM scans ORDER BY id"),
                db_rows(db, "SELECT path, deleted_at IS NOT NULL, last_scan FROM files"
                            " ORDER BY path"))

    check(db_rows(db, "SELECT count(*) FROM files WHERE deleted_at IS NOT NULL") == [(2,)],
          "two records marked deleted to purge")
    before = state()

    # --- a scan holds it --------------------------------------------------
    holder = Held(lock, "scan", "--phash-now", "--db", db, root)
    try:
        if holder.pid:
            check(flock_holders(lock) == [holder.pid], "the kernel names the holder alone")
            for args in (["scan", "--db", db, root],
                         ["scan", "--db", db, "--files-from", listed],
                         ["purge", "--db", db],
                         ["purge", "--db", db, "--older-than", "0", "--json"]):
                refused(args, holder.pid, db, "a scan")
            check(state() == before, "the refused commands changed nothing in the index")
            rc, out, err = run("purge", "--db", db, "--dry-run", "--json")
            check(rc == 0 and '"would_remove":2' in out,
                  "purge --dry-run changes nothing and is answered: %d %r %r" % (rc, out, err))
    finally:
        status, err = holder.release()
    check(status == 0, "the held scan went on and finished: exit %s %r" % (status, err))
    files = sorted(regular_files(root))
    want = xxh128(files)
    recs = export(db)
    check(sorted(r["path"] for r in recs) == files and
          all(r["content_hash"] == want[r["path"]] for r in recs),
          "and indexed the tree as xxhsum reads it")
    rows = db_rows(db, "SELECT status FROM scans ORDER BY id")
    check(rows == [("ok",)] * 3, "three scans, all ok, none from the refused ones: %s" % rows)

    # --- a purge holds it -------------------------------------------------
    before = state()
    holder = Held(lock, "purge", "--db", db)
    try:
        if holder.pid:
            refused(["scan", "--db", db, root], holder.pid, db, "a purge")
            refused(["purge", "--db", db], holder.pid, db, "a purge")
            check(state() == before, "the refused commands changed nothing in the index")
    finally:
        status, err = holder.release()
    check(status == 0, "the held purge went on and finished: exit %s %r" % (status, err))
    check(db_rows(db, "SELECT count(*) FROM files WHERE deleted_at IS NOT NULL") == [(0,)],
          "and removed the two records of deleted files")

    # --- once the holder is gone, the index is free -------------------------
    check(flock_holders(lock) == [], "nobody holds the lock now")
    run("scan", "--db", db, root, check_rc=0)
    run("purge", "--db", db, check_rc=0)

done()
