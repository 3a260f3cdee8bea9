"""seekless query against the records themselves: every filter (camera,
lens, dates with inclusive bounds, a radius, format, errors) and their
combination returns exactly the files a direct reading of the export says
it should, as paths, JSON records, CSV or NUL-terminated paths."""
import csv
import io
import json
import math
import os
import subprocess

from lib import BIN, check, done, export, mkcorpus, run, tempdir


def km(a, b, c, d):
    r, k = 6371.0088, math.pi / 180
    x = math.sin((c - a) * k / 2) ** 2 + math.cos(a * k) * math.cos(c * k) * \
        math.sin((d - b) * k / 2) ** 2
    return 2 * r * math.atan2(math.sqrt(x), math.sqrt(1 - x))


with tempdir("query", base="/dev/shm") as work:
    root = os.path.join(work, "photos")
    mkcorpus(root, "--files", 300, "--median", "10k", "--seed", 31, "--no-sync")
    with open(os.path.join(root, "broken.jpg"), "wb") as f:
        f.write(b"\xff\xd8\xff\xe1\x00\x10Exif\x00\x00II*\x00")
    db = os.path.join(work, "i.db")
    run("scan", "--db", db, root)
    recs = export(db)

    def q(*args):
        rc, out, err = run("query", "--db", db, *args)
        check(rc == 0, "query %s: %d %s" % (args, rc, err))
        return sorted(out.splitlines())

    def want(pred):
        return sorted(r["path"] for r in recs if pred(r))

    cams = sorted({r["model"] for r in recs if r["model"]})
    check(len(cams) >= 3, "the corpus has several cameras: %r" % cams)
    cam = cams[0]
    check(q("--camera", cam.upper()) == want(
        lambda r: cam.lower() in ("%s %s" % (r["make"] or "", r["model"] or "")).lower()),
        "--camera, any case")
    lenses = sorted({r["lens_model"] for r in recs if r["lens_model"]})
    if lenses:
        part = lenses[0][:6]
        check(q("--lens", part) == want(lambda r: r["lens_model"] and
                                        part.lower() in r["lens_model"].lower()), "--lens")
    years = sorted({r["datetime_original"][:4] for r in recs if r["datetime_original"]})
    y = years[len(years) // 2]
    check(q("--from", y, "--to", y) == want(lambda r: (r["datetime_original"] or "")[:4] == y),
          "--from Y --to Y is the whole year")
    m = y + "-06"
    check(q("--from", m) == want(lambda r: (r["datetime_original"] or "") >= m), "--from month")
    check(q("--to", m) == want(lambda r: r["datetime_original"] and
                               r["datetime_original"][:7] <= m), "--to month, inclusive")
    gps = [r for r in recs if r["gps_lat"] is not None]
    check(len(gps) > 10, "the corpus has GPS positions")
    c = gps[0]
    got = q("--near", "%f,%f,%f" % (c["gps_lat"], c["gps_lon"], 50))
    check(got == want(lambda r: r["gps_lat"] is not None and
                      km(c["gps_lat"], c["gps_lon"], r["gps_lat"], r["gps_lon"]) <= 50),
          "--near: %d files" % len(got))
    check(q("--errors") == want(lambda r: r["error"]) and len(q("--errors")) >= 1, "--errors")
    check(q("--format", "JPEG") == want(lambda r: r["format"] == "jpeg"), "--format")
    check(q("--camera", cam, "--from", y, "--to", y) ==
          want(lambda r: cam.lower() in ("%s %s" % (r["make"] or "", r["model"] or "")).lower()
               and (r["datetime_original"] or "")[:4] == y), "conditions combine")

    rc, out, err = run("query", "--db", db, "--json", "--camera", cam)
    lines = [json.loads(l) for l in out.splitlines()]
    check(lines and all(l["model"] == cam or cam.lower() in (l["make"] or "").lower()
                        for l in lines) and "content_hash" in lines[0], "--json records")
    rc, out, err = run("query", "--db", db, "--csv", "--errors")
    rows = list(csv.reader(io.StringIO(out)))
    check(rows[0][0] == "path" and len(rows) == 1 + len(want(lambda r: r["error"])), "--csv")
    p = subprocess.run([BIN, "query", "--db", db, "-0", "--format", "jpeg"], capture_output=True)
    check(sorted(x.decode() for x in p.stdout.split(b"\0")[:-1]) ==
          want(lambda r: r["format"] == "jpeg"), "-0")

    for bad in (["--from", "2020-13-45x"], ["--near", "91,0,5"], ["--near", "1,2"],
                ["--json", "--csv"]):
        rc, out, err = run("query", "--db", db, *bad)
        check(rc == 2, "usage error for %r: %d %s" % (bad, rc, err))
done()
