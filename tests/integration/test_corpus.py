"""The shared corpus of real camera files (../shared/corpus/real) against
exiftool's expected.json, field by field.

Every file must get a record and nothing may crash (including the
deliberately broken files).  Then every value exiftool gives is compared
with seekless's export field:

  format                 File:FileType (mapped to seekless's names)
  width, height          Composite:ImageSize, else the format's own size
                         (PNG:, RIFF:, GIF:, Jpeg2000:, File: ImageWidth/Height)
  make, model, lens_model  EXIF:*, compared after trimming
  datetime_original      EXIF:DateTimeOriginal ("YYYY:MM:DD HH:MM:SS" read as
                         "YYYY-MM-DDTHH:MM:SS")
  orientation, iso, exposure_time, f_number, focal_length   EXIF:*
  gps_lat, gps_lon       Composite:GPSLatitude/GPSLongitude (signed)

Numbers agree within a relative 1e-6; where exiftool prints several values
(a tag with count > 1) the first is compared; an empty text is no text.
The test fails below 99.5% agreement over all compared values and lists
every disagreement.  Values seekless finds where exiftool gives none are
listed too (exiftool abandons some damaged files a bounded reader can still
read; CRW keeps its camera data outside EXIF).  Where we believe exiftool
is wrong, docs/extraction.md says so with the evidence; nothing here is
special-cased per file.
"""
import json
import os
import re
import sys

from lib import check, done, export, regular_files, run, skip, tempdir

THRESHOLD = 0.995

corpus = os.environ.get("SEEKLESS_CORPUS")
if not corpus or not os.path.isfile(os.path.join(corpus, "expected.json")):
    # a skip where the shared data is absent, but a failure when every test
    # is required (CI, as root)
    skip("shared corpus not found at %s" % corpus)

FORMATS = {"JPEG": "jpeg", "MPO": "mpo", "PNG": "png", "GIF": "gif", "WEBP": "webp",
           "Extended WEBP": "webp", "TIFF": "tiff", "BTF": "bigtiff", "CR2": "cr2",
           "CR3": "cr3", "CRW": "crw", "NEF": "nef", "ARW": "arw", "DNG": "dng", "ORF": "orf",
           "RW2": "rw2", "RAW": "rw2", "RAF": "raf", "MRW": "mrw", "HEIC": "heic",
           "HEIF": "heif", "AVIF": "avif", "JP2": "jp2", "BMP": "bmp", "MP4": "mp4",
           "EXV": "exv", "PEF": "pef", "SRW": "srw"}
TEXT = {"make": "EXIF:Make", "model": "EXIF:Model", "lens_model": "EXIF:LensModel"}
NUMBERS = {"orientation": "EXIF:Orientation", "iso": "EXIF:ISO",
           "exposure_time": "EXIF:ExposureTime", "f_number": "EXIF:FNumber",
           "focal_length": "EXIF:FocalLength", "gps_lat": "Composite:GPSLatitude",
           "gps_lon": "Composite:GPSLongitude"}
OWN_SIZE = ["PNG", "RIFF", "GIF", "Jpeg2000", "File"]


def expected_size(e):
    if "Composite:ImageSize" in e:
        w, h = e["Composite:ImageSize"].split()
        return int(w), int(h)
    for g in OWN_SIZE:
        if "%s:ImageWidth" % g in e and "%s:ImageHeight" % g in e:
            return e["%s:ImageWidth" % g], e["%s:ImageHeight" % g]
    return None, None


def first_number(v):
    if isinstance(v, str):
        parts = v.split()
        try:
            return float(parts[0]) if parts else None
        except ValueError:
            return v
    return v


def same_number(a, b):
    if a is None or b is None:
        return a is None and b is None
    if isinstance(a, str) or isinstance(b, str):
        return str(a) == str(b)
    return abs(float(a) - float(b)) <= 1e-6 * max(1.0, abs(float(b)))


def expected_values(e):
    """(field, value) pairs exiftool gives for this file."""
    out = {}
    t = e.get("File:FileType")
    if t in FORMATS:
        out["format"] = FORMATS[t]
    w, h = expected_size(e)
    if w is not None:
        out["width"], out["height"] = w, h
    for k, tag in TEXT.items():
        if tag in e:
            out[k] = str(e[tag]).strip()
    if "EXIF:DateTimeOriginal" in e:
        v = str(e["EXIF:DateTimeOriginal"])
        m = re.match(r"^(\d{4}):(\d\d):(\d\d)[ T](\d\d):(\d\d):(\d\d)", v)
        out["datetime_original"] = ("%s-%s-%sT%s:%s:%s" % m.groups()) if m else v
    for k, tag in NUMBERS.items():
        if tag in e:
            out[k] = first_number(e[tag])
    return out


with open(os.path.join(corpus, "expected.json")) as f:
    expected = {e["SourceFile"]: e for e in json.load(f)}

with tempdir("corpus") as work:
    db = os.path.join(work, "i.db")
    rc, out, err = run("scan", "--db", db, corpus)
    check(rc in (0, 1), "scan finishes (exit %d): %s" % (rc, err[-500:]))
    recs = {os.path.basename(r["path"]): r for r in export(db)}
    files = regular_files(corpus)
    check(len(recs) == len(files), "a record for each of %d files: %d" % (len(files), len(recs)))

    compared = agreed = 0
    per_field = {}
    disagreements = []
    extras = []
    for name in sorted(expected):
        r = recs.get(name)
        if r is None:
            check(False, "no record for %s" % name)
            continue
        want = expected_values(expected[name])
        for k in list(TEXT) + list(NUMBERS) + ["datetime_original", "width", "height"]:
            if k not in want and r.get(k) not in (None, ""):
                extras.append("%s: %s = %r" % (name, k, r[k]))
        for k in sorted(want):
            w = want[k]
            g = r.get(k)
            if k in TEXT or k in ("format", "datetime_original"):
                # an empty text is no text
                w = str(w).strip() or None if w is not None else None
                g = str(g).strip() or None if g is not None else None
                ok = w == g
            else:
                ok = same_number(g, w)
            compared += 1
            agreed += ok
            s = per_field.setdefault(k, [0, 0])
            s[0] += ok
            s[1] += 1
            if not ok:
                disagreements.append("%s: %s = %r, exiftool %r" % (name, k, g, w))

    rate = agreed / compared if compared else 0
    print("agreement: %d of %d values (%.2f%%)" % (agreed, compared, 100 * rate), file=sys.stderr)
    for k in sorted(per_field):
        print("  %-18s %4d/%4d" % (k, per_field[k][0], per_field[k][1]), file=sys.stderr)
    print("disagreements (%d):" % len(disagreements), file=sys.stderr)
    for d in disagreements:
        print("  " + d, file=sys.stderr)
    print("values only seekless found (%d; exiftool gave none):" % len(extras), file=sys.stderr)
    for x in extras:
        print("  " + x, file=sys.stderr)
    check(rate >= THRESHOLD, "agreement %.2f%% >= %.1f%%" % (100 * rate, 100 * THRESHOLD))

done()
