"""seekless stats: the counts agree with the records themselves (by
format, camera, year; errors; deleted), and the last scans list each
disk's order and speed, so a sorted and an unsorted run sit side by side;
--json gives the same as one document."""
import collections
import json
import os
import subprocess

from lib import BIN, check, done, export, mkcorpus, run, tempdir

with tempdir("stats", base="/dev/shm") as work:
    root = os.path.join(work, "photos")
    mkcorpus(root, "--files", 120, "--median", "20k", "--seed", 21, "--no-sync")
    with open(os.path.join(root, "broken.jpg"), "wb") as f:
        f.write(b"\xff\xd8\xff\xe1\x00\x10Exif\x00\x00II*\x00")
    db = os.path.join(work, "i.db")
    run("scan", "--db", db, "--order", "physical", root)
    run("scan", "--db", db, "--order", "fs", "--full", root)
    os.remove(os.path.join(root, "broken.jpg"))
    run("scan", "--db", db, root)
    recs = export(db)

    rc, out, err = run("stats", "--db", db, "--json", check_rc=0)
    s = json.loads(out)
    check(s["files"] == len(recs) and s["bytes"] == sum(r["size"] for r in recs),
          "totals: %d files" % s["files"])
    check(s["deleted"] == 1 and s["errors"] == sum(1 for r in recs if r["error"]),
          "deleted and errors: %r" % ((s["deleted"], s["errors"]),))
    fmts = collections.Counter(r["format"] or "(unknown)" for r in recs)
    check({f["name"]: f["files"] for f in s["formats"]} == dict(fmts), "by format")
    cams = collections.Counter(("%s %s" % (r["make"] or "", r["model"] or "")).strip()
                               for r in recs if r["make"] or r["model"])
    check({c["name"]: c["files"] for c in s["cameras"]} == dict(cams.most_common(20)),
          "by camera")
    years = collections.Counter((r["datetime_original"] or "(no date)")[:4]
                                if r["datetime_original"] else "(no date)" for r in recs)
    check({y["name"]: y["files"] for y in s["years"]} == dict(years), "by year")
    orders = [sc["order"] for sc in s["scans"]]
    check(orders == ["auto", "fs", "physical"], "the scans, newest first: %r" % orders)
    used = [d["order"] for sc in s["scans"][1:] for d in sc["devices"]]
    # tmpfs has no extent map: physical asked, inode order used, and stats
    # shows what was used
    check(used == ["fs", "inode"], "each disk's order: %r" % used)
    check(all(d["mb_per_s"] > 0 for sc in s["scans"][1:] for d in sc["devices"]),
          "speeds are given")

    rc, out, err = run("stats", "--db", db, "--scans", "2", check_rc=0)
    check("by format:" in out and "by camera" in out and "last scans" in out, "text: " + out)
    check(out.count("\n  #") == 2, "--scans 2 shows two")
    rc, out, err = run("purge", "--db", db, "--json", check_rc=0)
    check(json.loads(out) == {"removed": 1}, "purge --json: " + out)
    rc, out, err = run("stats", "--db", db, "--json", check_rc=0)
    check(json.loads(out)["deleted"] == 0, "purged")
    rc, out, err = run("stats", "--db", os.path.join(work, "none.db"))
    check(rc == 3 and "no index at" in err, "no index: %d %s" % (rc, err))
done()
