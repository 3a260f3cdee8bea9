"""tmpfs has no extent map: physical falls back to inode order and says
why; auto does the same; a scan still stores every file."""
import json
import os

from lib import check, done, export, mkcorpus, regular_files, run, tempdir, db_rows

if not os.path.isdir("/dev/shm"):
    from lib import skip
    skip("no /dev/shm")

with tempdir("tmpfs", base="/dev/shm") as work:
    root = os.path.join(work, "photos")
    mkcorpus(root, "--files", 40, "--median", "20k", "--no-sync")
    files = regular_files(root)
    for order in ("physical", "auto"):
        rc, out, err = run("plan", "--order", order, "--json", root, check_rc=0)
        plan = json.loads(out)
        dev = plan["devices"][0]
        check(dev["order"] == "inode", "%s falls back to inode: %s" % (order, dev))
        check(dev["extents"] is False, "no extents on tmpfs")
        check(dev["rotational"] is None, "tmpfs has no disk")
        check("no extent map on tmpfs" in dev["reason"], "reason names tmpfs: " + dev["reason"])
        if order == "physical":
            check("fell back to inode order" in dev["reason"], "reason says fallback")
        check(dev["file_systems"][0]["extents_error"] is not None, "the FIEMAP error is given")
        inodes = [f["inode"] for f in plan["files"]]
        check(inodes == sorted(inodes), "files in inode order")
        check(all(f["phys_offset"] is None and f["fragments"] is None for f in plan["files"]),
              "no positions")
        check(all(f["placement"] == "no-extent-map" for f in plan["files"]), "placement")
    rc, out, err = run("plan", "--order", "physical", root, check_rc=0)
    check("fell back to inode order" in out, "text plan gives the reason too")
    db = os.path.join(work, "i.db")
    rc, out, err = run("scan", "--db", db, root, check_rc=0)
    check("order inode" in out and "no extent map on tmpfs" in out, "summary: " + out)
    recs = export(db)
    check(len(recs) == len(files), "every file stored")
    check(all(r["content_hash"] and r["phys_offset"] is None for r in recs), "hashed, unplaced")
    check(db_rows(db, "SELECT order_used, extents FROM scan_devices") == [("inode", 0)],
          "scan_devices row")

done()
