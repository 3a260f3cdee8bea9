#!/usr/bin/env python3
"""A photo drive filled the way people fill one (issue 45), from real files.

Imports in date order, one folder each (Photos/YEAR/YEAR-MM-DD), every
folder written in name order with a camera's names (DSC_0001.JPG ...), the
way a card is copied; some cameras shoot RAW+JPEG pairs, some imports hold
a movie or two.  Between imports, a life: culled photos deleted, edited
photos saved again (a new file renamed over the old one: its data lands
wherever the file system puts new data then), edited copies exported beside
them, XMP sidecars written later for older imports, a photo manager's
renames of whole imports and moves of picked photos into albums.  Each
import and each step of life ends with a sync, as a card import or an
editing session does before the next one.

Every file is a real one, from the source folders (the shared corpus by
default: camera JPEGs and RAWs, movies, XMP), padded to the size drawn for
it where it must be reached: bytes after a JPEG's end or a TIFF-based RAW's
last byte, a `free` box after an ISO-BMFF file (MP4, MOV, CR3, HEIC).
Padding is random, so no two files are the same.  Sizes are log-normal per
kind (RAW about 6x and movies about 40x a JPEG), scaled so that the mean is
--mean-kib (149 KiB: the published test's 87,418 files in 12.46 GiB).

    livedin.py DIR --files N [--mean-kib 149] [--imports K] [--seed S]
               [--life 1.0] [--source DIR ...] [--manifest FILE] [--quiet]

--life scales every rate of the life (0: imports only, a tidy drive).
--manifest writes what was made: every file's path, kind, size, source,
import, the order it was written in and what its life did to it, and the
folders in import order (tests/integration/test_livedin.py checks the
tree, the file types and the layout against it).
"""
import argparse
import ctypes
import json
import math
import os
import random
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
LIBC = ctypes.CDLL(None, use_errno=True)
DEFAULT_SOURCES = [os.path.join(HERE, "..", "..", "..", "shared", "corpus", d)
                   for d in ("real", "media")]

KINDS = {
    "jpeg": (".jpg", ".jpeg"),
    "raw": (".nef", ".cr2", ".arw", ".dng", ".orf", ".rw2", ".cr3"),
    "movie": (".mp4", ".mov"),
    "xmp": (".xmp",),
}
BMFF = (".mp4", ".mov", ".cr3", ".heic", ".m4v", ".3gp")
# a camera: file name pattern, its JPEG, RAW and movie extensions
CAMERAS = [
    ("DSC_%04d", ".JPG", ".NEF", ".MOV"),
    ("IMG_%04d", ".JPG", ".CR2", ".MOV"),
    ("P10%05d", ".JPG", ".RW2", ".MP4"),
    ("_DSC%04d", ".JPG", ".ARW", ".MP4"),
    ("IMG_%04d", ".JPG", ".DNG", ".MOV"),   # a phone
]
RAW_EXT = {".NEF": ".nef", ".CR2": ".cr2", ".RW2": ".rw2", ".ARW": ".arw", ".DNG": ".dng"}
EVENTS = ["", " Holiday", " Birthday", " Garden", " Hike", " Wedding", " Beach", " Zoo",
          " Christmas", " Snow", " Concert", " City"]
ALBUMS = ["Best of", "Prints", "Family", "Portfolio"]


def kind_of(name):
    ext = os.path.splitext(name)[1].lower()
    for k, exts in KINDS.items():
        if ext in exts:
            return k
    return None


class Drive:
    def __init__(self, root, args):
        self.root = root
        self.a = args
        self.rng = random.Random(args.seed)
        self.sources = self.load_sources(args.source or DEFAULT_SOURCES)
        self.files = {}      # relative path -> record
        self.seq = 0         # files written so far
        self.folders = []    # import folders, in import order
        self.renamed = set() # imports a photo manager renamed
        self.deleted = 0
        self.stems = {}      # path without extension -> its paths (sidecars)
        self.counters = [self.rng.randrange(1, 9000) for _ in CAMERAS]

    def load_sources(self, dirs):
        """The real files to build from: by extension, and only those that
        are what their name says and read whole.  Test suites hold crash
        samples and mislabelled files too: where a folder has exiftool's
        expected.json (the shared corpus), its FileType must match the
        extension and it must report no error; every JPEG must decode with
        libjpeg-turbo's djpeg without a warning."""
        src = {k: [] for k in KINDS}
        for d in dirs:
            oracle = {}
            exp = os.path.join(d, "expected.json")
            if os.path.exists(exp):
                with open(exp) as f:
                    oracle = {x["SourceFile"]: x for x in json.load(f)}
            for top, _, names in os.walk(d):
                for n in sorted(names):
                    k = kind_of(n)
                    p = os.path.join(top, n)
                    if not k or os.path.getsize(p) < 64:
                        continue
                    if oracle:
                        x = oracle.get(os.path.relpath(p, d))
                        ext = os.path.splitext(n)[1].lower().lstrip(".")
                        want = {"jpg": "JPEG", "jpeg": "JPEG"}.get(ext, ext.upper())
                        if not x or x.get("File:FileType") != want or "ExifTool:Error" in x:
                            continue
                    if k == "jpeg" and subprocess.run(
                            ["djpeg", "-scale", "1/8", "-outfile", os.devnull, p],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode:
                        continue
                    src[k].append((os.path.getsize(p), p))
        for k in src:
            src[k].sort()
        missing = [k for k in ("jpeg", "raw", "movie", "xmp") if not src[k]]
        if missing:
            sys.exit("livedin: no %s among the sources %s" % (", ".join(missing), dirs))
        return src

    def pick_source(self, kind, size, ext=None):
        """A real file of this kind (of this extension, where there is one)
        no bigger than size where one is, else the smallest."""
        pool = self.sources[kind]
        if kind == "xmp":  # sidecars as they come: their own sizes
            return self.rng.choice(pool)
        if ext:
            same = [s for s in pool if s[1].lower().endswith(ext)]
            pool = same or pool
        fits = [s for s in pool if s[0] <= size]
        if not fits:
            return pool[0]
        # among the largest that fit, so padding stays a minor part
        return self.rng.choice(fits[-max(1, len(fits) // 3):])

    def write(self, rel, kind, size, ext=None, imp=None, note=None):
        """Write one file whole, from its source and padding."""
        src_size, src = self.pick_source(kind, size, ext)
        with open(src, "rb") as f:
            data = f.read()
        pad = max(0, size - len(data))
        if pad and os.path.splitext(src)[1].lower() in BMFF:
            pad = max(pad, 16)
            tail = pad.to_bytes(4, "big") + b"free" + self.rng.randbytes(pad - 8)
        elif pad or kind != "xmp":
            # 8 bytes at least: no two files the same
            pad = max(pad, 8)
            tail = self.rng.randbytes(pad)
        else:
            tail = b""
        path = os.path.join(self.root, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(data)
            f.write(tail)
        self.seq += 1
        rec = {"path": rel, "kind": kind, "size": len(data) + len(tail), "source": src,
               "source_size": src_size, "import": imp, "seq": self.seq, "life": []}
        if note:
            rec["life"].append(note)
        self.remember(rec)
        return rec

    def remember(self, r):
        self.files[r["path"]] = r
        self.stems.setdefault(os.path.splitext(r["path"])[0], set()).add(r["path"])

    def forget(self, rel):
        del self.files[rel]
        stem = os.path.splitext(rel)[0]
        self.stems[stem].discard(rel)
        if not self.stems[stem]:
            del self.stems[stem]

    def sizes(self, kinds):
        """Log-normal sizes per kind, scaled to the mean asked for."""
        factor = {"jpeg": 1.0, "raw": 6.0, "movie": 40.0}
        raw = [factor[k] * math.exp(self.rng.gauss(0, 0.55)) for k in kinds]
        scale = self.a.mean_kib * 1024 * len(raw) / sum(raw)
        return [max(4096, int(r * scale)) for r in raw]

    def plan(self):
        """Every import's files: (folder, [(name, kind, ext)])."""
        n, k = self.a.files, self.a.imports
        per = [n // k + (1 if i < n % k else 0) for i in range(k)]
        day = 0
        plans = []
        year0 = 2003
        for i, count in enumerate(per):
            day += self.rng.randint(3, 40)
            y, rest = year0 + day // 365, day % 365
            m, d = min(12, rest // 30 + 1), rest % 30 + 1 if rest % 30 < 28 else 28
            folder = "Photos/%04d/%04d-%02d-%02d%s" % (y, y, m, d, self.rng.choice(EVENTS))
            cam = self.rng.randrange(len(CAMERAS))
            pattern, jext, rext, mext = CAMERAS[cam]
            pairs = self.rng.random() < 0.25        # RAW+JPEG on this card
            movies = self.rng.random() < 0.3
            names = []
            while len(names) < count:
                self.counters[cam] = self.counters[cam] % 9999 + 1
                stem = pattern % self.counters[cam]
                if movies and self.rng.random() < 0.03:
                    names.append((stem + mext, "movie", mext.lower()))
                    continue
                names.append((stem + jext, "jpeg", None))
                if pairs and len(names) < count:
                    names.append((stem + rext, "raw", RAW_EXT[rext]))
            plans.append((folder, sorted(names)))
        return plans

    def sync(self):
        # this file system only (syncfs, as `sync -f`): a global sync would
        # also write back whatever other programs, or tests running beside
        # this one, have just written (test_fs checks that a copy made a
        # moment ago is still waiting for its blocks)
        fd = os.open(self.root, os.O_RDONLY | os.O_DIRECTORY)
        try:
            if LIBC.syncfs(fd) != 0:
                os.sync()
        finally:
            os.close(fd)

    def run(self):
        plans = self.plan()
        all_kinds = [k for _, names in plans for _, k, _ in names]
        sizes = iter(self.sizes(all_kinds))
        for i, (folder, names) in enumerate(plans):
            # the import: one folder, in name order, whole files
            made = []
            for name, kind, ext in names:
                made.append(self.write(os.path.join(folder, name), kind, next(sizes), ext, imp=i))
            self.folders.append(folder)
            self.sync()
            self.life(i, made)
            self.log("import %d/%d: %s, %d files" % (i + 1, len(plans), folder, len(made)))

    def live(self, kind=None, before=None):
        return [r for r in self.files.values()
                if (kind is None or r["kind"] == kind) and
                (before is None or (r["import"] is not None and r["import"] < before))]

    def life(self, i, made):
        L = self.a.life
        if L <= 0:
            return
        rng = self.rng
        # culling: the misses of this import, right away
        for r in made:
            if r["kind"] != "xmp" and rng.random() < 0.08 * L:
                self.delete(r)
        # later regrets: a few from older imports
        for r in self.live(before=i):
            if rng.random() < 0.0005 * L:
                self.delete(r)
        # edits, mostly of this import, a few of older ones: saved again
        # through a new file (the data moves), or an edited copy exported
        # beside the original
        for r in self.live("jpeg"):
            x = rng.random() * (1 if r["import"] == i else 50)
            if x < 0.04 * L:
                self.save_again(r)
            elif x < 0.07 * L:
                stem, ext = os.path.splitext(r["path"])
                rel = stem + "-edit" + ext
                if rel not in self.files:
                    self.write(rel, "jpeg", r["size"], imp=r["import"], note="exported edit")
        # sidecars for an older import's RAWs (and some JPEGs), written now
        if i >= 2 and rng.random() < 0.35 * L:
            j = rng.randrange(i - 1)
            for r in [r for r in self.live() if r["import"] == j and r["kind"] in ("raw", "jpeg")]:
                stem = os.path.splitext(r["path"])[0]
                rel = stem + ".xmp"
                if rel not in self.files and (r["kind"] == "raw" or rng.random() < 0.3):
                    self.write(rel, "xmp", 0, imp=j, note="sidecar later")
        # a photo manager renames a whole import by date and time
        j = rng.randrange(i) if i >= 1 else 0
        if i >= 1 and rng.random() < 0.06 * L and j not in self.renamed:
            self.renamed.add(j)
            for r in sorted((r for r in self.live() if r["import"] == j),
                            key=lambda r: r["path"]):
                d, name = os.path.split(r["path"])
                self.rename(r, os.path.join(d, "%s_%s" % (os.path.basename(d)[:10], name)),
                            "renamed")
        # picks moved into an album
        if rng.random() < 0.1 * L:
            album = "Photos/Albums/%s %d" % (rng.choice(ALBUMS), rng.randrange(2003, 2030))
            for r in rng.sample(made, min(len(made), rng.randint(1, 6))):
                if r["path"] in self.files:
                    self.rename(r, os.path.join(album, os.path.basename(r["path"])), "moved")
        self.sync()

    def delete(self, r):
        """Gone, and its sidecar with it once no image of its name is left
        (a photo manager deletes both)."""
        os.unlink(os.path.join(self.root, r["path"]))
        self.forget(r["path"])
        self.deleted += 1
        stem = os.path.splitext(r["path"])[0]
        side = stem + ".xmp"
        if side in self.files and self.stems.get(stem) == {side}:
            os.unlink(os.path.join(self.root, side))
            self.forget(side)
            self.deleted += 1

    def save_again(self, r):
        """An editor's save: a temporary file, then renamed over the photo."""
        path = os.path.join(self.root, r["path"])
        tmp = path + ".tmp"
        with open(path, "rb") as f:
            data = bytearray(f.read())
        # the picture stays, its padding changes (new bytes, as an edit has)
        keep = r["source_size"]
        data[keep:] = self.rng.randbytes(len(data) - keep)
        with open(tmp, "wb") as f:
            f.write(data)
        os.rename(tmp, path)
        self.seq += 1
        r["seq"] = self.seq
        r["life"].append("saved again")

    def rename(self, r, rel, what):
        if rel in self.files:
            return
        path = os.path.join(self.root, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        os.rename(os.path.join(self.root, r["path"]), path)
        self.forget(r["path"])
        r["life"].append("%s from %s" % (what, r["path"]))
        r["path"] = rel
        self.remember(r)

    def log(self, msg):
        if not self.a.quiet:
            print(msg, flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("dir")
    ap.add_argument("--files", type=int, required=True)
    ap.add_argument("--mean-kib", type=float, default=149.0)
    ap.add_argument("--imports", type=int, default=0, help="default: files / 150")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--life", type=float, default=1.0)
    ap.add_argument("--source", action="append", help="folders of real files (repeatable)")
    ap.add_argument("--manifest")
    ap.add_argument("--quiet", action="store_true")
    a = ap.parse_args()
    if a.imports <= 0:
        a.imports = max(1, a.files // 150)
    os.makedirs(a.dir, exist_ok=True)
    drive = Drive(a.dir, a)
    drive.run()
    files = sorted(drive.files.values(), key=lambda r: r["path"])
    total = sum(r["size"] for r in files)
    print("livedin: %d files, %.1f MiB (mean %.0f KiB), %d imports, life %.2f, seed %d"
          % (len(files), total / 2**20, total / 1024 / max(1, len(files)), a.imports, a.life,
             a.seed))
    if a.manifest:
        with open(a.manifest, "w") as f:
            json.dump({"files": files, "folders": drive.folders, "deleted": drive.deleted,
                       "seed": a.seed, "life": a.life}, f, indent=0)


if __name__ == "__main__":
    main()
