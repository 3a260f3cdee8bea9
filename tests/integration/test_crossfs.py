"""A file system mounted below a root: skipped by default (like find -xdev),
included with --cross-fs as its own device group with its own order."""
import itertools
import json
import os
import subprocess

from lib import check, done, export, mkcorpus, need_root, regular_files, run, skip, tempdir

need_root()

with tempdir("xfs") as work:
    root = os.path.join(work, "photos")
    mkcorpus(root, "--files", 20, "--median", "20k", "--no-sync")
    inner = os.path.join(root, "card")
    os.mkdir(inner)
    p = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64m", "tmpfs", inner],
                       capture_output=True, text=True)
    if p.returncode != 0:
        skip("cannot mount tmpfs: " + p.stderr.strip())
    try:
        mkcorpus(os.path.join(inner, "DCIM"), "--files", 10, "--median", "20k", "--no-sync",
                 "--seed", 3)
        outer_files = [f for f in regular_files(root) if not f.startswith(inner + "/")]
        all_files = regular_files(root)

        rc, out, err = run("plan", "--json", root, check_rc=0)
        plan = json.loads(out)
        check(len(plan["files"]) == len(outer_files), "mount point not descended: %d files"
              % len(plan["files"]))
        db = os.path.join(work, "i.db")
        rc, out, err = run("scan", "--db", db, root, check_rc=0)
        check("1 other file systems" in out, "summary counts the mount: " + out)

        rc, out, err = run("plan", "--cross-fs", "--json", root, check_rc=0)
        plan = json.loads(out)
        check(len(plan["files"]) == len(all_files), "--cross-fs includes the card")
        check(len(plan["devices"]) == 2, "two device groups: %s"
              % [d["name"] for d in plan["devices"]])
        card = [d for d in plan["devices"] if d["file_systems"][0]["fstype"] == "tmpfs"]
        check(len(card) == 1 and card[0]["order"] == "inode" and card[0]["files"] == 10,
              "the card is its own group, by inode: %s" % card)
        # files are listed group by group
        runs = [k for k, _ in itertools.groupby(f["device"] for f in plan["files"])]
        check(len(runs) == 2, "files listed device by device: %s" % runs)
        rc, out, err = run("scan", "--cross-fs", "--db", db, root, check_rc=0)
        check(len(export(db)) == len(all_files), "scan --cross-fs stores the card's files")
        check(out.count("  device ") == 2, "summary reports both devices: " + out)
    finally:
        subprocess.run(["umount", inner])

done()
