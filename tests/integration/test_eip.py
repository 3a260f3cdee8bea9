"""Capture One EIP (and plain ZIP) against exiftool: a differential test.

No real EIP file is among our corpora, so this test draws packages as
Capture One lays them out and exiftool reads them (ZIP.pm, CaptureOne.pm):
a ZIP holding the image (a TIFF named .IIQ, as Phase One's RAW is, or a
JPEG with an Exif APP1), its settings CaptureOne/Settings*/NAME.cos, a
manifest naming both (or none), and other members (caches, profiles, a
text file in the root), in random order, stored or deflated, sometimes
written as a streaming writer does (every member's sizes after its data,
bit 3, some with ZIP64 descriptors), sometimes with big members before
the image, some images longer than the head the walk keeps.  A ZIP with no
CaptureOne settings is a plain "zip" to both.

Every file is scanned twice: held whole (the default --mem) and streamed
past in 256 KiB chunks (--mem 1M), where the members are walked on their
way (eip.h).  Both records must agree with exiftool field for field, and
carry no warning: every drawn file is sound.

Usage: test_eip.py [--files N] [--seed S] [--seeds DIR]
  --seeds DIR: only write N small files there (the fuzz target's seeds,
  tests/fuzz/run.sh) and exit
"""
import argparse
import io
import json
import os
import random
import subprocess
import zipfile

from differential import camera_block, camera_jpeg, scan_twice, tag_fields
from lib import check, done, skip, tempdir
from tiffgen import Tiff, app1

ap = argparse.ArgumentParser()
ap.add_argument("--files", type=int, default=100)
ap.add_argument("--seed", type=int, default=5)
ap.add_argument("--seeds")
args = ap.parse_args()

try:
    if not args.seeds:
        subprocess.run(["exiftool", "-ver"], capture_output=True, check=True)
        subprocess.run(["perl", "-MArchive::Zip", "-e", "1"], capture_output=True, check=True)
    subprocess.run(["cjpeg", "-version"], capture_output=True)
except (OSError, subprocess.CalledProcessError):
    skip("exiftool with Archive::Zip, and cjpeg (libimage-exiftool-perl, libarchive-zip-perl,"
         " libjpeg-turbo-progs) are needed")


class NoSeek(io.RawIOBase):
    """A stream zipfile cannot seek back in: it writes every member's
    sizes in a data descriptor after its data (bit 3)."""

    def __init__(self):
        self.buf = bytearray()

    def writable(self):
        return True

    def write(self, b):
        self.buf += b
        return len(b)


def image(rng, plain, big):
    # some images over the EIP_HEAD (2 MiB) the walk keeps of them: the
    # rest is passed, and the image is read as the head of a longer file
    huge = big and rng.random() < 0.15
    pad = rng.randbytes(rng.randrange(2200000, 3000000) if huge else
                        rng.randrange(0, 500000 if big else 3000))
    makes, models = ["Phase One", "Leaf", "Hasselblad"], ["IQ180", "IQ4 150MP", "P45+"]
    if rng.random() < 0.5:
        return "IIQ", camera_block(rng, Tiff(rng.random() < 0.5), makes, models, True) + pad
    body = camera_block(rng, Tiff(rng.random() < 0.5), makes, models)
    return "JPG", b"\xff\xd8" + app1(body) + plain[2:]


def draw(rng, plain):
    big = not args.seeds and rng.random() < 0.6  # streamed past at --mem 1M
    base = rng.choice(["IMG_%04d" % rng.randrange(10000), "P0012345", "_DSC0042"])
    ext, img = image(rng, plain, big)
    name = "%s.%s" % (base, ext)
    eip = rng.random() < 0.85
    cos = ('<?xml version="1.0"?><SL Engine="1300"><E K="Rating" V="%d"/>'
           '<E K="ColorBalance" V="1.0;1.0;1.0"/></SL>' % rng.randint(0, 5)).encode()
    members = [(name, img, rng.choice([zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED]))]
    if eip:
        members.append(("CaptureOne/Settings%d/%s.cos" % (rng.choice([50, 90, 130]), name), cos,
                        zipfile.ZIP_DEFLATED))
        if rng.random() < 0.8:
            man = ('<?xml version="1.0"?><Manifest Version="1"><RawPath>%s</RawPath>'
                   '<SettingsPath>%s</SettingsPath></Manifest>' % (name, members[1][0]))
            members.append(("manifest.xml", man.encode(), zipfile.ZIP_DEFLATED))
    if rng.random() < 0.4:
        members.append(("CaptureOne/Cache/Proxies/%s.cop" % name,
                        rng.randbytes(rng.randrange(100, 400000 if big else 2000)),
                        zipfile.ZIP_STORED))
    if rng.random() < 0.3:
        members.append(("readme.txt", b"Exported by a test\n" * rng.randint(1, 50),
                        zipfile.ZIP_DEFLATED))
    if rng.random() < 0.2:
        members.append(("CaptureOne/", b"", zipfile.ZIP_STORED))
    rng.shuffle(members)
    streaming = rng.random() < 0.2
    zip64 = streaming and rng.random() < 0.4

    def write(zip64):
        if not streaming:
            out = io.BytesIO()
            with zipfile.ZipFile(out, "w") as z:
                for n, b, how in members:
                    z.writestr(zipfile.ZipInfo(n, (2020, 1, 1, 0, 0, 0)), b, how)
            return out.getvalue()
        out = NoSeek()  # sizes after the data, stored members too (as Python writes them)
        with zipfile.ZipFile(out, "w") as z:
            for n, b, how in members:
                zi = zipfile.ZipInfo(n, (2020, 1, 1, 0, 0, 0))
                zi.compress_type = how
                # ZIP64 as a writer that cannot know the size makes it: a
                # ZIP64 extra field with zero sizes, 8-byte sizes in the
                # data descriptor
                with z.open(zi, "w", force_zip64=zip64) as f:
                    f.write(b)
        return bytes(out.buf)

    data = write(zip64)
    # Archive::Zip cannot extract such a ZIP64 member: exiftool reads
    # the same archive written without ZIP64 (its twin)
    twin = write(False) if zip64 else data
    shape = (("eip" if eip else "zip") + (" streaming" if streaming else "") +
             (" zip64" if zip64 else "") + " " + ext)
    return data, twin, shape


def expected(e):
    t = e.get("File:FileType")
    out = {"format": {"EIP": "eip", "ZIP": "zip"}.get(t, t)}
    if "Composite:ImageSize" in e:
        w, h = e["Composite:ImageSize"].split()
        out["width"], out["height"] = int(w), int(h)
    out.update(tag_fields(e, ["EXIF"]))
    return out


rng = random.Random(args.seed)
with tempdir("eip") as work:
    jfif, plain = camera_jpeg(rng, work)
    files = args.seeds or os.environ.get("SEEKLESS_KEEP") or os.path.join(work, "files")
    twins = os.path.join(work, "twins")
    os.makedirs(files, exist_ok=True)
    os.makedirs(twins, exist_ok=True)
    shapes = {}
    streamed = 0
    for i in range(args.files):
        data, twin, sh = draw(rng, plain)
        streamed += len(data) > 256 * 1024
        shapes[sh] = shapes.get(sh, 0) + 1
        # a ZIP that is no package named .zip: exiftool names a ZIP whose
        # members do not say what it is by its extension, we by its members
        ext = "eip" if sh.startswith("eip") else "zip"
        with open(os.path.join(files, "f%04d.%s" % (i, ext)), "wb") as f:
            f.write(data)
        with open(os.path.join(twins, "f%04d.%s" % (i, ext)), "wb") as f:
            f.write(twin)
    if args.seeds:
        raise SystemExit(0)
    p = subprocess.run(["exiftool", "-j", "-n", "-G", twins], capture_output=True, text=True)
    want = {os.path.basename(e["SourceFile"]): expected(e) for e in json.loads(p.stdout)}
    check(len(want) == args.files, "exiftool read %d of %d files" % (len(want), args.files))
    compared, agreed = scan_twice(work, files, want, clean=True)
    print("%d files (%d streamed at --mem 1M; %s), %d values compared twice, %d agree" %
          (args.files, streamed, ", ".join("%s %d" % kv for kv in sorted(shapes.items())),
           compared // 2, agreed))
    check(compared > args.files * 6, "enough values compared: %d" % compared)
done()
