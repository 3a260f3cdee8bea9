#!/usr/bin/env python3
"""How well `seekless dupes --near` finds copies of a photo, and whether it
ever joins two different ones.

    tools/bench/near.py [--bits N] [--photos 26] [--formats] [--keep DIR]

Takes distinct real photos (at least 400x300) from ../shared/corpus/real,
one per scene (the corpus has the same scene in several orientations and
exposures: one of each family), and makes four copies of each with
libjpeg-turbo's own tools, as the issue describes:
  half     djpeg -scale 1/2 | cjpeg -quality 75   (no EXIF left)
  q50      djpeg | cjpeg -quality 50               (no EXIF left)
  stripped jpegtran -copy none                      (no EXIF thumbnail, no
                                                     orientation tag)
  cropped  jpegtran -copy all -crop 96% (centred)   (the EXIF, with its old
                                                     thumbnail, kept)
With --formats, two more of each, in other formats (needs netpbm, webp):
  png      djpeg | pnmtopng                        (no EXIF left)
  webp     cwebp -q 75 -resize W/2 0               (no EXIF left)
Then scans them (default options), runs `dupes --near[=BITS] --json`, and
counts: copies grouped with their original, by kind; groups holding two
originals.  Needs djpeg, cjpeg, jpegtran (libjpeg-turbo-progs) and exiftool.
"""
import argparse
import collections
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

here = os.path.dirname(os.path.abspath(__file__))
top = os.path.dirname(os.path.dirname(here))
ap = argparse.ArgumentParser()
ap.add_argument("--bits", type=int, default=None)
ap.add_argument("--photos", type=int, default=26)
ap.add_argument("--formats", action="store_true", help="PNG and WebP copies too")
ap.add_argument("--keep", default=None, help="build the set here and keep it")
ap.add_argument("--bin", default=os.path.join(top, "build", "seekless"))
ap.add_argument("--corpus", default=os.path.join(top, "..", "shared", "corpus", "real"))
args = ap.parse_args()


def family(name):
    """Files showing one scene: the corpus's orientation and HDR series."""
    n = re.sub(r"[_ -]?\(?\d\)?\.(jpe?g)$", "", name, flags=re.I)
    n = re.sub(r"(landscape|portrait)_\d", r"\1", n, flags=re.I)
    n = re.sub(r"hdr_(YES|NO)", "hdr", n)
    return n.lower()


meta = json.loads(subprocess.run(
    ["exiftool", "-j", "-n", "-ImageWidth", "-ImageHeight", "-FileType", "-ext", "jpg",
     args.corpus], capture_output=True, text=True).stdout)
seen, chosen = set(), []
for m in sorted(meta, key=lambda m: m["SourceFile"]):
    name = os.path.basename(m["SourceFile"])
    if m.get("FileType") != "JPEG" or (m.get("ImageWidth") or 0) < 400 or \
            (m.get("ImageHeight") or 0) < 300 or m["ImageWidth"] * m["ImageHeight"] > 30e6:
        continue
    f = family(name)
    if f in seen:
        continue
    seen.add(f)
    chosen.append((m["SourceFile"], m["ImageWidth"], m["ImageHeight"]))
chosen = chosen[:args.photos]

work = args.keep or tempfile.mkdtemp(prefix="seekless-near-")
os.makedirs(work, exist_ok=True)
made = {}  # path -> (photo index, kind)
for i, (src, w, h) in enumerate(chosen):
    base = os.path.join(work, "p%02d" % i)
    orig = base + "-original.jpg"
    shutil.copy(src, orig)
    made[orig] = (i, "original")
    steps = {
        "half": "djpeg -scale 1/2 '%s' | cjpeg -quality 75 > '%s'",
        "q50": "djpeg '%s' | cjpeg -quality 50 > '%s'",
        "stripped": "jpegtran -copy none '%s' > '%s'",
    }
    exts = {}
    if args.formats:
        steps["png"] = "djpeg '%s' | pnmtopng > '%s'"
        steps["webp"] = "cwebp -quiet -q 75 -resize " + str(w // 2) + " 0 '%s' -o '%s'"
        exts = {"png": ".png", "webp": ".webp"}
    for kind, cmd in steps.items():
        out = "%s-%s%s" % (base, kind, exts.get(kind, ".jpg"))
        if subprocess.run(["sh", "-c", cmd % (orig, out)], capture_output=True).returncode == 0 \
                and os.path.getsize(out) > 0:
            made[out] = (i, kind)
    cw, ch = w * 96 // 100, h * 96 // 100
    out = base + "-cropped.jpg"
    if subprocess.run(["jpegtran", "-copy", "all", "-crop",
                       "%dx%d+%d+%d" % (cw, ch, (w - cw) // 2, (h - ch) // 2), "-outfile", out,
                       orig], capture_output=True).returncode == 0:
        made[out] = (i, "cropped")

db = os.path.join(work, "near.db")
if os.path.exists(db):
    os.unlink(db)
subprocess.run([args.bin, "scan", "--quiet", "--db", db, work], check=False)
near = "--near" if args.bits is None else "--near=%d" % args.bits
p = subprocess.run([args.bin, "dupes", near, "--json", "--db", db], capture_output=True,
                   text=True)
group_of = {}
for number, line in enumerate(p.stdout.splitlines()):
    for path in json.loads(line)["paths"]:
        group_of[path] = number
found = collections.Counter()
total = collections.Counter()
for path, (i, kind) in made.items():
    if kind == "original":
        continue
    total[kind] += 1
    orig = os.path.join(work, "p%02d-original.jpg" % i)
    if path in group_of and group_of.get(orig) == group_of[path]:
        found[kind] += 1
mixed = 0
members = collections.defaultdict(set)
for path, g in group_of.items():
    if path in made:
        members[g].add(made[path][0])
mixed = sum(1 for s in members.values() if len(s) > 1)
n = sum(total.values())
print("%d photos, %d copies: %d grouped with their original (%.1f%%); %s; "
      "groups joining different photos: %d" %
      (len(chosen), n, sum(found.values()), 100.0 * sum(found.values()) / max(n, 1),
       ", ".join("%s %d/%d" % (k, found[k], total[k]) for k in sorted(total)), mixed))
for g, s in members.items():
    if len(s) > 1:
        print("  joined: " + ", ".join(sorted(os.path.basename(chosen[i][0]) for i in s)))
missed = [os.path.basename(p) for p, (i, k) in sorted(made.items()) if k != "original" and
          not (p in group_of and group_of.get(os.path.join(work, "p%02d-original.jpg" % i)) ==
               group_of[p])]
if missed:
    print("  missed: " + " ".join(missed))
if not args.keep:
    shutil.rmtree(work)
