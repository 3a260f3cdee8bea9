"""--background on the emulated disk: every thread of the scan runs in the
idle I/O class, at nice 19 and SCHED_IDLE; with the disk to itself it
never waits; when another process reads the same disk it steps aside
(pauses and time waited reported and stored), and still indexes everything.
The other process's read times are docs/benchmarks.md material, not
asserted here."""
import os
import re
import subprocess
import time

from lib import BIN, HddSim, check, db_rows, done, export, mkcorpus, regular_files, tempdir

disk = HddSim("bg%d" % os.getpid())
name, sh = disk.name, disk.sh
SCHED_IDLE = 5


PF_EXITING = 0x4  # include/linux/sched.h: set by do_exit before it drops the I/O context


def read_stat(pid, tid):
    """(flags, nice, policy) from the thread's stat, None once it is gone."""
    try:
        stat = open("/proc/%d/task/%s/stat" % (pid, tid)).read()
    except (FileNotFoundError, ProcessLookupError):
        return None
    fields = stat[stat.rindex(")") + 2:].split()
    return int(fields[6]), int(fields[16]), int(fields[38])


def thread_state(pid, tid):
    """(ionice class, nice, policy) of one live thread; None once it is gone
    or on its way out.

    A thread on its way out has already dropped its I/O context (do_exit
    frees it before the thread leaves /proc), so ioprio_get answers "none"
    for it while nice and policy still read right.  CI caught exactly that
    twice; a second look 50 ms later was not enough, because a SCHED_IDLE
    thread on a loaded machine can take longer than that to finish exiting.
    do_exit sets PF_EXITING before it drops the context, so a thread whose
    stat shows no PF_EXITING after ionice answered had its context then."""
    before = read_stat(pid, tid)
    if before is None or before[0] & PF_EXITING:
        return None
    p = subprocess.run(["ionice", "-p", tid], capture_output=True, text=True)
    after = read_stat(pid, tid)
    if p.returncode != 0 or after is None or after[0] & PF_EXITING:
        return None
    return (p.stdout.strip(), after[1], after[2])


def thread_states(pid):
    """(tid, ionice class, nice, policy) of every live thread of pid."""
    out = []
    try:
        tids = os.listdir("/proc/%d/task" % pid)
    except FileNotFoundError:
        return out
    for tid in tids:
        s = thread_state(pid, tid)
        if s is not None:
            out.append((tid,) + s)
    return out


def summary(out):
    m = re.search(r"background: (.*); waited ([0-9.]+) s for other I/O \((\d+) pauses\)", out)
    return (m.group(1), float(m.group(2)), int(m.group(3))) if m else None


try:
    mnt = sh("up", name, "ext4", "700M").strip().splitlines()[-1]
    sh("latency", name, "off")
    root = os.path.join(mnt, "photos")
    mkcorpus(root, "--files", 1500, "--median", "60k", "--seed", 21)
    other = os.path.join(mnt, "user-file")
    subprocess.run(["dd", "if=/dev/urandom", "of=" + other, "bs=1M", "count=160"],
                   check=True, capture_output=True)
    files = regular_files(root)
    sh("remount", name)
    sh("latency", name, "on")

    with tempdir("bg", base="/dev/shm") as work:
        db = os.path.join(work, "i.db")
        # 1. alone on the disk; fs order keeps it busy long enough to look
        p = subprocess.Popen([BIN, "scan", "--background", "--order", "fs", "--jobs", "2",
                              "--db", db, root], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True)
        seen = {}
        t0 = time.monotonic()
        while p.poll() is None and time.monotonic() - t0 < 60:
            for tid, io, nice, policy in thread_states(p.pid):
                seen[tid] = (io, nice, policy)
            time.sleep(0.1)
        out, err = p.communicate()
        check(p.returncode == 0, "background scan ok: %s" % err[-300:])
        # main + 2 extractors + 1 reader
        check(len(seen) >= 4, "saw the scan's threads: %d" % len(seen))
        bad = {t: s for t, s in seen.items() if s != ("idle", 19, SCHED_IDLE)}
        check(not bad, "every thread idle I/O, nice 19, SCHED_IDLE: %s" % bad)
        s = summary(out)
        check(s is not None and "I/O class idle" in s[0], "summary line: %s" % out)
        check(s is not None and s[2] == 0, "alone on the disk it never waited: %s" % (s,))
        check(len(export(db)) == len(files), "everything indexed")

        # 2. someone else reads the same disk meanwhile
        sh("remount", name)
        p = subprocess.Popen([BIN, "scan", "--background", "--full", "--order", "fs", "--db", db,
                              root], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        # once it is reading (stores what it read), not after a fixed
        # delay: its threads are SCHED_IDLE, and on a busy machine they may
        # not have run at all a second later
        deadline = time.monotonic() + 60
        while p.poll() is None and time.monotonic() < deadline:
            if db_rows(db, "SELECT count(*) FROM files WHERE last_scan > 1")[0][0]:
                break
            time.sleep(0.05)
        t = time.monotonic()
        subprocess.run(["dd", "if=" + other, "of=/dev/null", "bs=1M", "iflag=direct"],
                       check=True, capture_output=True)
        dd_s = time.monotonic() - t
        out, err = p.communicate()
        check(p.returncode == 0, "background scan ok: %s" % err[-300:])
        s = summary(out)
        print("user read 160 MB in %.2f s while the scan ran; scan: %s" % (dd_s, s))
        # at least one whole pause step (YD_PAUSE, 0.2 s).  On a machine whose
        # cores are busy, its SCHED_IDLE threads may run only near the end of
        # the user's read, and then one step is all there is to see
        check(s is not None and s[2] >= 1 and s[1] >= 0.2, "it stepped aside: %s" % (s,))
        rows = db_rows(db, "SELECT background, yield_s FROM scans ORDER BY id DESC LIMIT 1")
        check(rows and rows[0][0] == 1 and rows[0][1] >= 0.2, "stored in scans: %s" % rows)
        check(len(export(db)) == len(files), "everything indexed again")

        # 3. a foreground scan has no such line and does not wait
        sh("remount", name)
        p = subprocess.run([BIN, "scan", "--full", "--db", db, root], capture_output=True,
                           text=True)
        check(p.returncode == 0 and summary(p.stdout) is None, "foreground: no background line")
        rows = db_rows(db, "SELECT background FROM scans ORDER BY id DESC LIMIT 1")
        check(rows == [(0,)], "stored as foreground: %s" % rows)
finally:
    disk.down()

done()
