"""The shared corpus of real camera files (../shared/corpus/real): every
file gets a record and nothing crashes, including the deliberately broken
files; formats, JPEG dimensions and the basic EXIF agree with exiftool's
expected.json.  The extraction issue raises this to a field-by-field
comparison of every file at 99.5%."""
import json
import os
import sys

from lib import check, done, export, regular_files, run, skip, tempdir

corpus = os.environ.get("SEEKLESS_CORPUS")
if not corpus or not os.path.isfile(os.path.join(corpus, "expected.json")):
    skip("shared corpus not found at %s" % corpus, required=False)

with open(os.path.join(corpus, "expected.json")) as f:
    expected = {e["SourceFile"]: e for e in json.load(f)}

with tempdir("corpus") as work:
    db = os.path.join(work, "i.db")
    rc, out, err = run("scan", "--db", db, corpus)
    check(rc in (0, 1), "scan finishes (exit %d): %s" % (rc, err[-500:]))
    recs = {os.path.basename(r["path"]): r for r in export(db)}
    files = regular_files(corpus)
    check(len(recs) == len(files), "a record for each of %d files: %d" % (len(files), len(recs)))

    jpeg_dims = jpeg_dims_ok = fields = fields_ok = 0
    sniffed = sniffed_ok = 0
    type_map = {"JPEG": "jpeg", "PNG": "png", "GIF": "gif", "WEBP": "webp",
                "Extended WEBP": "webp", "TIFF": "tiff", "MPO": "mpo", "CR2": "cr2",
                "RAF": "raf", "HEIC": "heic", "AVIF": "avif", "CR3": "cr3"}
    mismatches = []
    for name, e in expected.items():
        r = recs.get(name)
        if r is None:
            continue
        ftype = e.get("File:FileType")
        if ftype in type_map:
            sniffed += 1
            if r["format"] == type_map[ftype]:
                sniffed_ok += 1
            else:
                mismatches.append("%s: format %s, exiftool %s" % (name, r["format"], ftype))
        if ftype in ("JPEG", "MPO") and "File:ImageWidth" in e:
            jpeg_dims += 1
            if (r["width"], r["height"]) == (e["File:ImageWidth"], e["File:ImageHeight"]):
                jpeg_dims_ok += 1
            else:
                mismatches.append("%s: %sx%s, exiftool %sx%s" % (
                    name, r["width"], r["height"], e["File:ImageWidth"], e["File:ImageHeight"]))
        if ftype in ("JPEG", "MPO") and "ExifTool:Error" not in e:
            for key, tag in (("make", "EXIF:Make"), ("model", "EXIF:Model"),
                             ("orientation", "EXIF:Orientation"), ("iso", "EXIF:ISO")):
                if tag not in e:
                    continue
                fields += 1
                want = e[tag]
                got = r[key]
                if isinstance(want, str):
                    want = want.strip()
                if got == want or (isinstance(want, (int, float)) and got is not None
                                   and abs(float(got) - float(want)) < 1e-6):
                    fields_ok += 1
                else:
                    mismatches.append("%s: %s %r, exiftool %r" % (name, key, got, want))
    print("formats %d/%d, JPEG sizes %d/%d, JPEG make/model/orientation/iso %d/%d"
          % (sniffed_ok, sniffed, jpeg_dims_ok, jpeg_dims, fields_ok, fields), file=sys.stderr)
    for m in mismatches[:40]:
        print("  " + m, file=sys.stderr)
    check(sniffed_ok >= 0.97 * sniffed, "format agreement")
    check(jpeg_dims_ok >= 0.97 * jpeg_dims, "JPEG size agreement")
    check(fields_ok >= 0.95 * fields, "basic EXIF agreement")

done()
