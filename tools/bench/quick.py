#!/usr/bin/env python3
"""Quick scans and duplicates against a full scan, exiftool and the
duplicate finders Debian ships, on one cold emulated disk (issue 46).

The drive: hddsim set to the disk of published.py (7200 rpm; 12.8 ms
average seek; 72 to 40 MB/s; 250 GB; one command at a time, in arrival
order, unless DEPTH says otherwise), FSTYPE made on it, then filled the
way people fill one, latency off, under ROOT = MOUNT/photos:
  photos  PHOTOS JPEGs of PHOTO_MB (3-8 MB) in ROOT/YEAR/YEAR-MM, 40 a
          month (IMG_0001.JPG ...), from a pool of POOL distinct pictures
          made once into CACHE.  Their sources are the SOURCES largest
          camera JPEGs of the shared corpus: a megapixel or more,
          exiftool's expected.json types them as JPEG with a Make and no
          error, djpeg decodes them without a word, and they hold 0.1
          byte a pixel or more (test suites' flat grey pictures with a
          camera's EXIF fall out).  Each is enlarged with `djpeg |
          pnmscale F | cjpeg -quality 90` (every third -progressive) to
          the size drawn for it, at most 100 megapixels, then `exiftool
          -q -q -overwrite_original -TagsFromFile SRC -all:all` copies the
          camera's metadata and thumbnail back, as an editor's export.
          Each photo on the drive is a pool picture with a comment of its
          own (a COM segment after the APPn segments, of a length of its
          own): distinct bytes and sizes, every segment still in its head
          and the end marker still last, as scan --quick wants of a JPEG
          it reads for its ends;
  videos  VIDEOS movies of VIDEO_MB (200-500 MB), made once into CACHE by
          ffmpeg from a corpus picture cut to 1920x1080: 25 frames a
          second with film grain (noise with a seed of its own: no two
          frames alike), MPEG-4 at 80 Mbit/s, a creation time, the moov
          box after the media data (ffmpeg's default).  Larger than a
          quarter of seekless's memory budget (128 MiB on a machine of
          8 GB or more), so that scan --quick reads them in part;
  copies  DUP_PCT (5) percent of the photos and DUP_VIDEOS (2, at most
          half) of the videos are exact copies of another of them
          (NAME-1.JPG, NAME-1.MP4 in a month drawn at random): groups.
Every file is written in shuffled order, then synced.  The oracle: the
groups of identical files by `xxh128sum` of every file.

Then, latency on, a remount before each (cold), RUNS times:
  full         seekless scan --json --db NEW.db ROOT (the defaults a user gets)
  quick        seekless scan --quick --json --db NEW.db ROOT
  quick+dupes  that quick scan, then at once seekless dupes --json on its
               index, which reads whole the files whose size and partial
               hash match another's: the time of both (quick is the first)
  exiftool     exiftool -fast2 -r -j ROOT > /dev/null (its own order)
  rmlint       rmlint -T df -o json:SCRATCH/rmlint.json ROOT: duplicate
               files only (no other lint looked for), its default hash
               (blake2b; the hash costs CPU, and the disk is what is slow
               here; -a picks another, through RMLINT_OPTS); -o names its
               only output, in a scratch folder (-o FORMAT:PATH replaces
               the file at PATH: never /dev/null as root)
  jdupes       jdupes -r -q ROOT > SCRATCH/jdupes.txt
  rdfind       rdfind -outputname SCRATCH/rdfind.txt ROOT
  fdupes       fdupes -r -q ROOT > SCRATCH/fdupes.txt
A peer not installed is skipped and says so (`apt-get install rmlint jdupes
rdfind fdupes` installs them); every command and each tool's --version are
printed.  Prints the medians side by side (seconds; bytes and seeks the
disk served, by hddsim's counters), the ratios the issue asks for (full /
quick >= 5, exiftool / quick >= 3, rmlint / (quick + dupes) >= 1.5) and
the other peers', and whether the groups of seekless dupes and of each
peer are the oracle's in every run (ok or MISMATCH).  With VIDEOS=0 (or
NOVIDEOS=1) the drive holds photos only and the goal is the issue's other
one: a quick scan no slower than a full scan.

    sudo tools/bench/quick.py [FSTYPE=ext4] [NAME=VALUE ...]

Settings, from the environment or NAME=VALUE arguments: PHOTOS (2000),
VIDEOS (20), NOVIDEOS=1, RUNS (3), OUTDIR (.: quick-FSTYPE[-novideos].log
holds every command, its output and its time), PHOTO_MB (3-8), VIDEO_MB
(200-500), POOL (60), SOURCES (12), DUP_PCT (5), DUP_VIDEOS (2), SEED (1),
DEPTH (1), HDDSIM_OPTS (more emulator options), SCAN_OPTS (more options
for both seekless scans), RMLINT_OPTS (-T df), PEERS
(rmlint,jdupes,rdfind,fdupes), CACHE (/var/tmp/seekless-quickbench-cache:
the pools, about 7 GB at the defaults, kept for the next run; not in
/dev/shm, where the emulated disk's image already takes the drive's
size), CORPUS (../shared/corpus/real), SEEKLESS_BIN, HDDSIM_BIN (read by
hddsim.sh).  A smoke test: PHOTOS=40 VIDEOS=2 VIDEO_MB=20-30 POOL=6
RUNS=1 SCAN_OPTS="--mem 64M" (a budget that makes those small videos
ones a quick scan reads in part).  Needs root, FUSE 3, the shared corpus,
djpeg, cjpeg, pnmscale, exiftool, ffmpeg and xxh128sum.  The emulated
disk is taken down at the end, on failure, on SIGTERM and on Ctrl-C.
"""
import hashlib
import json
import os
import random
import re
import shlex
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.normpath(os.path.join(HERE, "..", ".."))
SH = ["bash", os.path.join(TOP, "tools", "hddsim", "hddsim.sh")]
BIN = os.environ.get("SEEKLESS_BIN", os.path.join(TOP, "build", "seekless"))
PER_MONTH = 40
VIDEO_RATE = 80e6            # bits a second: a camera's
QUALITY = "90"
MAX_PIXELS = 100000000       # a medium-format camera's
PEERS = ("rmlint", "jdupes", "rdfind", "fdupes")
GOALS = {"full": 5.0, "exiftool": 3.0, "rmlint": 1.5}


def settings(argv):
    """FSTYPE and the NAME=VALUE settings, the arguments over the
    environment (and put in it: hddsim.sh reads HDDSIM_BIN)."""
    global BIN
    fstype = "ext4"
    for a in argv:
        if re.match(r"^[A-Z_]+=", a):
            k, v = a.split("=", 1)
            os.environ[k] = v
        elif a in ("-h", "--help"):
            sys.exit(__doc__)
        else:
            fstype = a
    conf = os.environ
    BIN = os.path.abspath(conf.get("SEEKLESS_BIN", BIN))

    def mb_range(s):
        lo, _, hi = s.partition("-")
        lo, hi = float(lo), float(hi or lo)
        if not 0 < lo <= hi:
            sys.exit("quick.py: a size range is LO-HI in MB, not %r" % s)
        return int(lo * 1e6), int(hi * 1e6)

    c = {
        "fstype": fstype,
        "photos": int(conf.get("PHOTOS", "2000")),
        "videos": 0 if conf.get("NOVIDEOS") == "1" else int(conf.get("VIDEOS", "20")),
        "runs": int(conf.get("RUNS", "3")),
        "outdir": os.path.abspath(conf.get("OUTDIR", ".")),
        "photo_mb": mb_range(conf.get("PHOTO_MB", "3-8")),
        "video_mb": mb_range(conf.get("VIDEO_MB", "200-500")),
        "pool": int(conf.get("POOL", "60")),
        "sources": int(conf.get("SOURCES", "12")),
        "dup_pct": float(conf.get("DUP_PCT", "5")),
        "dup_videos": int(conf.get("DUP_VIDEOS", "2")),
        "seed": conf.get("SEED", "1"),
        "depth": conf.get("DEPTH", "1"),
        "hddsim_opts": conf.get("HDDSIM_OPTS", "").split(),
        "scan_opts": shlex.split(conf.get("SCAN_OPTS", "")),
        "rmlint_opts": shlex.split(conf.get("RMLINT_OPTS", "-T df")),
        "peers": [p for p in conf.get("PEERS", ",".join(PEERS)).split(",") if p],
        "cache": os.path.abspath(conf.get("CACHE", "/var/tmp/seekless-quickbench-cache")),
        "corpus": os.path.abspath(conf.get("CORPUS", os.path.join(TOP, "..", "shared",
                                                                 "corpus", "real"))),
    }
    if c["photos"] < 1 or c["runs"] < 1 or c["videos"] < 0:
        sys.exit("quick.py: PHOTOS and RUNS want at least 1, VIDEOS at least 0")
    c["pool"] = max(1, min(c["pool"], c["photos"]))
    c["dup_videos"] = max(0, min(c["dup_videos"], c["videos"] // 2))
    for p in c["peers"]:
        if p not in PEERS:
            sys.exit("quick.py: PEERS are among %s, not %s" % (",".join(PEERS), p))
    return c


def sh(*args):
    p = subprocess.run(SH + [str(a) for a in args], capture_output=True, text=True)
    if p.returncode:
        sys.exit("hddsim.sh %s: %s" % (" ".join(map(str, args)), p.stderr))
    return p.stdout


def need(tools):
    missing = [t for t in tools if shutil.which(t) is None]
    if missing:
        sys.exit("quick.py: needs %s (apt-get install libjpeg-turbo-progs netpbm "
                 "libimage-exiftool-perl ffmpeg xxhash)" % ", ".join(missing))


# ---- the pools: real pictures and movies, made once ----------------------

def camera_jpegs(corpus, n):
    """The n largest camera JPEGs of the corpus: a megapixel or more, each
    one exiftool types as a JPEG with a Make and no error, djpeg decodes
    without a warning, of 0.1 bytes a pixel or more (test suites' flat
    grey pictures with a camera's EXIF fall out): [(path, width,
    height)]."""
    with open(os.path.join(corpus, "expected.json")) as f:
        oracle = json.load(f)
    found = []
    for x in oracle:
        p = os.path.join(corpus, x["SourceFile"])
        w, h = x.get("File:ImageWidth"), x.get("File:ImageHeight")
        if (not p.lower().endswith((".jpg", ".jpeg")) or x.get("File:FileType") != "JPEG"
                or "ExifTool:Error" in x or "EXIF:Make" not in x or not os.path.isfile(p)
                or not isinstance(w, int) or not isinstance(h, int) or w * h < 1000000
                or os.path.getsize(p) < 0.1 * w * h):
            continue
        found.append((os.path.getsize(p), p, w, h))
    found.sort(key=lambda t: (-t[0], t[1]))
    out = []
    for _, p, w, h in found:
        d = subprocess.run(["djpeg", "-pnm", p], stdout=subprocess.DEVNULL,
                           stderr=subprocess.PIPE)
        if d.returncode == 0 and not d.stderr:
            out.append((p, w, h))
        if len(out) == n:
            break
    if not out:
        sys.exit("quick.py: no camera JPEG of a megapixel or more in %s" % corpus)
    return out


def enlarge(src, factor, progressive, dest):
    """djpeg | pnmscale factor | cjpeg -quality 90 [-progressive] > dest."""
    with open(dest, "wb") as out:
        d = subprocess.Popen(["djpeg", "-pnm", src], stdout=subprocess.PIPE,
                             stderr=subprocess.DEVNULL)
        s = subprocess.Popen(["pnmscale", "%.4f" % factor], stdin=d.stdout,
                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        d.stdout.close()
        c = subprocess.Popen(["cjpeg", "-quality", QUALITY] +
                             (["-progressive"] if progressive else []),
                             stdin=s.stdout, stdout=out)
        s.stdout.close()
        rcs = (c.wait(), s.wait(), d.wait())
    if any(rcs):
        sys.exit("quick.py: djpeg | pnmscale | cjpeg of %s failed: %s" % (src, rcs))
    return os.path.getsize(dest)


def picture(src, w, h, target, ok, prog, dest, bpp):
    """src enlarged into dest to about target bytes, within ok (lo, hi)
    once exiftool has added the metadata, and at most MAX_PIXELS: the
    factor, or None when the source cannot give that."""
    for _ in range(6):
        # the factor that gives the size drawn, by what cjpeg gave this
        # source so far (upscaled pictures compress better than camera
        # ones: about 0.12 bytes a pixel at this quality)
        factor = (target / (bpp.get(src, 0.12) * w * h)) ** 0.5
        factor = min((MAX_PIXELS / (w * h)) ** 0.5, max(1.0, factor))
        size = enlarge(src, factor, prog, dest)
        bpp[src] = size / (w * h * factor * factor)
        if ok[0] <= size + 65536 and size <= ok[1] - 65536:
            return factor
        if size < ok[0] and factor * factor * w * h >= MAX_PIXELS * 0.999:
            break
    os.unlink(dest)
    return None


def photo_pool(c, sources):
    """POOL distinct enlarged pictures in CACHE/photos, made once: their
    paths, and how many were made now."""
    lo, hi = c["photo_mb"]
    d = os.path.join(c["cache"], "photos")
    os.makedirs(d, exist_ok=True)
    bpp = {}   # bytes per pixel cjpeg gave for each source at this quality
    pool = []
    made = 0
    for i in range(c["pool"]):
        rng = random.Random("%s-photo-%d" % (c["seed"], i))
        target = rng.randint(lo, hi)
        prog = i % 3 == 2
        first = sources[i % len(sources)][0]
        key = hashlib.sha1(("%s|%d|%d|%s|%s|%d" % (os.path.basename(first), target, prog,
                                                   QUALITY, (lo, hi), MAX_PIXELS))
                           .encode()).hexdigest()[:10]
        path = os.path.join(d, "p%03d-%s.jpg" % (i, key))
        pool.append(path)
        if os.path.exists(path):
            continue
        tmp = path + ".tmp"
        # this item's source, else the next one that can give its size
        for j in range(len(sources)):
            src, w, h = sources[(i + j) % len(sources)]
            factor = picture(src, w, h, target, (lo, hi), prog, tmp, bpp)
            if factor:
                break
        else:
            sys.exit("quick.py: no corpus JPEG comes to %d bytes at -quality %s within %d "
                     "megapixels" % (target, QUALITY, MAX_PIXELS // 1000000))
        p = subprocess.run(["exiftool", "-q", "-q", "-overwrite_original", "-TagsFromFile",
                            src, "-all:all", tmp], capture_output=True, text=True)
        if p.returncode:
            sys.exit("quick.py: exiftool on %s: %s" % (tmp, p.stderr.strip()))
        with open(tmp, "rb") as f:
            data = f.read()
        if data[:2] != b"\xff\xd8" or data[-2:] != b"\xff\xd9":
            sys.exit("quick.py: %s does not start and end as a JPEG" % tmp)
        os.rename(tmp, path)
        made += 1
        print("photo pool: %d/%d made (%.1f MB, %s x%.2f: %.0f megapixels%s)" %
              (i + 1, c["pool"], len(data) / 1e6, os.path.basename(src), factor,
               w * h * factor * factor / 1e6, ", progressive" if prog else ""), flush=True)
    return pool, made


def video_pool(c, sources, n):
    """n distinct movies in CACHE/videos, made once: their paths."""
    lo, hi = c["video_mb"]
    d = os.path.join(c["cache"], "videos")
    os.makedirs(d, exist_ok=True)
    pool = []
    made = 0
    for i in range(n):
        src = sources[i % len(sources)][0]
        rng = random.Random("%s-video-%d" % (c["seed"], i))
        target = rng.randint(lo, hi)
        seconds = round(target * 8 / VIDEO_RATE, 2)
        key = hashlib.sha1(("%s|%d|%d" % (os.path.basename(src), target, VIDEO_RATE))
                           .encode()).hexdigest()[:10]
        path = os.path.join(d, "v%02d-%s.mp4" % (i, key))
        pool.append(path)
        if os.path.exists(path):
            continue
        still = path + ".png"
        tmp = path + ".tmp.mp4"
        day = "%04d-%02d-%02dT%02d:%02d:00Z" % (2019 + i % 5, 1 + i % 12, 1 + i % 28,
                                                 9 + i % 10, i % 60)
        for cmd in (["ffmpeg", "-loglevel", "error", "-y", "-i", src, "-vf",
                     "scale=1920:1080:force_original_aspect_ratio=increase,crop=1920:1080",
                     "-frames:v", "1", still],
                    ["ffmpeg", "-loglevel", "error", "-y", "-loop", "1", "-framerate", "25",
                     "-i", still, "-t", "%.2f" % seconds, "-vf",
                     "noise=alls=12:allf=t+u:all_seed=%d,format=yuv420p" % (1000 + i),
                     "-c:v", "mpeg4", "-b:v", "80M", "-maxrate", "80M", "-bufsize", "40M",
                     "-metadata", "creation_time=" + day, tmp]):
            p = subprocess.run(cmd, capture_output=True, text=True)
            if p.returncode:
                sys.exit("quick.py: %s: %s" % (shlex.join(cmd), p.stderr.strip()[-500:]))
        os.unlink(still)
        os.rename(tmp, path)
        made += 1
        print("video pool: %d/%d made (%.0f MB, %.1f s)" %
              (i + 1, n, os.path.getsize(path) / 1e6, seconds), flush=True)
    return pool, made


# ---- the drive -----------------------------------------------------------

def with_comment(jpeg, text):
    """The JPEG with a COM segment holding text after its APPn segments
    (where cjpeg and exiftool put one): the rest, its end marker last,
    unchanged."""
    i = 2
    while i + 4 <= len(jpeg) and jpeg[i] == 0xFF and 0xE0 <= jpeg[i + 1] <= 0xEF:
        i += 2 + int.from_bytes(jpeg[i + 2:i + 4], "big")
    if i + 2 > len(jpeg) or jpeg[i] != 0xFF:
        sys.exit("quick.py: a pool picture's segments do not add up")
    return jpeg[:i] + b"\xff\xfe" + (len(text) + 2).to_bytes(2, "big") + text + jpeg[i:]


def layout(c, photo_pool_paths, video_pool_paths):
    """Every file of the drive, in the order to write them: [relative
    path, kind, what], what being (pool index, comment) for a photo and
    its copies, a pool path for a video and its copies."""
    rng = random.Random("%s-drive" % c["seed"])
    ndup = int(round(c["photos"] * c["dup_pct"] / 100.0))
    nphotos = c["photos"] - ndup
    months = max(1, (c["photos"] + PER_MONTH - 1) // PER_MONTH)

    def folder(m):
        y = 2015 + m // 12
        return "%04d/%04d-%02d" % (y, y, m % 12 + 1)

    files = []
    copies = {}   # pool index -> copies made of it so far: their comments differ in length
    for i in range(nphotos):
        k = rng.randrange(len(photo_pool_paths))
        n = copies.get(k, 0)
        copies[k] = n + 1
        text = ("seekless quick bench photo %d " % i).encode()
        text += b"." * (n * 7 + rng.randrange(7))
        files.append(["%s/IMG_%04d.JPG" % (folder(i // PER_MONTH), i % 9999 + 1), "photo",
                      (k, text)])
    for orig in rng.sample(range(nphotos), min(ndup, nphotos)):
        stem = os.path.basename(files[orig][0])[:-4]
        files.append(["%s/%s-1.JPG" % (folder(rng.randrange(months)), stem), "photo copy",
                      files[orig][2]])
    distinct = c["videos"] - c["dup_videos"]
    for v in range(distinct):
        files.append(["%s/MVI_%04d.MP4" % (folder(rng.randrange(months)), v + 1), "video",
                      video_pool_paths[v]])
    for v in range(c["dup_videos"]):
        files.append(["%s/MVI_%04d-1.MP4" % (folder(rng.randrange(months)), v + 1),
                      "video copy", video_pool_paths[v]])
    rng.shuffle(files)
    return files


def write_drive(root, files, photo_pool_paths):
    """Write every file in the order given; bytes per kind."""
    sizes = {}
    for n, (rel, kind, what) in enumerate(files):
        path = os.path.join(root, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        if kind.startswith("photo"):
            k, text = what
            with open(photo_pool_paths[k], "rb") as f:
                data = f.read()
            with open(path, "wb") as f:
                f.write(with_comment(data, text))
        else:
            shutil.copyfile(what, path)
        sizes[kind] = sizes.get(kind, 0) + os.path.getsize(path)
        if (n + 1) % 500 == 0:
            print("written %d/%d files" % (n + 1, len(files)), flush=True)
    subprocess.run(["sync", "-f", root], check=True)
    return sizes


def oracle_groups(root):
    """Groups of identical files by xxh128sum of each: a set of frozensets
    of paths."""
    find = subprocess.Popen(["find", root, "-type", "f", "-print0"], stdout=subprocess.PIPE)
    out = subprocess.run(["xargs", "-0", "xxh128sum"], stdin=find.stdout,
                         capture_output=True, text=True, check=True).stdout
    find.wait()
    by = {}
    for line in out.splitlines():
        h, path = line.split("  ", 1)
        by.setdefault(h, []).append(path)
    return {frozenset(v) for v in by.values() if len(v) > 1}


# ---- the runs ------------------------------------------------------------

def parse_groups(tool, path, root):
    """The duplicate groups a tool wrote: a set of frozensets of paths."""
    groups = []
    with open(path, errors="surrogateescape") as f:
        text = f.read()
    if tool == "seekless":
        groups = [json.loads(l)["paths"] for l in text.splitlines() if l.strip()]
    elif tool == "rmlint":
        by = {}
        for x in json.loads(text):
            if x.get("type") == "duplicate_file":
                by.setdefault(x["checksum"], []).append(x["path"])
        groups = list(by.values())
    elif tool in ("jdupes", "fdupes"):
        for block in text.split("\n\n"):
            g = [l for l in block.splitlines() if l]
            if g:
                groups.append(g)
    elif tool == "rdfind":
        by = {}
        for l in text.splitlines():
            if l.startswith("#") or not l.strip():
                continue
            f = l.split(" ", 7)
            by.setdefault(abs(int(f[1])), []).append(f[7])
        groups = list(by.values())
    return {frozenset(os.path.join(root, p) for p in g) for g in groups}


def version(cmd):
    p = subprocess.run(cmd, capture_output=True, text=True)
    text = re.sub(r"\x1b\[[0-9;]*m", "", p.stdout + p.stderr).strip()
    return text.splitlines()[0] if text else "?"


class Bench:
    def __init__(self, c, name, tag, work, root, log):
        self.c, self.name, self.tag, self.root, self.log = c, name, tag, root, log
        self.scratch = os.path.join(work, "scratch")
        os.makedirs(self.scratch)
        self.db = os.path.join(work, "index.db")

    def cold(self):
        sh("remount", self.name)
        sh("reset", self.name)

    def disk(self):
        """What the disk served since the last cold(): (bytes, seeks)."""
        st = dict(l.split(None, 1) for l in sh("stats", self.name).splitlines() if " " in l)
        return int(st.get("bytes", 0)), int(st.get("seeks", 0))

    def fresh_db(self):
        for suffix in ("", "-wal", "-shm", ".lock"):
            if os.path.exists(self.db + suffix):
                os.unlink(self.db + suffix)

    def timed(self, cmd, out=None, cwd=None):
        """Run cmd, its stdout to the file out (None: the log, DEVNULL:
        nowhere), its stderr to the log; the wall time."""
        self.log.write("\n$ %s%s\n" % (shlex.join(cmd), "" if out is None else
                                       " > /dev/null" if out == subprocess.DEVNULL
                                       else " > " + out))
        self.log.flush()
        f = None
        if out not in (None, subprocess.DEVNULL):
            f = open(out, "wb")
        t = time.monotonic()
        try:
            p = subprocess.run(cmd, stdout=f or (self.log if out is None else out),
                               stderr=self.log, cwd=cwd or self.scratch)
        finally:
            took = time.monotonic() - t
            if f:
                f.close()
        if isinstance(out, str) and out.endswith(".json"):
            with open(out, errors="replace") as f:   # seekless's summary
                self.log.write(f.read())
        self.log.write("# exit %d, %.3f s\n" % (p.returncode, took))
        self.log.flush()
        if p.returncode not in (0, 1):
            sys.exit("quick.py: %s: exit %d (%s)" % (cmd[0], p.returncode, self.log.name))
        return took

    def check(self, tool, out, truth, run):
        """Whether the groups tool wrote to out are the oracle's; if not,
        its output is kept in OUTDIR and the groups that differ logged."""
        got = parse_groups(tool, out, self.root)
        if got == truth:
            return True
        keep = os.path.join(self.c["outdir"], "quick-%s-%s-run%d%s" %
                            (self.tag, tool, run + 1, os.path.splitext(out)[1]))
        shutil.copyfile(out, keep)
        self.log.write("# %s's groups differ from xxh128sum's (its output: %s)\n" % (tool, keep))
        for g in sorted(sorted(x) for x in got - truth):
            self.log.write("#   %s only: %s\n" % (tool, g))
        for g in sorted(sorted(x) for x in truth - got):
            self.log.write("#   xxh128sum only: %s\n" % g)
        return False

    def commands(self):
        """Each row's commands: {row: [(cmd, stdout file)]}."""
        s, r = self.scratch, self.root
        cmds = {
            "full": [([BIN, "scan", "--json"] + self.c["scan_opts"] +
                      ["--db", self.db, r], os.path.join(s, "full.json"))],
            "quick": [([BIN, "scan", "--quick", "--json"] + self.c["scan_opts"] +
                       ["--db", self.db, r], os.path.join(s, "quick.json")),
                      ([BIN, "dupes", "--json", "--db", self.db],
                       os.path.join(s, "seekless.txt"))],
            "exiftool": [(["exiftool", "-fast2", "-r", "-j", r], subprocess.DEVNULL)],
            "rmlint": [(["rmlint"] + self.c["rmlint_opts"] +
                        ["-o", "json:" + os.path.join(s, "rmlint.json"), r], None)],
            "jdupes": [(["jdupes", "-r", "-q", r], os.path.join(s, "jdupes.txt"))],
            "rdfind": [(["rdfind", "-outputname", os.path.join(s, "rdfind.txt"), r], None)],
            "fdupes": [(["fdupes", "-r", "-q", r], os.path.join(s, "fdupes.txt"))],
        }
        return {k: v for k, v in cmds.items() if k not in PEERS or k in self.c["peers"]}


def main():
    c = settings(sys.argv[1:])
    signal.signal(signal.SIGTERM, lambda *_: sys.exit("quick.py: terminated"))
    if os.geteuid() != 0:
        sys.exit("quick.py: needs root (the emulated disk: loop device, mount)")
    if not os.access(BIN, os.X_OK):
        sys.exit("quick.py: no %s (build first, or set SEEKLESS_BIN)" % BIN)
    need(["djpeg", "cjpeg", "pnmscale", "exiftool", "xxh128sum"] +
         (["ffmpeg"] if c["videos"] else []))
    peers = []
    for p in c["peers"]:
        if shutil.which(p):
            peers.append(p)
        else:
            print("%s not installed: skipped (apt-get install rmlint jdupes rdfind fdupes "
                  "installs them)" % p, flush=True)

    sources = camera_jpegs(c["corpus"], c["sources"])
    os.makedirs(c["cache"], exist_ok=True)
    ppool, pmade = photo_pool(c, sources)
    vpool, vmade = video_pool(c, sources, c["videos"] - c["dup_videos"])
    print("pools in %s: %d pictures (%d made now) from %d corpus JPEGs, %d movies (%d made now)"
          % (c["cache"], len(ppool), pmade, len(sources), len(vpool), vmade), flush=True)
    files = layout(c, ppool, vpool)
    # the drive's size, from the pools: the emulated disk's image lies in
    # /dev/shm, and takes what is written to it
    avg_photo = sum(os.path.getsize(p) for p in ppool) / len(ppool)
    need_bytes = int(avg_photo * c["photos"] + sum(os.path.getsize(w) for r, k, w in files
                                                   if k.startswith("video")))
    size_mb = int(need_bytes * 1.12 / 2**20) + 768
    free = shutil.disk_usage("/dev/shm").free
    if free < size_mb * 2**20 + (1 << 30):
        sys.exit("quick.py: the drive takes about %.1f GB in /dev/shm, %.1f GB are free" %
                 (size_mb * 2**20 / 1e9, free / 1e9))

    tag = c["fstype"] + ("" if c["videos"] else "-novideos")
    name = "quick-%s-%d" % (tag, os.getpid())
    os.makedirs(c["outdir"], exist_ok=True)
    work = tempfile.mkdtemp(prefix="seekless-quickbench-", dir="/dev/shm")
    log = open(os.path.join(c["outdir"], "quick-%s.log" % tag), "w")
    opts = ["--rpm", "7200", "--avg", "12.8", "--full", "25", "--t2t", "1.5",
            "--outer", "72", "--inner", "40", "--capacity", "250G",
            "--depth", c["depth"]] + c["hddsim_opts"]
    try:
        mnt = sh("up", name, c["fstype"], "%dM" % size_mb, *opts).strip().splitlines()[-1]
        sh("latency", name, "off")
        root = os.path.join(mnt, "photos")
        t = time.monotonic()
        sizes = write_drive(root, files, ppool)
        truth = oracle_groups(root)
        nvid = sum(1 for f in files if f[1].startswith("video"))
        print("drive: %d photos (%d copies), %.2f GB; %d videos (%d copies), %.2f GB; %s, "
              "depth %s; %d groups of identical files (xxh128sum); written in %.0f s" %
              (len(files) - nvid, sum(1 for f in files if f[1] == "photo copy"),
               (sizes.get("photo", 0) + sizes.get("photo copy", 0)) / 1e9, nvid,
               c["dup_videos"], (sizes.get("video", 0) + sizes.get("video copy", 0)) / 1e9,
               c["fstype"], c["depth"], len(truth), time.monotonic() - t), flush=True)
        sh("remount", name)
        sh("latency", name, "on")

        b = Bench(c, name, tag, work, root, log)
        cmds = b.commands()
        rows = ["full", "quick", "dupes", "quick+dupes", "exiftool"] + peers
        print("\ncommands (ROOT = %s):" % root)
        for k, seq in cmds.items():
            if k in PEERS and k not in peers:
                continue
            for cmd, out in seq:
                print("  %-9s %s%s" % (k, shlex.join(cmd).replace(root, "ROOT")
                                        .replace(b.scratch, "SCRATCH").replace(work, "WORK"),
                                        " > /dev/null" if out == subprocess.DEVNULL else
                                        " > SCRATCH/" + os.path.basename(out) if out else ""))
        print("versions:")
        print("  seekless  " + version([BIN, "--version"]))
        print("  exiftool  " + version(["exiftool", "-ver"]))
        for p in peers:
            print("  %-9s %s" % (p, version([p, "--version"])))
        sys.stdout.flush()

        res = {k: [] for k in rows}
        disk = {k: [] for k in rows}
        checks = {k: [] for k in ["seekless"] + peers}
        pending = []
        for run in range(c["runs"]):
            for k in ["full", "quick", "exiftool"] + peers:
                b.cold()
                if k in ("full", "quick"):
                    b.fresh_db()
                if k == "quick":
                    (qcmd, qout), (dcmd, dout) = cmds["quick"]
                    tq = b.timed(qcmd, qout)
                    dq = b.disk()
                    td = b.timed(dcmd, dout)
                    dd = b.disk()
                    res["quick"].append(tq)
                    res["dupes"].append(td)
                    res["quick+dupes"].append(tq + td)
                    disk["quick"].append(dq)
                    disk["dupes"].append((dd[0] - dq[0], dd[1] - dq[1]))
                    disk["quick+dupes"].append(dd)
                    with open(qout) as f:
                        q = json.load(f)
                    pending.append((q.get("content_pending", 0), q.get("content_pending_bytes", 0),
                                    q.get("errors", 0), q.get("bytes_read", 0)))
                    checks["seekless"].append(b.check("seekless", dout, truth, run))
                    continue
                cmd, out = cmds[k][0]
                got = os.path.join(b.scratch, {"rmlint": "rmlint.json"}.get(k, k + ".txt"))
                if k in peers and os.path.exists(got):
                    os.unlink(got)   # no result of a run before taken for this one's
                res[k].append(b.timed(cmd, out))
                disk[k].append(b.disk())
                if k in peers:
                    checks[k].append(b.check(k, got, truth, run))
            print("run %d: %s" % (run + 1, ", ".join("%s %.2f s" % (k, res[k][-1]) for k in rows)),
                  flush=True)

        med = {k: statistics.median(v) for k, v in res.items()}
        mdisk = {k: (statistics.median(x[0] for x in v), statistics.median(x[1] for x in v))
                 for k, v in disk.items()}
        print("\nmedians of %d runs, cold (%s, depth %s, %d photos, %d videos):" %
              (c["runs"], c["fstype"], c["depth"], len(files) - nvid, nvid))
        print("| what | time | disk read | seeks | groups |")
        print("|---|---:|---:|---:|---|")
        for k in rows:
            who = "seekless" if k == "quick+dupes" else k
            g = ""
            if who in checks and checks[who]:
                g = "ok" if all(checks[who]) else "MISMATCH (%d of %d runs)" % (
                    checks[who].count(False), len(checks[who]))
            print("| %s | %.2f s | %.0f MB | %d | %s |" %
                  (k, med[k], mdisk[k][0] / 1e6, mdisk[k][1], g))
        print("\nratios (medians):")
        q, qd = med["quick"], med["quick+dupes"]
        if nvid:
            print("  full / quick             %.2fx  (goal >= %.1f: %s)" %
                  (med["full"] / q, GOALS["full"], "met" if med["full"] / q >= GOALS["full"]
                   else "not met"))
            print("  exiftool / quick         %.2fx  (goal >= %.1f: %s)" %
                  (med["exiftool"] / q, GOALS["exiftool"],
                   "met" if med["exiftool"] / q >= GOALS["exiftool"] else "not met"))
        else:
            print("  full / quick             %.2fx  (goal >= 1: a quick scan no slower: %s)"
                  % (med["full"] / q, "met" if med["full"] >= q else "not met"))
            print("  exiftool / quick         %.2fx" % (med["exiftool"] / q))
        for p in peers:
            goal = ""
            if p == "rmlint" and nvid:
                goal = "  (goal >= %.1f: %s)" % (GOALS["rmlint"], "met" if med[p] / qd >=
                                                GOALS["rmlint"] else "not met")
            print("  %-24s %.2fx%s" % (p + " / (quick + dupes)", med[p] / qd, goal))
        print("  the quick scan read %.0f MB itself (the disk served %.0f MB) and left %d files "
              "pending (%.0f MB), %d file errors; %d groups of identical files (xxh128sum)" %
              (statistics.median(p[3] for p in pending) / 1e6, mdisk["quick"][0] / 1e6,
               statistics.median(p[0] for p in pending),
               statistics.median(p[1] for p in pending) / 1e6, max(p[2] for p in pending),
               len(truth)))
        print("json: " + json.dumps({"fstype": c["fstype"], "depth": c["depth"],
                                     "photos": len(files) - nvid, "videos": nvid,
                                     "bytes": sum(sizes.values()), "groups": len(truth),
                                     "runs": res, "disk": disk, "medians": med,
                                     "checks": checks, "pending": pending}))
        bad = [k for k, v in checks.items() if v and not all(v)]
        if bad:
            print("groups differ from xxh128sum's: %s (%s says which, the outputs are in %s)" %
                  (", ".join(bad), log.name, c["outdir"]))
    finally:
        # the loop device may let go of the emulator's file a while after
        # it is detached (longer on a loaded machine): down says so, and
        # is run again
        for attempt in range(8):
            p = subprocess.run(SH + ["down", name], capture_output=True, text=True)
            if p.returncode == 0:
                break
            time.sleep(1 + attempt)
        else:
            print("quick.py: could not take %s down: %s" % (name, p.stderr.strip()),
                  file=sys.stderr)
        log.close()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:   # the emulated disk is down by now (main's finally)
        sys.exit("quick.py: interrupted")
