"""A real NTFS volume (mkntfs on a loop device, mounted by ntfs-3g as
fuseblk, which refuses FIEMAP): FIBMAP places every file.  Checked against
ntfsinfo, which reads the data runs off the raw volume: each file's first
byte is its first run's cluster, its fragment count the runs' (exactly when
the runs ascend, at most when they go back and forth, as documented in
scanner/extents.h); the plan is ascending; without CAP_SYS_RAWIO the plan
falls back to inode order and says why; a scan stores what the plan found."""
import json
import os
import random
import sys

from lib import (check, done, export, loop_fs, mkcorpus, ntfs_cluster, ntfs_runs, regular_files,
                 run, sync_fs, tempdir, xxh128)

CLUSTER = 8192  # not FIGETBSZ's 4096: positions must be converted, not assumed


def fragments_of(runs):
    """Physically discontiguous runs (adjacent ones join), holes left out."""
    n, end = 0, None
    for vcn, lcn, length in runs:
        if lcn is None:
            end = None
            continue
        if lcn != end:
            n += 1
        end = lcn + length
    return n


def ascending(runs):
    located = [(lcn, length) for vcn, lcn, length in runs if lcn is not None]
    return all(a[0] + a[1] <= b[0] for a, b in zip(located, located[1:]))


with loop_fs("ntfs", size_mb=96, mkfs_args=["-c", str(CLUSTER)]) as lfs, \
        tempdir("ntfsdb") as work:
    mnt, loop = lfs.mnt, lfs.loop
    # age the volume: fill it with small files, delete a random half, so
    # that the photos written next land in the holes, fragmented
    fill = os.path.join(mnt, "fill")
    os.mkdir(fill)
    n = 0
    try:
        while n < 100000:
            with open(os.path.join(fill, "%05d" % n), "wb") as f:
                f.write(b"\0" * 16384)
            n += 1
    except OSError:
        pass
    rnd = random.Random(5)
    kept = []
    for i in range(n):
        p = os.path.join(fill, "%05d" % i)
        if rnd.random() < 0.5 and os.path.exists(p):
            os.unlink(p)
        elif os.path.exists(p) and os.path.getsize(p) == 16384:
            kept.append(p)
    for p in kept[1::2]:
        os.unlink(p)  # fewer files to check; holes stay where the photos went
    root = os.path.join(mnt, "photos")
    mkcorpus(root, "--files", 60, "--median", "120k", "--seed", 3)
    # a file written back to front: its runs go back and forth on the disk
    fd = os.open(os.path.join(root, "reversed.bin"), os.O_WRONLY | os.O_CREAT)
    for i in reversed(range(24)):
        os.pwrite(fd, os.urandom(16384), i * 16384)
        os.fsync(fd)
    os.close(fd)
    with open(os.path.join(root, "tiny.txt"), "w") as f:
        f.write("resident in its MFT record\n")
    sync_fs(mnt)
    files = regular_files(mnt)

    rc, out, err = run("plan", "--json", mnt, check_rc=0)
    plan = json.loads(out)
    check(len(plan["devices"]) == 1, "one device: %s" % plan["devices"])
    dev = plan["devices"][0]
    fsd = dev["file_systems"][0]
    check(fsd["fstype"] == "fuseblk", "ntfs-3g mounts as fuseblk: %s" % fsd)
    check(fsd["located_by"] == "fibmap" and fsd["extents"] is True,
          "FIBMAP stands in for the refused extent map: %s" % fsd)
    check(dev["order"] == "physical" and "FIBMAP" in dev["reason"],
          "auto plan is physical, by FIBMAP: %s" % dev["reason"])
    check(len(plan["files"]) == len(files), "every file planned: %d of %d"
          % (len(plan["files"]), len(files)))
    located = [f for f in plan["files"] if f["phys_offset"] is not None]
    unplaced = [f["path"] for f in plan["files"] if f["phys_offset"] is None]
    check(unplaced == [os.path.join(root, "tiny.txt")],
          "every file with clusters placed; only the resident one not: %s" % unplaced[:5])
    offsets = [f["phys_offset"] for f in located]
    check(offsets == sorted(offsets), "physical plan ascending")
    photos = sorted(f["path"] for f in located if f["path"].startswith(root + "/"))
    check([f["path"] for f in located if f["path"].startswith(root + "/")] != photos,
          "physical order is not path order")
    tiny = [f for f in plan["files"] if f["path"].endswith("tiny.txt")][0]
    check(tiny["placement"] == "inline", "a resident file is inline: %s" % tiny)

    # the plan against the raw volume
    lfs.umount()
    check(ntfs_cluster(loop) == CLUSTER, "mkntfs made %d-byte clusters" % CLUSTER)
    sample = [f for f in located if not f["path"].startswith(fill + "/")]
    sample += [f for f in located if f["path"].startswith(fill + "/")][:40]
    pos_ok = exact_ok = fragmented = back_and_forth = 0
    for f in sample:
        runs = ntfs_runs(loop, "/" + os.path.relpath(f["path"], mnt))
        want_phys = runs[0][1] * CLUSTER if runs and runs[0][1] is not None else None
        pos_ok += check(f["phys_offset"] == want_phys, "%s: offset %s, ntfsinfo says %s"
                        % (f["path"], f["phys_offset"], want_phys))
        want = fragments_of(runs)
        fragmented += want > 1
        if ascending(runs):
            exact_ok += check(f["fragments"] == want and f["fragments_exact"],
                              "%s: %d fragments, ntfsinfo %d (runs %s)"
                              % (f["path"], f["fragments"], want, runs))
        else:
            back_and_forth += 1
            check(1 <= f["fragments"] <= want, "%s: %d fragments, at most ntfsinfo's %d"
                  % (f["path"], f["fragments"], want))
    rev = [f for f in sample if f["path"].endswith("reversed.bin")][0]
    check(rev["fragments"] >= 2, "a back-to-front file is fragmented: %s" % rev)
    print("ntfs: %d files, %d located, %d checked against ntfsinfo: %d offsets agree, %d "
          "fragmented, %d with runs going back (counted at most), %d exact"
          % (len(files), len(located), len(sample), pos_ok, fragmented, back_and_forth,
             exact_ok), file=sys.stderr)
    check(fragmented >= 5, "the aged volume fragmented photos: %d" % fragmented)
    lfs.mount()

    # without CAP_SYS_RAWIO: inode order, and the reason says what helps
    home = os.path.join(work, "home")
    os.mkdir(home)
    os.chmod(work, 0o755)
    os.chmod(home, 0o777)
    env = dict(os.environ, HOME=home)
    env.pop("XDG_CONFIG_HOME", None)
    rc, out, err = run("plan", "--json", mnt, check_rc=0, env=env, user="nobody")
    nr = json.loads(out)["devices"][0]
    check(nr["order"] == "inode", "not root: inode order: %s" % nr["reason"])
    check("CAP_SYS_RAWIO" in nr["reason"] and "root" in nr["reason"],
          "the reason says running as root would place files: %s" % nr["reason"])
    nfs = nr["file_systems"][0]
    check(nfs["fibmap_error"] and nfs["extents_error"], "both errors given: %s" % nfs)
    rc, out, err = run("plan", "--order", "physical", mnt, check_rc=0, env=env, user="nobody")
    check("fell back to inode order" in out and "CAP_SYS_RAWIO" in out,
          "a physical request falls back and says why: %s" % out[:600])

    # a scan reads in that order and stores the positions and the bytes
    db = os.path.join(work, "i.db")
    rc, out, err = run("scan", "--db", db, root, check_rc=0)
    check("order physical" in out, "scan summary: %s" % out)
    recs = {r["path"]: r for r in export(db)}
    pf = {f["path"]: f for f in plan["files"]}
    mine = regular_files(root)
    hashes = xxh128(mine)
    check(set(recs) == set(mine), "one record per file: %d of %d" % (len(recs), len(mine)))
    bad = 0
    for p in mine:
        r = recs.get(p)
        if not r:
            continue
        bad += not check(r["content_hash"] == hashes[p], "hash of %s" % p)
        bad += not check(r["phys_offset"] == pf[p]["phys_offset"], "phys_offset of %s" % p)
        bad += not check(r["fragments"] == pf[p]["fragments"], "fragments of %s" % p)
    check(bad == 0, "records agree with the plan and xxhsum")
done()
