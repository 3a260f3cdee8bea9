"""A mergerfs pool over two disks (ext4 and btrfs on loop devices): every
file is planned on the disk its branch lies on, one reader per disk, at the
position filefrag reports for the branch file (on btrfs taken through the
chunk map, as btrfs-progs reads it); plan --verify passes on both disks; a
scan records the pool's paths with the hashes xxhsum computes, a rescan
reads nothing, and a rename, an edit and a deletion through the pool are
seen as what they are.  An image on one branch takes its XMP sidecar from
the other; forgetting the sidecar's file system (`purge --file-system
--force`: it is mounted) removes that branch's records and the link with
them."""
import json
import os
import shutil
import subprocess
import tempfile

from lib import (btrfs_chunks, btrfs_device_offset, check, db_rows, done, export, filefrag, loop_fs,
                 mkcorpus, need_root, regular_files, run, skip, sync_fs, tempdir, xxh128)

need_root()
if shutil.which("mergerfs") is None:
    skip("mergerfs not installed")
if not os.path.exists("/dev/fuse"):
    skip("no /dev/fuse for mergerfs")

with loop_fs("ext4", 256) as a, loop_fs("btrfs", 256) as b, tempdir("mergerfs") as work:
    pool = tempfile.mkdtemp(prefix="seekless-pool-")
    # files spread at random over the branches; mergerfs wants 4 GiB free
    # on a branch by default, more than these disks have
    subprocess.run(["mergerfs", "-o", "category.create=rand,minfreespace=1M,cache.files=off",
                    "%s:%s" % (a.mnt, b.mnt), pool], check=True)
    try:
        root = os.path.join(pool, "photos")
        mkcorpus(root, "--files", 60, "--median", "60k", "--seed", 21)
        subprocess.run(["btrfs", "balance", "start", "-d", b.mnt], check=True,
                       capture_output=True)
        sync_fs(a.mnt, b.mnt)
        files = regular_files(root)
        on = {}
        for lfs in (a, b):
            for p in regular_files(os.path.join(lfs.mnt, "photos")):
                on[os.path.join(root, os.path.relpath(p, os.path.join(lfs.mnt, "photos")))] = \
                    (lfs, p)
        check(len(on) == len(files) and set(on) == set(files),
              "every pool file found on one branch: %d of %d" % (len(on), len(files)))
        na = sum(1 for v in on.values() if v[0] is a)
        check(0 < na < len(files), "files on both branches: %d and %d" % (na, len(files) - na))

        # --- the plan: a group per disk, branch positions ---------------
        code, out, err = run("plan", "--json", root, check_rc=0)
        plan = json.loads(out)
        groups = {d["name"]: d for d in plan["devices"]}
        for lfs, n in ((a, na), (b, len(files) - na)):
            g = groups.get(os.path.basename(lfs.loop))
            check(g is not None and g["files"] == n and g["order"] == "physical",
                  "%s: its %d files planned on %s in physical order: %s"
                  % (lfs.fstype, n, lfs.loop, g and (g["files"], g["reason"])))
        pools = [d for d in plan["devices"] if d["files"] == 0]
        check(all("pool (mergerfs)" in d["reason"] for d in pools),
              "the pool's own group says why it reads nothing: %s" % [d["reason"] for d in pools])
        chunks = btrfs_chunks(b.loop)
        agree = 0
        for f in plan["files"]:
            lfs, real = on[f["path"]]
            check(f["read_from"] == real and f["device"] == os.path.basename(lfs.loop),
                  "%s read from its branch %s on %s: %s" % (f["path"], real, lfs.loop, f))
            phys, count = filefrag(real)
            if lfs is b:
                phys = btrfs_device_offset(chunks, phys)
            agree += phys == f["phys_offset"]
        check(agree == len(files), "positions equal filefrag's on the branches: %d of %d"
              % (agree, len(files)))

        # --- verify: both disks -----------------------------------------
        code, out, err = run("plan", "--verify", "--json", root, check_rc=0)
        doc = json.loads(out)
        check(len(doc["verify"]) == 2 and doc["exit"] == 0 and
              sum(g["verified"] for g in doc["verify"]) == len(files),
              "verify: every file on both disks: %s" % doc["verify"])

        # --- scan, rescan, changes through the pool ----------------------
        db = os.path.join(work, "index.db")
        code, out, err = run("scan", "--db", db, root, check_rc=0)
        recs = {r["path"]: r for r in export(db)}
        hashes = xxh128(files)
        check(set(recs) == set(files), "records carry the pool's paths")
        check(all(recs[p]["content_hash"] == hashes[p] for p in files),
              "hashes equal xxhsum's of the pool files")
        check("device %s" % os.path.basename(a.loop) in out and
              "device %s" % os.path.basename(b.loop) in out, "both disks read: %s" % out)
        code, out, err = run("scan", "--db", db, root, check_rc=0)
        check("0 changed, 0 new, 0 moved" in out and "ok: 0 files" in out,
              "a rescan reads nothing: %s" % out)
        moved, edited, gone = files[0], files[1], files[2]
        os.rename(moved, moved + ".renamed.jpg")
        with open(edited, "ab") as f:
            f.write(b"edited")
        os.unlink(gone)
        sync_fs(a.mnt, b.mnt)
        code, out, err = run("scan", "--db", db, root, check_rc=0)
        check("1 changed, 0 new, 1 moved or renamed" in out and
              "1 files no longer present marked deleted" in out,
              "rename, edit and deletion seen: %s" % out)
        recs = {r["path"]: r for r in export(db)}
        check(recs.get(moved + ".renamed.jpg", {}).get("content_hash") == hashes[moved],
              "the renamed file keeps its record")
        check(recs.get(edited, {}).get("content_hash") == xxh128([edited])[edited],
              "the edited file rehashed")
        check(moved not in recs, "the renamed file's old path is gone")
        rows = db_rows(db, "SELECT path FROM files WHERE deleted_at IS NOT NULL")
        check(rows == [(gone,)], "the deleted file marked deleted: %s" % rows)

        # an image on one branch and its sidecar on the other, one folder in
        # the pool: linked; forgetting the sidecar's file system takes its
        # records and the link with them, in the same transaction
        for d in (a.mnt, b.mnt):
            os.makedirs(os.path.join(d, "photos", "pair"), exist_ok=True)
        shutil.copy(sorted(regular_files(root))[0],
                    os.path.join(a.mnt, "photos", "pair", "IMG_1.jpg"))
        with open(os.path.join(b.mnt, "photos", "pair", "IMG_1.xmp"), "w") as f:
            f.write('<x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF xmlns:rdf='
                    '"http://www.w3.org/1999/02/22-rdf-syntax-ns#"><rdf:Description '
                    'xmlns:xmp="http://ns.adobe.com/xap/1.0/" xmp:Rating="4"/></rdf:RDF>'
                    '</x:xmpmeta>')
        img = os.path.join(root, "pair", "IMG_1.jpg")
        side = os.path.join(root, "pair", "IMG_1.xmp")
        run("scan", "--db", db, "--quiet", root, check_rc=0)
        recs = {r["path"]: r for r in export(db)}
        check(recs[img]["sidecar"] == side and recs[img]["rating"] == 4,
              "the image takes its sidecar from the other branch: %s" % recs[img]["sidecar"])
        ident_b = db_rows(db, "SELECT s.ident FROM files f JOIN filesystems s ON s.id = f.fs_id"
                              " WHERE f.path = ?", (side,))[0][0]
        on_b = db_rows(db, "SELECT count(*) FROM files f JOIN filesystems s ON s.id = f.fs_id"
                           " WHERE s.ident = ?", (ident_b,))[0][0]
        # the branch is mounted: its records are of files that are there
        rc, out, err = run("purge", "--db", db, "--file-system", ident_b)
        check(rc == 2 and "would remove %d records" % on_b in err,
              "not without --force: %d %s" % (rc, err))
        rc, out, err = run("purge", "--db", db, "--file-system", ident_b, "--force", "--json",
                           check_rc=0)
        check(json.loads(out)["removed"] == on_b and json.loads(out)["present"] is True,
              "the branch's records removed: %s" % out)
        recs = {r["path"]: r for r in export(db)}
        check(side not in recs and recs[img]["sidecar"] is None and recs[img]["rating"] is None,
              "the image lost the link with the sidecar's record: %s" % recs.get(img))
        check(db_rows(db, "SELECT sidecar_id FROM files WHERE path = ?", (img,)) == [(None,)],
              "and no stored link points at a record that is gone")
    finally:
        subprocess.run(["umount", pool])
        os.rmdir(pool)
done()
