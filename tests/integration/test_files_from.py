"""`scan --files-from` reads the listed files in the plan's order, not the
list's, and ignores excludes (docs/usage.md: "They are read in the plan's
order, not the list's; excludes do not apply; nothing else is walked").

On ext4 on a loop device marked rotational (so the plan's order is
physical), files in three folders are made empty in name order and then
written, each with fsync, in a shuffled order: where their data lies is
neither their names' order nor the list's, which is shuffled again and
leaves some files out.  The configuration excludes two of the listed
folders' entries and the command line excludes every JPEG.  References:
the order in which the scan first read each file's bytes (strace,
readorder.py) against their first physical bytes as filefrag -v reports
them (FIEMAP, asked by another program), and against `seekless plan`'s
order of the whole tree; the index (sqlite3) against the list, and
xxhsum."""
import json
import os
import random

from lib import (check, db_rows, done, filefrag, loop_fs, mkcorpus, need_root, regular_files,
                 run, skip, tempdir, xxh128)
from readorder import have_strace, traced

need_root()
if not have_strace():
    skip("no strace")

with loop_fs("ext4", size_mb=64) as lfs, tempdir("ff", base="/dev/shm") as work:
    pool = os.path.join(work, "pool")
    mkcorpus(pool, "--files", 30, "--median", "12k", "--seed", 41, "--no-sync")
    jpegs = sorted(p for p in regular_files(pool) if p.lower().endswith(".jpg"))
    root = os.path.join(lfs.mnt, "photos")
    names = (["d1/f%02d.jpg" % i for i in range(8)] + ["d1/t%02d.tmp" % i for i in range(3)] +
             ["d2/g%02d.jpg" % i for i in range(8)] + ["secret/s%02d.jpg" % i for i in range(4)])
    files = [os.path.join(root, n) for n in names]
    for p in files:  # inodes in name order
        os.makedirs(os.path.dirname(p), exist_ok=True)
        open(p, "wb").close()
    rnd = random.Random(48)
    for p in rnd.sample(files, len(files)):  # blocks in another order
        with open(jpegs[files.index(p) % len(jpegs)], "rb") as src, open(p, "wb") as f:
            f.write(src.read())
            f.flush()
            os.fsync(f.fileno())
    lfs.umount()  # nothing of them in the page cache
    lfs.mount()

    unlisted = {os.path.join(root, n) for n in ("d1/f07.jpg", "d2/g00.jpg", "d1/t02.tmp")}
    listed = rnd.sample([p for p in files if p not in unlisted], len(files) - len(unlisted))
    phys = {p: filefrag(p)[0] for p in files}
    check(all(v is not None for v in phys.values()) and len(set(phys.values())) == len(files),
          "filefrag places every file, each elsewhere: %s" % phys)
    want = sorted(listed, key=lambda p: phys[p])
    check(want != sorted(listed) and want != listed,
          "the physical order is neither the names' nor the list's")

    conf = os.path.join(work, "seekless.conf")
    db = os.path.join(work, "i.db")
    with open(conf, "w") as f:
        f.write("exclude = *.tmp\nexclude = secret\ndb = %s\n" % db)
    lst = os.path.join(work, "list.txt")
    with open(lst, "w") as f:
        f.write("".join(p + "\n" for p in listed))

    rc, out, err, order, log = traced(["scan", "--config", conf, "--exclude", "*.jpg",
                                       "--files-from", lst], root)
    check(rc == 0, "scan --files-from: exit 0: %d %s" % (rc, err[-400:]))
    check(order == want, "read in physical order (filefrag):\n  read %s\n  want %s"
          % ([os.path.relpath(p, root) for p in order], [os.path.relpath(p, root) for p in want]))
    indexed = sorted(p for (p,) in db_rows(db, "SELECT path FROM files"))
    check(indexed == sorted(listed), "every listed file indexed, excludes or not, and nothing "
          "else: extra %s, missing %s" % (sorted(set(indexed) - set(listed)),
                                          sorted(set(listed) - set(indexed))))
    truth = xxh128(listed)
    check(dict(db_rows(db, "SELECT path, content_hash FROM files")) == truth,
          "with xxhsum's hashes")

    # the plan of the whole tree reads them in the same order
    rc, out, err = run("plan", "--json", root, check_rc=0)
    plan = json.loads(out)
    check([d["order"] for d in plan["devices"]] == ["physical"],
          "the plan's order is physical: %s" % [(d["order"], d["reason"])
                                                for d in plan["devices"]])
    planned = [f["path"] for f in plan["files"]]
    check([p for p in planned if p in set(listed)] == want,
          "seekless plan reads the listed files in the same order")

done()
