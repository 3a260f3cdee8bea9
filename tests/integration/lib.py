"""Helpers for the integration tests: run seekless, build real file systems
on loop devices, read filefrag and xxhsum as independent oracles.

Tests (or parts of them) that need root, loop devices, a tool or the shared
corpus exit 77 (CTest: skipped) when they are not available, unless
SEEKLESS_REQUIRE_ALL=1 (CI), where that is a failure.
"""
import contextlib
import errno
import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time

SKIP = 77


def _built(var, name):
    """The program under test: $var (CTest sets it), else the one in the
    source tree's build/.  Never one found on PATH: an installed seekless
    would be tested instead of the build, and pass or fail for it."""
    path = os.environ.get(var)
    if not path:
        path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "build", name)
    if not os.path.isfile(path) or not os.access(path, os.X_OK):
        sys.stderr.write("%s: no %s at %s: build it (cmake --build build), or run the test "
                         "through ctest, or set %s\n" % (sys.argv[0], name, path, var))
        raise SystemExit(1)
    return os.path.abspath(path)


# The Windows tests (tests/win, SEEKLESS_EXE set) take only the helpers
# from here: they test seekless.exe, and need no Linux seekless built.
if os.environ.get("SEEKLESS_EXE"):
    BIN = None
    MKCORPUS = os.environ.get("MKCORPUS_BIN")
else:
    BIN = _built("SEEKLESS_BIN", "seekless")
    MKCORPUS = os.environ.get("MKCORPUS_BIN") or os.path.join(os.path.dirname(BIN), "mkcorpus")

EXPORT_KEYS = ["path", "size", "mtime", "format", "width", "height", "make", "model",
               "datetime_original", "orientation", "gps_lat", "gps_lon", "exposure_time",
               "f_number", "iso", "focal_length", "lens_model", "content_hash",
               "phys_offset", "fragments", "error", "tz_offset", "subsec", "duration",
               "content_id", "rating", "label", "keywords", "hierarchical_keywords", "title",
               "description", "creator", "copyright", "sidecar",
               "embedded_video"]

_failures = []
_skipped = []


def check(cond, what):
    """Record a failed assertion and go on, so one run lists every problem."""
    if not cond:
        _failures.append(what)
        print("CHECK failed: " + what, file=sys.stderr)
    return cond


def required():
    """Every test must run (SEEKLESS_REQUIRE_ALL=1: CI, and tests/run.sh
    as root): a skip would hide what was not tested."""
    return os.environ.get("SEEKLESS_REQUIRE_ALL") == "1"


def done():
    """Exit 1 when a check failed; else 77 (skipped) when a part could not
    run (skip_part), 1 for that where every test is required; else 0."""
    print("%d failed checks%s" % (len(_failures), ", %d parts not run" % len(_skipped)
                                  if _skipped else ""), file=sys.stderr)
    if _failures:
        sys.exit(1)
    if _skipped:
        sys.exit(1 if required() else SKIP)
    sys.exit(0)


def skip(why):
    """Nothing of the test can run here (not root, no loop devices, a tool
    or the shared corpus missing): exit 77 (skipped), which
    SEEKLESS_REQUIRE_ALL=1 turns into a failure."""
    if required():
        print("required but not possible here: " + why, file=sys.stderr)
        sys.exit(1)
    print("skip: " + why, file=sys.stderr)
    sys.exit(SKIP)


def skip_part(why):
    """A part of the test cannot run here: say so and go on with the rest;
    done() then makes the whole a skip, or a failure where every test is
    required."""
    print(("required but not possible here: " if required() else "skip: ") + why,
          file=sys.stderr)
    _skipped.append(why)


def need_root():
    if os.geteuid() != 0:
        skip("needs root")


# Whether a scan leaves a picture's perceptual hash for the next one
# depends on timing (issue 41: the disk ahead of the extractors, as when
# they run under ASan), so a test that counts what a rescan reads would
# fail only now and then.  Scans here make every hash (--phash-now), but in
# a test about leaving them, which sets lib.LEAVE_HASHES = True.
LEAVE_HASHES = False


def run(*args, check_rc=None, env=None, user=None):
    """Run seekless with args; returns (rc, stdout, stderr)."""
    args = [str(a) for a in args]
    if args and args[0] == "scan" and not LEAVE_HASHES and "--phash-now" not in args:
        args.insert(1, "--phash-now")
    cmd = [BIN] + args
    if user:
        cmd = ["runuser", "-u", user, "--"] + cmd
    p = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if check_rc is not None and p.returncode != check_rc:
        print("command: %s\nrc %d\nstdout:\n%s\nstderr:\n%s" %
              (cmd, p.returncode, p.stdout[-4000:], p.stderr[-4000:]), file=sys.stderr)
        check(False, "%s exited %d, expected %d" % (" ".join(cmd[:4]), p.returncode, check_rc))
    return p.returncode, p.stdout, p.stderr


def mkcorpus(dest, *args):
    subprocess.run([MKCORPUS] + [str(a) for a in args] + [str(dest)], check=True,
                   capture_output=True)


def export(db):
    rc, out, err = run("export", "--db", db, check_rc=0)
    return [json.loads(line) for line in out.splitlines()]


def regular_files(root):
    """Every regular file below root, as seekless should see it."""
    found = []
    for d, dirs, files in os.walk(root):
        for f in files:
            p = os.path.join(d, f)
            if os.path.isfile(p) and not os.path.islink(p):
                found.append(p)
    return found


def sync_fs(*paths):
    """Write back the file systems these paths lie on (syncfs), and no
    other.  A global sync would also write back whatever a test running
    beside this one left in delayed allocation, and that test may be
    checking exactly that (fs_xfs failed once so).  FUSE passes syncfs on
    only for block-device mounts (ntfs-3g): for a pool, give its branches."""
    for p in paths:
        subprocess.run(["sync", "-f", p], check=True)


def xxh128(paths):
    """Content hashes from xxhsum (the reference tool), by path."""
    out = {}
    for i in range(0, len(paths), 200):
        chunk = paths[i:i + 200]
        p = subprocess.run(["xxhsum", "-H2"] + chunk, capture_output=True, check=True)
        for line, path in zip(p.stdout.splitlines(), chunk):
            out[path] = line.split(b" ", 1)[0].decode()
    return out


def filefrag(path):
    """(first physical byte, extent count) as filefrag -v reports them."""
    p = subprocess.run(["filefrag", "-v", path], capture_output=True, text=True, check=True)
    block = None
    first = None
    count = None
    for line in p.stdout.splitlines():
        m = re.search(r"\((\d+) blocks? of (\d+) bytes\)", line)
        if m:
            block = int(m.group(2))
        m = re.match(r"\s*(\d+):\s+(\d+)\.\.\s*(\d+):\s+(\d+)\.\.\s*(\d+):", line)
        if m and int(m.group(1)) == 0:
            first = int(m.group(4))
        m = re.search(r": (\d+) extents? found", line)
        if m:
            count = int(m.group(1))
    if first is None or block is None:
        return None, count
    return first * block, count


def filefrag_runs(path):
    """Every extent filefrag -v lists, as (logical, physical, length) in
    bytes, merged where one continues the last both in the file and on the
    disk (a file system may split a run where the disk does not)."""
    p = subprocess.run(["filefrag", "-v", "-b1", path], capture_output=True, text=True,
                       check=True)
    runs = []
    for line in p.stdout.splitlines():
        m = re.match(r"\s*\d+:\s+(\d+)\.\.\s*(\d+):\s+(\d+)\.\.\s*(\d+):\s+(\d+):", line)
        if not m:
            continue
        lo, ph, ln = int(m.group(1)), int(m.group(3)), int(m.group(5))
        if runs and runs[-1][0] + runs[-1][2] == lo and runs[-1][1] + runs[-1][2] == ph:
            runs[-1][2] += ln
        else:
            runs.append([lo, ph, ln])
    return [tuple(r) for r in runs]


@contextlib.contextmanager
def tempdir(tag, base=None):
    d = tempfile.mkdtemp(prefix="seekless-%s-" % tag, dir=base)
    try:
        yield d
    finally:
        shutil.rmtree(d, ignore_errors=True)


MKFS = {
    "ext4": ["mkfs.ext4", "-q", "-F", "-E", "lazy_itable_init=0,lazy_journal_init=0"],
    "xfs": ["mkfs.xfs", "-q", "-f"],
    "btrfs": ["mkfs.btrfs", "-q", "-f"],
    # -Q: quick (no zeroing); mounted by ntfs-3g as fuseblk (LoopFs.mount)
    "ntfs": ["mkntfs", "-Q", "-F"],
}


class LoopFs:
    """A file system on a loop device backed by /dev/shm."""

    def __init__(self, fstype, size_mb, rotational):
        self.fstype, self.rotational = fstype, rotational
        self.img = tempfile.mktemp(prefix="seekless-%s-" % fstype, suffix=".img", dir="/dev/shm")
        self.mnt = tempfile.mkdtemp(prefix="seekless-mnt-%s-" % fstype)
        self.loop = None
        self.blockers = []
        with open(self.img, "wb") as f:
            f.truncate(size_mb << 20)

    def attach(self):
        p = subprocess.run(["losetup", "--find", "--show", self.img], capture_output=True,
                           text=True)
        if p.returncode != 0:
            skip("no loop device: " + p.stderr.strip())
        self.loop = p.stdout.strip()
        if self.rotational:
            # the loop driver says "not rotational"; pretend to be a disk
            with open("/sys/block/%s/queue/rotational" % os.path.basename(self.loop), "w") as f:
                f.write("1")

    def mount(self):
        if self.fstype == "ntfs":
            if not os.path.exists("/dev/fuse"):
                skip("no /dev/fuse for ntfs-3g")
            subprocess.run(["ntfs-3g", "-o", "noatime", self.loop, self.mnt], check=True)
        else:
            subprocess.run(["mount", "-o", "noatime", self.loop, self.mnt], check=True)

    def umount(self):
        subprocess.run(["umount", self.mnt], check=True)

    def reattach(self):
        """Unmount, detach, and attach again as another loop device: the
        same file system under a new device number."""
        subprocess.run(["umount", self.mnt], check=True)
        subprocess.run(["losetup", "-d", self.loop], check=True)
        old = self.loop
        # a blocker takes the lowest free number, which is ours unless a test
        # running beside this one freed a lower one meanwhile: then ours may
        # come back, and is let go and blocked in turn
        for _ in range(16):
            blocker = tempfile.mktemp(prefix="seekless-blocker-", dir="/dev/shm")
            with open(blocker, "wb") as f:
                f.truncate(1 << 20)
            p = subprocess.run(["losetup", "--find", "--show", blocker], capture_output=True,
                               text=True)
            self.blockers.append((p.stdout.strip(), blocker))
            self.attach()
            if self.loop != old:
                break
            subprocess.run(["losetup", "-d", self.loop], check=True)
        self.mount()
        return old != self.loop

    def close(self):
        if os.path.ismount(self.mnt):
            subprocess.run(["umount", self.mnt])
        if self.loop:
            subprocess.run(["losetup", "-d", self.loop])
        for dev, path in self.blockers:
            subprocess.run(["losetup", "-d", dev])
            os.unlink(path)
        os.rmdir(self.mnt)
        if os.path.exists(self.img):
            os.unlink(self.img)


def dead_mounts():
    """Mount points that stat cannot reach: FUSE mounts whose daemon has
    gone (ENOTCONN), left behind by a killed process anywhere on the
    machine."""
    dead = []
    with open("/proc/self/mounts") as f:
        for line in f:
            point = line.split()[1].replace("\\040", " ")
            try:
                os.stat(point)
            except OSError as e:
                if e.errno == errno.ENOTCONN:
                    dead.append(point)
    return dead


def mkfs(cmd):
    """Run a mkfs command; on failure raise with its own words.  mkfs.btrfs
    stats every mount point to check that the device is not mounted, and
    gives up on a dead FUSE mount that is none of ours: then it runs again
    in a private mount namespace with those mounts detached (the machine's
    own mounts are not touched), and the dead mounts are named."""
    p = subprocess.run(cmd, capture_output=True, text=True)
    dead = dead_mounts() if p.returncode != 0 else []
    if dead:
        script = "".join("umount -l '%s' 2>/dev/null; " % d.replace("'", "'\\''")
                         for d in dead)
        print("note: dead FUSE mounts on this machine (not this test's): %s; %s runs "
              "in a private mount namespace without them" % (", ".join(dead), cmd[0]),
              file=sys.stderr)
        p = subprocess.run(["unshare", "-m", "--propagation", "private", "sh", "-c",
                            script + 'exec "$@"', "sh"] + cmd, capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError("%s failed (exit %d): %s%s" % (" ".join(cmd), p.returncode,
                           p.stderr.strip() or p.stdout.strip() or "(no output)",
                           "; dead mounts: %s" % ", ".join(dead) if dead else ""))


@contextlib.contextmanager
def loop_fs(fstype, size_mb=512, rotational=True, mkfs_args=()):
    """A fresh file system of fstype on a loop device backed by /dev/shm,
    mounted noatime; yields the LoopFs (mnt, loop, img, reattach())."""
    need_root()
    if shutil.which(MKFS[fstype][0]) is None:
        skip("%s not installed" % MKFS[fstype][0])
    fs = LoopFs(fstype, size_mb, rotational)
    try:
        fs.attach()
        mkfs(MKFS[fstype] + list(mkfs_args) + [fs.loop])
        fs.mount()
        yield fs
    finally:
        fs.close()


def ntfs_runs(device, path):
    """A file's data runs [(vcn, lcn, clusters)] as ntfsinfo reads them off
    the raw NTFS volume (independent of the kernel and of FIBMAP); lcn None
    for a sparse run; [] for data resident in the MFT record."""
    p = subprocess.run(["ntfsinfo", "-f", "-v", "-F", path, device], capture_output=True,
                       text=True)
    if p.returncode != 0:
        raise RuntimeError("ntfsinfo %s: %s" % (path, p.stderr.strip()))
    runs, inside = [], False
    for line in p.stdout.splitlines():
        if "Runlist:" in line:
            inside = True
            continue
        if inside:
            m = re.match(r"\s*0x([0-9a-f]+)\s+(0x[0-9a-f]+|<HOLE>|-?\d+)\s+0x([0-9a-f]+)", line)
            if not m:
                inside = False
                continue
            lcn = int(m.group(2), 16) if m.group(2).startswith("0x") else None
            runs.append((int(m.group(1), 16), lcn, int(m.group(3), 16)))
    return runs


def btrfs_chunks(device):
    """The chunk map of a btrfs [(logical, length, profile, [(devid,
    offset)...])], as btrfs-progs reads the chunk tree off the device
    (independent of the kernel's ioctl and of our parsing)."""
    p = subprocess.run(["btrfs", "inspect-internal", "dump-tree", "-t", "chunk", device],
                       capture_output=True, text=True, check=True)
    chunks = []
    for line in p.stdout.splitlines():
        m = re.search(r"key \(FIRST_CHUNK_TREE CHUNK_ITEM (\d+)\)", line)
        if m:
            chunks.append([int(m.group(1)), None, None, []])
            continue
        m = re.search(r"^\s*length (\d+) owner \d+ stripe_len \d+ type (\S+)", line)
        if m and chunks:
            chunks[-1][1] = int(m.group(1))
            last = m.group(2).split("|")[-1].lower()
            # older btrfs-progs print no profile for SINGLE
            chunks[-1][2] = "single" if last in ("data", "metadata", "system") else last
            continue
        m = re.search(r"^\s*stripe \d+ devid (\d+) offset (\d+)", line)
        if m and chunks:
            chunks[-1][3].append((int(m.group(1)), int(m.group(2))))
    return [tuple(c) for c in chunks]


def btrfs_device_offset(chunks, logical):
    """Where logical address `logical` lies on the device of a one-device
    btrfs (SINGLE or DUP: the first stripe), by the chunk map above."""
    for start, length, profile, stripes in chunks:
        if start <= logical < start + length:
            if profile not in ("single", "dup"):
                raise ValueError("chunk at %d is %s" % (start, profile))
            return stripes[0][1] + (logical - start)
    raise ValueError("address %d in no chunk" % logical)


def ntfs_cluster(device):
    """The cluster size of an NTFS volume, from ntfsinfo -m."""
    p = subprocess.run(["ntfsinfo", "-f", "-m", device], capture_output=True, text=True,
                       check=True)
    m = re.search(r"Cluster Size:\s+(\d+)", p.stdout)
    return int(m.group(1))


def db_rows(db, sql, args=()):
    con = sqlite3.connect(db)
    try:
        return con.execute(sql, args).fetchall()
    finally:
        con.close()


class HddSim:
    """The emulated disk (tools/hddsim/hddsim.sh) for a test: skips when it
    cannot run here; sh(...) runs the script and checks its status."""

    def __init__(self, name):
        need_root()
        self.bin = os.environ.get("HDDSIM_BIN")
        self.script = os.environ.get("HDDSIM_SH")
        if not self.bin or not os.path.exists(self.bin):
            skip("hddsim not built (needs libfuse3-dev)")
        if not os.path.exists("/dev/fuse") or shutil.which("fusermount3") is None:
            skip("no /dev/fuse or fusermount3")
        self.name = name
        self.state = "/tmp/hddsim-test"
        self.env = dict(os.environ, HDDSIM_BIN=self.bin, HDDSIM_DIR=self.state)

    def sh(self, *args):
        p = subprocess.run(["bash", self.script] + list(args), env=self.env,
                           capture_output=True, text=True)
        if p.returncode != 0:
            print(p.stdout, p.stderr)
        check(p.returncode == 0, "hddsim.sh %s: %s" % (" ".join(args), p.stderr[-300:]))
        return p.stdout

    def down(self):
        """Unmount, detach and stop.  The kernel lets go of a detached loop
        device's backing file a moment later, and on a loaded machine more
        than the 5 s hddsim.sh waits: two runs of test_baddisk left their
        disk mounted so (a stress campaign, a CI rehearsal).  Asked again
        until it is gone; a disk still there is a failure, not a leftover
        for the next test."""
        for attempt in range(8):
            p = subprocess.run(["bash", self.script, "down", self.name], env=self.env,
                               capture_output=True, text=True)
            if p.returncode == 0:
                return
            time.sleep(1 + attempt)
        check(False, "hddsim.sh down %s: still there after 8 tries: %s"
              % (self.name, p.stderr[-300:]))
