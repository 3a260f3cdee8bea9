"""What the differential tests against exiftool share: drawing a camera's
TIFF block, reading exiftool's answer into export fields, and comparing
records with it value for value."""
import os
import struct
import subprocess

from lib import check, export, run
from tiffgen import ASCII, LONG, RATIONAL, SHORT

# exiftool's tag names and the export fields they become
TAG_FIELDS = {"Make": "make", "Model": "model", "DateTimeOriginal": "datetime_original",
              "FNumber": "f_number", "ExposureTime": "exposure_time", "ISO": "iso",
              "FocalLength": "focal_length", "Orientation": "orientation"}
FIELDS = ["format", "width", "height"] + list(TAG_FIELDS.values())


def camera_jpeg(rng, work):
    """A small real JPEG from cjpeg, as (with its JFIF APP0, without it):
    the second is what cameras write, Exif first."""
    ppm = os.path.join(work, "p.ppm")
    with open(ppm, "wb") as f:
        f.write(b"P6 64 48 255\n" + rng.randbytes(64 * 48 * 3))
    jfif = subprocess.run(["cjpeg", "-quality", "80", ppm], capture_output=True,
                          check=True).stdout
    assert jfif[2:4] == b"\xff\xe0"
    return jfif, jfif[:2] + jfif[4 + struct.unpack(">H", jfif[4:6])[0]:]


def camera_block(rng, tf, makes, models, size=False):
    """A camera's TIFF block: some of Make, Model, Orientation (and the
    image size) in IFD0, DateTimeOriginal, FNumber, ExposureTime, ISO and
    FocalLength in the Exif IFD, each in its standard type."""
    ifd0, exif = [], []

    def text(t):
        return tf.value(ASCII, t + "\0")

    if rng.random() < 0.75:
        ifd0.append((0x010F, *text(rng.choice(makes))))
    if rng.random() < 0.75:
        ifd0.append((0x0110, *text(rng.choice(models))))
    if rng.random() < 0.5:
        ifd0.append((0x0112, *tf.value(SHORT, [rng.randint(1, 8)])))
    if size:
        ifd0.append((0x0100, *tf.value(LONG, [rng.randrange(1000, 12000)])))
        ifd0.append((0x0101, *tf.value(LONG, [rng.randrange(1000, 9000)])))
    if rng.random() < 0.7:
        exif.append((0x9003, *text("20%02d:%02d:%02d %02d:%02d:%02d" % (
            rng.randint(5, 25), rng.randint(1, 12), rng.randint(1, 28), rng.randint(0, 23),
            rng.randint(0, 59), rng.randint(0, 59)))))
    if rng.random() < 0.5:
        exif.append((0x829D, *tf.value(RATIONAL, [(rng.randint(14, 220), 10)])))
    if rng.random() < 0.5:
        exif.append((0x829A, *tf.value(RATIONAL, [(1, rng.choice([60, 250, 1000]))])))
    if rng.random() < 0.5:
        exif.append((0x8827, *tf.value(SHORT, [rng.choice([50, 100, 200, 400])])))
    if rng.random() < 0.5:
        exif.append((0x920A, *tf.value(RATIONAL, [(rng.randint(40, 3000), 10)])))
    if not ifd0:
        ifd0.append((0x0131, *text("firmware")))
    return tf.build(ifd0, exif or None)


def tag_fields(e, groups):
    """The export fields of exiftool's -j -n -G answer e, from the tags of
    the given groups (a later group's value over an earlier one's)."""
    out = {}
    for g in groups:
        for key, v in e.items():
            kg, _, tag = key.partition(":")
            if kg == g and tag in TAG_FIELDS:
                if tag == "DateTimeOriginal":
                    v = str(v)
                    v = "%s-%s-%sT%s" % (v[0:4], v[5:7], v[8:10], v[11:19])
                out[TAG_FIELDS[tag]] = v
    return out


def same(a, b):
    if a is None or b is None:
        return a is None and b is None
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return abs(a - b) <= 1e-6 * max(1.0, abs(b))
    return str(a).strip() == str(b).strip()


def compare(want, got, fields, label="", agree=same):
    """Check every field exiftool gives (want: name -> fields) against the
    records (got: name -> export record) with agree(ours, exiftool's);
    returns (compared, agreed)."""
    compared = agreed = 0
    for name in sorted(want):
        r = got.get(name, {})
        for k in fields:
            w, g = want[name].get(k), r.get(k)
            if w is None and g is None:
                continue
            compared += 1
            if agree(g, w):
                agreed += 1
            else:
                check(False, "%s%s %s: exiftool %r, seekless %r (%s)" %
                      (label, name, k, w, g, r.get("error") or ""))
    return compared, agreed


def scan_twice(work, files, want, clean=False):
    """Scan files held whole (the default --mem) and streamed past in
    256 KiB chunks (--mem 1M); each scan's records against want.  With
    clean, the files are all sound: no record may carry a warning.
    Returns (compared, agreed) over both."""
    compared = agreed = 0
    for mem in ("64M", "1M"):
        db = os.path.join(work, "i%s.db" % mem)
        rc, out, err = run("scan", "--quiet", "--mem", mem, "--db", db, files)
        check(rc == 0, "scan --mem %s: exit %d: %s" % (mem, rc, err[-500:]))
        got = {os.path.basename(r["path"]): r for r in export(db)}
        c, a = compare(want, got, FIELDS, "--mem %s " % mem)
        if clean:
            warned = ["%s: %s" % (k, r["warnings"]) for k, r in sorted(got.items())
                      if r.get("warnings")]
            check(not warned, "--mem %s: sound files read without warnings: %s"
                  % (mem, "; ".join(warned[:5])))
        compared += c
        agreed += a
    return compared, agreed
