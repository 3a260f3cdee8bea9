"""Sigma X3F against exiftool: a differential test over random files.

No real X3F file is among our corpora, so this test draws them from the
format as exiftool reads it (SigmaRaw.pm): a header of one of the
versions cameras wrote (2.0 to 5.0, with 2.16 to catch a version read as
a number), then, in random order and with random bytes between them, PROP
sections (UCS-2 name/value pairs, non-ASCII text, a property given twice,
a bad pointer, a count that does not fit), IMA2 sections holding a JPEG
with an Exif APP1 (exiftool's JpgFromRaw, whose EXIF wins over PROP),
previews that are not read (JFIF first, IMAG, raw image data), decoy
sections and "SECp"/"SECd" marks the directory does not name, and the
directory, at the end or before a last section, listing the sections in
any order, sometimes with an entry past the end of the file (which stops
exiftool's reading there).

Every file is scanned twice: held whole (the default --mem) and streamed
past in 256 KiB chunks (--mem 1M), where the sections are caught on their
way (x3f.h).  Both records must agree with exiftool field for field.
What we read otherwise on purpose: the size is the header's, where
exiftool's Composite:ImageSize takes the JpgFromRaw's (compared here with
SigmaRaw:ImageWidth/Height).

Usage: test_x3f.py [--files N] [--seed S] [--seeds DIR]
  --seeds DIR: only write N small files there (the fuzz target's seeds,
  tests/fuzz/run.sh) and exit
"""
import argparse
import json
import os
import random
import struct
import subprocess

from differential import camera_block, camera_jpeg, scan_twice, tag_fields
from lib import check, done, skip, tempdir
from tiffgen import Tiff, app1

ap = argparse.ArgumentParser()
ap.add_argument("--files", type=int, default=120)
ap.add_argument("--seed", type=int, default=3)
ap.add_argument("--seeds")
args = ap.parse_args()

try:
    if not args.seeds:
        subprocess.run(["exiftool", "-ver"], capture_output=True, check=True)
    subprocess.run(["cjpeg", "-version"], capture_output=True)
except (OSError, subprocess.CalledProcessError):
    skip("exiftool and cjpeg (libimage-exiftool-perl, libjpeg-turbo-progs) are needed")

VERSIONS = [0x00020000, 0x00020001, 0x00020002, 0x00020003, 0x00020010, 0x00030000,
            0x00040000, 0x00050000]
JPEG_SECI = b"SECi" + struct.pack("<III", 0x00020000, 2, 18)
WORDS = ["SIGMA", "Sigma", "FOVEON", "DP2 Merrill", "SD14", "sd Quattro H", "Σίγμα", "Caméra",
         "X3F", "dp0"]


def header(rng, ver, w, h):
    if ver >= 0x00040000:
        b = b"FOVb" + struct.pack("<I", ver) + bytes(rng.randrange(256) for _ in range(32))
        b += struct.pack("<III", w, h, rng.choice([0, 90, 180, 270]))
        return b.ljust(0x300, b"\0")
    b = b"FOVb" + struct.pack("<I", ver) + bytes(rng.randrange(256) for _ in range(16))
    b += struct.pack("<IIII", 0, w, h, rng.choice([0, 90, 180, 270]))
    b += b"Auto".ljust(32, b"\0")
    minor = ver & 0xffff
    if ver >= 0x00030000 or minor in (3, 4, 5, 6, 7, 8, 9):
        b += b"Standard".ljust(32, b"\0")
    if ver > 0x00020000:
        b += b"\0" * 160
    return b


def prop_value(rng, key):
    if key == "CAMMANUF" or key == "CAMMODEL" or key == "CAMNAME":
        return " ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 2)))
    if key == "TIME":
        return str(rng.randrange(10 ** 8, 2 * 10 ** 9))
    if key == "APERTURE":
        return "%.1f" % rng.uniform(1.4, 22)
    if key == "SHUTTER":
        return "%.6g" % (1 / rng.choice([4000, 1000, 250, 60, 8, 2, 1]))
    if key == "ISO":
        return str(rng.choice([50, 100, 200, 400, 800, 1600, 6400]))
    if key == "FLENGTH":
        return "%.1f" % rng.uniform(4, 300)
    if key == "LENSMODEL":
        return "%x" % rng.randrange(0x100, 0x1000)
    return "%d" % rng.randrange(100000)


def prop(rng):
    keys = ["CAMMANUF", "CAMMODEL", "TIME", "APERTURE", "SHUTTER", "ISO", "FLENGTH",
            "LENSMODEL", "CAMSERIAL", "EXPTIME", "CAMNAME"]
    pairs = [(k, prop_value(rng, k)) for k in keys if rng.random() < 0.6]
    if pairs and rng.random() < 0.3:  # a property given twice: the first counts
        k = rng.choice(pairs)[0]
        pairs.insert(rng.randrange(len(pairs) + 1), (k, prop_value(rng, k)))
    rng.shuffle(pairs)
    chars, ents = [], []
    for k, v in pairs:
        kp = len(chars)
        chars += [ord(c) for c in k] + [0]
        vp = len(chars)
        chars += [ord(c) for c in v] + [0]
        ents.append([kp, vp])
    nchars = len(chars)
    shape = "ok"
    if ents and rng.random() < 0.08:  # a pointer past the text: the rest is not read
        ents[rng.randrange(len(ents))][1] = nchars + rng.randrange(1, 50)
        shape = "bad pointer"
    elif rng.random() < 0.05:  # a count the section cannot hold: none of it is read
        nchars += 1000000
        shape = "bad count"
    b = b"SECp" + struct.pack("<IIIII", 0x00010000, len(ents), 0, 0, nchars)
    b += b"".join(struct.pack("<II", *e) for e in ents)
    b += struct.pack("<%dH" % len(chars), *chars)
    return b, shape


def exif_jpeg(rng, plain):
    """A JpgFromRaw: SOI, an Exif APP1, and the rest of a real JPEG."""
    body = camera_block(rng, Tiff(rng.random() < 0.5), ["SIGMA", "Sigma Corp", "FOVEON"],
                        ["SIGMA DP1", "SIGMA SD14", "sd Quattro"])
    return b"\xff\xd8" + app1(body) + plain[2:]


def draw(rng, plain, plain_jfif):
    ver = rng.choice(VERSIONS)
    out = bytearray(header(rng, ver, rng.randrange(1000, 10000), rng.randrange(1000, 8000)))
    shapes = []
    secs = []  # (offset, length, type)
    kinds = ["PROP"] * rng.randint(0, 2) + ["JPG"] * rng.randint(0, 2)
    kinds += [k for k in ("JFIF", "IMAG", "RAW", "CAMF", "DECOY") if rng.random() < 0.3]
    rng.shuffle(kinds)
    big = not args.seeds and rng.random() < 0.6  # streamed past at --mem 1M

    def filler():
        n = rng.randrange(0, 400000 if big else 3000)
        b = bytearray(rng.randbytes(n))
        for _ in range(rng.randint(0, 3)):  # marks that are no section
            if n > 40:
                at = rng.randrange(n - 40)
                b[at:at + 4] = rng.choice([b"SECp", b"SECd", b"SECi", b"SEC"])
        return bytes(b)

    dir_early = bool(kinds) and rng.random() < 0.15
    for i, k in enumerate(kinds):
        out += filler()
        if k == "PROP":
            b, shape = prop(rng)
            shapes.append("prop " + shape)
            secs.append((len(out), len(b), b"PROP"))
        elif k == "JPG":
            b = JPEG_SECI + struct.pack("<III", 64, 48, 0) + exif_jpeg(rng, plain)
            secs.append((len(out), len(b), b"IMA2"))
        elif k == "JFIF":  # a preview, but no JpgFromRaw: not read
            b = JPEG_SECI + struct.pack("<III", 64, 48, 0) + plain_jfif
            secs.append((len(out), len(b), b"IMA2"))
        elif k == "IMAG":  # exiftool's PreviewImage: never read for metadata
            b = JPEG_SECI + struct.pack("<III", 64, 48, 0) + exif_jpeg(rng, plain)
            secs.append((len(out), len(b), b"IMAG"))
        elif k == "RAW":
            b = b"SECi" + struct.pack("<IIIIII", 0x00020000, 3, 30, 100, 100, 0)
            b += rng.randbytes(rng.randrange(1000, 300000 if big else 5000))
            secs.append((len(out), len(b), b"IMA2"))
        elif k == "CAMF":
            b = b"SECc" + rng.randbytes(rng.randrange(100, 3000))
            secs.append((len(out), len(b), b"CAMF"))
        else:  # a PROP the directory does not name: its values must not count
            b, _ = prop(rng)
        out += b
        if dir_early and i == 0:
            dir_at = len(out)
            out += b"\0" * (12 + 12 * (len(secs) + 8))  # room, filled below
    order = list(secs)
    rng.shuffle(order)
    if order and rng.random() < 0.07:  # an entry past the end: exiftool stops there
        order.insert(rng.randrange(len(order) + 1),
                     (len(out) + 10 ** 6, 100, rng.choice([b"PROP", b"IMA2"])))
        shapes.append("entry past the end")
    d = b"SECd" + struct.pack("<II", 0x00020000, len(order))
    d += b"".join(struct.pack("<II", o, n) + t for o, n, t in order)
    if dir_early and len(d) <= 12 + 12 * (len(secs) + 8):
        out[dir_at:dir_at + len(d)] = d
        shapes.append("directory early")
    else:
        out += filler()
        dir_at = len(out)
        out += d
    out += struct.pack("<I", dir_at)
    return bytes(out), shapes


def expected(e):
    """The fields exiftool gives: the winner of each tag (no -a)."""
    out = {"format": "x3f" if e.get("File:FileType") == "X3F" else e.get("File:FileType")}
    if "SigmaRaw:ImageWidth" in e:
        out["width"], out["height"] = e["SigmaRaw:ImageWidth"], e["SigmaRaw:ImageHeight"]
    out.update(tag_fields(e, ["SigmaRaw", "EXIF"]))
    return out


rng = random.Random(args.seed)
with tempdir("x3f") as work:
    jfif, plain = camera_jpeg(rng, work)
    files = args.seeds or os.path.join(work, "files")
    os.makedirs(files, exist_ok=True)
    shapes = {}
    streamed = 0
    for i in range(args.files):
        data, sh = draw(rng, plain, jfif)
        streamed += len(data) > 256 * 1024
        for s in sh:
            shapes[s] = shapes.get(s, 0) + 1
        with open(os.path.join(files, "f%04d.x3f" % i), "wb") as f:
            f.write(data)
    if args.seeds:
        raise SystemExit(0)
    # every tag's winner (no -a: the EXIF of a JpgFromRaw over PROP, as
    # exiftool decides it), and the header's size, which loses to the JPEG's
    p = subprocess.run(["exiftool", "-j", "-n", "-G", files], capture_output=True, text=True)
    q = subprocess.run(["exiftool", "-j", "-n", "-G", "-SigmaRaw:ImageWidth",
                        "-SigmaRaw:ImageHeight", files], capture_output=True, text=True)
    want = {}
    for e, size in zip(json.loads(p.stdout), json.loads(q.stdout)):
        assert e["SourceFile"] == size["SourceFile"]
        e.update(size)
        want[os.path.basename(e["SourceFile"])] = expected(e)
    check(len(want) == args.files, "exiftool read %d of %d files" % (len(want), args.files))
    compared, agreed = scan_twice(work, files, want)
    print("%d files (%d streamed at --mem 1M; %s), %d values compared twice, %d agree" %
          (args.files, streamed, ", ".join("%s %d" % kv for kv in sorted(shapes.items())),
           compared // 2, agreed))
    check(compared > args.files * 8, "enough values compared: %d" % compared)
done()
