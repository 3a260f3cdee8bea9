"""FUSE (bindfs over a local directory) has no extent map: physical falls
back to inode order, the reason names the file system and the error, and a
scan still stores every file with its hash."""
import json
import os
import shutil
import subprocess

from lib import check, done, export, mkcorpus, need_root, regular_files, run, skip, tempdir

need_root()
if shutil.which("bindfs") is None:
    skip("bindfs not installed")
if not os.path.exists("/dev/fuse"):
    skip("no /dev/fuse")

with tempdir("fuse") as work:
    src = os.path.join(work, "src")
    mnt = os.path.join(work, "mnt")
    os.mkdir(mnt)
    mkcorpus(src, "--files", 25, "--median", "20k", "--no-sync")
    p = subprocess.run(["bindfs", src, mnt], capture_output=True, text=True)
    if p.returncode != 0:
        skip("bindfs failed: " + p.stderr.strip())
    try:
        files = regular_files(mnt)
        rc, out, err = run("plan", "--order", "physical", "--json", mnt, check_rc=0)
        dev = json.loads(out)["devices"][0]
        fs = dev["file_systems"][0]
        check(fs["fstype"].startswith("fuse"), "fstype: %s" % fs)
        check(fs["extents"] is False and fs["extents_error"], "extent map refused: %s" % fs)
        check(dev["order"] == "inode", "falls back to inode: %s" % dev["reason"])
        check("no extent map on fuse" in dev["reason"] and "fell back to inode order"
              in dev["reason"], "reason: " + dev["reason"])
        db = os.path.join(work, "i.db")
        rc, out, err = run("scan", "--db", db, mnt, check_rc=0)
        recs = export(db)
        check(len(recs) == len(files) and all(r["content_hash"] for r in recs),
              "every file stored and hashed")
    finally:
        subprocess.run(["umount", mnt])

done()
