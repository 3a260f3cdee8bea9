"""What the model test (test_model.py) found, each as a test of its own, on
real file systems (ext4 and btrfs on loop devices), with scans as an
unprivileged user where permissions matter:

1. A file system whose last file was deleted had its records kept as
   "unavailable" for good: btrfs is identified through a path on it, and
   with no file left there was none.  A directory on it now stands in.
2. The same file system under two names: a root scan reads the UUID from
   the superblock, an unprivileged one gets the statfs id.  Alternating
   them (the service as root, the user by hand) made every record look
   like it lived on a file system that was not there.
3. A scan that could not list a directory marked deleted a record whose
   path a moved file took, although its own file had moved into that
   directory; the next complete scan made it a new record.  Such deletions
   are provisional now, found again by identity.
4. `mv` (or cp + rm) across file systems onto an existing file writes into
   that file's inode: the moved file's record now takes the path over by
   content, as for a move to a new name.
5. As 3, but the file that came out of the directory was also rewritten in
   place (new size and mtime): it was no longer found by identity, took
   the record of its new path (the other file's, whose file the scan could
   not see), and the other file came back as a new record (seed
   1737319099).  Identity with a known birth time now holds whatever the
   size and mtime.
"""
import os
import pwd
import shutil
import sqlite3
import subprocess
import time

from lib import BIN, check, done, loop_fs, need_root, tempdir

need_root()
NOBODY = pwd.getpwnam("nobody")


def scan(db, root, as_root=False, want=0, what="scan"):
    """A scan, as nobody unless as_root; its exit status must be want."""
    cmd = [BIN, "scan", "--db", db, "--config", "/dev/null", "--cross-fs", "--quiet", root]
    if not as_root:
        cmd = ["setpriv", "--reuid", "nobody", "--regid", "nogroup", "--clear-groups"] + cmd
    p = subprocess.run(cmd, capture_output=True, text=True)
    check(p.returncode == want, "%s%s: exit %d, expected %d: %s" % (
        what, " as root" if as_root else "", p.returncode, want, p.stderr[-500:]))
    return p.returncode, p.stderr


def rows(db, sql, args=()):
    con = sqlite3.connect(db)
    try:
        return con.execute(sql, args).fetchall()
    finally:
        con.close()
        for f in os.listdir(os.path.dirname(db)):
            os.chown(os.path.join(os.path.dirname(db), f), NOBODY.pw_uid, NOBODY.pw_gid)


def write(path, n, seed):
    with open(path, "wb") as f:
        f.write(bytes((i * 7 + seed) & 0xFF for i in range(n)))


with tempdir("regr") as work, loop_fs("ext4", 128) as fa, \
        loop_fs("btrfs", 256, rotational=False) as fb:
    os.chmod(work, 0o755)
    root = os.path.join(fa.mnt, "root")
    other = os.path.join(root, "other")
    os.makedirs(other)
    os.makedirs(os.path.join(fb.mnt, "b"))
    subprocess.run(["mount", "--bind", os.path.join(fb.mnt, "b"), other], check=True)
    try:
        def fresh_db(name):
            d = os.path.join(work, name)
            os.mkdir(d)
            os.chown(d, NOBODY.pw_uid, NOBODY.pw_gid)
            return os.path.join(d, "index.db")

        # 1: the last file of a file system goes
        db = fresh_db("one")
        write(os.path.join(root, "keep.jpg"), 3000, 1)
        last = os.path.join(other, "last.jpg")
        write(last, 3000, 2)
        scan(db, root, what="1: first scan")
        os.unlink(last)
        scan(db, root, what="1: rescan")
        check(rows(db, "SELECT deleted_at IS NOT NULL FROM files WHERE path=?", (last,)) == [(1,)],
              "1: the btrfs file system's last file is marked deleted")
        check(rows(db, "SELECT unavailable FROM scans ORDER BY id DESC LIMIT 1") == [(0,)],
              "1: nothing unavailable")
        check(rows(db, "SELECT count(*) FROM filesystems") == [(2,)],
              "1: two file systems, each under one name: %s" %
              rows(db, "SELECT ident FROM filesystems"))

        # 2: root and unprivileged scans of one index
        db = fresh_db("two")
        write(os.path.join(other, "b.jpg"), 4000, 3)
        # past the coarsest tick (2 s): a file stat'ed within a tick of its
        # change is racy and rightly read again by the next scan, and a
        # machine that starts the scan fast enough got exactly that
        time.sleep(2.1)
        scan(db, root, what="2: unprivileged")
        scan(db, root, True, what="2: then")
        scan(db, root, what="2: unprivileged again")
        scan(db, root, True, what="2: then")
        fs = rows(db, "SELECT ident FROM filesystems ORDER BY id")
        check(len(fs) == 2, "2: one row per file system: %s" % fs)
        check(all(ident.startswith("uuid:") for ident, in fs), "2: known by UUID: %s" % fs)
        reads = rows(db, "SELECT files FROM scans ORDER BY id")
        check(reads[1:] == [(0,)] * 3, "2: nothing read again after the first scan: %s" % reads)
        check(rows(db, "SELECT sum(unavailable), sum(deleted) FROM scans") == [(0, 0)],
              "2: nothing unavailable or deleted")

        # 3: a swap into a directory the next scan cannot list
        db = fresh_db("three")
        locked = os.path.join(root, "locked")
        os.mkdir(locked)
        a, b = os.path.join(root, "A.jpg"), os.path.join(locked, "B.jpg")
        write(a, 5000, 4)
        write(b, 6000, 5)
        scan(db, root, what="3: first scan")
        ida = rows(db, "SELECT id FROM files WHERE path=?", (a,))
        idb = rows(db, "SELECT id FROM files WHERE path=?", (b,))
        tmp = os.path.join(locked, "tmp")
        os.rename(a, tmp)
        os.rename(b, a)
        os.rename(tmp, b)
        os.chmod(locked, 0)
        rc, err = scan(db, root, want=1, what="3: incomplete scan")
        check("Permission denied" in err, "3: incomplete scan says why: %s" % err)
        os.chmod(locked, 0o755)
        scan(db, root, what="3: complete scan")
        check(rows(db, "SELECT id FROM files WHERE path=? AND deleted_at IS NULL", (b,)) == ida,
              "3: A's record followed A into the directory: %s vs %s" %
              (rows(db, "SELECT id, deleted_at FROM files WHERE path=?", (b,)), ida))
        check(rows(db, "SELECT id FROM files WHERE path=? AND deleted_at IS NULL", (a,)) == idb,
              "3: B's record followed B out of it")
        shutil.rmtree(locked)
        os.unlink(a)

        # 5: the same swap, and the file that came out rewritten in place
        db = fresh_db("five")
        os.mkdir(locked)
        write(a, 5000, 8)
        write(b, 6000, 9)
        scan(db, root, what="5: first scan")
        ida = rows(db, "SELECT id, first_scan FROM files WHERE path=?", (a,))
        idb = rows(db, "SELECT id, first_scan FROM files WHERE path=?", (b,))
        os.rename(a, tmp)
        os.rename(b, a)
        os.rename(tmp, b)
        mtime = os.stat(a).st_mtime_ns
        with open(a, "r+b") as f:  # in place: the same inode, another size
            f.write(bytes(range(256)) * 30)
        os.utime(a, ns=(mtime + 10**9, mtime + 10**9))  # a new mtime on any clock
        os.chmod(locked, 0)
        rc, err = scan(db, root, want=1, what="5: incomplete scan")
        check("Permission denied" in err, "5: incomplete scan says why: %s" % err)
        check(rows(db, "SELECT id, first_scan FROM files WHERE path=? AND deleted_at IS NULL",
                   (a,)) == idb, "5: B's record followed B out, rewritten: %s vs %s" %
              (rows(db, "SELECT id, first_scan, deleted_at FROM files WHERE path=?", (a,)), idb))
        os.chmod(locked, 0o755)
        scan(db, root, what="5: complete scan")
        check(rows(db, "SELECT id, first_scan FROM files WHERE path=? AND deleted_at IS NULL",
                   (b,)) == ida, "5: A's record followed A into the directory: %s vs %s" %
              (rows(db, "SELECT id, first_scan, deleted_at FROM files WHERE path=?", (b,)), ida))
        want = subprocess.run(["xxh128sum", a], capture_output=True, text=True,
                              check=True).stdout.split()[0]
        check(rows(db, "SELECT content_hash FROM files WHERE path=? AND deleted_at IS NULL",
                   (a,)) == [(want,)], "5: the rewritten file's content read again")
        check(rows(db, "SELECT count(*) FROM files WHERE path IN (?, ?)", (a, b)) == [(2,)],
              "5: no third record: %s" % rows(db, "SELECT id, path, deleted_at FROM files"))
        shutil.rmtree(locked)
        os.unlink(a)

        # 4: mv across file systems onto an existing file
        db = fresh_db("four")
        src, dst = os.path.join(other, "moving.jpg"), os.path.join(root, "there.jpg")
        write(src, 7000, 6)
        write(dst, 8000, 7)
        scan(db, root, what="4: first scan")
        idsrc = rows(db, "SELECT id, first_scan FROM files WHERE path=?", (src,))
        subprocess.run(["mv", src, dst], check=True)
        scan(db, root, what="4: rescan")
        check(rows(db, "SELECT id, first_scan FROM files WHERE path=? AND deleted_at IS NULL",
                   (dst,)) == idsrc, "4: the moved file's record took the path over: %s vs %s" %
              (rows(db, "SELECT id, first_scan, deleted_at FROM files WHERE path=?", (dst,)), idsrc))
        check(rows(db, "SELECT count(*) FROM files WHERE path=? AND deleted_at IS NOT NULL",
                   (dst,)) == [(1,)], "4: the overwritten file's record is marked deleted")
    finally:
        subprocess.run(["umount", other])
done()
