"""How the scan reads, against what the kernel and Debian's tools say:

- Page-cache etiquette, with two oracles: what the kernel holds (fincore
  from util-linux) and what the scan asked of it (strace's record of its
  fadvise64 calls).  Files the scan brought into the page cache leave it
  again; files that were cached before the scan stay cached; with
  --keep-cache everything read stays and nothing is dropped.  Residency
  can also fall for a reason of the kernel's own (reclaim under memory
  pressure, as a CI machine's neighbours may cause): a residency check that
  fails while /proc/vmstat shows pages stolen is tried again, and says so.
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

from lib import BIN, check, db_rows, done, loop_fs, mkcorpus, regular_files, run, sync_fs, tempdir

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


def reclaimed():
    """Pages the kernel has reclaimed since boot (all pgsteal_* counters)."""
    with open("/proc/vmstat") as f:
        return sum(int(v) for k, v in (line.split() for line in f)
                   if k.startswith("pgsteal_"))


def dontneeds(trace, paths):
    """Paths the traced scan dropped from the page cache: its
    fadvise64(fd, ..., POSIX_FADV_DONTNEED) calls, fds resolved by strace -y."""
    dropped = set()
    with open(trace) as f:
        for line in f:
            m = re.search(r"fadvise64\(\d+<([^>]*)>.*POSIX_FADV_DONTNEED", line)
            if m:
                dropped.add(m.group(1))
    return {p for p in paths if p in dropped}


def traced_scan(work, *args):
    """Runs a scan under strace; returns (rc, stderr, trace file)."""
    trace = os.path.join(work, "fadvise.trace")
    # LeakSanitizer cannot run under ptrace (the sanitizer build's leak
    # check is the other tests' business)
    env = dict(os.environ)
    env["ASAN_OPTIONS"] = (env.get("ASAN_OPTIONS", "") + ":detect_leaks=0").lstrip(":")
    p = subprocess.run(["strace", "-f", "-qq", "-y", "-e", "trace=fadvise64", "-o", trace,
                        BIN] + list(args), capture_output=True, text=True, env=env)
    return p.returncode, p.stderr, trace


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
    sync_fs(root)

    # --- page-cache etiquette --------------------------------------------
    db = os.path.join(work, "cache.db")
    kept = files[::3]
    others = [p for p in files if p not in kept]

    def full_size(p, res):
        return res[p] >= os.path.getsize(p) - 4096

    # What the scan asks of the kernel, recorded by strace: deterministic.
    evict(files)
    rc, err, trace = traced_scan(work, "scan", "--db", db, "--quiet", root)
    check(rc == 0, "traced scan: %s" % err[-300:])
    check(dontneeds(trace, files) == set(files),
          "the scan drops every file it brought in: %d of %d"
          % (len(dontneeds(trace, files)), len(files)))
    # A file warmed before the scan may still lose pages before the scan
    # opens it (rarely: once in about six sanitizer runs here, with no
    # reclaim in /proc/vmstat); the scan is then right to drop it.  So a
    # kept file dropped counts against us when every warmed file was whole
    # in the cache just before the scan (fincore): then the scan saw it
    # cached and dropped it anyway.  Otherwise tried again, up to 4 times,
    # saying so.
    for attempt in range(4):
        evict(files)
        warm(kept)
        before = resident(kept)
        rc, err, trace = traced_scan(work, "scan", "--db", db, "--quiet", "--full", root)
        check(rc == 0, "traced --full scan: %s" % err[-300:])
        dropped = dontneeds(trace, files)
        lost = [p for p in kept if before[p] < os.path.getsize(p)]
        if not (dropped & set(kept)) or not lost:
            break
        print("attempt %d: %d files cached before the scan dropped; %d of the %d warmed were"
              " not whole in the cache just before it: again" %
              (attempt + 1, len(dropped & set(kept)), len(lost), len(kept)))
    check(dropped == set(others), "it drops none of the files cached before it (%d dropped),"
          " all the others (%d of %d)" % (len(dropped & set(kept)), len(dropped & set(others)),
                                          len(others)))
    evict(files)
    rc, err, trace = traced_scan(work, "scan", "--db", db, "--quiet", "--full", "--keep-cache",
                                 root)
    check(rc == 0, "traced --keep-cache scan: %s" % err[-300:])
    check(not dontneeds(trace, files), "--keep-cache drops nothing: %s"
          % sorted(dontneeds(trace, files))[:3])

    # What the kernel holds afterwards, by fincore.
    def attempt(label, prepare, args, ok):
        for i in range(5):
            prepare()
            before = reclaimed()
            rc, out, err = run("scan", "--db", db, "--quiet", *args)
            check(rc == 0, "%s: scan: %s" % (label, err[-300:]))
            res = resident(files)
            bad = [p for p in files if not ok(p, res)]
            stolen = reclaimed() - before
            if not bad:
                return
            print("%s: %d files not as expected, e.g. %s (%d of %d bytes); kernel reclaimed"
                  " %d pages meanwhile" % (label, len(bad), bad[0], res[bad[0]],
                                           os.path.getsize(bad[0]), stolen))
            if stolen == 0:
                break
        check(False, label)

    evict(files)
    check(all(v == 0 for v in resident(files).values()), "nothing cached before the scan")
    attempt("the scan took its pages back out", lambda: evict(files), ("--full", root),
            lambda p, res: res[p] == 0)
    attempt("files cached before the scan stay cached, the others are not",
            lambda: (evict(files), warm(kept)), ("--full", root),
            lambda p, res: full_size(p, res) if p in kept else res[p] == 0)
    attempt("--keep-cache keeps them", lambda: evict(files), ("--full", "--keep-cache", root),
            full_size)

    # --- files that change while being read -----------------------------
    big = os.path.join(root, "video.mov")
    with open(big, "wb") as f:
        for i in range(BIG >> 20):
            f.write(os.urandom(1 << 20))
    sync_fs(root)

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
                sync_fs(root)
            dbx = os.path.join(work, "%s-%d.db" % (name, attempt))
            got = disturb(dbx, root, big, change)
            if got is not None:
                break
            if name == "shrank":  # put it back for the next try
                with open(big, "wb") as f:
                    for i in range(BIG >> 20):
                        f.write(os.urandom(1 << 20))
                sync_fs(root)
        print("%s: the stop landed inside the read at attempt %d" % (name, attempt + 1))
        check(got is not None, "%s: the stop landed inside the file's reading" % name)
        if got is None:
            continue
        check(re.search(want, got or ""), "%s: the warning is stored: %r" % (name, got))
        time.sleep(0.05)
        rc, out, err = run("scan", "--db", dbx, "--json", root)
        j = json.loads(out)
        # (and any picture whose hash the stopped scan left for the next:
        # with the disk ahead of slow extractors, as under ASan, it may)
        check(rc == 0 and j["files_read"] - j["rehashed"] == 1 and j["changed"] == 1,
              "%s: the next scan reads it again, and nothing else: %s" % (name, out[:300]))
        rows = db_rows(dbx, "SELECT size, content_hash, warnings FROM files WHERE path=?"
                            " AND deleted_at IS NULL", (big,))
        check(rows == [(os.path.getsize(big), xxh(big), None)],
              "%s: and gets it right: %s" % (name, rows))
done()
