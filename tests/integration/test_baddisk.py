"""A disk with unreadable sectors: ext4 on the emulated disk (hddsim under a
loop device), where chosen byte ranges of the disk fail to read with EIO,
as a failing drive's sectors do; the kernel, the loop driver and ext4 pass
the error up as they would from real hardware.

Three small photos lose their first block, a 20 MiB file (read in chunks)
a block in its middle.  The scan must record exactly those four with an
I/O error, read every other file right (hashes from xxhsum, taken before),
exit 1, and leave an index that passes its integrity check.  Once the
sectors read again, the next scan rereads exactly those four and clears
their errors.

A directory's own block goes bad: the rescan cannot list it, says so,
exits 1, and marks none of its files deleted (they are unknown, not gone);
once it reads again, nothing has changed.

Then the disk stops answering in the middle of the tree: a read that never
returns.  After 30 s the scan says which read it is waiting for; SIGTERM
must still end it (exit 4, the message naming the disk), with what was
read stored and the index intact; when the disk answers again, the next
scan completes the index.

Last, a file with three names on a bad sector: the first scan reads it once
(one I/O error, two names told they were not read), the next reads each
name on its own (each with the disk's error), and once the sector reads
again every name gets its hash."""
import os
import random
import re
import signal
import subprocess
import threading
import time

from lib import (BIN, HddSim, check, db_rows, done, export, mkcorpus, regular_files, run,
                 tempdir, xxh128)

disk = HddSim("bad%d" % os.getpid())
name, sh = disk.name, disk.sh
BLOCK = 4096


def physical(path, logical, block=False):
    """The disk byte that holds a file's byte `logical`, from filefrag -v
    (which asks FIEMAP itself; seekless is not the oracle here); with
    block, also the file system's block size (1 kB on one this small)."""
    out = subprocess.run(["filefrag", "-v", path], capture_output=True, text=True,
                         check=True).stdout
    bs = int(re.search(r"blocks? of (\d+) bytes", out).group(1))
    for m in re.finditer(r"^\s*\d+:\s+(\d+)\.\.\s*(\d+):\s+(\d+)\.\.", out, re.M):
        lo, hi, phys = (int(g) for g in m.groups())
        if lo * bs <= logical < (hi + 1) * bs:
            at = phys * bs + logical - lo * bs
            return (at, bs) if block else at
    check(False, "no extent of %s holds byte %d: %s" % (path, logical, out))
    return 0


def scan(db, root):
    """(rc, out, err, (unchanged, read again: changed or retried, new))."""
    rc, out, err = run("scan", "--db", db, "--mem", "8M", root)
    m = re.search(r"index\s+(\d+) unchanged \(not read\), (\d+) changed, (\d+) new", out)
    r = re.search(r"(\d+) unchanged files? read again: (its|their) records? had an error", out)
    counts = None
    if m:
        counts = (int(m.group(1)), int(m.group(2)) + (int(r.group(1)) if r else 0),
                  int(m.group(3)))
    return rc, out, err, counts


try:
    mnt = sh("up", name, "ext4", "300M").strip().splitlines()[-1]
    sh("latency", name, "off")  # only the errors matter here, not the timing
    # The loop driver fails a whole request when the emulator refuses it,
    # where a real disk's driver fails only the part at and after the bad
    # sector and keeps readahead's failures away from other reads merged
    # with it.  Without merges, each request is one file's.
    loop = open(os.path.join(disk.state, name, "loop")).read().strip()
    with open("/sys/block/%s/queue/nomerges" % os.path.basename(loop), "w") as f:
        f.write("2")
    root = os.path.join(mnt, "photos")
    mkcorpus(root, "--files", 120, "--median", "30k", "--seed", 21)
    big = os.path.join(root, "big.raw")
    with open(big, "wb") as f:
        f.write(random.Random(5).randbytes(20 << 20))
    files = sorted(regular_files(root))
    want = xxh128(files)
    sh("remount", name)

    victims = [p for p in files if p != big and os.path.getsize(p) > 2 * BLOCK][10:13]
    for p in victims + [big]:
        sh("bad", name, str(physical(p, 10 << 20 if p == big else 0)), str(BLOCK))
    victims.append(big)
    sh("remount", name)  # nothing of the victims stays in the page cache
    if os.environ.get("BADDISK_DEBUG"):
        sh("trace", name, "/tmp/baddisk-trace.txt")

    with tempdir("bad") as work:
        db = os.path.join(work, "i.db")
        rc, out, err, counts = scan(db, root)
        check(rc == 1, "exit 1: finished, some files unreadable (%d): %s" % (rc, err[-500:]))
        check(counts == (0, 0, len(files)), "every file has a record: %s" % (counts,))
        recs = {r["path"]: r for r in export(db)}
        check(sorted(recs) == files, "no file lost")
        failed = sorted(p for p, r in recs.items() if r["error"])
        if os.environ.get("BADDISK_DEBUG"):
            for p in failed:
                print(p, recs[p]["error"], subprocess.run(["filefrag", "-v", "-b4096", p],
                      capture_output=True, text=True).stdout)
            print(sh("stats", name))
        check(failed == sorted(victims), "exactly the files on bad sectors failed: %s" % failed)
        for p in victims:
            e = recs[p]["error"] or ""
            check("Input/output error" in e, "%s: an I/O error: %s" % (os.path.basename(p), e))
            check(recs[p]["content_hash"] is None, "no hash for a file not read whole")
            check(recs[p]["size"] == os.path.getsize(p), "its size from stat")
        wrong = [p for p in files if p not in victims and recs[p]["content_hash"] != want[p]]
        check(not wrong, "every other file read right: %s" % wrong[:3])
        check(db_rows(db, "PRAGMA integrity_check") == [("ok",)], "index intact")
        st = dict(line.split(" ", 1) for line in sh("stats", name).splitlines())
        check(int(st["bad_reads"]) >= len(victims), "the disk refused reads: %s" % st)

        # the sectors read again (a remapped or recovered drive): the next
        # scan rereads the four, and only them
        sh("bad", name, "clear")
        sh("remount", name)
        rc, out, err, counts = scan(db, root)
        check(rc == 0, "clean rescan: %d %s" % (rc, err[-300:]))
        check(counts == (len(files) - len(victims), len(victims), 0),
              "the failed files are read again, the rest not: %s" % (counts,))
        recs = {r["path"]: r for r in export(db)}
        check(all(recs[p]["error"] is None and recs[p]["content_hash"] == want[p]
                  for p in victims), "their errors are gone, their hashes right")

        # a directory that cannot be read: its files are not lost
        folder = os.path.dirname(victims[0])
        inside = [p for p in files if p.startswith(folder + "/")]
        at, bs = physical(folder, 0, block=True)
        sh("bad", name, str(at), str(bs))  # that directory's first block only
        # the device held open across the remount, as udev's probe after an
        # unmount may hold it: the remount must still leave no cached copy
        # of the block (and bad_reads below says whether the disk was asked)
        loop = open(os.path.join(disk.state, name, "loop")).read().strip()
        held = os.open(loop, os.O_RDONLY)
        try:
            sh("remount", name)
        finally:
            os.close(held)
        before = int(dict(line.split(" ", 1) for line in sh("stats", name).splitlines())
                     ["bad_reads"])
        rc, out, err, counts = scan(db, root)
        after = int(dict(line.split(" ", 1) for line in sh("stats", name).splitlines())
                    ["bad_reads"])
        # the remount emptied every cache of that block (hddsim.sh: the
        # loop device's too), so the listing had to ask the disk
        check(after > before, "the directory's block was asked of the disk: bad reads %d -> %d"
              % (before, after))
        check(rc == 1 and "readdir: Input/output error" in out + err,
              "the unlistable directory is reported: %d %s %s" % (rc, out[-600:], err[-300:]))
        check("missing files not marked deleted: 1 directories could not be read" in out,
              "and deletions are not guessed: " + out)
        left = {r["path"] for r in export(db)}
        check(all(p in left for p in inside) and len(inside) >= 3,
              "its %d files keep their records" % len(inside))
        check(db_rows(db, "SELECT count(*) FROM files WHERE deleted_at IS NOT NULL") == [(0,)],
              "nothing marked deleted")
        sh("bad", name, "clear")
        sh("remount", name)
        rc, out, err, counts = scan(db, root)
        check(rc == 0 and counts == (len(files), 0, 0),
              "readable again: nothing changed: %d %s\n%s\n%s" % (rc, counts, out, err[-600:]))

        # a disk that stops answering halfway through the physical order
        by_place = sorted((physical(p, 0), p) for p in files if p != big)
        at, held = by_place[len(by_place) // 2]
        sh("stall", name, str(at), str(BLOCK))
        sh("remount", name)
        db2 = os.path.join(work, "stall.db")
        proc = subprocess.Popen([BIN, "scan", "--db", db2, "--mem", "8M", root],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.time() + 60
        stalled = 0
        while time.time() < deadline and proc.poll() is None and not stalled:
            time.sleep(0.2)
            st = dict(line.split(" ", 1) for line in sh("stats", name).splitlines())
            stalled = int(st["stalled_now"])
        check(stalled and proc.poll() is None, "the scan waits on the read that does not return")
        # the warning comes after 30 s: wait for the line itself, not for
        # a time (a reader thread gathers stderr as it comes)
        warned = threading.Event()
        lines = []

        def gather():
            for line in proc.stderr:
                lines.append(line)
                if "so far (a failing disk?)" in line:
                    warned.set()

        reader = threading.Thread(target=gather, daemon=True)
        reader.start()
        check(warned.wait(120), "a warning while the read is held: " + "".join(lines)[-400:])
        t0 = time.time()
        proc.send_signal(signal.SIGTERM)
        try:
            out = proc.stdout.read() if proc.wait(timeout=60) is not None else ""
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
            out = proc.stdout.read()
        reader.join()
        err = "".join(lines)
        took = time.time() - t0
        print("SIGTERM to exit with a read held: %.1f s" % took)
        check(proc.returncode == 4, "one SIGTERM ends it, exit 4 (%s): %s" %
              (proc.returncode, err[-400:]))
        check("did not return 10 s after the stop" in err, "it says why: " + err[-400:])
        check(re.search(r"%s: a read on loop\d+ has taken 3\d s so far \(a failing disk\?\)"
                        % re.escape(held), err), "it said so while waiting: " + err[-400:])
        check(db_rows(db2, "PRAGMA integrity_check") == [("ok",)], "index intact")
        rows = db_rows(db2, "SELECT status, message FROM scans")
        check(len(rows) == 1 and rows[0][0] == "interrupted" and "did not return" in rows[0][1],
              "recorded as interrupted, with the reason: %s" % rows)
        stored = db_rows(db2, "SELECT path, content_hash FROM files")
        check(len(stored) > 10 and held not in dict(stored),
              "what was read before the stuck file is stored (%d files)" % len(stored))
        check(all(h == want[p] for p, h in stored), "and stored right")
        sh("stall", name, "clear")
        rc, out, err, counts = scan(db2, root)
        check(rc == 0 and counts == (len(stored), 0, len(files) - len(stored)),
              "the next scan completes the index: %d %s" % (rc, counts))
        check(sorted(r["path"] for r in export(db2)) == files, "every file there")

        # a file with three names on a bad sector: read once, under its
        # first name, it fails, and the other names are told they were not
        # read.  The next scan reads each name whose record holds an error
        # on its own, so every name gets the disk's own error (joined
        # again, two would carry the second-hand one forever); once the
        # sector reads again, every name has the bytes xxh128sum read.
        ldir = os.path.join(mnt, "linked")
        os.mkdir(ldir)
        names = [os.path.join(ldir, n) for n in ("a.jpg", "b.jpg", "c.jpg")]
        with open(names[0], "wb") as f:
            f.write(random.Random(9).randbytes(3 * BLOCK))
        for n in names[1:]:
            os.link(names[0], n)
        lwant = xxh128(names)
        sh("remount", name)
        sh("bad", name, str(physical(names[0], 0)), str(BLOCK))
        sh("remount", name)
        db3 = os.path.join(work, "links.db")

        def link_errors(what):
            rc, out, err, counts = scan(db3, ldir)
            check(rc == 1, "%s: exit 1 (%d) %s" % (what, rc, err[-300:]))
            return {os.path.basename(r["path"]): r["error"] for r in export(db3)}

        errs = link_errors("hard links, first scan")
        check(sum("Input/output error" in (e or "") for e in errs.values()) == 1 and
              sum("joined with" in (e or "") for e in errs.values()) == 2,
              "read once: one I/O error, two names not read: %s" % errs)
        errs = link_errors("hard links, next scan")
        check(all("Input/output error" in (e or "") for e in errs.values()),
              "each name read on its own, each with the disk's error: %s" % errs)
        sh("bad", name, "clear")
        sh("remount", name)
        rc, out, err, counts = scan(db3, ldir)
        recs = {r["path"]: r for r in export(db3)}
        check(rc == 0 and all(recs[p]["error"] is None and recs[p]["content_hash"] == lwant[p]
                              for p in names),
              "readable again: every name has its hash: %d %s" % (rc, err[-300:]))
finally:
    subprocess.run(["bash", disk.script, "stall", name, "clear"], env=disk.env,
                   capture_output=True)
    disk.down()

done()
