"""The command line over the configuration file (docs/usage.md, "The
configuration file": "Options on the command line win over both; roots
given on the command line replace the configured ones (the configured
excludes still apply)"; scan --help: --exclude "adds to the
configuration's excludes").

A configuration names two roots, two excludes, its index and order, jobs,
phash, trust_mtime, cross_fs and background.  First what it says is shown
to take effect (else the rest would prove nothing), then each setting
given the other way on the command line, checked against what happened:
the files in the index (sqlite3) against the tree built here, what was
read and in which order (strace, readorder.py) against os.stat's inode
numbers and the paths, the I/O priority calls (strace), a tmpfs mounted
below a root, and the perceptual hashes actually stored."""
import json
import os
import shutil
import subprocess
import time

from lib import (check, db_rows, done, mkcorpus, need_root, regular_files, run, skip, tempdir,
                 xxh128)
from readorder import have_strace, traced

need_root()  # strace of a scan that sandboxes itself; a tmpfs mounted below a root
if not have_strace():
    skip("no strace")


def age(paths):
    """Wait until the clock is past every path's ctime by more than the
    20 ms tick within which a scan rightly reads a file again (racy,
    docs/usage.md): a condition on the clock, which the scan also reads."""
    newest = max(os.stat(p, follow_symlinks=False).st_ctime_ns for p in paths)
    while time.time_ns() <= newest + 50_000_000:
        time.sleep(0.01)


def live(db, under=None):
    rows = db_rows(db, "SELECT path FROM files WHERE deleted_at IS NULL")
    return sorted(p for (p,) in rows if under is None or p.startswith(under + "/"))


def last_scan(db):
    return db_rows(db, "SELECT roots, jobs, order_requested, background, command FROM scans"
                       " ORDER BY id DESC LIMIT 1")[0]


def bytewise(paths):
    return sorted(paths, key=os.fsencode)


with tempdir("prec", base="/dev/shm") as work:
    a, b, c = (os.path.join(work, n) for n in ("a", "b", "c"))
    mkcorpus(a, "--files", 8, "--median", "20k", "--seed", 31, "--no-sync")
    mkcorpus(b, "--files", 5, "--median", "20k", "--seed", 32, "--no-sync")
    pool = os.path.join(work, "pool")
    mkcorpus(pool, "--files", 12, "--median", "20k", "--seed", 33, "--no-sync")
    # c: JPEGs made in the reverse of their names' order, so that the order
    # of their inode numbers is not the order of their paths
    os.makedirs(c)
    srcs = [p for p in sorted(regular_files(pool)) if p.lower().endswith(".jpg")][:10]
    cfiles = [os.path.join(c, "c%02d.jpg" % i) for i in range(len(srcs))]
    for src, dst in reversed(list(zip(srcs, cfiles))):
        shutil.copyfile(src, dst)
    for d in (a, b, c):
        os.makedirs(os.path.join(d, ".thumbnails"))
        with open(os.path.join(d, ".thumbnails", "t.jpg"), "wb") as f:
            f.write(b"thumb")
        with open(os.path.join(d, "junk.tmp"), "wb") as f:
            f.write(b"tmp")
    with open(os.path.join(c, "r1.raw"), "wb") as f:
        f.write(b"raw" * 100)
    inner = os.path.join(c, "mnt")   # another file system below root c
    os.makedirs(inner)
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=4m", "seekless-test", inner], check=True)
    try:
        with open(os.path.join(inner, "inner.jpg"), "wb") as f:
            f.write(open(srcs[0], "rb").read())

        def kept(d):
            return [p for p in regular_files(d) if "/.thumbnails/" not in p
                    and not p.endswith(".tmp") and not p.startswith(inner + "/")]

        by_inode = [p for p in sorted(kept(c), key=lambda p: os.stat(p).st_ino)]
        check(by_inode != bytewise(kept(c)), "c's inode order is not its path order")
        d1, d2 = os.path.join(work, "one.db"), os.path.join(work, "two.db")
        conf = os.path.join(work, "seekless.conf")
        with open(conf, "w") as f:
            f.write("root = %s\nroot = %s\nexclude = *.tmp\nexclude = .thumbnails\n"
                    "db = %s\norder = path\njobs = 1\nphash = no\ntrust_mtime = no\n"
                    "cross_fs = no\nbackground = yes\n" % (a, b, d1))
        age(regular_files(work))

        # --- what the configuration says takes effect ----------------------
        rc, out, err, order, log = traced(["scan", "--config", conf, "--scheduled"], work,
                                          trace=["ioprio_set"])
        check(rc == 0, "scan --config --scheduled: %d %s" % (rc, err[-300:]))
        want_ab = bytewise(kept(a) + kept(b))
        check(live(d1) == want_ab, "the configured roots minus the configured excludes")
        order = [p for p in order if p.startswith((a + "/", b + "/"))]  # not the index
        check(order == want_ab, "read in path order, as configured: %s" %
              [os.path.relpath(p, work) for p in order])
        check(db_rows(d1, "SELECT count(*) FROM files WHERE phash_src IS NOT NULL") == [(0,)],
              "phash = no: no perceptual hash tried")
        check(last_scan(d1)[1:] == (1, "path", 1, "scheduled"),
              "jobs 1, order path, in the background: %s" % (last_scan(d1),))
        check("IOPRIO_CLASS_IDLE" in log, "background = yes: the idle I/O class asked for")

        # --- roots, order, jobs, phash on the command line --------------------
        rc, out, err, order, log = traced(["scan", "--config", conf, "--order", "inode",
                                           "--jobs", "3", "--phash", c], c)
        check(rc == 0, "scan --config ... ROOT: %d %s" % (rc, err[-300:]))
        check(live(d1, c) == bytewise(kept(c)),
              "the command line's root alone, the configured excludes still applied: %s"
              % [os.path.relpath(p, c) for p in live(d1, c)])
        check(live(d1) == bytewise(want_ab + kept(c)),
              "the configured roots' records untouched (not marked deleted)")
        check(db_rows(d1, "SELECT count(*) FROM files WHERE last_scan = 1") == [(len(want_ab),)],
              "nor stored again")
        check(order == by_inode, "read in inode order, the command line's: %s" %
              [os.path.basename(p) for p in order])
        roots, jobs, order_req, bg, cmd = last_scan(d1)
        check((json.loads(roots), jobs, order_req, bg) == ([c], 3, "inode", 0),
              "recorded: roots %s, jobs %s, order %s, background %s" % (roots, jobs, order_req, bg))
        hashed = db_rows(d1, "SELECT path FROM files WHERE phash IS NOT NULL")
        check(sorted(p for (p,) in hashed) == bytewise(p for p in kept(c) if p.endswith(".jpg")),
              "--phash over phash = no: c's pictures have their perceptual hashes")
        check("IOPRIO_CLASS_IDLE" not in log, "an interactive scan stays in the foreground")

        # --- --exclude adds to the configured ones; --cross-fs ----------------
        rc, out, err = run("scan", "--config", conf, "--cross-fs", "--exclude", "*.raw", c,
                           check_rc=0)
        want_c = bytewise([p for p in kept(c) if not p.endswith(".raw")] +
                          [os.path.join(inner, "inner.jpg")])
        check(live(d1, c) == want_c, "--cross-fs over cross_fs = no, and --exclude with the "
              "configured excludes: %s" % [os.path.relpath(p, c) for p in live(d1, c)])
        check(db_rows(d1, "SELECT path FROM files WHERE deleted_at IS NOT NULL") ==
              [(os.path.join(c, "r1.raw"),)], "r1.raw, excluded now, marked deleted")

        # --- --db over db --------------------------------------------------------
        scans = db_rows(d1, "SELECT count(*) FROM scans")
        run("scan", "--config", conf, "--db", d2, c, check_rc=0)
        check(live(d2) == bytewise(kept(c)), "--db: the records in the index it names")
        check(db_rows(d1, "SELECT count(*) FROM scans") == scans, "the configured one untouched")
        want = xxh128(kept(c))
        check(dict(db_rows(d2, "SELECT path, content_hash FROM files")) == want,
              "with xxhsum's hashes")

        # the same with the configuration found, not named: the user's file
        xdg = os.path.join(work, "xdg")
        os.makedirs(os.path.join(xdg, "seekless"))
        shutil.copy(conf, os.path.join(xdg, "seekless", "config"))
        d3 = os.path.join(work, "three.db")
        run("scan", "--db", d3, c, env=dict(os.environ, XDG_CONFIG_HOME=xdg), check_rc=0)
        check(live(d3) == bytewise(kept(c)), "through $XDG_CONFIG_HOME/seekless/config too: "
              "the root given, the file's excludes: %s" % [os.path.relpath(p, c) for p in live(d3)])
        check(db_rows(d1, "SELECT count(*) FROM scans") == scans, "and --db over its db")

        # --- --foreground over background = yes; --background over no -------
        rc, out, err, order, log = traced(["scan", "--config", conf, "--scheduled",
                                           "--foreground"], work, trace=["ioprio_set"])
        check(rc == 0 and "IOPRIO_CLASS_IDLE" not in log and last_scan(d1)[3] == 0,
              "--scheduled --foreground: no idle I/O class (%d)" % rc)
        conf_fg = os.path.join(work, "fg.conf")
        with open(conf_fg, "w") as f:
            f.write("root = %s\ndb = %s\nbackground = no\n" % (a, d1))
        rc, out, err, order, log = traced(["scan", "--config", conf_fg, "--scheduled"], work,
                                          trace=["ioprio_set"])
        check(rc == 0 and "IOPRIO_CLASS_IDLE" not in log and last_scan(d1)[3] == 0,
              "background = no: the service's scan in the foreground (%d)" % rc)
        rc, out, err, order, log = traced(["scan", "--config", conf_fg, "--background"], work,
                                          trace=["ioprio_set"])
        check(rc == 0 and "IOPRIO_CLASS_IDLE" in log and last_scan(d1)[3] == 1,
              "--background over background = no: the idle I/O class (%d)" % rc)

        # --- --trust-mtime over trust_mtime = no ---------------------------------
        # (r1.raw stays excluded, as the last scans of this index had it)
        moved = cfiles[3]
        os.chmod(moved, 0o600)  # its ctime moves, not its size nor its mtime
        age([moved])
        rc, out, err, order, log = traced(["scan", "--config", conf, "--exclude", "*.raw", c], c)
        check(rc == 0 and order == [moved], "trust_mtime = no, as configured: a file whose "
              "ctime alone moved is read: %s" % order)
        os.chmod(moved, 0o644)
        age([moved])
        rc, out, err, order, log = traced(["scan", "--config", conf, "--trust-mtime",
                                           "--exclude", "*.raw", c], c)
        check(rc == 0 and order == [], "--trust-mtime over it: not read: %s" % order)
    finally:
        subprocess.run(["umount", inner])

done()
