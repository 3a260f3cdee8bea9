"""Issue 16's fields against exiftool, field by field, and the re-read that
brings them to an index an older seekless made.

Oracles (nothing here is computed by seekless):
  ../shared/corpus/media   its expected.json (exiftool -j -n -G -a
                           -api LargeFileSupport=1, SOURCES.md)
  ../shared/corpus/real    exiftool run here on the fields below (that
                           corpus's expected.json holds only the basics)

Fields compared so far (each parser that lands adds its own):
  tz_offset   EXIF:OffsetTimeOriginal, else EXIF:OffsetTime ("+HH:MM";
              blank is none); in a movie, QuickTime:CreationDate's offset
  subsec      EXIF:SubSecTimeOriginal: its leading digits, as text
  and in movies (QuickTime, MP4, 3GP):
  duration    QuickTime:Duration (0 in a fragmented movie: unknown)
  width, height  QuickTime:ImageWidth/ImageHeight, swapped when
              Composite:Rotation is 90 or 270 (the size as displayed)
  datetime_original  QuickTime:CreationDate's local time (Apple's), else
              QuickTime:CreateDate unless zero
  gps_lat, gps_lon   QuickTime:GPSCoordinates
  make, model, content_id   QuickTime:Make, Model, ContentIdentifier
  and in AVI: duration (Composite:Duration), width and height
  (RIFF:ImageWidth/ImageHeight, 0 is none), datetime_original
  (RIFF:DateTimeOriginal, from IDIT)

Movies come from the media corpus and from ffmpeg and exiftool here (the
media corpus has none with Apple's keys, a rotation or a place): written
by ffmpeg (Apple's keys, (c)xyz, moov after the media data, faststart,
fragmented, a 7 MB one) and edited by exiftool (rotation, user data).
Every movie is read twice: whole, and streamed in 256 KiB chunks
(--mem 1M), where the moov box is caught on its way past; both must agree
with exiftool.

A value seekless gives where exiftool gives none counts as a
disagreement too, in files whose EXIF exiftool read (it abandons some
damaged files that a bounded reader still reads: those are listed).  The test fails below 99% agreement and lists every
disagreement.

Then the upgrade: an index whose records look made by an older extractor
(meta_version NULL, the new fields empty, as after migration 8) gets them
back from the next incremental scan, which reads those files again and
says so, and a scan after that reads nothing.
"""
import json
import shutil
import struct
import os
import re
import sqlite3
import subprocess
import sys

from lib import check, db_rows, done, export, run, skip, sync_fs, tempdir

THRESHOLD = 0.99

real = os.environ.get("SEEKLESS_CORPUS")
media = os.environ.get("SEEKLESS_MEDIA")
for d in (real, media):
    if not d or not os.path.isfile(os.path.join(d, "expected.json")):
        skip("shared corpus not found at %s" % d)


def text(v):
    """exiftool's value as text, or None when blank."""
    if v is None:
        return None
    s = str(v).strip()
    return s or None


MOVIES = {"MOV", "MP4", "M4V", "3GP", "3G2"}


def is_movie(e):
    return e.get("File:FileType") in MOVIES


def is_avi(e):
    return e.get("File:FileType") == "AVI"


def exif_date(v):
    v = text(v)
    m = v and re.match(r"(\d{4}):(\d\d):(\d\d) (\d\d:\d\d:\d\d)", v)
    return "%s-%s-%sT%s" % m.group(1, 2, 3, 4) if m else None


def clean(v):
    """A descriptive value as seekless keeps it (indexer/formats/desc.h): line
    ends made LF, other control characters dropped, trimmed; None when
    nothing is left.  exiftool's JSON turns a keyword such as "2004" into a
    number: back to text."""
    if v is None:
        return None
    s = str(v).replace("\r\n", "\n").replace("\r", "\n")
    s = "".join(c for c in s if c in "\t\n" or not (ord(c) < 0x20 or ord(c) == 0x7f))
    return s.strip(" \t\n") or None


def values(e, tag):
    """A tag's values as a list (exiftool gives one value as a scalar)."""
    v = e.get(tag)
    vs = v if isinstance(v, list) else [] if v is None else [v]
    return [c for c in (clean(x) for x in vs) if c is not None]


def iptc_text(e, v):
    """IIM without a character set (record 1:90): exiftool reads the bytes
    as Windows-1252, seekless as UTF-8 when they are valid UTF-8
    (docs/extraction.md).  Undo exiftool's reading where that applies."""
    if v is None or e.get("IPTC:CodedCharacterSet"):
        return v
    try:
        return v.encode("cp1252").decode("utf-8")
    except (UnicodeEncodeError, UnicodeDecodeError):
        return v


def alt(e, tag):
    """An XMP language alternative: x-default (exiftool's plain tag name),
    else the first language given."""
    if tag in e:
        return clean(e[tag])
    for k, v in e.items():
        if k.startswith(tag + "-"):
            return clean(v)
    return None


def dedup(vs):
    out = []
    for v in vs:
        if v not in out:
            out.append(v)
    return out or None


def described(e):
    """rating ... copyright by the precedence of docs/extraction.md: XMP,
    then IPTC, then EXIF; keywords merge XMP's and IPTC's."""
    out = {}
    r = e.get("XMP:Rating")
    if r is None:
        r = e.get("EXIF:Rating")
    out["rating"] = None if r is None else int(float(r))
    out["label"] = clean(e.get("XMP:Label"))
    xk = values(e, "XMP:Subject")
    ik = [iptc_text(e, v) for v in values(e, "IPTC:Keywords")]
    out["keywords"] = dedup(xk + ik)
    hier = []
    for k in e:  # in the order exiftool met them
        if k == "XMP:HierarchicalSubject":
            hier += values(e, k)
        elif k == "XMP:TagsList":
            hier += [v.replace("/", "|") for v in values(e, k)]
    out["hierarchical_keywords"] = dedup(hier)
    out["title"] = alt(e, "XMP:Title") or iptc_text(e, clean(e.get("IPTC:ObjectName")))
    out["description"] = (alt(e, "XMP:Description") or
                          iptc_text(e, clean(e.get("IPTC:Caption-Abstract"))) or
                          clean(e.get("EXIF:ImageDescription")))
    xc = dedup(values(e, "XMP:Creator"))
    ic = dedup([iptc_text(e, v) for v in values(e, "IPTC:By-line")])
    out["creator"] = ("; ".join(xc) if xc else "; ".join(ic) if ic else
                      clean(e.get("EXIF:Artist")))
    out["copyright"] = (alt(e, "XMP:Rights") or
                        iptc_text(e, clean(e.get("IPTC:CopyrightNotice"))) or
                        clean(e.get("EXIF:Copyright")))
    return out


def motion_video(e):
    """A motion photo's appended movie by exiftool's reading of its XMP:
    the MicroVideoOffset of version 1, else the Length of the container
    item of semantic MotionPhoto.  exiftool does not check the claim
    against the file: the test drops one it knows to be false."""
    if str(e.get("XMP:MotionPhoto")) == "1":
        # exiftool 12.57 flattens only the list's first item: its -struct
        # reading (merged in by the caller) has them all
        for item in e.get("XMP:Directory") or []:
            it = item.get("Item", {}) if isinstance(item, dict) else {}
            if it.get("Semantic") == "MotionPhoto" and it.get("Length") is not None:
                return int(it["Length"])
    if str(e.get("XMP:MicroVideo")) == "1" and e.get("XMP:MicroVideoOffset"):
        return int(e["XMP:MicroVideoOffset"])
    return None


def expected_fields(e):
    out = described(e)
    # Apple's MakerNote tag 0x0011: ContentIdentifier in later exiftools
    out["content_id"] = text(e.get("MakerNotes:ContentIdentifier") or
                             e.get("MakerNotes:MediaGroupUUID"))
    out["embedded_video"] = motion_video(e)
    if out["embedded_video"] and e.get("File:FileSize") and \
            out["embedded_video"] >= e["File:FileSize"]:
        out["embedded_video"] = None  # overclaim.jpg: more than the file holds
    tz = text(e.get("EXIF:OffsetTimeOriginal")) or text(e.get("EXIF:OffsetTime"))
    ss = text(e.get("EXIF:SubSecTimeOriginal"))
    if ss is not None:
        ss = re.match(r"\d*", ss).group(0) or None
    out["subsec"] = ss
    if is_movie(e):
        d = e.get("QuickTime:Duration")
        out["duration"] = d if d else None
        w, h = e.get("QuickTime:ImageWidth"), e.get("QuickTime:ImageHeight")
        if e.get("Composite:Rotation") in (90, 270):
            w, h = h, w
        out["width"], out["height"] = w, h
        when = text(e.get("QuickTime:CreationDate"))
        m = when and re.match(r"(\d{4}):(\d\d):(\d\d) (\d\d:\d\d:\d\d)(?:\.\d+)?"
                              r"(Z|[-+]\d\d:\d\d)?", when)
        if m:
            out["datetime_original"] = "%s-%s-%sT%s" % m.group(1, 2, 3, 4)
            tz = tz or (m.group(5) and ("+00:00" if m.group(5) == "Z" else m.group(5)))
        else:
            c = text(e.get("QuickTime:CreateDate"))
            out["datetime_original"] = (None if not c or c.startswith("0000") else
                                        c[:10].replace(":", "-") + "T" + c[11:19])
        g = text(e.get("QuickTime:GPSCoordinates"))
        lat_lon = [float(x) for x in g.split()[:2]] if g else [None, None]
        out["gps_lat"], out["gps_lon"] = lat_lon
        for k, tag in (("make", "Make"), ("model", "Model"), ("content_id", "ContentIdentifier")):
            out[k] = text(e.get("QuickTime:" + tag))
    if is_avi(e):
        out["duration"] = e.get("Composite:Duration")
        out["width"] = e.get("RIFF:ImageWidth") or None
        out["height"] = e.get("RIFF:ImageHeight") or None
        out["datetime_original"] = exif_date(e.get("RIFF:DateTimeOriginal"))
    out["tz_offset"] = tz
    return out


def same(w, g):
    if isinstance(w, float) or isinstance(g, float):
        return w is not None and g is not None and abs(w - g) <= 1e-6 * max(1, abs(w))
    return w == g


def make_movies(d):
    """Movies written by ffmpeg and edited by exiftool, for what the media
    corpus lacks."""
    os.makedirs(d)
    src = ["ffmpeg", "-loglevel", "error", "-f", "lavfi", "-i"]
    apple = ["-movflags", "use_metadata_tags",
             "-metadata", "com.apple.quicktime.creationdate=2022-07-04T18:30:05+0200",
             "-metadata", "com.apple.quicktime.location.ISO6709=+37.7858-122.4064+012.500/",
             "-metadata", "com.apple.quicktime.make=Apple",
             "-metadata", "com.apple.quicktime.model=iPhone 12",
             "-metadata", "com.apple.quicktime.content.identifier="
                          "5A2D1F3E-1111-2222-3333-444455556666"]
    jobs = [
        (src + ["testsrc=size=160x96:rate=10", "-t", "2", "-c:v", "mpeg4",
                "-metadata", "creation_time=2021-06-01T10:20:30Z", "rotated.mp4"],
         ["-Rotation=270", "-UserData:Make=Sony", "-UserData:Model=ILCE-7",
          "-UserData:GPSCoordinates=51.5007, -0.1246, 10"]),
        (src + ["testsrc=size=128x72:rate=10", "-t", "1.5", "-c:v", "mpeg4"] + apple +
         ["apple.mov"], None),
        (src + ["testsrc=size=160x96:rate=10", "-t", "2", "-c:v", "mpeg4",
                "-metadata", "creation_time=2021-06-01T10:20:30Z",
                "-metadata", "location=-33.8568+151.2153/", "udta.mov"], None),
        (src + ["testsrc=size=96x64:rate=10", "-t", "1", "-c:v", "mpeg4",
                "-movflags", "+faststart", "-metadata", "creation_time=2019-12-31T23:59:59Z",
                "faststart.mp4"], None),
        (src + ["testsrc=size=64x48:rate=10", "-t", "3", "-c:v", "mpeg4",
                "-movflags", "frag_keyframe+empty_moov", "fragmented.mp4"], None),
        (src + ["testsrc=size=176x144:rate=15", "-f", "lavfi", "-i", "sine=f=440:d=2",
                "-t", "2", "-c:v", "mpeg4", "-c:a", "pcm_s16le", "both.avi"], None),
        (src + ["sine=f=440:d=3", "-c:a", "pcm_s16le", "sound.avi"], None),
        # 7 MB of noise: moov after 26 chunks of media data when streamed
        (src + ["nullsrc=s=320x240:r=25,geq=random(1)*255:128:128", "-t", "3", "-c:v",
                "mpeg4", "-q:v", "2", "-movflags", "use_metadata_tags",
                "-metadata", "com.apple.quicktime.creationdate=2020-01-02T03:04:05-0700",
                "big.mp4"], None),
    ]
    for cmd, edit in jobs:
        p = subprocess.run(cmd, cwd=d, capture_output=True, text=True)
        check(p.returncode == 0, "ffmpeg %s: %s" % (cmd[-1], p.stderr[-300:]))
        if edit:
            p = subprocess.run(["exiftool", "-q", "-overwrite_original"] + edit + [cmd[-1]],
                               cwd=d, capture_output=True, text=True)
            check(p.returncode == 0, "exiftool %s: %s" % (cmd[-1], p.stderr[-300:]))


def make_described(d):
    """Photos, movies and a sidecar given ratings, keywords and captions by
    exiftool (the corpora hold few, and none in UTF-8 IPTC, Windows-1252
    IPTC, PNG, WebP, GIF, TIFF or HEIC), for described()'s fields."""
    os.makedirs(d, exist_ok=True)
    ff = ["ffmpeg", "-loglevel", "error", "-f", "lavfi", "-i", "testsrc=size=96x64",
          "-frames:v", "1"]
    bases = [(ff + ["base.jpg"]), (ff + ["base.png"]), (ff + ["base.tif"]),
             (ff + ["base.gif"]), (ff + ["-c:v", "libwebp", "base.webp"])]
    for cmd in bases:
        p = subprocess.run(cmd, cwd=d, capture_output=True, text=True)
        check(p.returncode == 0, "ffmpeg %s: %s" % (cmd[-1], p.stderr[-300:]))
    p = subprocess.run(["heif-enc", "-q", "50", "-o", "base.heic", "base.png"], cwd=d,
                       capture_output=True, text=True)
    check(p.returncode == 0, "heif-enc: %s" % (p.stderr[-300:]))
    xmp_all = ["-XMP:Rating=4", "-XMP:Label=Red", "-XMP:Subject=sea", "-XMP:Subject=Stra\u00dfe",
               "-XMP-lr:HierarchicalSubject=Places|Coast|Sea",
               "-XMP-digiKam:TagsList=People/Ann", "-XMP-dc:Title=Harbour at dawn",
               "-XMP-dc:Title-de=Hafen", "-XMP-dc:Description=Boats \u00e9t\u00e9",
               "-XMP-dc:Creator=Ann", "-XMP-dc:Creator=Bob", "-XMP-dc:Rights=(c) 2024 Ann"]
    iptc_utf8 = ["-IPTC:CodedCharacterSet=UTF8", "-IPTC:Keywords=K\u00e4se",
                 "-IPTC:Keywords=sea", "-IPTC:ObjectName=\u00dcberschrift",
                 "-IPTC:Caption-Abstract=Z\u00fcrich, line 1", "-IPTC:By-line=J\u00f6rg",
                 "-IPTC:CopyrightNotice=\u00a9 J\u00f6rg"]
    exif_text = ["-EXIF:ImageDescription=An EXIF caption", "-EXIF:Artist=Exif Artist",
                 "-EXIF:Copyright=Exif (c)", "-EXIF:Rating=2"]
    jobs = [
        ("base.jpg", "xmp-iptc-exif.jpg", xmp_all + iptc_utf8 + exif_text),
        ("base.jpg", "iptc-utf8.jpg", iptc_utf8),
        # no record 1:90: exiftool writes the bytes in Windows-1252
        ("base.jpg", "iptc-cp1252.jpg", ["-charset", "iptc=cp1252",
                                         "-IPTC:Keywords=Caf\u00e9", "-IPTC:Keywords=\u20ac 5",
                                         "-IPTC:ObjectName=Na\u00efve",
                                         "-IPTC:By-line=Fran\u00e7ois"]),
        ("base.jpg", "exif-text.jpg", exif_text),
        ("base.jpg", "rejected.jpg", ["-XMP:Rating=-1", "-XMP:Label=Purple",
                                      "-XMP-dc:Description-fr=Seulement fran\u00e7ais"]),
        ("base.png", "xmp.png", xmp_all),
        ("base.tif", "xmp-iptc.tif", xmp_all[:6] + iptc_utf8),
        ("base.gif", "xmp.gif", xmp_all),
        ("base.jpg", "webp.xmp", xmp_all),
        ("base.heic", "xmp.heic", xmp_all),
        ("base.jpg", "sidecar.xmp", xmp_all[:3] + ["-XMP-dc:Title=Sidecar title"]),
    ]
    for src, dst, args in jobs:
        # \uXXXX above: exiftool's arguments as Python writes them
        args = [a.encode().decode("unicode_escape") for a in args]
        p = subprocess.run(["exiftool", "-q", "-charset", "utf8", "-o", dst] + args + [src],
                           cwd=d, capture_output=True, text=True)
        check(p.returncode == 0 and os.path.exists(os.path.join(d, dst)),
              "exiftool wrote %s: %s" % (dst, p.stderr[-300:]))
    # exiftool 12.57 does not write WebP: libwebp's webpmux puts the packet
    # exiftool wrote into an XMP chunk
    p = subprocess.run(["webpmux", "-set", "xmp", "webp.xmp", "base.webp", "-o", "xmp.webp"],
                       cwd=d, capture_output=True, text=True)
    check(p.returncode == 0, "webpmux: %s" % p.stderr[-300:])
    # the bases carry nothing, and count as files with nothing to find
    return [j[1] for j in jobs] + ["xmp.webp"]


APPLE_CID = "5A2D1F3E-1111-2222-3333-444455556666"  # apple.mov's (make_movies)


def jpeg_with(jpeg, app):
    """jpeg with the APPn segments app (marker, body) put after its SOI."""
    segs = b"".join(b"\xff" + bytes([m]) + (len(b) + 2).to_bytes(2, "big") + b for m, b in app)
    return jpeg[:2] + segs + jpeg[2:]


def apple_exif(cid):
    """An EXIF block (big-endian TIFF) whose Exif IFD holds an Apple
    MakerNote ("Apple iOS", version 1, MM, an IFD with offsets from the
    MakerNote's start) carrying ContentIdentifier (0x0011)."""
    text = cid.encode() + b"\0"
    mn = b"Apple iOS\0" + b"\0\x01" + b"MM" + struct.pack(">H", 1)
    mn += struct.pack(">HHII", 0x0011, 2, len(text), 16 + 12 + 4) + b"\0\0\0\0" + text
    ifd0 = struct.pack(">H", 1) + struct.pack(">HHII", 0x8769, 4, 1, 8 + 18) + b"\0\0\0\0"
    exif_at = 8 + len(ifd0)
    exif = struct.pack(">H", 1) + struct.pack(">HHII", 0x927C, 7, len(mn), exif_at + 18) + \
        b"\0\0\0\0"
    return b"Exif\0\0" + b"MM\0\x2a" + struct.pack(">I", 8) + ifd0 + exif + mn


def make_pairs(d):
    """What Live Photos and motion photos are made of, for content_id and
    embedded_video: a JPEG still carrying apple.mov's content identifier in
    an Apple MakerNote; a Google motion photo of version 1 (GCamera
    MicroVideo, written by exiftool) and one of the current format
    (GCamera:MotionPhoto and a Container:Directory), each with a movie
    appended; a motion photo whose XMP claims more bytes than follow.
    Returns the names."""
    with open(os.path.join(d, "base.jpg"), "rb") as f:
        base = f.read()
    with open(os.path.join(d, "faststart.mp4"), "rb") as f:
        movie = f.read()
    with open(os.path.join(d, "live.jpg"), "wb") as f:
        f.write(jpeg_with(base, [(0xE1, apple_exif(APPLE_CID))]))
    p = subprocess.run(["exiftool", "-q", "-o", "micro.jpg", "-XMP-GCamera:MicroVideo=1",
                        "-XMP-GCamera:MicroVideoVersion=1",
                        "-XMP-GCamera:MicroVideoOffset=%d" % len(movie), "base.jpg"],
                       cwd=d, capture_output=True, text=True)
    check(p.returncode == 0, "exiftool micro.jpg: %s" % p.stderr[-300:])
    with open(os.path.join(d, "micro.jpg"), "ab") as f:
        f.write(movie)
    packet = ('<x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF'
              ' xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#"><rdf:Description'
              ' rdf:about="" xmlns:GCamera="http://ns.google.com/photos/1.0/camera/"'
              ' xmlns:Container="http://ns.google.com/photos/1.0/container/"'
              ' xmlns:Item="http://ns.google.com/photos/1.0/container/item/"'
              ' GCamera:MotionPhoto="1" GCamera:MotionPhotoVersion="1">'
              '<Container:Directory><rdf:Seq>'
              '<rdf:li rdf:parseType="Resource"><Container:Item Item:Mime="image/jpeg"'
              ' Item:Semantic="Primary" Item:Length="0" Item:Padding="0"/></rdf:li>'
              '<rdf:li rdf:parseType="Resource"><Container:Item Item:Mime="video/mp4"'
              ' Item:Semantic="MotionPhoto" Item:Length="%d" Item:Padding="0"/></rdf:li>'
              '</rdf:Seq></Container:Directory></rdf:Description></rdf:RDF></x:xmpmeta>')
    app1 = b"http://ns.adobe.com/xap/1.0/\0"
    for name, claimed in (("motion.jpg", len(movie)), ("overclaim.jpg", len(movie) + 999999)):
        with open(os.path.join(d, name), "wb") as f:
            f.write(jpeg_with(base, [(0xE1, app1 + (packet % claimed).encode())]) + movie)
    return ["live.jpg", "micro.jpg", "motion.jpg", "overclaim.jpg"], len(movie)


def sql(db, statement):
    con = sqlite3.connect(db)
    try:
        con.execute(statement)
        con.commit()
    finally:
        con.close()


def live_exiftool(root, tags):
    """exiftool's reading of every EXIF tag of every file under root, by
    file name: all of them, so that a file whose EXIF it read is known as
    such even when none of the compared tags is there (a value only seekless finds in it
    is then a disagreement, not an extra)."""
    files = sorted(os.path.join(root, f) for f in os.listdir(root)
                   if f not in ("expected.json", "SOURCES.md"))
    p = subprocess.run(["exiftool", "-j", "-n", "-G", "-a"] + tags + files,
                       capture_output=True, text=True)
    check(p.stdout.strip() != "", "exiftool ran: %s" % p.stderr[-300:])
    return {os.path.basename(e["SourceFile"]): e for e in json.loads(p.stdout or "[]")}


with open(os.path.join(media, "expected.json")) as f:
    oracle = {("media", e["SourceFile"]): e for e in json.load(f)}
for name, e in live_exiftool(real, ["-EXIF:all", "-XMP:all", "-IPTC:all",
                                   "-MakerNotes:MediaGroupUUID",
                                   "-MakerNotes:ContentIdentifier"]).items():
    oracle[("real", name)] = e


def side_of(path):
    for side, root in (("media", media), ("gen", gen)):
        if path.startswith(os.path.realpath(root) + "/"):
            return side
    return "real"


with tempdir("media") as work:
    gen = os.path.join(work, "gen")
    make_movies(gen)
    described_files = make_described(gen)
    pair_files, movie_len = make_pairs(gen)
    for name, e in live_exiftool(gen, ["-api", "LargeFileSupport=1"]).items():
        oracle[("gen", name)] = e
    p = subprocess.run(["exiftool", "-j", "-struct", "-G", "-XMP:Directory"] +
                       [os.path.join(gen, f) for f in pair_files], capture_output=True, text=True)
    for e in json.loads(p.stdout or "[]"):
        if "XMP:Directory" in e:
            oracle[("gen", os.path.basename(e["SourceFile"]))]["XMP:Directory"] = \
                e["XMP:Directory"]
    for f in described_files:
        e = oracle.get(("gen", f), {})
        check(any(described(e).values()), "exiftool reads what it wrote into %s: %s" % (f, e))
    check(sum(is_movie(e) for e in oracle.values()) >= 17,
          "movies to compare: %d" % sum(is_movie(e) for e in oracle.values()))
    # written back first: a file still in delayed allocation has no
    # position yet, and the upgrade's reread below, finding one, would
    # differ in phys_offset, which is not what that check is about
    sync_fs(gen)
    db = os.path.join(work, "i.db")
    # --phash-now: every hash in this scan, whatever the page cache holds
    # (by default one the disk outruns is left for the next scan: test_pending)
    rc, out, err = run("scan", "--phash-now", "--db", db, media, real, gen)
    check(rc in (0, 1), "scan finishes (exit %d): %s" % (rc, err[-500:]))
    recs = {}
    for r in export(db):
        recs[(side_of(r["path"]), os.path.basename(r["path"]))] = r
    # the Live Photo's still and the motion photos, by what the test made
    g = {k[1]: r for k, r in recs.items() if k[0] == "gen"}
    check(g.get("live.jpg", {}).get("content_id") == APPLE_CID ==
          g.get("apple.mov", {}).get("content_id"),
          "a Live Photo's still (Apple MakerNote) and movie share content_id")
    for name in ("micro.jpg", "motion.jpg"):
        check(g.get(name, {}).get("embedded_video") == movie_len,
              "%s: embedded_video is the appended movie's %d bytes: %s" %
              (name, movie_len, g.get(name, {}).get("embedded_video")))
    warned = db_rows(db, "SELECT warnings FROM files WHERE path LIKE '%/overclaim.jpg'")
    check(g.get("overclaim.jpg", {}).get("embedded_video") is None and warned and
          "motion photo" in (warned[0][0] or ""),
          "a motion photo claiming more than the file holds: none, with a warning")
    # query --pairs: the Live Photo and the motion photos above, and a RAW
    # beside the JPEG of its capture time (exiftool setting the time it
    # reads in the RAW), not beside one of another time
    pairs_dir = os.path.join(work, "pairs")
    os.makedirs(pairs_dir)
    shutil.copy(os.path.join(real, "exiftool__CanonRaw.cr2"), os.path.join(pairs_dir, "P1.CR2"))
    shutil.copy(os.path.join(real, "exiftool__CanonRaw.cr2"), os.path.join(pairs_dir, "P2.CR2"))
    taken = oracle[("real", "exiftool__CanonRaw.cr2")]["EXIF:DateTimeOriginal"]
    for name, when in (("P1.JPG", taken), ("P2.JPG", "2001:01:01 00:00:00")):
        p = subprocess.run(["exiftool", "-q", "-o", os.path.join(pairs_dir, name),
                            "-EXIF:DateTimeOriginal=" + when, os.path.join(gen, "base.jpg")],
                           capture_output=True, text=True)
        check(p.returncode == 0, "exiftool %s: %s" % (name, p.stderr[-200:]))
    pdb = os.path.join(work, "p.db")
    run("scan", "--phash-now", "--db", pdb, "--quiet", gen, pairs_dir)
    rc, out, err = run("query", "--db", pdb, "--pairs", "--json")
    got = sorted((j["kind"], tuple(j["files"]), j.get("embedded_video"))
                 for j in map(json.loads, out.splitlines()))
    rg, rp = os.path.realpath(gen), os.path.realpath(pairs_dir)
    want = sorted([("live", (rg + "/apple.mov", rg + "/live.jpg"), None),
                   ("motion", (rg + "/micro.jpg",), movie_len),
                   ("motion", (rg + "/motion.jpg",), movie_len),
                   ("raw+jpeg", (rp + "/P1.CR2", rp + "/P1.JPG"), None)])
    check(rc == 0 and got == want, "query --pairs: %s" % got)
    rc, out, err = run("query", "--db", pdb, "--pairs")
    check(rc == 0 and "raw+jpeg\t%s/P1.CR2\t%s/P1.JPG\n" % (rp, rp) in out,
          "query --pairs as text: %s" % out)
    # the same movies streamed: 256 KiB chunks, the moov box caught in passing
    sdb = os.path.join(work, "s.db")
    rc, out, err = run("scan", "--phash-now", "--mem", "1M", "--db", sdb, media, gen)
    check(rc in (0, 1), "streamed scan finishes (exit %d): %s" % (rc, err[-500:]))
    streamed = {(side_of(r["path"]), os.path.basename(r["path"])): r for r in export(sdb)}
    big = streamed.get(("gen", "big.mp4"), {})
    check(big.get("size", 0) > 20 * 256 * 1024, "a movie of many chunks: %s bytes" %
          big.get("size"))

    compared = agreed = 0
    linked = []
    per_field = {}
    bad = []
    extras = []
    checks = [(key, recs.get(key), "") for key in sorted(oracle)]
    checks += [(key, streamed.get(key), " (streamed)") for key in sorted(oracle)
               if key[0] != "real" and (is_movie(oracle[key]) or is_avi(oracle[key]))]
    for key, r, how in checks:
        if r is None:
            check(False, "no record for %s%s" % (key, how))
            continue
        read_exif = any(k.startswith("EXIF:") for k in oracle[key])
        want = expected_fields(oracle[key])
        if r.get("sidecar"):
            # an image with a sidecar: each field the sidecar has (exiftool
            # reading the sidecar) over the image's own
            sk = (side_of(r["sidecar"]), os.path.basename(r["sidecar"]))
            linked.append("%s/%s -> %s" % (key[0], key[1], sk[1]))
            for k, v in described(oracle.get(sk, {})).items():
                if v is not None and v != []:
                    want[k] = v
        for k, w in want.items():
            g = r.get(k)
            if w is None and g is None:
                continue
            if w is None and not read_exif and not is_movie(oracle[key]) and not is_avi(oracle[key]):
                extras.append("%s/%s: %s = %r" % (key[0], key[1], k, g))
                continue
            ok = same(w, g)
            compared += 1
            agreed += ok
            s = per_field.setdefault(k, [0, 0])
            s[0] += ok
            s[1] += 1
            if not ok:
                bad.append("%s/%s%s: %s = %r, exiftool %r" % (key[0], key[1], how, k, g, w))
    rate = agreed / compared if compared else 0
    print("agreement: %d of %d values (%.2f%%)" % (agreed, compared, 100 * rate), file=sys.stderr)
    for k in sorted(per_field):
        print("  %-12s %4d/%4d" % (k, per_field[k][0], per_field[k][1]), file=sys.stderr)
    for b in bad:
        print("  " + b, file=sys.stderr)
    print("values only seekless found, in files whose EXIF exiftool did not read (%d):" %
          len(extras), file=sys.stderr)
    for x in extras:
        print("  " + x, file=sys.stderr)
    print("images with a sidecar: %s" % sorted(set(linked)), file=sys.stderr)
    check("media/libimage-exiftool-perl__t__images__XMP.jpg -> "
          "libimage-exiftool-perl__t__images__XMP.xmp" in linked,
          "exiftool's XMP.jpg speaks through XMP.xmp beside it")
    check(compared >= 60, "enough values compared: %d" % compared)
    check(rate >= THRESHOLD, "agreement %.2f%% >= %.0f%%" % (100 * rate, 100 * THRESHOLD))

    # the upgrade: records as an older extractor left them
    before = {r["path"]: r for r in export(db)}
    with_tz = [p for p, r in before.items() if r["tz_offset"] or r["subsec"]]
    check(len(with_tz) >= 30, "files with the new fields: %d" % len(with_tz))
    stale_formats = db_rows(db, "SELECT count(*) FROM files WHERE deleted_at IS NULL AND"
                                " error IS NULL AND format IN ('jpeg', 'tiff', 'heic', 'png',"
                                " 'webp', 'dng', 'cr3', 'nef', 'arw')")[0][0]
    # what no version reads more from: files with errors (read by every
    # scan anyway), formats without EXIF or a movie box, and no content
    # (directories); files of no known format are read again once, by 2
    other = db_rows(db, "SELECT count(*) FROM files WHERE deleted_at IS NULL AND"
                        " (error IS NOT NULL OR format NOT IN ('jpeg', 'mpo', 'exv', 'png',"
                        " 'webp', 'tiff', 'bigtiff', 'cr2', 'nef', 'arw', 'dng', 'orf', 'rw2',"
                        " 'pef', 'srw', 'raf', 'mrw', 'heic', 'heif', 'avif', 'cr3', 'jp2',"
                        " 'mp4', 'mov', '3gp', '3g2', 'm4v', 'avi', 'gif', 'psd', 'xmp')"
                        " OR format IS NULL AND content_hash IS NULL)")[0][0]
    check(other > 10, "files of formats the upgrade does not touch: %d" % other)
    phashes = db_rows(db, "SELECT count(*) FROM files WHERE phash IS NOT NULL")[0][0]
    sql(db, "UPDATE files SET tz_offset = NULL, subsec = NULL, meta_version = NULL,"
            " duration = NULL, content_id = NULL, rating = NULL, label = NULL,"
            " keywords = NULL, hierarchical_keywords = NULL, title = NULL,"
            " description = NULL, creator = NULL, copyright = NULL")
    rc, out, err = run("scan", "--phash-now", "--json", "--db", db, media, real, gen)
    summary = json.loads(out.splitlines()[-1]) if out.strip() else {}
    total = len(before)
    check(summary.get("upgraded", 0) == total - other,
          "every record of an EXIF format read again: %s of %d (%d others)" %
          (summary.get("upgraded"), total, other))
    check(summary.get("files_read") == total - other + summary.get("changed", 0) +
          summary.get("retried", 0),
          "and nothing else read: %s" % summary.get("files_read"))
    after = {r["path"]: r for r in export(db)}
    differ = ["%s: %s" % (p, {k: (v, after.get(p, {}).get(k)) for k, v in before[p].items()
                               if after.get(p, {}).get(k) != v}) for p in before
              if after.get(p) != before[p]]
    check(not differ, "the new fields are back, everything else as it was: %s" % differ)
    check(db_rows(db, "SELECT count(*) FROM files WHERE phash IS NOT NULL")[0][0] == phashes,
          "perceptual hashes kept")
    check(stale_formats > 0 and db_rows(db, "SELECT count(*) FROM files WHERE meta_version"
                                            " IS NULL AND error IS NULL AND format = 'jpeg'")[0][0]
          == 0, "records carry their extractor version")
    rc, out, err = run("scan", "--phash-now", "--json", "--db", db, media, real, gen)
    summary = json.loads(out.splitlines()[-1]) if out.strip() else {}
    # (files whose record holds an error are read by every scan)
    check(summary.get("upgraded") == 0 and summary.get("changed") == 0 and
          summary.get("files_read") == summary.get("retried"),
          "then nothing else is read: %s upgraded, %s read, %s with errors" %
          (summary.get("upgraded"), summary.get("files_read"), summary.get("changed")))
    # --no-phash on the upgrade keeps the hashes it did not try: the same
    # files read again, and every hash and its source as it was
    hashes = db_rows(db, "SELECT path, phash, phash_src FROM files WHERE phash IS NOT NULL"
                         " ORDER BY path")
    check(len(hashes) == phashes, "hashes before the --no-phash upgrade: %d" % len(hashes))
    sql(db, "UPDATE files SET meta_version = NULL")
    rc, out, err = run("scan", "--no-phash", "--json", "--db", db, media, real, gen)
    check(rc in (0, 1), "upgrade with --no-phash: %s" % err[-300:])
    summary = json.loads(out.splitlines()[-1]) if out.strip() else {}
    check(summary.get("upgraded", 0) == total - other,
          "--no-phash: every record of an EXIF format read again: %s of %d" %
          (summary.get("upgraded"), total - other))
    kept = db_rows(db, "SELECT path, phash, phash_src FROM files WHERE phash IS NOT NULL"
                       " ORDER BY path")
    check(kept == hashes, "perceptual hashes kept by a --no-phash re-read of the same bytes:"
          " %d of %d the same" % (len(set(kept) & set(hashes)), len(hashes)))
    # --full reads everything and calls none of it an upgrade
    sql(db, "UPDATE files SET meta_version = NULL")
    rc, out, err = run("scan", "--phash-now", "--full", "--json", "--db", db, media, real, gen)
    summary = json.loads(out.splitlines()[-1]) if out.strip() else {}
    check(summary.get("upgraded") == 0 and summary.get("files_read") == total,
          "--full: %s upgraded, %s of %d read" % (summary.get("upgraded"),
                                                  summary.get("files_read"), total))

done()
