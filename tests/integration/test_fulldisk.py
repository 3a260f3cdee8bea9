"""A real full disk: the index on a small tmpfs that fills up in the middle
of a scan.  The scan must stop cleanly (exit 3) and say what happened and
what to do; the database must pass its integrity check and keep what was
committed; after the file system grows, the next scan resumes: it does not
read again what was stored, and ends with exactly one row per file."""
import os
import re
import subprocess

from lib import BIN, check, db_rows, done, export, mkcorpus, need_root, regular_files, tempdir

need_root()
with tempdir("full", base="/dev/shm") as work:
    root = os.path.join(work, "photos")
    mkcorpus(root, "--files", 6000, "--median", "3k", "--seed", 5, "--no-sync")
    files = regular_files(root)
    # the disk: a third of what the whole index of the tree takes (measured
    # here, so that a schema that grows keeps the premise: the first
    # batches fit, the scan does not)
    probe = os.path.join(work, "probe.db")
    p = subprocess.run([BIN, "scan", "--quiet", "--jobs", "1", "--db", probe, root],
                       capture_output=True, text=True)
    check(p.returncode == 0, "the tree indexes: %s" % p.stderr[-300:])
    whole = sum(os.path.getsize(probe + x) for x in ("", "-wal") if os.path.exists(probe + x))
    small = os.path.join(work, "dbfs")
    os.makedirs(small)
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=%dk,mode=0700" % max(whole // 3 >> 10, 512),
                    "seekless-full", small], check=True)
    try:
        db = os.path.join(small, "index.db")
        p = subprocess.run([BIN, "scan", "--jobs", "1", "--db", db, root], capture_output=True,
                           text=True)
        print(p.stdout[-1500:], p.stderr[-1500:])
        check(p.returncode == 3, "a full disk is fatal: exit %d" % p.returncode)
        check("full" in p.stderr and "free space" in p.stderr,
              "the message says the disk is full and what to do: " + p.stderr[-400:])
        check(db_rows(db, "PRAGMA integrity_check") == [("ok",)], "the index is intact")
        stored = db_rows(db, "SELECT count(*) FROM files")[0][0]
        check(0 < stored < len(files), "part of the scan was kept: %d of %d" % (stored,
                                                                               len(files)))
        states = db_rows(db, "SELECT status FROM scans ORDER BY id")
        check(states[-1:] in ([("failed",)], [("running",)]),
              "the run is not recorded as complete: %r" % states)

        subprocess.run(["mount", "-o", "remount,size=64m", small], check=True)
        p = subprocess.run([BIN, "scan", "--jobs", "1", "--db", db, root], capture_output=True,
                           text=True)
        check(p.returncode == 0, "with space, the next scan completes: %s" % p.stderr[-400:])
        m = re.search(r"index\s+(\d+) unchanged", p.stdout)
        check(m is not None and int(m.group(1)) == stored,
              "it did not read again what was stored (%s of %d)" % (m and m.group(1), stored))
        check(db_rows(db, "PRAGMA integrity_check") == [("ok",)], "intact at the end")
        check(sorted(r["path"] for r in export(db)) == sorted(files),
              "exactly one live row per file")
    finally:
        subprocess.run(["umount", small])
done()
