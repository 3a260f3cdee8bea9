"""`purge --older-than DAYS` removes the records of files deleted more
than DAYS ago and keeps everything else (docs/usage.md: "forget files
deleted more than 30 days ago"; purge --help: "only records marked deleted
more than DAYS ago").  The age is the deletion's: a scan marks records
deleted (deleted_at, docs/schema.md), and this test moves those times
into the past with sqlite3, an hour on either side of the limit, far
beyond it, and near now; a live record made long ago, and a record deleted
just now of a file last changed long ago, must stay.  The index is read
back with sqlite3; --dry-run counts the same and removes nothing."""
import datetime
import json
import os
import sqlite3

from lib import check, db_rows, done, mkcorpus, regular_files, run, tempdir

with tempdir("age", base="/dev/shm") as work:
    root = os.path.join(work, "photos")
    mkcorpus(root, "--files", 12, "--median", "10k", "--seed", 5, "--no-sync")
    db = os.path.join(work, "i.db")
    run("scan", "--db", db, root, check_rc=0)
    files = sorted(regular_files(root))
    gone = files[:6]
    for p in gone:
        os.unlink(p)
    run("scan", "--db", db, root, check_rc=0)
    check(sorted(p for (p,) in db_rows(db, "SELECT path FROM files WHERE deleted_at IS NOT NULL"))
          == gone, "the scan marked the six deleted")

    now = datetime.datetime.now(datetime.timezone.utc)

    def ago(**kw):
        return (now - datetime.timedelta(**kw)).strftime("%Y-%m-%dT%H:%M:%SZ")

    # deletion ages, by record
    age = {gone[0]: ago(days=30, hours=1),    # just over 30 days
           gone[1]: ago(days=29, hours=23),   # just under 30 days
           gone[2]: ago(days=400),
           gone[3]: ago(days=2),
           gone[4]: None,                     # as the scan marked it: now
           gone[5]: None}
    con = sqlite3.connect(db)
    with con:
        for p, t in age.items():
            if t:
                con.execute("UPDATE files SET deleted_at = ? WHERE path = ?", (t, p))
        # old records otherwise: long-ago times everywhere but deleted_at
        con.execute("UPDATE files SET indexed_at = ?, mtime_ns = 946684800000000000",
                    (ago(days=3000),))
    con.close()
    live = files[6:]

    def left():
        return sorted(p for (p,) in db_rows(db, "SELECT path FROM files"))

    before = left()
    rc, out, err = run("purge", "--db", db, "--older-than", "30", "--dry-run", "--json",
                       check_rc=0)
    check(json.loads(out) == {"removed": 0, "dry_run": True, "would_remove": 2},
          "--dry-run --older-than 30 counts the two deleted more than 30 days ago: %s" % out)
    check(left() == before, "and removes nothing")

    rc, out, err = run("purge", "--db", db, "--older-than", "30", "--json", check_rc=0)
    check(json.loads(out) == {"removed": 2}, "--older-than 30 removes two: %s" % out)
    check(left() == sorted(live + [gone[1], gone[3], gone[4], gone[5]]),
          "those deleted 30 days and an hour and 400 days ago: left %s"
          % [os.path.basename(p) for p in sorted(set(files) - set(left()))])
    rc, out, err = run("purge", "--db", db, "--older-than", "30", "--json", check_rc=0)
    check(json.loads(out) == {"removed": 0}, "again: nothing more: %s" % out)

    rc, out, err = run("purge", "--db", db, "--older-than", "29", check_rc=0)
    check(out == "seekless purge: 1 records of deleted files removed\n",
          "--older-than 29: the one deleted 29 days and 23 hours ago: %r" % out)
    check(left() == sorted(live + [gone[3], gone[4], gone[5]]), "that one")

    rc, out, err = run("purge", "--db", db, "--older-than", "3", "--json", check_rc=0)
    check(json.loads(out) == {"removed": 0}, "--older-than 3: none of the younger: %s" % out)
    rc, out, err = run("purge", "--db", db, "--older-than", "0", "--json", check_rc=0)
    check(json.loads(out) == {"removed": 3}, "--older-than 0: every deleted one: %s" % out)
    check(left() == live, "the live records stay, however old")

    for bad in ("-1", "x", "1.5"):
        rc, out, err = run("purge", "--db", db, "--older-than", bad)
        check(rc == 2 and "--older-than" in err, "--older-than %s: usage error: %d %r"
              % (bad, rc, err))

done()
