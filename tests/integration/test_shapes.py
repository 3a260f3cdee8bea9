"""Hostile shapes: a sparse file larger than 4 GiB (sizes and offsets past
32 bits, holes skipped when choosing the position), a directory with
100,000 entries, and nesting deeper than the walk descends.  Every file
gets exactly one correct record; the deep part is recorded as not
descended, not silently lost."""
import os
import re
import subprocess

from lib import BIN, check, db_rows, done, export, loop_fs, run, sync_fs, tempdir, xxh128

GiB = 1 << 30

with loop_fs("ext4", size_mb=2048) as fs:  # inodes for 100k files
    root = os.path.join(fs.mnt, "shapes")
    os.makedirs(root)
    # data at 1 MiB and past 4.5 GiB, holes everywhere else
    sparse = os.path.join(root, "sparse.raw")
    with open(sparse, "wb") as f:
        f.seek(1 << 20)
        f.write(b"head" * 4096)
        f.seek(4 * GiB + GiB // 2)
        f.write(b"tail" * 4096)
    size = os.path.getsize(sparse)
    check(size > 4 * GiB, "the file is past 4 GiB")

    # 100k entries in one directory (empty files cost no data blocks)
    wide = os.path.join(root, "wide")
    os.makedirs(wide)
    for i in range(100000):
        open(os.path.join(wide, "f%06d.jpg" % i), "wb").close()

    # 300 levels; the walk descends 256 (WALK_MAX_DEPTH) and records the rest
    deep = root
    for i in range(300):
        deep = os.path.join(deep, "d")
    os.makedirs(deep)
    with open(os.path.join(deep, "bottom.jpg"), "wb") as f:
        f.write(b"x")

    sync_fs(fs.mnt)  # allocated, not delayed: FIEMAP has positions to give
    db = os.path.join(fs.mnt, "i.db")
    p = subprocess.run([BIN, "scan", "--db", db, root], capture_output=True, text=True)
    print(p.stdout[-1200:], p.stderr[-600:])
    check(p.returncode == 1, "finished, with the too-deep folder as an error: %d" % p.returncode)
    recs = {r["path"]: r for r in export(db)}
    s = recs.get(sparse)
    check(s is not None and s["size"] == size, "the sparse file's size is exact: %r" %
          (s and s["size"]))
    check(s is not None and s["content_hash"] == xxh128([sparse])[sparse],
          "its hash covers all %d bytes" % size)
    check(s is not None and s["phys_offset"] is not None and s["fragments"] >= 2,
          "its position is its first data, its fragments counted: %r"
          % ((s and (s["phys_offset"], s["fragments"])),))
    n_wide = sum(1 for k in recs if k.startswith(wide + "/"))
    check(n_wide == 100000, "all 100,000 entries of one directory: %d" % n_wide)
    check(not any(k.endswith("/bottom.jpg") for k in recs), "nothing below the depth limit")
    deep_err = [r for r in db_rows(db, "SELECT path, error FROM files WHERE error LIKE "
                                       "'%nested too deep%'")]
    check(len(deep_err) == 1, "the folder not descended is recorded: %r" % deep_err[:1])
    m = re.search(r"(\d+) dirs", p.stdout)
    check(m is not None and int(m.group(1)) >= 256, "walked down to the limit")
done()
