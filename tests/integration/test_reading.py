"""How the scan reads, against what the kernel and Debian's tools say:

- Page-cache etiquette (fincore from util-linux as the oracle): files the
  scan brought into the page cache leave it again; files that were cached
  before the scan stay cached; with --keep-cache everything read stays.
- A file that shrinks while it is being read gets the warning "shrank
  while being read", and one written to while being read "modified while
  being read"; both are stored with what was read, and the next scan reads
  them again and gets them right (xxh128sum).  The scan is stopped
  (SIGSTOP) halfway through a 256 MiB file, read in 4 MiB chunks, and the
  file is changed before it goes on (SIGCONT).
"""
import json
import os
import re
import signal
import subprocess
import time

from lib import BIN, check, db_rows, done, loop_fs, mkcorpus, regular_files, run, tempdir

BIG = 256 << 20


def evict(paths):
    for p in paths:
        fd = os.open(p, os.O_RDONLY)
        os.fdatasync(fd)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        os.close(fd)


def resident(paths):
    """Bytes of each file in the page cache, by fincore."""
    out = {}
    for i in range(0, len(paths), 100):
        chunk = paths[i:i + 100]
        p = subprocess.run(["fincore", "--bytes", "--json", "--output", "RES,FILE"] + chunk,
                           capture_output=True, text=True, check=True)
        for row in json.loads(p.stdout)["fincore"]:
            out[row["file"]] = int(row["res"])
    return out


def warm(paths):
    for p in paths:
        with open(p, "rb") as f:
            while f.read(1 << 20):
                pass


def rchar(pid):
    try:
        with open("/proc/%d/io" % pid) as f:
            for line in f:
                if line.startswith("rchar:"):
                    return int(line.split()[1])
    except OSError:
        return None
    return 0


def disturb(db, root, big, change):
    """Scan, stopped when about a quarter of big has been read; change(big);
    go on.  Returns the warnings stored for big, or None when the stop did
    not land inside the file's reading (then the caller tries again)."""
    evict([big])
    p = subprocess.Popen([BIN, "scan", "--db", db, "--mem", "8M", "--quiet", root],
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    landed = False
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        n = rchar(p.pid)
        if n is None:
            break
        if n > BIG // 4:
            os.kill(p.pid, signal.SIGSTOP)
            landed = rchar(p.pid) < BIG * 3 // 4
            change(big)
            os.kill(p.pid, signal.SIGCONT)
            break
    err = p.communicate()[1]
    check(p.returncode == 0, "the disturbed scan finishes: %d %s" % (p.returncode, err[-300:]))
    if not landed:
        return None
    rows = db_rows(db, "SELECT warnings FROM files WHERE path=? AND deleted_at IS NULL", (big,))
    return rows[0][0] if rows else ""


def xxh(path):
    return subprocess.run(["xxh128sum", path], capture_output=True, text=True,
                          check=True).stdout.split()[0]


with tempdir("reading") as work, loop_fs("ext4", 640) as lfs:
    root = os.path.join(lfs.mnt, "photos")
    mkcorpus(root, "--files", 60, "--median", "40k", "--seed", 8, "--no-sync")
    files = sorted(regular_files(root))
    subprocess.run(["sync"], check=True)

    # --- page-cache etiquette --------------------------------------------
    db = os.path.join(work, "cache.db")
    evict(files)
    check(all(v == 0 for v in resident(files).values()), "nothing cached before the scan")
    rc, out, err = run("scan", "--db", db, "--quiet", root)
    check(rc == 0, "scan: %s" % err[-300:])
    res = resident(files)
    check(all(v == 0 for v in res.values()),
          "the scan took its pages back out: %s" % [p for p, v in res.items() if v][:3])
    kept = files[::3]
    warm(kept)
    rc, out, err = run("scan", "--db", db, "--quiet", "--full", root)
    res = resident(files)
    check(all(res[p] == os.path.getsize(p) or res[p] >= os.path.getsize(p) - 4096 for p in kept),
          "files cached before the scan stay cached")
    check(all(res[p] == 0 for p in files if p not in kept), "the others are not")
    evict(files)
    rc, out, err = run("scan", "--db", db, "--quiet", "--full", "--keep-cache", root)
    res = resident(files)
    check(all(res[p] >= os.path.getsize(p) - 4096 for p in files), "--keep-cache keeps them")

    # --- files that change while being read -----------------------------
    big = os.path.join(root, "video.mov")
    with open(big, "wb") as f:
        for i in range(BIG >> 20):
            f.write(os.urandom(1 << 20))
    subprocess.run(["sync"], check=True)

    def shrink(p):
        os.truncate(p, 8 << 20)

    def modify(p):
        with open(p, "r+b") as f:
            f.seek(BIG - 100)
            f.write(b"edited!")

    for name, change, want in (("shrank", shrink, r"shrank while being read \((\d+) of %d bytes\)"
                                % BIG), ("modified", modify, r"modified while being read")):
        got = None
        for attempt in range(6):
            if name == "modified" and os.path.getsize(big) != BIG:
                with open(big, "wb") as f:
                    for i in range(BIG >> 20):
                        f.write(os.urandom(1 << 20))
                subprocess.run(["sync"], check=True)
            dbx = os.path.join(work, "%s-%d.db" % (name, attempt))
            got = disturb(dbx, root, big, change)
            if got is not None:
                break
            if name == "shrank":  # put it back for the next try
                with open(big, "wb") as f:
                    for i in range(BIG >> 20):
                        f.write(os.urandom(1 << 20))
                subprocess.run(["sync"], check=True)
        print("%s: the stop landed inside the read at attempt %d" % (name, attempt + 1))
        check(got is not None, "%s: the stop landed inside the file's reading" % name)
        if got is None:
            continue
        check(re.search(want, got or ""), "%s: the warning is stored: %r" % (name, got))
        time.sleep(0.05)
        rc, out, err = run("scan", "--db", dbx, "--json", root)
        j = json.loads(out)
        check(rc == 0 and j["files_read"] == 1, "%s: the next scan reads it again: %s" %
              (name, out[:300]))
        rows = db_rows(dbx, "SELECT size, content_hash, warnings FROM files WHERE path=?"
                            " AND deleted_at IS NULL", (big,))
        check(rows == [(os.path.getsize(big), xxh(big), None)],
              "%s: and gets it right: %s" % (name, rows))
done()
