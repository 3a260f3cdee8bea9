"""The index always matches the tree: a model-based test of incremental scans.

Random sequences of tree mutations, each batch followed by a scan, on two
real file systems under one root (ext4 on a "rotational" loop device, so the
plan reads in physical order with one reader; btrfs mounted below it, read
in fs order with several readers; `--cross-fs`).  Some scans are killed
with SIGKILL at a random moment first; others are stopped (SIGSTOP) at a
random moment while the tree changes under them (files vanish between walk
and read, shrink, are replaced) and then resumed.  The scans run as an
unprivileged user, so that losing read permission is real.

After every complete, undisturbed scan, against what our code did not
compute (os.walk, os.stat, xxh128sum, SQLite's own integrity check):
  - exit status 0, or 1 exactly when some file or directory is unreadable;
    never 3;
  - the live records are exactly the regular files of the tree: same paths,
    sizes and XXH3-128; unreadable files carry their error; no path twice;
    `PRAGMA integrity_check` is ok;
  - a renamed or moved file keeps its record (same id, first_scan
    unchanged); a replaced one (same path, another file) keeps the path's
    record; a new one gets a new record; a deleted one is marked deleted.
    A file renamed and rewritten in one interval keeps its record too (by
    its birth time, which ext4 and btrfs keep).  Where the rules of
    db/diff.c leave the record open (hard links, a move across file systems
    whose old path was reused), the lineage check is skipped for that file, and
    the summary counts how many checks were made.
After a killed or disturbed scan: its exit status (when it was not killed)
is 0 or 1, the database passes integrity_check and has no path twice.
Other scans are raced: while they read, a few folders are swapped again and
again with links to folders outside the tree holding files of the same
names; afterwards no record may hold an outside file's hash or a path
outside the root (docs/security.md); lineage is left open until the next
check (a file whose stat the raced scan refused is known by its path only,
so a renamed one loses its record), contents are not.

On a failure it prints the seed and the operations since the last good
check, and stops.

    test_model.py [--seed N] [--seconds S] [--mutations N] [--quiet]

Environment: MODEL_LOG=FILE writes every operation and scan of the run to
FILE (to trace one path's history back past the last good check);
MODEL_KEEP_DB=DIR keeps the failing run's database there.

CI runs it with fixed seeds and 800 mutations each (tests/CMakeLists.txt:
every seed that ever found a bug); without --seed a run draws one, for
campaigns (docs/benchmarks.md, "The model test").
"""
import argparse
import collections
import ctypes
import filecmp
import os
import random
import shutil
import signal
import sqlite3
import subprocess
import sys
import time

from lib import BIN, loop_fs, need_root, skip, tempdir

USER = "nobody"

# Under ASan (tests/run.sh --sanitize) the scans here run as nobody, with no
# new privileges, confined: LeakSanitizer's exit-time stop-the-world was
# seen to hang once in hundreds of such scans (its tracer waited for a
# stop that never came while the scan spun in sched_yield), and the test
# then timed out at 600 s.  Memory errors
# are still caught here; leaks are checked by every other test under ASan.
if "ASAN_OPTIONS" in os.environ:
    os.environ["ASAN_OPTIONS"] += ":detect_leaks=0"

ap = argparse.ArgumentParser()
# MODEL_LOG=FILE: every operation and scan of the run, for tracing one
# path's history back past the last good check
FULL_LOG = open(os.environ["MODEL_LOG"], "w") if os.environ.get("MODEL_LOG") else None
ap.add_argument("--seed", type=int, default=None)
ap.add_argument("--seconds", type=float, default=50.0)
ap.add_argument("--mutations", type=int, default=0, help="stop after this many (0: by time)")
ap.add_argument("--quiet", action="store_true")
ap.add_argument("--progress", type=int, default=0, help="a line every N mutations")
args = ap.parse_args()
seed = args.seed if args.seed is not None else random.SystemRandom().randrange(1 << 32)
rng = random.Random(seed)
print("model test: seed %d" % seed, flush=True)

need_root()
if shutil.which("xxh128sum") is None:
    skip("xxh128sum not installed (xxhash)")


class Failure(Exception):
    pass


class Obj:
    """One file's identity in the model: its lineage (which record it should
    have) and what happened to it since the last check."""
    counter = 0

    def __init__(self, fs):
        Obj.counter += 1
        self.lin = Obj.counter
        self.fs = fs              # "a" (ext4) or "b" (btrfs)
        self.locked = False       # chmod 000
        self.group = None         # hard links of one inode share a group
        self.reset()

    def reset(self, path=None):
        self.renamed = False      # path changed within its file system
        self.modified = False     # size or mtime changed (identity claims need both)
        self.content = False      # bytes changed in any way
        self.cross_from = None    # moved across file systems from this path
        self.linked = False       # shared an inode with another path
        self.touched = False      # changed while a scan was stopped mid-way
        self.onto_same = False    # copied across file systems onto a file with its
                                  # very bytes: the index sees that file unchanged
        self.was_locked = self.locked
        self.paths = {path} if path else set()  # every path it had since the check


class Model:
    def __init__(self, root, other):
        self.root, self.other = root, other
        self.tree = {}            # path -> Obj
        self.dirs = {root, other}
        self.locked_dirs = set()
        self.tombs = set()        # paths whose record was marked deleted
        self.rec = {}             # lin -> (record id, first_scan), at the last check
        self.gone = {}            # lin -> Obj deleted or replaced since the last check
        self.disturbing = False   # a scan is stopped: what changes now is "touched"
        self.ops = []             # since the last good check
        self.stats = collections.Counter()

    def fs_of(self, path):
        return "b" if path == self.other or path.startswith(self.other + "/") else "a"

    def add(self, path, o):
        o.paths.add(path)
        if self.disturbing:
            o.touched = True
        self.tree[path] = o

    def drop(self, path):
        o = self.tree.pop(path)
        self.gone[o.lin] = o
        return o

    def gone_at(self, path):
        """The file just dropped from path by a move onto it."""
        return self.last_dropped

    def log(self, *what):
        self.ops.append(" ".join(str(w) for w in what))
        if FULL_LOG:
            print(self.ops[-1], file=FULL_LOG, flush=True)
        self.stats["op " + what[0]] += 1
        self.stats["mutations"] += 1


def content(n):
    # random bytes that no parser takes for a format (1 file in 65,536 began
    # with a JPEG's FF D8 and rightly got a decoder's error); drawn as before,
    # so that a seed still makes the same run
    b = bytearray(rng.randbytes(n))
    b[:len(NOT_A_FORMAT)] = NOT_A_FORMAT[:n]
    return bytes(b)


NOT_A_FORMAT = b"model\n"


def random_size():
    r = rng.random()
    if r < 0.05:
        return 0
    if r < 0.85:
        return rng.randrange(1, 64 << 10)
    if r < 0.97:
        return rng.randrange(64 << 10, 600 << 10)
    return rng.randrange(1 << 20, 3 << 20)  # streamed: --mem 4M reads whole up to 1 MiB


NAMES = ["IMG_%04d.JPG", "DSC%05d.jpg", "edit %d.jpg", "raw_%d.cr2", "vidéo-%d.mp4", "x%d"]


def fresh_name(m, d):
    for _ in range(100):
        p = os.path.join(d, rng.choice(NAMES) % rng.randrange(10000))
        if p not in m.tree and p not in m.dirs and not os.path.lexists(p):
            return p
    raise Failure("no fresh name in " + d)


def live_dirs(m, fs=None):
    out = [d for d in m.dirs if not any(d == l or d.startswith(l + "/") for l in m.locked_dirs)]
    if fs:
        out = [d for d in out if m.fs_of(d) == fs]
    return sorted(out)


def files(m, fs=None, unlocked_dirs=True):
    out = []
    for p, o in m.tree.items():
        if fs and o.fs != fs:
            continue
        if unlocked_dirs and any(p.startswith(l + "/") for l in m.locked_dirs):
            continue
        out.append(p)
    return sorted(out)


def write(path, data):
    with open(path, "wb") as f:
        f.write(data)


def mark_links(m, path):
    """Every path sharing path's inode is linked (lineage left open)."""
    try:
        st = os.stat(path)
    except OSError:
        return
    if st.st_nlink > 1:
        for p, o in m.tree.items():
            try:
                s2 = os.stat(p)
            except OSError:
                continue
            if (s2.st_dev, s2.st_ino) == (st.st_dev, st.st_ino):
                o.linked = True


# ---- the operations: each changes the real tree and the model alike ------

def op_create(m):
    d = rng.choice(live_dirs(m))
    if rng.random() < 0.3 and len(m.dirs) < 40:
        sub = os.path.join(d, rng.choice(["2024", "2025-06", "Trip", "misc", "ünï"]))
        if sub not in m.dirs and sub not in m.tree:
            os.makedirs(sub, exist_ok=True)
            m.dirs.add(sub)
            d = sub
    p = fresh_name(m, d)
    write(p, content(random_size()))
    m.add(p, Obj(m.fs_of(p)))
    m.log("create", p)


def op_delete(m):
    fs = files(m)
    if not fs:
        return op_create(m)
    p = rng.choice(fs)
    mark_links(m, p)
    os.unlink(p)
    m.drop(p)
    m.log("delete", p)


def _move(m, src, dst, kind):
    if os.path.exists(dst) and os.path.samefile(src, dst):
        # two links of one inode: rename(2) does nothing, mv refuses
        m.log(kind + " (same file: nothing happens)", src, "->", dst)
        return
    o = m.tree.pop(src)
    m.last_dropped = None
    if dst in m.tree:
        mark_links(m, dst)
        m.last_dropped = m.drop(dst)
    m.add(dst, o)
    if m.fs_of(src) == m.fs_of(dst):
        os.rename(src, dst)
        o.renamed = True
    else:
        if os.path.exists(dst) and os.stat(dst).st_nlink > 1:
            # copy2 (like mv) writes into the existing inode: o's bytes are
            # now every other link's too
            o.group = m.gone_at(dst).group
            o.linked = True
        if os.path.exists(dst) and filecmp.cmp(src, dst, shallow=False):
            # the same path, inode and bytes as before: no move to see,
            # and the record there rightly stays (db/writer.c, relink)
            o.onto_same = True
        shutil.copy2(src, dst)  # what mv does across file systems
        os.unlink(src)
        if o.cross_from is None:
            o.cross_from = src
        o.fs = m.fs_of(dst)
    m.log(kind, src, "->", dst)


def op_rename(m):
    fs = files(m)
    if not fs:
        return op_create(m)
    src = rng.choice(fs)
    _move(m, src, fresh_name(m, os.path.dirname(src)), "rename")


def op_rename_onto_tomb(m):
    """A rename onto a path whose record is deleted but not purged."""
    fs = files(m)
    free = sorted(t for t in m.tombs if t not in m.tree and os.path.isdir(os.path.dirname(t))
                  and not os.path.lexists(t) and os.path.dirname(t) in live_dirs(m))
    if not fs or not free:
        return op_rename(m)
    dst = rng.choice(free)
    same = [p for p in fs if m.fs_of(p) == m.fs_of(dst)]
    if not same:
        return op_rename(m)
    _move(m, rng.choice(same), dst, "rename-onto-deleted")


def op_rename_over(m):
    fs = files(m)
    if len(fs) < 2:
        return op_create(m)
    src, dst = rng.sample(fs, 2)
    if m.fs_of(src) != m.fs_of(dst):
        return op_move_cross(m, src, dst)
    _move(m, src, dst, "rename-over")


def op_swap(m):
    fs = files(m, rng.choice("ab"))
    if len(fs) < 2:
        return op_create(m)
    a, b = rng.sample(fs, 2)
    tmp = a + ".swap-tmp"
    os.rename(a, tmp)
    os.rename(b, a)
    os.rename(tmp, b)
    oa, ob = m.tree.pop(a), m.tree.pop(b)
    m.add(a, ob)
    m.add(b, oa)
    oa.renamed = ob.renamed = True
    m.log("swap", a, "<->", b)


def op_move_dir(m):
    fs = files(m)
    if not fs:
        return op_create(m)
    src = rng.choice(fs)
    dirs = [d for d in live_dirs(m, m.fs_of(src)) if d != os.path.dirname(src)]
    if not dirs:
        return op_rename(m)
    _move(m, src, fresh_name(m, rng.choice(dirs)), "move")


def op_move_cross(m, src=None, dst=None):
    if src is None:
        fs = files(m)
        if not fs:
            return op_create(m)
        src = rng.choice(fs)
        other = "b" if m.fs_of(src) == "a" else "a"
        dst = fresh_name(m, rng.choice(live_dirs(m, other)))
    _move(m, src, dst, "move-cross-fs")


def op_rewrite(m):
    fs = files(m)
    if not fs:
        return op_create(m)
    p = rng.choice(fs)
    o = m.tree[p]
    if o.locked:
        return
    old = os.path.getsize(p)
    n = old if rng.random() < 0.3 else random_size()
    time.sleep(0.002)  # a new mtime tick even on a coarse clock
    with open(p, "r+b") as f:  # in place: same inode
        f.write(content(n))
        f.truncate(n)
    o.modified = o.content = True
    o.touched |= m.disturbing
    mark_links(m, p)
    m.log("rewrite", p, old, "->", n)


def op_rewrite_keep_mtime(m):
    """Same size, new bytes, the mtime put back: only the ctime moves."""
    fs = [p for p in files(m) if os.path.getsize(p) > 0 and not m.tree[p].locked]
    if not fs:
        return op_create(m)
    p = rng.choice(fs)
    st = os.stat(p)
    with open(p, "r+b") as f:
        off = rng.randrange(st.st_size)
        n = min(st.st_size - off, rng.randrange(1, 4096))
        f.seek(off)
        old = f.read(n)
        f.seek(off)
        f.write(bytes(b ^ 0x5A for b in old))
    os.utime(p, ns=(st.st_atime_ns, st.st_mtime_ns))
    m.tree[p].content = True
    m.tree[p].touched |= m.disturbing
    mark_links(m, p)
    m.log("rewrite-keep-mtime", p, "at", off, n)


def op_truncate(m):
    fs = [p for p in files(m) if os.path.getsize(p) > 0 and not m.tree[p].locked]
    if not fs:
        return op_create(m)
    p = rng.choice(fs)
    n = rng.randrange(os.path.getsize(p))
    time.sleep(0.002)
    os.truncate(p, n)
    m.tree[p].modified = m.tree[p].content = True
    m.tree[p].touched |= m.disturbing
    mark_links(m, p)
    m.log("truncate", p, n)


def op_atomic_replace(m):
    """An editor's save: a new file renamed over the old one."""
    fs = files(m)
    if not fs:
        return op_create(m)
    p = rng.choice(fs)
    tmp = p + ".tmp~"
    write(tmp, content(random_size()))
    mark_links(m, p)
    os.rename(tmp, p)
    m.drop(p)
    m.add(p, Obj(m.fs_of(p)))
    m.log("atomic-replace", p)


def op_hardlink(m):
    fs = files(m)
    if not fs:
        return op_create(m)
    src = rng.choice(fs)
    dst = fresh_name(m, rng.choice(live_dirs(m, m.fs_of(src))))
    os.link(src, dst)
    o = Obj(m.fs_of(dst))
    if m.tree[src].group is None:
        Obj.counter += 1
        m.tree[src].group = Obj.counter
    o.group = m.tree[src].group
    o.locked = m.tree[src].locked
    o.was_locked = o.locked
    m.add(dst, o)
    mark_links(m, dst)
    m.log("hardlink", src, "->", dst)


def op_file_to_dir(m):
    fs = files(m)
    if not fs:
        return op_create(m)
    p = rng.choice(fs)
    mark_links(m, p)
    os.unlink(p)
    m.drop(p)
    os.mkdir(p)
    m.dirs.add(p)
    c = os.path.join(p, "inside.jpg")
    write(c, content(random_size()))
    m.add(c, Obj(m.fs_of(c)))
    m.log("file-to-dir", p)


def op_dir_to_file(m):
    cands = [d for d in live_dirs(m) if d not in (m.root, m.other)
             and not any(x == d or x.startswith(d + "/") for x in m.locked_dirs)]
    if not cands:
        return op_file_to_dir(m)
    d = rng.choice(cands)
    for p in [p for p in m.tree if p.startswith(d + "/")]:
        mark_links(m, p)
        m.drop(p)
    for x in [x for x in m.dirs if x == d or x.startswith(d + "/")]:
        m.dirs.discard(x)
    shutil.rmtree(d)
    write(d, content(random_size()))
    m.add(d, Obj(m.fs_of(d)))
    m.log("dir-to-file", d)


def op_rename_dir(m):
    cands = [d for d in live_dirs(m) if d not in (m.root, m.other)]
    if not cands:
        return op_create(m)
    d = rng.choice(cands)
    dst = fresh_name(m, os.path.dirname(d))
    os.rename(d, dst)
    moved = {}
    for p in list(m.tree):
        if p.startswith(d + "/"):
            o = m.tree.pop(p)
            o.renamed = True
            moved[dst + p[len(d):]] = o
    for p, o in moved.items():
        m.add(p, o)
    m.dirs = {(dst + x[len(d):]) if (x == d or x.startswith(d + "/")) else x for x in m.dirs}
    m.locked_dirs = {(dst + x[len(d):]) if x.startswith(d + "/") else x for x in m.locked_dirs}
    m.log("rename-dir", d, "->", dst)


def op_chmod_file(m):
    fs = files(m)
    if not fs:
        return op_create(m)
    p = rng.choice(fs)
    lock = bool(os.stat(p).st_mode & 0o004)
    os.chmod(p, 0o000 if lock else 0o644)
    m.tree[p].locked = lock  # and every other link's: full_check reads the modes
    m.log("chmod", p, "000" if lock else "644")


def op_lock_dir(m):
    cands = [d for d in live_dirs(m) if d not in (m.root, m.other)]
    if not cands or m.locked_dirs:
        return op_chmod_file(m)
    d = rng.choice(cands)
    os.chmod(d, 0o000)
    m.locked_dirs.add(d)
    m.log("lock-dir", d)


def op_symlink(m):
    fs = files(m)
    if not fs:
        return op_create(m)
    src = rng.choice(fs)
    dst = fresh_name(m, rng.choice(live_dirs(m)))
    os.symlink(src, dst)
    m.log("symlink", dst, "->", src)  # never indexed: not a regular file


OPS = [(op_create, 14), (op_delete, 8), (op_rename, 6), (op_rename_onto_tomb, 4),
       (op_rename_over, 4), (op_swap, 3), (op_move_dir, 5), (op_move_cross, 4),
       (op_rewrite, 5), (op_rewrite_keep_mtime, 5), (op_truncate, 3), (op_atomic_replace, 3),
       (op_hardlink, 2), (op_file_to_dir, 1), (op_dir_to_file, 1), (op_rename_dir, 2),
       (op_chmod_file, 2), (op_lock_dir, 1), (op_symlink, 1)]
# what may happen while a scan is stopped in the middle
DISTURB = [op_delete, op_rewrite, op_rewrite_keep_mtime, op_truncate, op_rename, op_create,
           op_atomic_replace, op_file_to_dir]


def pick(ops):
    total = sum(w for _, w in ops)
    r = rng.uniform(0, total)
    for f, w in ops:
        r -= w
        if r <= 0:
            return f
    return ops[-1][0]


# ---- scans ---------------------------------------------------------------

def scan_cmd(db, cfg, root):
    # setpriv execs (runuser would fork, and a SIGKILL would miss the scan)
    return ["setpriv", "--reuid", USER, "--regid", "nogroup", "--clear-groups", BIN, "scan",
            "--db", db, "--config", cfg, "--cross-fs", "--mem", "4M", "--no-progress", "--quiet",
            root]


def run_scan(db, cfg, root):
    t = time.monotonic()
    p = subprocess.run(scan_cmd(db, cfg, root), capture_output=True, text=True)
    return p.returncode, p.stderr, time.monotonic() - t


def db_read(db, sql, args=()):
    con = sqlite3.connect("file:%s?mode=ro" % db, uri=True)
    try:
        return con.execute(sql, args).fetchall()
    finally:
        con.close()


def hand_back(dbdir):
    """What our SQLite reads left behind must stay the scan user's."""
    import pwd
    pw = pwd.getpwnam(USER)
    for f in os.listdir(dbdir):
        os.chown(os.path.join(dbdir, f), pw.pw_uid, pw.pw_gid)


def weak_checks(m, db, dbdir, rc, what):
    if rc is not None and rc not in (0, 1):
        raise Failure("%s scan exited %d" % (what, rc))
    if rc is None and not os.path.exists(db):
        return  # killed before it made the index: nothing to check yet
    ok = db_read(db, "PRAGMA integrity_check")
    if ok != [("ok",)]:
        raise Failure("%s scan: integrity_check: %s" % (what, ok[:5]))
    if rc is None and db_read(db, "SELECT count(*) FROM sqlite_master") == [(0,)]:
        # killed after SQLite made the file and before the schema's first
        # transaction committed (a loaded machine's kill came that early
        # once, stress run 6): an empty database, which the next scan
        # fills.  Each migration is one transaction, so a schema is there
        # whole or not at all (db/schema.c).
        return
    dup = db_read(db, "SELECT path, count(*) FROM files WHERE deleted_at IS NULL"
                      " GROUP BY path HAVING count(*) > 1")
    if dup:
        raise Failure("%s scan: paths twice: %s" % (what, dup[:5]))
    hand_back(dbdir)


def real_files(m):
    found = {}
    for d, dirs, fs in os.walk(m.root):
        for f in fs:
            p = os.path.join(d, f)
            if os.path.isfile(p) and not os.path.islink(p):
                found[p] = os.stat(p)
    return found


def xxh128(paths):
    out = {}
    for i in range(0, len(paths), 200):
        chunk = paths[i:i + 200]
        p = subprocess.run(["xxh128sum"] + chunk, capture_output=True, check=True)
        for line, path in zip(p.stdout.splitlines(), chunk):
            out[path] = line.split(b" ", 1)[0].decode()
    return out


def full_check(m, db, dbdir, rc, err, scan_id_floor):
    real = real_files(m)
    # whether the scan's user may read a file is the file's mode, whatever
    # the model thinks (copy2 and hard links share modes around)
    for p, o in m.tree.items():
        if p in real:
            o.locked = not (real[p].st_mode & 0o004)
    unreadable = any(o.locked for o in m.tree.values()) or bool(m.locked_dirs)
    if rc != (1 if unreadable else 0):
        raise Failure("scan exited %d (unreadable files: %s): %s" % (rc, unreadable, err[-600:]))
    weak_checks(m, db, dbdir, rc, "the")
    if set(real) != set(m.tree):
        raise Failure("the model lost track of the tree: only real %s, only model %s" %
                      (sorted(set(real) - set(m.tree))[:5], sorted(set(m.tree) - set(real))[:5]))
    live = {r[0]: r[1:] for r in db_read(
        db, "SELECT path, id, size, content_hash, error, first_scan FROM files"
            " WHERE deleted_at IS NULL")}
    recs = {r[0]: r[1:] for r in db_read(db, "SELECT id, path, deleted_at FROM files")}
    hand_back(dbdir)
    if set(live) != set(real):
        extra = sorted(set(live) - set(real))[:5]
        raise Failure("live records are not the tree's files: extra %s, missing %s; the extra "
                      "records: %s; the scan said: %s" %
                      (extra, sorted(set(real) - set(live))[:5],
                       db_read(db, "SELECT * FROM files WHERE deleted_at IS NULL AND path IN (%s)"
                               % ",".join("?" * len(extra)), extra) if extra else [],
                       err[-800:]))
    readable = sorted(p for p, o in m.tree.items() if not o.locked)
    sums = xxh128(readable)
    for p, st in real.items():
        rid, size, h, error, first = live[p]
        if size != st.st_size:
            raise Failure("%s: size %s, stat says %d" % (p, size, st.st_size))
        if m.tree[p].locked:
            if not error or "Permission denied" not in error or h is not None:
                raise Failure("%s: unreadable, record says error=%r hash=%r" % (p, error, h))
        elif error is not None or h != sums[p]:
            raise Failure("%s: hash %s error %r, xxh128sum says %s" % (p, h, error, sums[p]))
    # lineage: what each record's history must be (see the docstring)
    held = {}  # record id -> lin whose record it was at the last check
    for lin, (rid, first) in m.rec.items():
        held[rid] = lin

    def open_lineage(o, p):
        # renamed and rewritten in one interval: kept, by birth time (ext4
        # and btrfs both keep one; db/diff.c pass 2)
        if o.linked or o.touched or o.onto_same:
            return True
        if o.cross_from is not None:
            # the content must match for a relink; the old path must not
            # have been taken by another file first (pass 3 of the diff)
            return (o.content or o.locked or o.was_locked or real[p].st_size == 0 or
                    any(q in m.tree and q != p for q in o.paths))
        return False

    def takeable(rid, p, o):
        """A record a file at p may have taken over from another lineage:
        one whose file is gone or whose own lineage is open, at a path that
        lineage had (the path's record, diff pass 3)."""
        lin = held.get(rid)
        if lin is None:
            return False
        owner = m.gone.get(lin) or next((x for x in m.tree.values() if x.lin == lin), None)
        if owner is not None and owner.group is not None and owner.group == o.group:
            return True  # hard links of one inode: any of them may carry its record
        # taken at a path both had (then, in an intermediate scan, carried
        # along with the taker: by identity, or by content across file
        # systems)
        if lin in m.gone:
            return bool(m.gone[lin].paths & o.paths)
        for q, x in m.tree.items():
            if x.lin == lin:
                return open_lineage(x, q) and bool(x.paths & o.paths)
        return False

    validated = set()
    for p, o in m.tree.items():
        rid, first = live[p][0], live[p][4]
        if o.lin in m.rec and not open_lineage(o, p):
            want = m.rec[o.lin]
            if (rid, first) != want:
                raise Failure("%s (%s, %s): record %d first_scan %d, expected %d first_scan %d;"
                              " record %d is now %s" %
                              (p, "moved across file systems" if o.cross_from else
                               "renamed" if o.renamed else "kept", vars(o), rid, first, want[0],
                               want[1], want[0], recs.get(want[0])))
            m.stats["lineage kept" + (" across file systems" if o.cross_from else
                                      " through renames" if o.renamed else "")] += 1
        elif o.lin in m.rec and rid == m.rec[o.lin][0]:
            m.stats["lineage open, kept"] += 1
        elif rid in held:
            if not takeable(rid, p, o):
                where = [(q, vars(x)) for q, x in m.tree.items() if x.lin == held[rid]]
                raise Failure("%s (lineage %d, %s): took record %d of lineage %d, whose file "
                              "is elsewhere: %s" % (p, o.lin, vars(o), rid, held[rid], where))
            if first != m.rec[held[rid]][1]:
                raise Failure("%s: record %d first_scan %d changed" % (p, rid, first))
            m.stats["lineage: took over its path's record"] += 1
        else:
            if first < scan_id_floor:
                raise Failure("%s: new record %d, first_scan %d before this interval (%d)" %
                              (p, rid, first, scan_id_floor))
            m.stats["lineage new" if o.lin not in m.rec else "lineage open, new record"] += 1
        validated.add(rid)
    for lin, o in m.gone.items():
        if lin not in m.rec:
            continue
        rid = m.rec[lin][0]
        path, deleted = recs[rid][0], recs[rid][1]
        if deleted is None and rid not in validated:
            raise Failure("record %d of a deleted file still live at %s" % (rid, path))
        if deleted is not None:
            m.stats["lineage deleted"] += 1
            m.tombs.add(path)
    # learn
    m.rec = {o.lin: (live[p][0], live[p][4]) for p, o in m.tree.items()}
    m.gone = {}
    for p, o in m.tree.items():
        o.reset(p)
        o.linked = real[p].st_nlink > 1  # still a hard link: its lineage stays open
    m.ops = []
    m.stats["full checks"] += 1


def wait_reading(pid, root):
    """Return once the scan has a file of the tree open (the readers' look-
    ahead: the walk and the plan are done, most files not yet read), or has
    ended; at most 2 s."""
    fds = "/proc/%d/fd" % pid
    end = time.monotonic() + 2
    while time.monotonic() < end:
        try:
            for fd in os.listdir(fds):
                try:
                    if os.readlink(os.path.join(fds, fd)).startswith(root + "/"):
                        return
                except OSError:
                    pass
        except OSError:
            return  # gone
    return


LIBC = ctypes.CDLL(None, use_errno=True)


def raced_scan(m, db, cfg, root, outside):
    """A scan during whose reads a few folders of the tree are swapped, again
    and again, with links to folders outside it holding files of the same
    names (renameat2 RENAME_EXCHANGE; docs/security.md): no record may ever
    hold a byte, size or hash of those.  Every swap is undone before the
    scan's records are checked, so the tree is the model's again."""
    cands = [d for d in live_dirs(m) if d not in (m.root, m.other)
             and not d.startswith(m.other + "/")]
    chosen = []
    for d in rng.sample(cands, len(cands)):
        if len(chosen) < 4 and not any(d.startswith(c + "/") or c.startswith(d + "/")
                                       for c in chosen):
            chosen.append(d)
    pairs, hashes = [], set()
    shutil.rmtree(outside, ignore_errors=True)
    for i, d in enumerate(chosen):
        target = os.path.join(outside, str(i))
        os.makedirs(target)
        for name in os.listdir(d):
            write(os.path.join(target, name), b"OUTSIDE %d %s" % (i, name.encode()))
        link = d + ".race"
        os.symlink(target, link)
        pairs.append((d.encode(), link.encode()))
    hashes = set(xxh128([os.path.join(r, f) for r, _, fs in os.walk(outside) for f in fs])
                 .values())
    flips = [0] * len(pairs)
    p = subprocess.Popen(scan_cmd(db, cfg, root), stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE, text=True)
    wait_reading(p.pid, root)
    while p.poll() is None:
        for k, (a, b) in enumerate(pairs):
            if LIBC.renameat2(-100, a, -100, b, 2) == 0:
                flips[k] ^= 1
    for k, (a, b) in enumerate(pairs):
        if flips[k]:
            LIBC.renameat2(-100, a, -100, b, 2)
        os.unlink(b)
    _, errs = p.communicate()
    # a file whose stat or open this scan refused (a link on its way) is
    # known only by its path: a record it would have followed by identity
    # stays behind, may be marked deleted or taken over by content (a move
    # across file systems), and the next scan indexes the file anew
    # (diff.c).  What records are kept is left open until the next check;
    # what they hold is checked as strictly as ever
    for o in m.tree.values():
        o.touched = True
    m.ops.append("-- raced scan (%d folders swapped with outside links), exit %d" %
                 (len(pairs), p.returncode))
    m.stats["raced scans"] += 1
    weak_checks(m, db, dbdir_of(db), p.returncode, "raced")
    leaked = db_read(db, "SELECT path, content_hash FROM files WHERE deleted_at IS NULL")
    bad = [r for r in leaked if r[1] in hashes or not r[0].startswith(root + "/")]
    if bad:
        raise Failure("raced scan: bytes from outside the tree: %s" % bad[:5])
    m.stats["raced: records with an error"] += db_read(
        db, "SELECT count(*) FROM files WHERE deleted_at IS NULL AND error IS NOT NULL")[0][0]


def dbdir_of(db):
    return os.path.dirname(db)


def last_scan_id(db):
    r = db_read(db, "SELECT max(id) FROM scans")
    return r[0][0] or 0


def main():
    import pwd
    pw = pwd.getpwnam(USER)
    start = time.monotonic()
    with tempdir("model") as work, loop_fs("ext4", 384, rotational=True) as fa, \
            loop_fs("btrfs", 256, rotational=False) as fb:
        os.chmod(work, 0o755)
        dbdir = os.path.join(work, "db")
        os.mkdir(dbdir)
        os.chown(dbdir, pw.pw_uid, pw.pw_gid)
        db = os.path.join(dbdir, "index.db")
        cfg = os.path.join(work, "empty.conf")
        open(cfg, "w").close()
        root = os.path.join(fa.mnt, "root")
        other = os.path.join(root, "other")
        os.makedirs(other)
        os.makedirs(os.path.join(fb.mnt, "b"))
        subprocess.run(["mount", "--bind", os.path.join(fb.mnt, "b"), other], check=True)
        m = Model(root, other)
        est = 0.05
        next_note = args.progress
        try:
            for _ in range(30):
                op_create(m)
            floor = last_scan_id(db) + 1 if os.path.exists(db) else 1
            while True:
                elapsed = time.monotonic() - start
                if args.mutations and m.stats["mutations"] >= args.mutations:
                    break
                if not args.mutations and elapsed > args.seconds:
                    break
                if args.progress and m.stats["mutations"] >= next_note:
                    next_note += args.progress
                    print("  %.0f s: %d mutations, %d scans, %d full checks" %
                          (elapsed, m.stats["mutations"], m.stats["scans"],
                           m.stats["full checks"]), flush=True)
                # every locked directory opens again after one scan saw it
                relock = bool(m.locked_dirs)
                for _ in range(rng.randint(1, 4)):
                    pick(OPS)(m)
                kind = rng.random()
                if kind < 0.12:
                    p = subprocess.Popen(scan_cmd(db, cfg, root), stdout=subprocess.DEVNULL,
                                         stderr=subprocess.DEVNULL)
                    time.sleep(rng.uniform(0, est * 1.2))
                    p.kill()
                    p.wait()
                    m.stats["killed scans"] += 1
                    m.ops.append("-- scan killed (SIGKILL)")
                    weak_checks(m, db, dbdir, None, "killed")
                elif kind < 0.25:
                    p = subprocess.Popen(scan_cmd(db, cfg, root), stdout=subprocess.DEVNULL,
                                         stderr=subprocess.PIPE, text=True)
                    if rng.random() < 0.5:
                        time.sleep(rng.uniform(0, est))
                    else:
                        wait_reading(p.pid, root)  # between walk and read, for sure
                    os.kill(p.pid, signal.SIGSTOP)
                    m.ops.append("-- scan stopped (SIGSTOP)")
                    m.disturbing = True
                    for _ in range(rng.randint(1, 3)):
                        rng.choice(DISTURB)(m)
                    m.disturbing = False
                    os.kill(p.pid, signal.SIGCONT)
                    _, errs = p.communicate()
                    m.ops.append("-- scan resumed (SIGCONT), exit %d" % p.returncode)
                    m.stats["disturbed scans"] += 1
                    if "No such file" in errs:
                        m.stats["disturbed: a file vanished before its read"] += 1
                    if "modified while being read" in errs or "shrank" in errs:
                        m.stats["disturbed: a file changed while being read"] += 1
                    weak_checks(m, db, dbdir, p.returncode, "disturbed")
                    if p.returncode not in (0, 1):
                        raise Failure("disturbed scan: " + errs[-600:])
                elif kind < 0.33:
                    raced_scan(m, db, cfg, root, os.path.join(work, "outside"))
                rc, err, wall = run_scan(db, cfg, root)
                est = max(0.02, 0.7 * est + 0.3 * wall)
                m.ops.append("-- scan, exit %d" % rc)
                m.stats["scans"] += 1
                if m.locked_dirs:
                    # incomplete (a directory could not be listed): weak checks
                    if rc != 1:
                        raise Failure("scan with an unreadable directory exited %d: %s" %
                                      (rc, err[-400:]))
                    weak_checks(m, db, dbdir, rc, "incomplete")
                    m.stats["incomplete scans"] += 1
                else:
                    full_check(m, db, dbdir, rc, err, floor)
                    floor = last_scan_id(db) + 1
                if relock:
                    for d in m.locked_dirs:
                        os.chmod(d, 0o755)
                        m.ops.append("unlock-dir " + d)
                    m.locked_dirs = set()
        except Failure as f:
            print("FAILED (seed %d): %s" % (seed, f), file=sys.stderr)
            keep = os.environ.get("MODEL_KEEP_DB")
            if keep:
                for suffix in ("", "-wal", "-shm"):
                    if os.path.exists(db + suffix):
                        shutil.copy(db + suffix, keep + suffix)
                print("index copied to " + keep, file=sys.stderr)
            print("operations since the last good check:", file=sys.stderr)
            for line in m.ops[-60:]:
                print("  " + line, file=sys.stderr)
            print("repeat with: %s --seed %d" % (" ".join(sys.argv[:1]), seed), file=sys.stderr)
            return 1
        finally:
            for d in list(m.locked_dirs):
                os.chmod(d, 0o755)
            subprocess.run(["umount", other])
        took = time.monotonic() - start
        print("model test: seed %d, %.0f s, %d mutations, %d scans (%d killed, %d disturbed, "
              "%d incomplete), %d full checks" %
              (seed, took, m.stats["mutations"], m.stats["scans"], m.stats["killed scans"],
               m.stats["disturbed scans"], m.stats["incomplete scans"], m.stats["full checks"]))
        if not args.quiet:
            for k in sorted(m.stats):
                print("  %-48s %d" % (k, m.stats[k]))
        if m.stats["full checks"] < 3:
            print("too few checks to mean anything", file=sys.stderr)
            return 1
    return 0


sys.exit(main())
