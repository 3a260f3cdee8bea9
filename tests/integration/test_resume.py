"""kill -9 at random moments: the index is never damaged and the next run
picks up where the last one stopped.  20 scans of a generated tree are
killed with SIGKILL at random times, incremental runs (inserting what is
not stored yet) taking turns with --full runs (rewriting stored rows), so
every run has work when it dies.  After each: PRAGMA integrity_check, no
path twice, every stored hash equals xxhsum's, nothing stored was lost.
Then an incremental scan that completes: it reads nothing already stored,
exactly one live row per file, every hash right, the killed runs recorded
as interrupted."""
import os
import random
import re
import signal
import sqlite3
import subprocess
import time

from lib import BIN, check, db_rows, done, export, mkcorpus, regular_files, tempdir, xxh128

RUNS = int(os.environ.get("SEEKLESS_RESUME_RUNS", "20"))

with tempdir("resume", base="/dev/shm") as work:
    root = os.path.join(work, "photos")
    mkcorpus(root, "--files", 8000, "--median", "30k", "--seed", 9, "--no-sync")
    files = regular_files(root)
    truth = xxh128(files)
    # Kill windows scale with how long a complete scan takes on this machine
    # (and under the sanitizers), so that runs die mid-scan everywhere.
    t0 = time.monotonic()
    subprocess.run([BIN, "scan", "--quiet", "--jobs", "1", "--db", os.path.join(work, "t.db"),
                    root], check=True, stdout=subprocess.DEVNULL)
    whole = time.monotonic() - t0
    db = os.path.join(work, "i.db")
    grew = 0
    rng = random.Random(1234)
    stored_before = 0
    killed = 0
    for i in range(RUNS):
        full = ["--full"] if i >= RUNS * 2 // 5 else []
        p = subprocess.Popen([BIN, "scan", "--quiet", "--jobs", "1", "--db", db] + full + [root],
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        if full:
            time.sleep(whole * rng.uniform(0.1, 0.9))
        else:
            # killed soon after it has stored something new: a fixed share
            # of a quiet scan's time can end before the first commit when
            # the machine is busy (CI runs two tests at once)
            deadline = time.monotonic() + 30 * whole + 10
            while p.poll() is None and time.monotonic() < deadline:
                time.sleep(0.01)
                try:
                    if os.path.exists(db) and db_rows(
                            db, "SELECT count(*) FROM files WHERE content_hash IS NOT NULL"
                            )[0][0] > stored_before:
                        break
                except sqlite3.OperationalError as e:
                    # no index yet, or its schema not made yet; anything
                    # else is a failure of its own
                    if not any(m in str(e) for m in ("no such table", "unable to open", "is locked")):
                        raise
            time.sleep(whole * rng.uniform(0, 0.03))
        if p.poll() is None:
            p.send_signal(signal.SIGKILL)
            killed += 1
        p.wait()
        if not os.path.exists(db):
            continue
        check(db_rows(db, "PRAGMA integrity_check") == [("ok",)], "run %d: integrity" % i)
        dup = db_rows(db, "SELECT count(*) - count(DISTINCT path) FROM files")
        check(dup == [(0,)], "run %d: no path twice" % i)
        rows = db_rows(db, "SELECT path, content_hash FROM files WHERE content_hash IS NOT NULL")
        bad = [p for p, h in rows if truth.get(p) != h]
        check(not bad, "run %d: stored hashes right (%d wrong)" % (i, len(bad)))
        check(len(rows) >= stored_before, "run %d: nothing stored was lost (%d < %d)"
              % (i, len(rows), stored_before))
        if not full and len(rows) > stored_before:
            grew += 1
        stored_before = len(rows)
    print("complete scan %.2f s; %d of %d runs killed; %d incremental runs added rows; "
          "%d of %d files stored before the last run"
          % (whole, killed, RUNS, grew, stored_before, len(files)))
    check(killed >= RUNS // 2, "most runs were killed mid-scan: %d" % killed)
    check(grew >= 2, "killed incremental runs committed work and the next went on: %d" % grew)

    p = subprocess.run([BIN, "scan", "--jobs", "1", "--db", db, root], capture_output=True,
                       text=True)
    check(p.returncode == 0, "final run completes: %s" % p.stderr[-300:])
    m = re.search(r"index\s+(\d+) unchanged", p.stdout)
    check(m and int(m.group(1)) == stored_before,
          "the final run did not read again what was stored: %s" % (m and m.group(1)))
    check(db_rows(db, "PRAGMA integrity_check") == [("ok",)], "integrity at the end")
    recs = export(db)
    check(sorted(r["path"] for r in recs) == sorted(files), "exactly one live row per file")
    check(all(truth[r["path"]] == r["content_hash"] for r in recs), "every hash right")
    states = dict(db_rows(db, "SELECT status, count(*) FROM scans GROUP BY status"))
    check(states.get("running", 0) == 0, "no scan left 'running': %s" % states)
    check(states.get("interrupted", 0) >= killed - 1, "killed runs recorded interrupted: %s"
          % states)

done()
