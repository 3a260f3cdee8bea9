"""EXIF as writers really store it, against exiftool: a differential test.

Real files beyond our corpora disagree with exiftool in a few classes
(issue 16): values stored in a type other than the one the standard names
(ISO as text, FocalLength as a SHORT, FNumber as a FLOAT, Orientation as a
RATIONAL), GPS written as text ("51 30 26.64", "51.5074", "0,7,39") or as
fewer than three rationals, a tag holding several values where one is
expected (ISO "200 400", text with a second string after a NUL), and JPEGs
with several Exif segments (an editor adds its own and keeps the
camera's), or one block split over two segments.  Rather than a file per case, this test draws JPEGs at random
from all of those shapes at once: 1 to 3 Exif segments, each in either
byte order, with random tags in IFD0, the Exif IFD, the GPS IFD and IFD1,
each in a random one of the types writers use.  exiftool (`-j -n -G -a`)
reads the same files, and every field must agree, value for value.

What is not drawn, because we disagree with exiftool on purpose
(docs/extraction.md, "Against exiftool"): GPS parts with a minus sign
(exiftool adds the signed parts and then drops the sign: -51 30 0 is 50.5
to it, 51.5 to us) and GPS text written as fractions ("51/1 30/1", which
it reads as 51, 1, 30).

Usage: test_exiftags.py [--files N] [--seed S]
"""
import argparse
import json
import os
import random
import subprocess
from fractions import Fraction

from differential import compare
from lib import check, done, export, run, skip, tempdir
from tiffgen import (ASCII, DOUBLE, FLOAT, LONG, RATIONAL, SHORT, SLONG, SRATIONAL, SSHORT,
                     Tiff, app1)

ap = argparse.ArgumentParser()
ap.add_argument("--files", type=int, default=1000)
ap.add_argument("--seed", type=int, default=16)
args = ap.parse_args()

try:
    subprocess.run(["exiftool", "-ver"], capture_output=True, check=True)
    subprocess.run(["cjpeg", "-version"], capture_output=True)
except (OSError, subprocess.CalledProcessError):
    skip("exiftool and cjpeg (libimage-exiftool-perl, libjpeg-turbo-progs) are needed")

def text_value(rng, words):
    """A text as writers leave it: NUL-terminated, sometimes padded with
    blanks or followed by a second string after the NUL."""
    s = rng.choice(words)
    r = rng.random()
    if r < 0.2:
        s += "   "
    elif r < 0.35:
        s += "\0" + rng.choice(words)
    return s + "\0"


def number(rng, t, v, den=1000):
    """v in type t: [values] for value(); None when t cannot hold it."""
    if t in (SHORT, LONG, SSHORT, SLONG):
        return [int(v)] if v == int(v) else None
    if t in (RATIONAL, SRATIONAL):
        f = Fraction(v).limit_denominator(den)
        return [(f.numerator, f.denominator)]
    return [v]


def draw_number(rng, tf, v, types, den=1000):
    for _ in range(10):
        t = rng.choice(types)
        if t == ASCII:
            f = Fraction(v).limit_denominator(den)
            txt = ("%d/%d" % (f.numerator, f.denominator) if f.denominator != 1 and rng.random() < 0.5
                   else "%g" % v)
            if rng.random() < 0.2:
                txt += " %g" % (v * 2)  # a second value
            return tf.value(ASCII, txt + "\0")
        vals = number(rng, t, v, den)
        if vals is None:
            continue
        if rng.random() < 0.15:
            vals = vals + vals  # several values where one is expected
        return tf.value(t, vals)
    return tf.value(RATIONAL, [(int(v * 1000), 1000)])


def draw_gps(rng, tf, deg):
    """A coordinate (degrees, >= 0) in one of the shapes writers use."""
    d = int(deg)
    m = int((deg - d) * 60)
    s = round(((deg - d) * 60 - m) * 60, 2)
    shape = rng.choice(["rat3", "rat3", "rat2", "rat1", "srat3", "double3", "short3",
                        "text_dms", "text_deg", "text_comma", "zero_den"])
    if shape == "rat3":
        return tf.value(RATIONAL, [(d, 1), (m, 1), (int(s * 100), 100)])
    if shape == "rat2":
        mm = Fraction(m + s / 60).limit_denominator(10000)
        return tf.value(RATIONAL, [(d, 1), (mm.numerator, mm.denominator)])
    if shape == "rat1":
        f = Fraction(deg).limit_denominator(1000000)
        return tf.value(RATIONAL, [(f.numerator, f.denominator)])
    if shape == "srat3":
        return tf.value(SRATIONAL, [(d, 1), (m, 1), (int(s * 100), 100)])
    if shape == "double3":
        return tf.value(DOUBLE, [float(d), float(m), s])
    if shape == "short3":
        return tf.value(SHORT, [d, m, int(s)])
    if shape == "text_dms":
        return tf.value(ASCII, "%d %d %.2f\0" % (d, m, s))
    if shape == "text_deg":
        return tf.value(ASCII, "%.6f\0" % deg)
    if shape == "text_comma":
        return tf.value(ASCII, "%d,%d,%.2f\0" % (d, m, s))
    return tf.value(RATIONAL, [(d, 1), (m, 1), (0, 0)])  # no fix: no position


MAKES = ["Canon", "NIKON CORPORATION", "SONY", "Apple", "samsung", "FUJIFILM", "Panasonic"]
MODELS = ["EOS 80D", "D750", "ILCE-7M3", "iPhone 12", "SM-G991B", "X-T4", "DC-GH5"]
LENSES = ["EF24-105mm f/4L IS USM", "24.0-70.0 mm f/2.8", "iPhone 12 back camera 4.2mm f/1.6"]


def draw_segment(rng):
    tf = Tiff(rng.random() < 0.5)
    ifd0, exif, gps, ifd1 = [], [], [], []

    # one block in eight holds a position and nothing else (a geotagger's)
    gps_only = rng.random() < 0.125

    def maybe(p):
        return not gps_only and rng.random() < p

    if maybe(0.7):
        ifd0.append((0x010F,) + tf.value(ASCII, text_value(rng, MAKES)))
    if maybe(0.6):
        ifd0.append((0x0110,) + tf.value(ASCII, text_value(rng, MODELS)))
    if maybe(0.5):
        ifd0.append((0x0112,) + draw_number(rng, tf, rng.randint(1, 8),
                                            [SHORT, SHORT, LONG, RATIONAL]))
    if maybe(0.2):
        ifd0.append((0xA434,) + tf.value(ASCII, text_value(rng, LENSES)))
    if maybe(0.7):
        if maybe(0.6):
            y = rng.randint(1999, 2030)
            exif.append((0x9003,) + tf.value(ASCII, "%04d:%02d:%02d %02d:%02d:%02d\0" % (
                y, rng.randint(1, 12), rng.randint(1, 28), rng.randint(0, 23),
                rng.randint(0, 59), rng.randint(0, 59))))
        if maybe(0.6):
            exif.append((0x8827,) + draw_number(rng, tf, rng.choice([50, 100, 200, 400, 3200, 12800]),
                                                [SHORT, SHORT, LONG, ASCII]))
        if maybe(0.6):
            exif.append((0x829A,) + draw_number(
                rng, tf, rng.choice([1 / 8000, 1 / 250, 1 / 60, 0.5, 2, 30]),
                [RATIONAL, RATIONAL, SRATIONAL, FLOAT, DOUBLE, ASCII, LONG], den=10000))
        if maybe(0.6):
            exif.append((0x829D,) + draw_number(rng, tf, rng.choice([1.4, 2.8, 4, 5.6, 8, 16]),
                                                [RATIONAL, RATIONAL, FLOAT, DOUBLE, SHORT]))
        if maybe(0.6):
            exif.append((0x920A,) + draw_number(rng, tf, rng.choice([4.2, 18, 35, 50, 85.5, 200]),
                                                [RATIONAL, RATIONAL, SHORT, LONG, FLOAT]))
        if maybe(0.2):
            exif.append((0xA434,) + tf.value(ASCII, text_value(rng, LENSES)))
    if gps_only or maybe(0.4):
        lat, lon = rng.uniform(0, 89), rng.uniform(0, 179)
        if gps_only or maybe(0.9):
            gps.append((1,) + tf.value(ASCII, rng.choice("NS") + "\0"))
        gps.append((2,) + draw_gps(rng, tf, lat))
        if gps_only or maybe(0.9):
            gps.append((3,) + tf.value(ASCII, rng.choice("EW") + "\0"))
        if gps_only or maybe(0.95):
            gps.append((4,) + draw_gps(rng, tf, lon))
    if maybe(0.3):
        ifd1.append((0x0112,) + tf.value(SHORT, [rng.randint(1, 8)]))
        if maybe(0.3):
            ifd1.append((0x010F,) + tf.value(ASCII, text_value(rng, MAKES)))
    return tf.build(ifd0, exif if exif else None, gps if gps else None, ifd1 if ifd1 else None)


def first_number(v):
    """exiftool's -n value: a number, or text of numbers ("200 400",
    "1/250"): its first, as a Fraction-exact float."""
    if isinstance(v, (int, float)):
        return float(v)
    parts = str(v).split()
    if not parts:
        return None
    try:
        return float(Fraction(parts[0]))
    except (ValueError, ZeroDivisionError):
        return None


def expected(e):
    out = {}
    for k, tag in (("make", "EXIF:Make"), ("model", "EXIF:Model"), ("lens_model", "EXIF:LensModel")):
        if tag in e and str(e[tag]).strip():
            out[k] = str(e[tag]).strip()
    if "EXIF:DateTimeOriginal" in e:
        v = str(e["EXIF:DateTimeOriginal"])
        out["datetime_original"] = v[0:4] + "-" + v[5:7] + "-" + v[8:10] + "T" + v[11:19]
    for k, tag in (("orientation", "EXIF:Orientation"), ("iso", "EXIF:ISO"),
                   ("exposure_time", "EXIF:ExposureTime"), ("f_number", "EXIF:FNumber"),
                   ("focal_length", "EXIF:FocalLength"), ("gps_lat", "Composite:GPSLatitude"),
                   ("gps_lon", "Composite:GPSLongitude")):
        if tag in e:
            n = first_number(e[tag])
            if n is not None:
                out[k] = n
    # a 0/0 part (a receiver without a fix) makes exiftool's GPSLatitude
    # empty (its JSON may list that copy or not), and where that one is the
    # value its Composite tag takes, the Composite says 0 (with a warning
    # -j does not print): a 0 no copy of the EXIF tag holds is no position
    for k, tag in (("gps_lat", "GPSLatitude"), ("gps_lon", "GPSLongitude")):
        if out.get(k) == 0 and 0 not in e.get("all:EXIF:" + tag, []):
            out.pop("gps_lat", None)
            out.pop("gps_lon", None)
    if ("gps_lat" in out) != ("gps_lon" in out):  # a position is both or neither
        out.pop("gps_lat", None)
        out.pop("gps_lon", None)
    return out


FIELDS = ["make", "model", "lens_model", "datetime_original", "orientation", "iso",
          "exposure_time", "f_number", "focal_length", "gps_lat", "gps_lon"]


def same(a, b):
    if isinstance(b, float):
        return isinstance(a, (int, float)) and abs(a - b) <= 1e-6 * max(1.0, abs(b))
    return a == b


rng = random.Random(args.seed)
with tempdir("exiftags", os.environ.get("EXIFTAGS_BASE")) as work:
    pics = os.path.join(work, "pics")
    os.mkdir(pics)
    ppm = os.path.join(work, "grey.pgm")
    with open(ppm, "wb") as f:
        f.write(b"P5 16 16 255\n" + bytes(range(256)))
    plain = subprocess.run(["cjpeg", "-quality", "80", ppm], capture_output=True,
                           check=True).stdout
    shapes = {"segments": {}}
    for i in range(args.files):
        n = rng.choice([1, 1, 1, 2, 2, 3])
        shapes["segments"][n] = shapes["segments"].get(n, 0) + 1
        segs = b""
        for _ in range(n):
            block = draw_segment(rng)
            if rng.random() < 0.1:
                # one block split over two segments, as writers split
                # one over 64 KiB: the second part follows without a
                # TIFF header of its own
                cut = rng.randrange(9, len(block))
                segs += app1(block[:cut]) + app1(block[cut:])
                shapes["split"] = shapes.get("split", 0) + 1
            else:
                segs += app1(block)
        with open(os.path.join(pics, "t%04d.jpg" % i), "wb") as f:
            f.write(plain[:2] + segs + plain[2:])
    ex = subprocess.run(["exiftool", "-j", "-n", "-G", "-a", "-q", pics], capture_output=True,
                        text=True)
    check(ex.returncode == 0, "exiftool reads them: %s" % ex.stderr[-300:])
    def keep_all(pairs):
        """exiftool -a writes a key once per copy of a tag: the last
        stands, and "all:KEY" lists every copy."""
        d = {}
        for k, v in pairs:
            d[k] = v
            d.setdefault("all:" + k, []).append(v)
        return d

    want = {os.path.basename(e["SourceFile"]): expected(e)
            for e in json.loads(ex.stdout, object_pairs_hook=keep_all)}
    db = os.path.join(work, "i.db")
    rc, out, err = run("scan", "--db", db, pics)
    check(rc == 0, "scan (exit %d): %s" % (rc, err[-300:]))
    got = {os.path.basename(r["path"]): r for r in export(db)}
    check(len(got) == args.files and len(want) == args.files,
          "%d files: %d records, %d exiftool reports" % (args.files, len(got), len(want)))
    compared, agreed = compare(want, got, FIELDS, agree=same)
    print("%d files (by Exif blocks: %s; %d blocks split over two segments), %d values "
          "compared, %d agree" % (args.files, shapes["segments"], shapes.get("split", 0),
                                  compared, agreed))
    check(compared > args.files * 3, "enough values compared: %d" % compared)
done()
