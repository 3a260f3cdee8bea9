"""A scan never modifies what it scans: on ext4 mounted with strictatime
(so any read without O_NOATIME would show), every file's bytes, size,
mtime and atime, and every directory's listing and mtime are the same after
a scan (and after an incremental one) as before, and nothing is created in
the tree."""
import hashlib
import os
import subprocess

from lib import check, done, loop_fs, mkcorpus, run, tempdir


def snapshot(root):
    out = {}
    for d, dirs, files in os.walk(root):
        st = os.lstat(d)
        out[d] = ("dir", tuple(sorted(dirs + files)), st.st_mtime_ns)
        for f in files:
            p = os.path.join(d, f)
            st = os.lstat(p)
            with open(p, "rb") as fh:
                digest = hashlib.sha256(fh.read()).hexdigest()
            out[p] = ("file", st.st_size, st.st_mtime_ns, digest)
    return out


def atimes(root):
    return {os.path.join(d, f): os.lstat(os.path.join(d, f)).st_atime_ns
            for d, _, files in os.walk(root) for f in files}


with tempdir("untouched", base="/dev/shm") as work, loop_fs("ext4", 128, rotational=True) as lfs:
    subprocess.run(["mount", "-o", "remount,strictatime", lfs.mnt], check=True)
    root = os.path.join(lfs.mnt, "photos")
    mkcorpus(root, "--files", 80, "--median", "30k", "--seed", 12)
    before = snapshot(root)          # this read sets atimes: take them after
    times = atimes(root)
    db = os.path.join(work, "i.db")
    run("scan", "--db", db, root, check_rc=0)
    run("scan", "--db", db, "--full", root, check_rc=0)
    run("scan", "--db", db, root, check_rc=0)
    check(atimes(root) == times, "no file's atime moved (O_NOATIME)")
    after = snapshot(root)
    check(set(after) == set(before), "nothing created or removed in the tree")
    changed = [p for p in before if before[p] != after.get(p)]
    check(not changed, "bytes, sizes, mtimes and listings unchanged: %s" % changed[:5])

done()
