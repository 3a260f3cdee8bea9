"""seekless query against the files themselves: every filter (camera,
lens, dates with inclusive bounds, a radius, format, errors) and their
combination returns exactly the files exiftool's reading of them says it
should (the one error: the broken file the test wrote), as paths, JSON
records, CSV or NUL-terminated paths.

The descriptive filters (--rating, --label, --keyword, --video) against
what the test wrote: JPEGs made by cjpeg whose XMP exiftool wrote (rating,
label, dc:subject, lr:hierarchicalSubject), some with an XMP sidecar
whose values count over the file's own, and movies made by ffmpeg; `stats`
counts the same by rating and keyword, each picture once.

Dates name days that exist: month 13, day 0, 30 February, 29 February of
a common year are refused (exit 2, one line saying so), and edge days
(29 February of leap years, 31 December, whole years) find what a
calendar reading of the index's dates (sqlite3, Python's datetime) finds,
on JPEGs whose DateTimeOriginal exiftool wrote at the edges.  --format
takes any case and the usual extensions (jpg for jpeg, tif for tiff...),
each finding what sqlite3 says the index holds in that format; on the
shared corpus of real files, every format stored there is accepted; an
unknown name is refused, naming the known ones."""
import calendar
import collections
import csv
import datetime
import io
import json
import math
import os
import subprocess

from lib import BIN, check, db_rows, done, mkcorpus, run, tempdir

ALIASES = {"jpg": "jpeg", "jpe": "jpeg", "jfif": "jpeg", "tif": "tiff", "hif": "heif",
           "qt": "mov", "dib": "bmp"}


def km(a, b, c, d):
    r, k = 6371.0088, math.pi / 180
    x = math.sin((c - a) * k / 2) ** 2 + math.cos(a * k) * math.cos(c * k) * \
        math.sin((d - b) * k / 2) ** 2
    return 2 * r * math.atan2(math.sqrt(x), math.sqrt(1 - x))


def exiftool_records(root, broken):
    """Records as exiftool reads the files below root (-n: GPS positions
    signed, in degrees), in export's terms; the one error is the broken
    file the test wrote."""
    p = subprocess.run(["exiftool", "-j", "-n", "-q", "-q", "-fast", "-r", "-FileType", "-Make",
                        "-Model", "-LensModel", "-DateTimeOriginal", "-Composite:GPSLatitude",
                        "-Composite:GPSLongitude", root], capture_output=True, text=True,
                       check=True)
    recs = []
    for e in json.loads(p.stdout):
        d = str(e.get("DateTimeOriginal", ""))
        recs.append({
            "path": e["SourceFile"], "format": e["FileType"].lower(),
            "make": str(e["Make"]) if "Make" in e else None,
            "model": str(e["Model"]) if "Model" in e else None,
            "lens_model": str(e["LensModel"]) if "LensModel" in e else None,
            "datetime_original": "%s-%s-%sT%s" % (d[:4], d[5:7], d[8:10], d[11:19])
            if len(d) >= 19 and d[:4].isdigit() else None,
            "gps_lat": e.get("GPSLatitude"), "gps_lon": e.get("GPSLongitude"),
            "error": e["SourceFile"] == broken})
    return recs


with tempdir("query", base="/dev/shm") as work:
    root = os.path.join(work, "photos")
    mkcorpus(root, "--files", 300, "--median", "10k", "--seed", 31, "--no-sync")
    broken = os.path.join(root, "broken.jpg")
    with open(broken, "wb") as f:
        f.write(b"\xff\xd8\xff\xe1\x00\x10Exif\x00\x00II*\x00")
    db = os.path.join(work, "i.db")
    run("scan", "--db", db, root, check_rc=1)  # broken.jpg: an error
    # what each query should find, from exiftool's reading of the files
    # (not from seekless's own export)
    recs = exiftool_records(root, broken)
    check(len(recs) == 301, "exiftool read every file: %d" % len(recs))

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
    check(len(lenses) >= 2, "the corpus has lenses: %r" % lenses)
    for part in [l[:6] for l in lenses[:2]]:
        got = q("--lens", part)
        check(got and got == want(lambda r: r["lens_model"] and
                                  part.lower() in r["lens_model"].lower()),
              "--lens %s: %d files" % (part, len(got)))
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
    jpegs = sorted(p for (p,) in db_rows(db, "SELECT path FROM files WHERE deleted_at IS NULL"
                                             " AND format = 'jpeg'"))
    check(len(jpegs) >= 250 and q("--format", "jpeg") == jpegs,
          "--format jpeg: what sqlite3 says is jpeg (%d files)" % len(jpegs))
    for spelling in ("jpg", "JPG", "Jpeg", "jpe", "JFIF"):
        check(q("--format", spelling) == jpegs, "--format %s is jpeg" % spelling)
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


# --- dates that exist --------------------------------------------------------
def usage_line(args, line):
    """Refused as a usage error: exit 2, nothing found, and stderr is one
    line: `line`, then where help is."""
    rc, out, err = run("query", "--db", db, *args)
    check(rc == 2 and out == "" and err == line + "; see 'seekless query --help'\n",
          "%r refused: %d %r %r" % (args, rc, out[:100], err))


def bounds(day):
    """[start, end) of YYYY, YYYY-MM or YYYY-MM-DD, by the calendar."""
    f = [int(x) for x in day.split("-")]
    if len(f) == 1:
        return datetime.datetime(f[0], 1, 1), datetime.datetime(f[0] + 1, 1, 1)
    if len(f) == 2:
        start = datetime.datetime(f[0], f[1], 1)
        return start, start + datetime.timedelta(days=calendar.monthrange(f[0], f[1])[1])
    start = datetime.datetime(*f)
    return start, start + datetime.timedelta(days=1)


STAMPS = ["1999-12-31 23:59:59", "2000-02-29 12:00:00", "2000-03-01 00:00:00",
          "2022-12-31 23:59:59", "2023-01-01 00:00:00", "2023-02-28 23:59:59",
          "2023-03-01 00:00:00", "2023-12-31 00:00:00", "2023-12-31 23:59:59",
          "2024-01-01 00:00:00", "2024-02-28 23:59:59", "2024-02-29 00:00:00",
          "2024-02-29 23:59:59", "2024-03-01 00:00:00"]

with tempdir("query-dates", base="/dev/shm") as work:
    root = os.path.join(work, "photos")
    os.makedirs(root)
    ppm = b"P6 8 8 255\n" + bytes(range(192))
    base = subprocess.run(["cjpeg"], input=ppm, capture_output=True, check=True).stdout
    args = []
    for i, stamp in enumerate(STAMPS + [None]):
        path = os.path.join(root, "d%02d.jpg" % i)
        with open(path, "wb") as f:
            f.write(base)
        if stamp:
            args += ["-overwrite_original", "-EXIF:DateTimeOriginal=" +
                     stamp.replace("-", ":"), path, "-execute"]
    argfile = os.path.join(work, "args")
    with open(argfile, "w") as f:
        f.write("\n".join(args) + "\n")
    subprocess.run(["exiftool", "-q", "-@", argfile], check=True, capture_output=True)
    db = os.path.join(work, "i.db")
    run("scan", "--db", db, "--quiet", root, check_rc=0)
    taken = dict(db_rows(db, "SELECT path, datetime_original FROM files"
                             " WHERE deleted_at IS NULL"))
    check(sorted(v for v in taken.values() if v) == [t.replace(" ", "T") for t in STAMPS]
          and len(taken) == len(STAMPS) + 1, "the index holds the dates written: %r" % taken)
    when = {p: datetime.datetime.strptime(t[:19], "%Y-%m-%dT%H:%M:%S")
            for p, t in taken.items() if t}

    def q(*args):
        rc, out, err = run("query", "--db", db, *args)
        check(rc == 0, "query %s: %d %s" % (args, rc, err))
        return sorted(out.splitlines())

    for lo, hi in (("2024-02-29", None), (None, "2024-02-29"), ("2024-02-29", "2024-02-29"),
                   ("2023-12-31", None), (None, "2023-12-31"), ("2023-12-31", "2023-12-31"),
                   ("2023", "2023"), ("2024", None), (None, "2023"), ("2023-02", "2023-02"),
                   ("2024-02", "2024-02"), ("2023-03", None), (None, "2023-02-28"),
                   ("2000-02-29", "2000-02-29"), ("2023-01-01", "2023-12-31"),
                   ("2000", "2024-02-29")):
        args = (["--from", lo] if lo else []) + (["--to", hi] if hi else [])
        start = bounds(lo)[0] if lo else datetime.datetime.min
        end = bounds(hi)[1] if hi else datetime.datetime.max
        got = q(*args)
        check(got == sorted(p for p, t in when.items() if start <= t < end),
              "%s: %d files, the calendar's %r" % (" ".join(args), len(got), got))
    check(len(q("--from", "2024-02-29", "--to", "2024-02-29")) == 2 and
          len(q("--from", "2023", "--to", "2023")) == 5, "the edge days are in the corpus")
    for day in ("2023-13", "2023-00", "2023-02-30", "2023-12-32", "2023-02-29", "1900-02-29",
                "2023-04-31", "2023-06-00", "2023-1", "2023-01-01T00:00", "20230101", ""):
        for opt in ("--from", "--to"):
            usage_line([opt, day], "seekless query: %s %s: not a date"
                       " (YYYY, YYYY-MM or YYYY-MM-DD)" % (opt, day))
    usage_line(["--from", "2023", "--to", "2023-02-29"], "seekless query: --to 2023-02-29:"
               " not a date (YYYY, YYYY-MM or YYYY-MM-DD)")


# --- format names, on the shared corpus of real files --------------------------
corpus = os.environ.get("SEEKLESS_CORPUS") or os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "shared", "corpus", "real")
with tempdir("query-formats", base="/dev/shm") as work:
    db = os.path.join(work, "i.db")
    if os.path.isdir(corpus):
        rc, out, err = run("scan", "--db", db, "--quiet", corpus)
        check(rc in (0, 1), "scan of the corpus: %d %s" % (rc, err[-300:]))
    else:
        print("no shared corpus at %s: format names on a made corpus only" % corpus)
        mkcorpus(os.path.join(work, "photos"), "--files", 20, "--median", "10k", "--no-sync")
        run("scan", "--db", db, "--quiet", os.path.join(work, "photos"), check_rc=0)

    def stored(fmt):
        return sorted(p for (p,) in db_rows(db, "SELECT path FROM files WHERE deleted_at"
                                                " IS NULL AND format = ?", (fmt,)))

    def q(*args):
        rc, out, err = run("query", "--db", db, *args)
        check(rc == 0, "query %s: %d %s" % (args, rc, err))
        return sorted(out.splitlines())

    held = [f for (f,) in db_rows(db, "SELECT DISTINCT format FROM files"
                                      " WHERE deleted_at IS NULL AND format <> ''")]
    check("jpeg" in held and (len(held) >= 15 or not os.path.isdir(corpus)),
          "formats held: %r" % held)
    for fmt in held:
        check(q("--format", fmt) == stored(fmt) and q("--format", fmt.upper()) == stored(fmt),
              "--format %s (and %s): what sqlite3 holds" % (fmt, fmt.upper()))
    for alias, fmt in sorted(ALIASES.items()):
        for spelling in (alias, alias.upper()):
            check(q("--format", spelling) == stored(fmt), "--format %s is %s" % (spelling, fmt))
    check(len(stored("jpeg")) > 0 and q("--format", "jpg") == q("--format", "JPEG") ==
          q("--format", "jpeg") == stored("jpeg"), "jpg, JPEG and jpeg: the same files")
    for bad in ("jpgg", "exe", "", "jpeg ", "raw", "tiff2"):
        rc, out, err = run("query", "--db", db, "--format", bad)
        said = [l for l in err.splitlines() if l.startswith("seekless")]
        check(rc == 2 and out == "" and len(said) == 1 and
              said[0].startswith("seekless query: --format %s: not a known format (" % bad) and
              all(f in said[0] for f in ["jpeg", "tiff", "heic", "mp4", "nef", "jpg", "tif"]),
              "--format %r refused, naming the formats: %d %r" % (bad, rc, err))
done()
