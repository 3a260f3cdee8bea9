"""A root scan over folders a user can write (docs/security.md, "Opening
what the walk saw"): each way the security review of issue 40 found for
that user to reach outside the roots, tried as that user (nobody) on a
real ext4, and shown blocked.

  F1  a photo carrying user.mergerfs.fullpath (any owner may set a user.*
      attribute on ext4) naming a root-only file: the photo's own bytes
      are indexed, never the named file's.
  F2  folders swapped for links to a root-only folder (renameat2 EXCHANGE
      in a loop) while five root scans run: no record holds a byte, a
      size or a hash from outside the tree.
  F4  a link and a hard link planted in the index's folder before a root
      re-install hands the folder to an account: refused, the victims'
      owners and bytes unchanged.
  F5  a 1 TiB sparse file: indexed (size, a warning, no content hash),
      the scan ends; a sparse file under the bound gets xxhsum's hash.
  F6  an index that others could read is made private at the next open;
      a planted link or hard link as the index's journal stops the scan
      with a message, and nothing is written through it.
  and a root named through a link a user owns is refused as root; one
  root owns is followed."""
import ctypes
import os
import pwd
import shutil
import subprocess
import time

from lib import (BIN, check, db_rows, done, export, loop_fs, need_root, run, tempdir, xxh128)

need_root()
NOBODY = pwd.getpwnam("nobody")


def as_nobody(code, *args, background=False):
    """Run Python code as nobody (args become sys.argv[1:])."""
    cmd = ["setpriv", "--reuid", "nobody", "--regid", "nogroup", "--clear-groups",
           "python3", "-c", code] + [str(a) for a in args]
    if background:
        return subprocess.Popen(cmd)
    p = subprocess.run(cmd, capture_output=True, text=True)
    check(p.returncode == 0, "as nobody: %s %s" % (p.stdout, p.stderr))
    return p


def scan(db, root, *extra, timeout=600):
    p = subprocess.run([BIN, "scan", "--db", db, "--config", "/dev/null", "--quiet"] +
                       list(extra) + [root], capture_output=True, text=True, timeout=timeout)
    return p.returncode, p.stdout, p.stderr


with loop_fs("ext4", 512) as fs, tempdir("hostile") as work:
    os.chmod(work, 0o755)
    # root's secrets: a root-only file in a root-only folder, and the
    # machine's own shadow file
    private = os.path.join(work, "private")
    os.mkdir(private, 0o700)
    secret = os.path.join(private, "secret.txt")
    with open(secret, "wb") as f:
        f.write(b"root's secret, never to be indexed\n" * 7)
    os.chmod(secret, 0o600)
    secrets = xxh128([secret, "/etc/shadow"])
    secret_sizes = {os.path.getsize(secret), os.path.getsize("/etc/shadow")}

    root = os.path.join(fs.mnt, "photos")
    os.mkdir(root)
    os.chown(root, NOBODY.pw_uid, NOBODY.pw_gid)

    def nothing_from_outside(db, what, legit):
        """Every record of db is a file of the tree with its own bytes."""
        bad = []
        for r in export(db):
            if not r["path"].startswith(root + "/"):
                bad.append(("outside", r["path"]))
            if r["content_hash"] in secrets.values():
                bad.append(("secret's hash", r["path"]))
            if r["content_hash"] is not None and r["content_hash"] not in legit:
                bad.append(("unknown hash", r["path"], r["content_hash"]))
            if r["size"] in secret_sizes and r["content_hash"] is None:
                bad.append(("secret's size", r["path"], r["size"]))
        check(not bad, "%s: nothing from outside the tree: %s" % (what, bad[:5]))

    # --- F1: the mergerfs attribute on a plain ext4 --------------------
    f1 = os.path.join(root, "f1")
    as_nobody("import os, sys\n"
              "os.mkdir(sys.argv[1])\n"
              "p = os.path.join(sys.argv[1], 'a.jpg')\n"
              "open(p, 'wb').write(b'\\xff\\xd8 a photo of nobody\\'s' * 20)\n"
              "os.setxattr(p, 'user.mergerfs.fullpath', sys.argv[2].encode())\n"
              "q = os.path.join(sys.argv[1], 'b.jpg')\n"
              "open(q, 'wb').write(b'\\xff\\xd8 another' * 30)\n"
              "os.setxattr(q, 'user.mergerfs.fullpath', b'/etc/shadow')\n", f1, secret)
    legit = xxh128([os.path.join(f1, "a.jpg"), os.path.join(f1, "b.jpg")])
    db = os.path.join(work, "f1.db")
    rc, out, err = scan(db, f1)
    check(rc == 0, "F1: scan: %d %s" % (rc, err))
    got = {r["path"]: r for r in export(db)}
    for p, h in legit.items():
        check(p in got and got[p]["content_hash"] == h and got[p]["size"] == os.path.getsize(p),
              "F1: %s indexed with its own bytes: %s" % (os.path.basename(p), got.get(p)))
    nothing_from_outside(db, "F1", set(legit.values()))

    # --- F2: folders swapped for links while root scans ----------------
    f2 = os.path.join(root, "f2")
    as_nobody("import os, sys\n"
              "os.mkdir(sys.argv[1])\n"
              "for i in range(200):\n"
              "    d = os.path.join(sys.argv[1], 'd%03d' % i)\n"
              "    os.mkdir(d)\n"
              "    open(os.path.join(d, 'secret.txt'), 'wb').write(b'x' * (1000 + i))\n"
              "    os.symlink(sys.argv[2], os.path.join(sys.argv[1], 'l%03d' % i))\n",
              f2, private)
    legit2 = xxh128([os.path.join(f2, "d%03d" % i, "secret.txt") for i in range(200)])
    swapper = as_nobody(
        "import ctypes, os, sys, time\n"
        "libc = ctypes.CDLL(None, use_errno=True)\n"
        "AT = -100\n"
        "end = time.time() + float(sys.argv[2])\n"
        "while time.time() < end:\n"
        "    for i in range(200):\n"
        "        a = os.path.join(sys.argv[1], 'd%03d' % i).encode()\n"
        "        b = os.path.join(sys.argv[1], 'l%03d' % i).encode()\n"
        "        libc.renameat2(AT, a, AT, b, 2)\n", f2, 60, background=True)
    try:
        for k in range(5):
            db = os.path.join(work, "f2-%d.db" % k)
            rc, out, err = scan(db, f2)
            check(rc in (0, 1), "F2: scan %d ended: %d %s" % (k, rc, err[-300:]))
            nothing_from_outside(db, "F2 scan %d" % k, set(legit2.values()))
            errs = db_rows(db, "SELECT count(*) FROM files WHERE error IS NOT NULL")[0][0]
            print("  F2 scan %d: %d records, %d with an error" %
                  (k, len(export(db)), errs))
    finally:
        swapper.kill()
        swapper.wait()
    # at rest, every one of them indexed right
    for i in range(200):
        a, b = os.path.join(f2, "d%03d" % i), os.path.join(f2, "l%03d" % i)
        if os.path.islink(a):
            os.rename(a, a + ".tmp")
            os.rename(b, a)
            os.rename(a + ".tmp", b)
    db = os.path.join(work, "f2-rest.db")
    rc, out, err = scan(db, f2)
    got = {r["path"]: r["content_hash"] for r in export(db)}
    check(rc == 0 and got == legit2, "F2: at rest, all 200 with xxhsum's hashes: %d %d/%d"
          % (rc, sum(got.get(p) == h for p, h in legit2.items()), len(legit2)))

    # --- F5: sparse giants ----------------------------------------------
    f5 = os.path.join(root, "f5")
    as_nobody("import os, sys\n"
              "os.mkdir(sys.argv[1])\n"
              "with open(os.path.join(sys.argv[1], 'giant.raw'), 'wb') as f:\n"
              "    f.write(b'head' * 1024)\n"
              "    f.truncate(1 << 40)\n"
              "with open(os.path.join(sys.argv[1], 'holes.raw'), 'wb') as f:\n"
              "    f.write(b'first' * 1000)\n"
              "    f.seek(20 << 20); f.write(b'middle' * 1000)\n"
              "    f.seek(60 << 20); f.write(b'last' * 1000)\n", f5)
    db = os.path.join(work, "f5.db")
    t = time.monotonic()
    rc, out, err = scan(db, f5, timeout=900)
    print("  F5: a 1 TiB sparse file scanned in %.1f s" % (time.monotonic() - t))
    check(rc == 0, "F5: the scan ends: %d %s" % (rc, err[-300:]))
    row = db_rows(db, "SELECT size, content_hash, warnings, error FROM files WHERE path=?",
                  (os.path.join(f5, "giant.raw"),))
    check(len(row) == 1 and row[0][0] == 1 << 40 and row[0][1] is None and
          "sparse" in (row[0][2] or "") and row[0][3] is None,
          "F5: the giant indexed with its size and why it has no hash: %s" % row)
    holes = os.path.join(f5, "holes.raw")
    row = db_rows(db, "SELECT content_hash FROM files WHERE path=?", (holes,))
    check(row == [(xxh128([holes])[holes],)], "F5: a file with holes hashed as xxhsum: %s" % row)

    # --- F6: the index's own files --------------------------------------
    f6db = os.path.join(work, "f6", "index.db")
    os.makedirs(os.path.dirname(f6db))
    rc, out, err = scan(f6db, f1)
    os.chmod(f6db, 0o644)
    rc, out, err = scan(f6db, f1)
    check(rc == 0 and os.stat(f6db).st_mode & 0o777 == 0o600,
          "F6: an index others could read is private again: %o" % os.stat(f6db).st_mode)
    victim = os.path.join(work, "victim")
    with open(victim, "wb") as f:
        f.write(b"victim")
    os.chmod(victim, 0o600)
    for kind in ("symlink", "hardlink"):
        wal = f6db + "-wal"
        if os.path.lexists(wal):
            os.unlink(wal)
        (os.symlink if kind == "symlink" else os.link)(victim, wal)
        rc, out, err = scan(f6db, f1)
        check(rc == 3 and ("symbolic link" in err or "other names" in err),
              "F6: a %s as the index's journal stops the scan: %d %s" % (kind, rc, err))
        check(open(victim, "rb").read() == b"victim" and os.stat(victim).st_uid == 0,
              "F6: nothing written through the %s" % kind)
        os.unlink(wal)

    # --- F4: a re-install hands the index's folder to an account ---------
    live = os.path.join(work, "live")
    os.mkdir(live)
    ldb = os.path.join(live, "index.db")
    rc, out, err = scan(ldb, f1)
    check(rc == 0, "F4: root's scan made the index")
    # as after an earlier install, the account owns the folder
    os.chown(live, NOBODY.pw_uid, NOBODY.pw_gid)
    victim2 = os.path.join(work, "victim2")
    with open(victim2, "wb") as f:
        f.write(b"victim2")
    os.chmod(victim2, 0o600)
    as_nobody("import os, sys\nos.unlink(sys.argv[1] + '-wal') if os.path.exists("
              "sys.argv[1] + '-wal') else None\nos.symlink(sys.argv[2], sys.argv[1] + '-wal')\n",
              ldb, victim)
    # (a hard link to a file it does not own: protected_hardlinks stops
    # nobody, so root plants the one the review's kernel setting allowed)
    if os.path.lexists(ldb + "-shm"):
        os.unlink(ldb + "-shm")
    os.link(victim2, ldb + "-shm")
    conf = os.path.join(work, "live.conf")
    with open(conf, "w") as f:
        f.write("root = %s\n" % f1)
    units = "/etc/systemd/system"
    script = ('mount -t tmpfs seekless-test %s && "$0" service install --system '
              '--config "$1" --db "$2" --run-as nobody; echo "rc=$?"' % units)
    p = subprocess.run(["unshare", "--mount", "--propagation", "private", "sh", "-c", script,
                        BIN, conf, ldb], capture_output=True, text=True)
    check("rc=3" in p.stdout and ("symbolic link" in p.stderr or "other names" in p.stderr),
          "F4: the install refuses to hand over a planted link: %s %s" % (p.stdout, p.stderr))
    for v, content in ((victim, b"victim"), (victim2, b"victim2")):
        st = os.stat(v)
        check(st.st_uid == 0 and st.st_mode & 0o777 == 0o600 and open(v, "rb").read() == content,
              "F4: %s still root's, 0600, as it was" % os.path.basename(v))

    # --- the root's own path ----------------------------------------------
    userdir = os.path.join(work, "userdir")
    os.mkdir(userdir)
    os.chown(userdir, NOBODY.pw_uid, NOBODY.pw_gid)
    as_nobody("import os, sys\nos.symlink(sys.argv[2], os.path.join(sys.argv[1], 'link'))\n",
              userdir, private)
    rc, out, err = run("scan", "--db", os.path.join(work, "l.db"), "--config", "/dev/null",
                       os.path.join(userdir, "link"))
    check(rc == 2 and "owned by uid %d" % NOBODY.pw_uid in err and
          not os.path.exists(os.path.join(work, "l.db")),
          "a root through a user's link is refused as root: %d %s" % (rc, err))
    rootlink = os.path.join(work, "rootlink")
    os.symlink(f1, rootlink)
    rc, out, err = run("scan", "--db", os.path.join(work, "l2.db"), "--config", "/dev/null",
                       "--quiet", rootlink)
    got = sorted(r["path"] for r in export(os.path.join(work, "l2.db")))
    check(rc == 0 and got == sorted(legit), "root's own link is followed: %d %s" % (rc, got))

done()
