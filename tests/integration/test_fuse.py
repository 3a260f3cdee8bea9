"""FUSE (bindfs over a local directory) has no extent map: physical falls
back to inode order, the reason names the file system and the error, and a
scan still stores every file with its hash; hard links there, seen by the
stat pass alone, are read once."""
import json
import os
import shutil
import subprocess

from lib import (check, db_rows, done, export, mkcorpus, need_root, regular_files, run, skip,
                 tempdir, xxh128)

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
        sums = xxh128(files)
        check(sorted(r["path"] for r in recs) == sorted(files), "every file stored")
        wrong = [(r["path"], r["content_hash"], sums.get(r["path"])) for r in recs
                 if r["content_hash"] != sums.get(r["path"])]
        check(not wrong, "every file hashed, as xxhsum -H2 hashes it over the mount: %s"
              % wrong[:3])

        # hard links, where no extent map is asked (the stat pass alone
        # sees the link count): a file with three names is read once, and
        # every name gets its bytes' hash (xxh128sum over the mount)
        ldir = os.path.join(src, "linked")
        os.mkdir(ldir)
        with open(os.path.join(ldir, "a.jpg"), "wb") as f:
            f.write(os.urandom(300000))
        for n in ("b.jpg", "c.jpg"):
            os.link(os.path.join(ldir, "a.jpg"), os.path.join(ldir, n))
        mlinked = os.path.join(mnt, "linked")
        names = regular_files(mlinked)
        check(len({os.stat(p).st_ino for p in names}) == 1 and os.stat(names[0]).st_nlink == 3,
              "bindfs shows one inode with three names")
        rc, out, err = run("plan", "--json", mlinked, check_rc=0)
        lp = json.loads(out)
        check(lp["joined"] == 2 and len(lp["files"]) == 1,
              "plan joins the three names: %s joined, %d listed" % (lp["joined"], len(lp["files"])))
        ldb = os.path.join(work, "links.db")
        run("scan", "--db", ldb, "--quiet", mlinked, check_rc=0)
        sums = xxh128(names)
        by = {r["path"]: r for r in export(ldb)}
        check(set(by) == set(names) and all(by[p]["content_hash"] == sums[p] for p in names),
              "every name has the file's hash")
        nread = db_rows(ldb, "SELECT bytes FROM scans ORDER BY id DESC LIMIT 1")[0][0]
        check(nread == 300000, "read once: %s bytes" % nread)
    finally:
        subprocess.run(["umount", mnt])

done()
