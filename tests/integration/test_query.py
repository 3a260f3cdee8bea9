"""seekless query against the records themselves: every filter (camera,
lens, dates with inclusive bounds, a radius, format, errors) and their
combination returns exactly the files a direct reading of the export says
it should, as paths, JSON records, CSV or NUL-terminated paths.

The descriptive filters (--rating, --label, --keyword, --video) against
what the test wrote: JPEGs made by cjpeg whose XMP exiftool wrote (rating,
label, dc:subject, lr:hierarchicalSubject), some with an XMP sidecar
whose values count over the file's own, and movies made by ffmpeg; `stats`
counts the same by rating and keyword, each picture once."""
import collections
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

# --- the descriptive filters -------------------------------------------------
LABELS = ["Red", "Blue", None, "Green", "purple"]
KW = [[], ["sea"], ["Sunset", "family"], ["sea", "Family"]]
HIER = [[], ["Places|Coast|Sea"], ["People|Family"], []]
RATINGS = [-1, 0, 1, 2, 3, 4, 5, None]


def sidecar(rating, label, kws):
    bag = "".join("<rdf:li>%s</rdf:li>" % k for k in kws)
    return ('<x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF'
            ' xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">'
            '<rdf:Description rdf:about="" xmlns:xmp="http://ns.adobe.com/xap/1.0/"'
            ' xmlns:dc="http://purl.org/dc/elements/1.1/" xmp:Rating="%d" xmp:Label="%s">'
            '<dc:subject><rdf:Bag>%s</rdf:Bag></dc:subject></rdf:Description>'
            '</rdf:RDF></x:xmpmeta>' % (rating, label, bag)).encode()


with tempdir("query-desc", base="/dev/shm") as work:
    root = os.path.join(work, "photos")
    os.makedirs(root)
    ppm = b"P6 16 8 255\n" + bytes(range(0, 256, 2)) * 3
    base = subprocess.run(["cjpeg"], input=ppm, capture_output=True, check=True).stdout
    truth = {}
    args = []
    for i in range(32):
        path = os.path.join(root, "IMG_%04d.JPG" % i)
        with open(path, "wb") as f:
            f.write(base)
        r, lab, kw, hier = RATINGS[i % 8], LABELS[i % 5], KW[i % 4], HIER[(i // 4) % 4]
        tags = ["-overwrite_original", "-m"]
        if r is not None:
            tags.append("-XMP-xmp:Rating=%d" % r)
        if lab:
            tags.append("-XMP-xmp:Label=%s" % lab)
        tags += ["-XMP-dc:Subject=%s" % k for k in kw]
        tags += ["-XMP-lr:HierarchicalSubject=%s" % h for h in hier]
        args += tags + [path, "-execute"]
        if i % 6 == 0:  # a sidecar: its values count over the file's
            with open(os.path.join(root, "IMG_%04d.xmp" % i), "wb") as f:
                f.write(sidecar(5, "Purple", ["harbour"]))
            r, lab, kw = 5, "Purple", ["harbour"]
        truth[path] = (r, lab, kw, hier)
    argfile = os.path.join(work, "args")
    with open(argfile, "w") as f:
        f.write("\n".join(args) + "\n")
    subprocess.run(["exiftool", "-q", "-@", argfile], check=True, capture_output=True)
    movies = []
    for name in ("clip.mp4", "clip.mov"):
        movies.append(os.path.join(root, name))
        subprocess.run(["ffmpeg", "-v", "error", "-f", "lavfi", "-i",
                        "testsrc=size=64x48:rate=5", "-t", "1", "-y", movies[-1]], check=True)
    db = os.path.join(work, "i.db")
    run("scan", "--db", db, "--quiet", root, check_rc=0)

    def q(*args):
        rc, out, err = run("query", "--db", db, *args)
        check(rc == 0, "query %s: %d %s" % (args, rc, err))
        return sorted(out.splitlines())

    def want(pred):
        return sorted(p for p, t in truth.items() if pred(*t))

    def has_kw(k, kw, hier):
        k = k.lower()
        return any(x.lower() == k for x in kw) or \
            any(h.lower() == k or h.lower().endswith("|" + k) for h in hier)

    for spec, lo, hi in (("4", 4, 4), ("-1", -1, -1), ("2..4", 2, 4), ("3..", 3, 5),
                         ("..0", -1, 0)):
        got = q("--rating", spec)
        check(got == want(lambda r, lab, kw, hier: r is not None and lo <= r <= hi),
              "--rating %s: %d files" % (spec, len(got)))
    check(q("--label", "PURPLE") == want(lambda r, lab, kw, hier: (lab or "").lower() == "purple")
          and len(q("--label", "purple")) >= 6, "--label, any case, sidecars' included")
    for k in ("sea", "FAMILY", "harbour", "Coast"):
        check(q("--keyword", k) == want(lambda r, lab, kw, hier: has_kw(k, kw, hier)),
              "--keyword %s: %d" % (k, len(q("--keyword", k))))
    check(q("--keyword", "People|Family") ==
          want(lambda r, lab, kw, hier: "People|Family" in hier), "--keyword A|B, the path")
    check(q("--keyword", "sea", "--keyword", "family", "--rating", "0..5") ==
          want(lambda r, lab, kw, hier: has_kw("sea", kw, hier) and has_kw("family", kw, hier)
               and r is not None and 0 <= r <= 5), "--keyword twice: both, with --rating")
    check(q("--video") == sorted(movies), "--video: %s" % q("--video"))
    for bad in (["--rating", "6"], ["--rating", "3..1"], ["--rating", "x"], ["--rating", "-2.."],
                ["--pairs", "--rating", "3"], ["--pairs", "--csv"]):
        rc, out, err = run("query", "--db", db, *bad)
        check(rc == 2, "usage error for %r: %d %s" % (bad, rc, err))

    rc, out, err = run("stats", "--db", db, "--json", check_rc=0)
    s = json.loads(out)
    ratings = collections.Counter(str(t[0]) for t in truth.values() if t[0] is not None)
    check({x["name"]: x["files"] for x in s["ratings"]} == dict(ratings),
          "stats by rating, each picture once: %r" % s["ratings"])
    kws = collections.Counter(k for t in truth.values() for k in t[2])
    check({x["name"]: x["files"] for x in s["keywords"]} == dict(kws),
          "stats by keyword: %r" % s["keywords"])
done()
