"""plan --verify on real file systems: every placed file's first bytes,
read through the file, equal the bytes the raw disk holds at the planned
offset.  ext4, xfs and NTFS (ntfs-3g, placed by FIBMAP) on loop devices; a
partitioned loop disk with ext4 and xfs at partition offsets (the offsets
must be added); btrfs on one device, its data balanced so that logical
addresses and device offsets differ (mapped through the chunk map), not
mapped without root (said why), and on two devices (logical addresses, not
compared: said, exit 3 when nothing else was read); without the right to
read the disk, exit 3 and the reason.  The comparison itself, with a
position that is wrong, is tests/unit/test_verify.c."""
import json
import os
import subprocess
import tempfile
import time

from lib import (check, done, loop_fs, mkcorpus, mkfs, need_root, regular_files, run, skip, sync_fs,
                 tempdir)


def verify(*roots, rc=0, **kw):
    code, out, err = run("plan", "--verify", "--json", *roots, check_rc=rc, **kw)
    try:
        return json.loads(out)
    except ValueError:
        check(False, "--verify --json is JSON: %r %s" % (out[:300], err[:300]))
        return {"verify": []}


def all_verified(tag, roots, expect_devices=1):
    files = sum(len(regular_files(r)) for r in roots)
    doc = verify(*roots)
    check(len(doc["verify"]) == expect_devices, "%s: %d device(s): %s"
          % (tag, expect_devices, doc["verify"]))
    total = sum(g["files"] for g in doc["verify"])
    verified = sum(g["verified"] for g in doc["verify"])
    check(total == files, "%s: every file planned: %d of %d" % (tag, total, files))
    check(verified == files, "%s: verified %d of %d: %s" % (tag, verified, files, doc["verify"]))
    check(doc["differ"] == 0 and doc["exit"] == 0, "%s: nothing differs" % tag)
    return doc


def nobody_env(work):
    """An environment for running as nobody: a HOME it may write below work."""
    home = os.path.join(work, "home")
    os.makedirs(home, exist_ok=True)
    os.chmod(work, 0o755)
    os.chmod(home, 0o777)
    env = dict(os.environ, HOME=home)
    env.pop("XDG_CONFIG_HOME", None)
    return env


need_root()
with tempdir("verify") as work:
    for fstype in ("ext4", "xfs", "ntfs"):
        with loop_fs(fstype, size_mb=300) as lfs:
            root = os.path.join(lfs.mnt, "photos")
            mkcorpus(root, "--files", 80, "--median", "60k", "--fragment", 30, "--seed", 11)
            sync_fs(root)
            doc = all_verified(fstype, [root])
            g = doc["verify"][0]
            check(g["read"] == lfs.loop, "%s: the disk read is %s: %s" % (fstype, lfs.loop, g))
            code, out, err = run("plan", "--verify", root, check_rc=0)
            check(out.startswith("verify %s (%s): verified 80 of 80; 0 differ; 0 not checked"
                                 % (os.path.basename(lfs.loop), lfs.loop)),
                  "%s: the text report: %s" % (fstype, out))
            if fstype == "ext4":
                # not root: the disk cannot be opened, nothing is verified
                env = nobody_env(work)
                nr = verify(root, rc=3, env=env, user="nobody")
                g = nr["verify"][0]
                check(g["verified"] == 0 and g["why"].get("device not readable") == 80
                      and "Permission denied" in (g["device_error"] or ""),
                      "not root: why is said: %s" % g)
                code, out, err = run("plan", "--verify", root, check_rc=3, env=env,
                                     user="nobody")
                check("nothing was verified: no device was read" in out,
                      "text says so: %s" % out)

    with loop_fs("btrfs", size_mb=300) as lfs:
        root = os.path.join(lfs.mnt, "photos")
        mkcorpus(root, "--files", 30, "--median", "60k", "--seed", 12)
        subprocess.run(["btrfs", "balance", "start", "-d", lfs.mnt], check=True,
                       capture_output=True)
        sync_fs(root)
        all_verified("btrfs", [root])
        code, out, err = run("plan", "--json", "--order", "physical", root, check_rc=0)
        fs0 = json.loads(out)["devices"][0]["file_systems"][0]
        check(fs0["positions"] == "device" and fs0["logical_why"] is None,
              "btrfs positions through the chunk map: %s" % fs0)
        # not root: the chunk map cannot be read, and why is said
        env = nobody_env(work)
        g = verify(root, rc=3, env=env, user="nobody")["verify"][0]
        check(g["why"].get("btrfs logical address") == 30 and g["verified"] == 0
              and "CAP_SYS_ADMIN" in (g["logical_why"] or ""),
              "btrfs, not root: logical, not compared, and why: %s" % g)
        code, out, err = run("plan", "--order", "physical", root, check_rc=0, env=env,
                             user="nobody")
        check("btrfs positions are logical addresses (reading the chunk map needs "
              "CAP_SYS_ADMIN" in out, "btrfs, not root: the plan says why: %s" % out[:400])

    # btrfs on two devices: a chunk may lie on either, so positions stay
    # logical and are not compared
    imgs = [tempfile.mktemp(prefix="seekless-btrfs%d-" % i, suffix=".img", dir="/dev/shm")
            for i in (1, 2)]
    loops, mnt = [], os.path.join(work, "multi")
    try:
        for img in imgs:
            with open(img, "wb") as f:
                f.truncate(300 << 20)
            p = subprocess.run(["losetup", "--find", "--show", img], capture_output=True,
                               text=True)
            if p.returncode != 0:
                skip("no loop device: " + p.stderr.strip())
            loops.append(p.stdout.strip())
        mkfs(["mkfs.btrfs", "-q", "-f", "-d", "single", "-m", "raid1"] + loops)
        os.mkdir(mnt)
        subprocess.run(["mount", loops[0], mnt], check=True)
        root = os.path.join(mnt, "photos")
        mkcorpus(root, "--files", 20, "--median", "60k", "--seed", 13)
        sync_fs(root)
        doc = verify(root, rc=3)
        g = doc["verify"][0]
        check(g["why"].get("btrfs logical address") == 20 and g["verified"] == 0
              and "several devices" in (g["logical_why"] or "") and doc["exit"] == 3,
              "btrfs on two devices: logical, not compared, and why: %s" % g)
        code, out, err = run("plan", "--verify", root, check_rc=3)
        check("20 btrfs logical address (the file system has several devices" in out,
              "btrfs on two devices: the text report: %s" % out)
    finally:
        if os.path.ismount(mnt):
            subprocess.run(["umount", mnt])
        for lo in loops:
            subprocess.run(["losetup", "-d", lo])
        for img in imgs:
            os.unlink(img)

    # a partitioned disk: two file systems at their partition offsets
    img = tempfile.mktemp(prefix="seekless-parts-", suffix=".img", dir="/dev/shm")
    with open(img, "wb") as f:
        f.truncate(720 << 20)  # xfs wants more than 300 MB
    # the second partition starts at an odd MiB, so no offset is a round guess
    layout = "start=2048, size=180MiB, type=83\nstart=382976, type=83\n"
    subprocess.run(["sfdisk", "-q", img], input=layout, text=True, check=True)
    p = subprocess.run(["losetup", "-P", "--find", "--show", img], capture_output=True,
                       text=True)
    if p.returncode != 0:
        skip("no loop device: " + p.stderr.strip())
    loop = p.stdout.strip()
    mnts = []
    try:
        with open("/sys/block/%s/queue/rotational" % os.path.basename(loop), "w") as f:
            f.write("1")
        # the kernel's scan at attach time missed the table on this
        # machine: add the partitions as the table has them
        if not os.path.exists(loop + "p2"):
            subprocess.run(["partx", "-a", loop], capture_output=True)
        for _ in range(100):  # devtmpfs makes the partitions' nodes
            if os.path.exists(loop + "p2"):
                break
            time.sleep(0.05)
        for part, mk in (("p1", ["mkfs.ext4", "-q", "-F"]), ("p2", ["mkfs.xfs", "-q", "-f"])):
            mnt = os.path.join(work, part)
            os.mkdir(mnt)
            subprocess.run(mk + [loop + part], check=True, capture_output=True)
            subprocess.run(["mount", "-o", "noatime", loop + part, mnt], check=True)
            mnts.append(mnt)
            mkcorpus(os.path.join(mnt, "photos"), "--files", 40, "--median", "50k", "--seed",
                     len(mnts))
        sync_fs(*mnts)
        code, out, err = run("plan", "--json", *mnts, check_rc=0)
        fss = json.loads(out)["devices"][0]["file_systems"]
        check(sorted(f["partition_offset"] for f in fss) == [2048 * 512, 382976 * 512],
              "partition offsets: %s" % [f["partition_offset"] for f in fss])
        doc = all_verified("partitioned", mnts)
        check(doc["verify"][0]["read"] == loop, "the whole disk is read: %s" % doc["verify"])
    finally:
        for m in mnts:
            subprocess.run(["umount", m])
        subprocess.run(["losetup", "-d", loop])
        os.unlink(img)
done()
