"""scan --quick (issue 46, docs/design.md "Quick scans"): index first, read
the rest later, and nothing in the index weaker for it.

Real files on ext4 on a loop device: the shared corpora (camera files,
movies, sidecars), copies of some of them made larger than the pipeline
holds whole (zeros appended, which no parser reads), and movies ffmpeg
made here from a corpus photograph: the moov box after the media data,
before it (faststart), fragmented, and a QuickTime one with a place and
a creation time, and large JPEGs as an editor exports them (corpus
photographs enlarged with djpeg | pnmscale | cjpeg, baseline and
progressive, their metadata and thumbnail copied back by exiftool).

Two budgets, two ways of reading in part:
- --mem 8M: files over 2 MiB (a quarter of it) are the ones a full scan
  streams; a quick one reads their first chunk, what the catch asks for
  (a movie's moov) and their last 64 KiB;
- --mem 64M: a JPEG a full scan holds whole (up to 16 MiB) and larger than
  its head, its tail and 2 MiB, whose head holds every segment up to the
  first scan and which ends with its end marker, is read for its first
  256 KiB and its last 64 KiB (no other format yet).

Oracles: xxh128sum over the bytes the partial hash is defined on (the
size as 8 bytes little-endian, the first 64 KiB, the last 64 KiB past
them: extract.h) and xxhsum -H2 over whole files; a full scan of the same
tree for every other field.

- a quick scan and a full scan of the same tree agree on every column but
  the content hash, which is NULL exactly for the files over 2 MiB (8M),
  for large JPEGs only and never for a padded one (64M), and a perceptual
  hash the head could not give (then pending, never another); every
  partial hash is the reference's; a movie's fields came from its moov box
  wherever it lies, and far fewer bytes were read;
- scan --json, stats --json, stats and dupes say how many are pending,
  and how large; a second quick scan reads nothing;
- a scan without --quick reads exactly the pending files, and then the
  index is the full scan's, column for column;
- quick = yes in the configuration makes scans quick, --no-quick and
  --full override it, --quick --full is a usage error;
- a model run: renames, deletions, rewrites, appends between quick and
  full scans, some killed (SIGKILL); after every scan that ends, every
  record matches its file (a content hash is the file's, a pending one's
  partial hash is the file's), after a full one nothing is pending; at the
  end the index is a fresh full scan's.
"""
import json
import os
import random
import shutil
import signal
import sqlite3
import struct
import subprocess
import time

from lib import (BIN, check, db_rows, done, loop_fs, run, skip, sync_fs, tempdir,
                 xxh128)

REAL = os.environ.get("SEEKLESS_CORPUS")
MEDIA = os.environ.get("SEEKLESS_MEDIA")
for d in (REAL, MEDIA):
    if not d or not os.path.isdir(d):
        skip("shared corpus not found at %s" % d)
for tool in ("ffmpeg", "xxh128sum", "xxhsum", "djpeg", "pnmscale", "cjpeg", "exiftool"):
    if shutil.which(tool) is None:
        skip("%s not installed" % tool)

MEM = "8M"
WHOLE_MAX = 2 << 20  # a quarter of --mem: larger files are streamed, or read in part
MEM_HEAD = "64M"     # files up to 16 MiB held whole: JPEGs read for their ends
HEAD_MIN = (256 << 10) + (64 << 10) + (2 << 20)  # extract.h, pipeline.h
SPAN = 64 << 10
# columns that say when, not what
WHEN = {"id", "first_scan", "last_scan", "indexed_at", "ctime_ns", "deleted_at",
        "deleted_scan", "sidecar_id"}
rng = random.Random(4646)


def quick_ref(paths):
    """The partial hash as extract.h defines it, by xxh128sum."""
    out = {}
    for p in paths:
        size = os.path.getsize(p)
        with open(p, "rb") as f:
            head = f.read(min(size, SPAN))
            t = size if size <= SPAN else max(size - SPAN, SPAN)
            f.seek(t)
            tail = f.read()
        r = subprocess.run(["xxh128sum"], input=struct.pack("<Q", size) + head + tail,
                           capture_output=True, check=True)
        out[p] = r.stdout.split()[0].decode()
    return out


def sh(cmd):
    subprocess.run(cmd, shell=True, check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.PIPE)


def make_movies(dest, still):
    """ffmpeg's movies from a real photograph, each over 2 MiB."""
    base = ("ffmpeg -loglevel error -y -loop 1 -i '%s' -t 5 -r 25 -vf scale=480:-2 "
            "-c:v mpeg4 -b:v 6M -pix_fmt yuv420p" % still)
    sh("%s '%s/m-end.mp4'" % (base, dest))
    sh("%s -movflags +faststart '%s/m-fast.mp4'" % (base, dest))
    sh("%s -movflags frag_keyframe+empty_moov '%s/m-frag.mp4'" % (base, dest))
    sh("%s -metadata creation_time=2021-06-05T10:20:30Z -metadata "
       "location=+48.8584+002.2945/ -f mov '%s/m-place.mov'" % (base, dest))


def make_jpegs(dest, srcs):
    """Editors' exports: corpus photographs enlarged, baseline and
    progressive, with the camera's metadata and thumbnail copied back."""
    ppm = os.path.join(dest, "t.ppm")
    made = 0
    for src in srcs:
        p = subprocess.run("djpeg -pnm '%s' | pnmscale 2 > '%s'" % (src, ppm), shell=True,
                           capture_output=True)
        if p.returncode or p.stderr or os.path.getsize(ppm) < 3 << 20:
            continue
        for opt in ("", "-progressive"):
            d = os.path.join(dest, "x%02d%s.jpg" % (made, opt[:2]))
            sh("cjpeg %s -quality 92 '%s' > '%s'" % (opt, ppm, d))
            sh("exiftool -q -q -overwrite_original -TagsFromFile '%s' -all:all '%s'" % (src, d))
        made += 1
        if made == 5:
            break
    os.unlink(ppm)


def make_tree(root):
    """The corpora, larger copies of some of their files, and movies."""
    os.makedirs(root)
    names = []
    for src in (REAL, MEDIA):
        for n in sorted(os.listdir(src)):
            p = os.path.join(src, n)
            if os.path.isfile(p) and not n.endswith((".json", ".md")):
                shutil.copy(p, os.path.join(root, n))
                names.append(n)
    big = [n for n in names if os.path.getsize(os.path.join(root, n)) > 40000]
    for n in rng.sample(big, min(40, len(big))):
        pad = os.path.join(root, "pad-" + n)
        shutil.copy(os.path.join(root, n), pad)
        with open(pad, "ab") as f:
            f.write(b"\0" * (WHOLE_MAX + rng.randrange(1, 3 << 20)))
    stills = sorted((n for n in names if n.lower().endswith(".jpg")),
                    key=lambda n: -os.path.getsize(os.path.join(root, n)))
    make_movies(root, os.path.join(root, stills[0]))
    make_jpegs(root, [os.path.join(root, n) for n in stills[:40]])
    # duplicates among the large files, a file with another's size and
    # ends but not its middle (only reading it whole tells them apart), and
    # one with its size but not its tail (its partial hash tells)
    shutil.copy(os.path.join(root, "m-end.mp4"), os.path.join(root, "dup-m-end.mp4"))
    pad = sorted(n for n in os.listdir(root) if n.startswith("pad-"))[0]
    shutil.copy(os.path.join(root, pad), os.path.join(root, "dup-" + pad))
    with open(os.path.join(root, pad), "rb") as f:
        data = bytearray(f.read())
    data[len(data) // 2] ^= 1  # in the zeros appended
    with open(os.path.join(root, "mid-" + pad), "wb") as f:
        f.write(data)
    data[len(data) // 2] ^= 1
    data[-10] ^= 1
    with open(os.path.join(root, "tail-" + pad), "wb") as f:
        f.write(data)
    shutil.copy(os.path.join(root, "x00.jpg"), os.path.join(root, "dup-x00.jpg"))


def scan(db, root, *extra, mem=MEM):
    rc, out, err = run("scan", "--json", "--mem", mem, "--db", db, *extra, root)
    check(rc in (0, 1), "scan %s: exit %d: %s" % (" ".join(extra), rc, err[-400:]))
    return json.loads(out) if out.strip() else {}


def table(db):
    con = sqlite3.connect(db)
    cols = [r[1] for r in con.execute("PRAGMA table_info(files)") if r[1] not in WHEN]
    rows = con.execute("SELECT %s FROM files WHERE deleted_at IS NULL ORDER BY path"
                       % ", ".join(cols)).fetchall()
    con.close()
    return cols, {r[0]: dict(zip(cols, r)) for r in rows}


def differences(a, b, ignore=()):
    """Columns that differ between two indexes' live records."""
    cols, ra = table(a)
    _, rb = table(b)
    out = []
    for p in sorted(set(ra) | set(rb)):
        if p not in ra or p not in rb:
            out.append((p, "only in %s" % ("the first" if p in ra else "the second")))
            continue
        out += [(p, c, ra[p][c], rb[p][c]) for c in cols
                if c not in ignore and ra[p][c] != rb[p][c]]
    return out


def records_true(db, root, what):
    """Every live record against its file: the content hash the file's
    (xxhsum), or none and the partial hash the file's (xxh128sum)."""
    recs = db_rows(db, "SELECT path, size, content_hash, quick_hash FROM files WHERE "
                   "deleted_at IS NULL AND error IS NULL")
    live = set(os.path.join(d, f) for d, _, fs in os.walk(root) for f in fs)
    paths = [r[0] for r in recs if r[0] in live]
    whole = xxh128(paths)
    parts = quick_ref([r[0] for r in recs if r[0] in live and r[2] is None])
    bad = []
    for path, size, ch, qh in recs:
        if path not in live:
            continue  # gone since: the next scan marks it deleted
        if os.path.getsize(path) != size:
            continue  # changed since the record was made
        if ch is not None and ch != whole[path]:
            bad.append((path, "content hash", ch, whole[path]))
        if ch is None and (qh != parts.get(path) or size <= WHOLE_MAX):
            bad.append((path, "pending", size, qh, parts.get(path)))
    check(not bad, "%s: records that are not their files': %s" % (what, bad[:4]))
    return len(recs)


with tempdir("quick", base="/dev/shm") as work, loop_fs("ext4", 768) as fs:
    root = os.path.join(fs.mnt, "photos")
    make_tree(root)
    sync_fs(root)
    files = sorted(os.path.join(d, f) for d, _, fs_ in os.walk(root) for f in fs_)
    large = {p for p in files if os.path.getsize(p) > WHOLE_MAX}
    check(len(large) >= 20, "files over 2 MiB: %d" % len(large))

    # --- a quick scan against a full one
    full_db = os.path.join(work, "full.db")
    quick_db = os.path.join(work, "quick.db")
    sf = scan(full_db, root)
    sq = scan(quick_db, root, "--quick")
    print("full: %d files, %d bytes read; quick: %d files, %d bytes read, %d pending"
          % (sf.get("files_read", 0), sf.get("bytes_read", 0), sq.get("files_read", 0),
             sq.get("bytes_read", 0), sq.get("content_pending", -1)))
    check(sq.get("quick") is True and sf.get("quick") is False, "scan --json says quick")
    check(sf.get("content_pending") == 0, "a full scan leaves nothing pending")
    diff = differences(full_db, quick_db, ignore={"content_hash"})
    check(not diff, "quick and full agree on every column but the content hash: %s"
          % diff[:5])
    pend = {p for (p,) in db_rows(quick_db, "SELECT path FROM files WHERE deleted_at IS NULL"
                                  " AND content_hash IS NULL AND error IS NULL")}
    check(pend == {p for p in large if not db_rows(
        full_db, "SELECT 1 FROM files WHERE path = ? AND error IS NOT NULL", (p,))},
          "pending are exactly the files over 2 MiB: %d of %d; e.g. %s"
          % (len(pend), len(large), sorted(pend ^ large)[:3]))
    check(sq.get("content_pending") == len(pend) and
          sq.get("content_pending_bytes") == sum(os.path.getsize(p) for p in pend),
          "scan --json content_pending %s, %s bytes" % (sq.get("content_pending"),
                                                       sq.get("content_pending_bytes")))
    whole = xxh128(files)
    qref = quick_ref(files)
    for db, name in ((full_db, "full"), (quick_db, "quick")):
        got = dict(db_rows(db, "SELECT path, quick_hash FROM files WHERE error IS NULL"))
        wrong = [p for p in got if got[p] != qref[p]]
        check(not wrong, "%s scan: partial hashes are xxh128sum's: %s"
              % (name, [(p, got[p], qref[p]) for p in wrong[:3]]))
    got = dict(db_rows(full_db, "SELECT path, content_hash FROM files WHERE error IS NULL"))
    check(all(got[p] == whole[p] for p in got), "full scan: content hashes are xxhsum's")
    movies = db_rows(quick_db, "SELECT path, format, duration, width, height FROM files "
                     "WHERE path LIKE '%/m-end.mp4' OR path LIKE '%/m-place.mov'")
    check(len(movies) == 2 and all(m[2] and m[2] > 4 and m[3] == 480 for m in movies),
          "the movies' fields, from moov after the media data: %s" % movies)
    place = db_rows(quick_db, "SELECT gps_lat, gps_lon, datetime_original FROM files "
                    "WHERE path LIKE '%/m-place.mov'")
    check(place and abs(place[0][0] - 48.8584) < 1e-3 and place[0][2],
          "the QuickTime movie's place and time: %s" % place)
    read_part = sum(min(os.path.getsize(p), 2 << 20) for p in pend)
    check(sq.get("bytes_read", 0) < sf.get("bytes_read", 0) -
          sum(os.path.getsize(p) for p in pend) + read_part + len(pend) * (3 << 20),
          "the quick scan read the heads, not the files: %s bytes against %s"
          % (sq.get("bytes_read"), sf.get("bytes_read")))
    m_end = os.path.join(root, "m-end.mp4")
    check(sq.get("bytes_read", 0) < sf.get("bytes_read", 0) - os.path.getsize(m_end) // 2,
          "the media data of a movie whose moov is at its end was skipped")

    # the candidates for duplicates: pending, and another file of the same
    # size whose partial hash (checked against xxh128sum below) is theirs
    qrec = db_rows(quick_db, "SELECT path, size, quick_hash, content_hash, error IS NOT NULL "
                   "FROM files WHERE deleted_at IS NULL")
    cands = {p for p, sz, qh, ch, bad in qrec if ch is None and not bad and sz > 0 and any(
        p2 != p and sz2 == sz and (qh2 == qh and (ch2 or not bad2) or qh2 is None and ch2)
        for p2, sz2, qh2, ch2, bad2 in qrec)}
    check(len(cands) >= 5 and [p for p in cands if "/mid-pad-" in p] and
          not [p for p in cands if "/tail-pad-" in p],
          "candidates for duplicates among the pending: %d, the one whose middle differs "
          "among them, not the one whose tail differs" % len(cands))
    dupes_db = os.path.join(work, "dupes.db")
    with sqlite3.connect(quick_db) as src, sqlite3.connect(dupes_db) as dst:
        src.backup(dst)

    rc, out, err = run("stats", "--json", "--db", quick_db, check_rc=0)
    st = json.loads(out)
    check(st.get("content_pending") == len(pend) and
          st.get("content_pending_bytes") == sum(os.path.getsize(p) for p in pend),
          "stats --json: %s" % {k: st.get(k) for k in ("content_pending",
                                                      "content_pending_bytes")})
    rc, out, err = run("stats", "--db", quick_db, check_rc=0)
    check(("content hash pending: %d" % len(pend)) in out, "stats says it: %s" % out[:300])
    rc, out, err = run("dupes", "--no-read", "--db", quick_db, check_rc=0)
    check(("%d files read in part" % len(cands)) in err, "dupes --no-read says what it "
          "leaves out: %s" % err[-300:])

    # (files whose record holds an error are tried again by every scan)
    # dupes reads the candidates whole, nothing else, and groups as xxhsum
    rc, out, err = run("dupes", "--json", "--db", dupes_db, check_rc=0)
    got = sorted(sorted(json.loads(line)["paths"]) for line in out.splitlines())
    by_hash = {}
    for p in files:
        if os.path.getsize(p) > 0:
            by_hash.setdefault(whole[p], []).append(p)
    want = sorted(sorted(g) for g in by_hash.values() if len(g) > 1)
    check(got == want, "dupes after a quick scan: the groups xxhsum makes: %d against %d; "
          "missing %s, extra %s" % (len(got), len(want), [g for g in want if g not in got][:2],
                                   [g for g in got if g not in want][:2]))
    row = db_rows(dupes_db, "SELECT files FROM scans WHERE command = 'dupes'")
    print("dupes: %d candidates, scan row %s; %s" % (len(cands), row, err.strip()[-300:]))
    left = db_rows(dupes_db, "SELECT path FROM files WHERE deleted_at IS NULL AND "
                   "content_hash IS NULL AND quick_hash IS NOT NULL AND error IS NULL")
    check(row == [(len(cands),)] and {p for (p,) in left} == pend - cands,
          "dupes read exactly the %d candidates (%s), the other pending files not (%d left)"
          % (len(cands), row, len(left)))
    check(("reading %d files" % len(cands)) in err, "dupes says what it reads: %s" % err[-300:])

    s2 = scan(quick_db, root, "--quick")
    check(s2.get("files_read") == s2.get("retried") and s2.get("completed") == 0 and
          s2.get("content_pending") == len(pend),
          "a second quick scan reads nothing but the files with errors, and leaves the "
          "pending ones: read %s, retried %s, pending %s"
          % (s2.get("files_read"), s2.get("retried"), s2.get("content_pending")))
    s3 = scan(quick_db, root)
    check(s3.get("completed") == len(pend) and
          s3.get("files_read") == len(pend) + s3.get("retried", -1) and
          s3.get("content_pending") == 0,
          "a scan without --quick reads the %d pending whole, nothing else: completed %s, "
          "read %s (retried %s), pending %s"
          % (len(pend), s3.get("completed"), s3.get("files_read"), s3.get("retried"),
             s3.get("content_pending")))
    diff = differences(full_db, quick_db)
    check(not diff, "then the index is the full scan's, column for column: %s" % diff[:5])

    # --- JPEGs read for their ends (--mem 64M: a full scan holds them whole)
    fh = os.path.join(work, "full-64m.db")
    qh = os.path.join(work, "quick-64m.db")
    sfh = scan(fh, root, mem=MEM_HEAD)
    sqh = scan(qh, root, "--quick", mem=MEM_HEAD)
    diff = differences(fh, qh, ignore={"content_hash", "phash", "phash_src"})
    check(not diff, "64M: quick and full agree on every column but the hashes: %s" % diff[:5])
    _, rf = table(fh)
    _, rq = table(qh)
    pend_h = {p for p, r in rq.items() if r["content_hash"] is None and r["error"] is None}
    big_jpeg = {p for p, r in rq.items()
                if r["format"] == "jpeg" and HEAD_MIN < os.path.getsize(p) <= 16 << 20}
    exports = {p for p in big_jpeg if os.path.basename(p).startswith("x")}
    print("64M: %d read in part of %d large JPEGs (%d exports); %d bytes read against %d"
          % (len(pend_h), len(big_jpeg), len(exports), sqh.get("bytes_read", 0),
             sfh.get("bytes_read", 0)))
    check(len(exports) >= 6 and exports <= pend_h <= big_jpeg,
          "64M: read in part: every export, and large JPEGs only: %d exports, %d pending, "
          "outside: %s" % (len(exports), len(pend_h), sorted(pend_h - big_jpeg)[:3]))
    check(not [p for p in pend_h if os.path.basename(p).startswith("pad-")],
          "64M: a JPEG with data after its end marker is read whole")
    wrong = [p for p, r in rq.items() if r["phash_src"] is not None and
             (r["phash"], r["phash_src"]) != (rf[p]["phash"], rf[p]["phash_src"])]
    check(not wrong, "64M: every perceptual hash made from a head is the full scan's: %s"
          % [(p, rq[p]["phash_src"], rf[p]["phash_src"]) for p in wrong[:3]])
    left = {p for p, r in rq.items() if r["phash_src"] is None and rf[p]["phash_src"]}
    check(left <= pend_h, "64M: only files read in part wait for a perceptual hash: %s"
          % sorted(left - pend_h)[:3])
    from_head = [p for p in pend_h if rq[p]["phash_src"] == "exif-thumbnail"]
    check(len(from_head) >= 3, "64M: thumbnails hashed from the head: %d" % len(from_head))
    # (any other file over 2.3 MiB had its head read, a JPEG whose end is
    # not its end marker its tail too, before it was read whole)
    others = [p for p in rq if HEAD_MIN < os.path.getsize(p) <= 16 << 20]
    check(sfh.get("bytes_read", 0) - sqh.get("bytes_read", 0) >=
          sum(os.path.getsize(p) for p in pend_h) - len(others) * (320 << 10),
          "64M: the exports' heads and tails read, not the files: %d fewer bytes, %d in "
          "the %d read in part" % (sfh.get("bytes_read", 0) - sqh.get("bytes_read", 0),
                                   sum(os.path.getsize(p) for p in pend_h), len(pend_h)))
    got = dict(db_rows(qh, "SELECT path, quick_hash FROM files WHERE error IS NULL"))
    check(all(got[p] == qref[p] for p in got), "64M: partial hashes are xxh128sum's")
    s4 = scan(qh, root, mem=MEM_HEAD)
    check(s4.get("completed") == len(pend_h) and s4.get("content_pending") == 0,
          "64M: a scan without --quick completes the %d: %s" % (len(pend_h), s4.get("completed")))
    diff = differences(fh, qh)
    check(not diff, "64M: then the index is the full scan's, column for column: %s" % diff[:5])

    # a file rewritten in place between quick scans: its new record never
    # keeps the old content's perceptual hash (a NULL content hash is no
    # proof of the same bytes)
    swap = os.path.join(fs.mnt, "swap")
    os.makedirs(swap)
    a = sorted(from_head)[0]
    shutil.copy(a, os.path.join(swap, "s.jpg"))
    sdb = os.path.join(work, "swap.db")
    scan(sdb, swap, "--quick", mem=MEM_HEAD)
    before = db_rows(sdb, "SELECT phash_src, content_hash FROM files")
    check(before == [("exif-thumbnail", None)], "swap: A read in part, hashed: %s" % before)
    sh("djpeg -pnm '%s' | cjpeg -quality 90 > '%s'" % (a, os.path.join(swap, "s.jpg")))
    sync_fs(swap)
    scan(sdb, swap, "--quick", mem=MEM_HEAD)
    after = db_rows(sdb, "SELECT phash_src, phash, content_hash FROM files")
    check(after == [(None, None, None)],
          "swap: B (no thumbnail) read in part: its hash pending, not A's: %s" % after)
    shutil.rmtree(swap)

    # --- the configuration, and the command line over it
    conf = os.path.join(work, "quick.conf")
    with open(conf, "w") as f:
        f.write("quick = yes\n")
    cdb = os.path.join(work, "conf.db")
    for extra, want in (((), True), (("--no-quick",), False), (("--full",), False)):
        s = scan(cdb, root, "--config", conf, *extra)
        check(s.get("quick") is want, "quick = yes with %s: quick %s" % (extra, s.get("quick")))
        os.unlink(cdb)
    rc, out, err = run("scan", "--quick", "--full", "--db", cdb, root)
    check(rc == 2 and "one or the other" in err, "--quick --full: exit %d, %s" % (rc, err))

    # --- the model: changes, quick and full scans, kills
    db = os.path.join(work, "m.db")
    spare = os.path.join(work, "spare")
    shutil.copytree(root, spare)
    spares = sorted(os.listdir(spare))
    killed = ended = 0
    whole = max(sf.get("wall_s", 0.5), 0.05)  # what a full scan of the tree takes
    for rnd in range(14):
        live = sorted(os.listdir(root))
        for _ in range(rng.randint(1, 6)):
            op = rng.choice(["rename", "delete", "rewrite", "append", "add"])
            name = rng.choice(live)
            p = os.path.join(root, name)
            if op == "rename":
                new = "r%d-%s" % (rnd, name)
                os.rename(p, os.path.join(root, new))
                live[live.index(name)] = new
            elif op == "delete" and len(live) > 50:
                os.unlink(p)
                live.remove(name)
            elif op == "rewrite":
                shutil.copyfile(os.path.join(spare, rng.choice(spares)), p)
            elif op == "append":
                with open(p, "ab") as f:
                    f.write(os.urandom(rng.choice([10, 70000, 3 << 20])))
            else:
                s = rng.choice(spares)
                shutil.copy(os.path.join(spare, s), os.path.join(root, "n%d-%s" % (rnd, s)))
                live.append("n%d-%s" % (rnd, s))
        sync_fs(root)
        quick = rng.random() < 0.6
        cmd = [BIN, "scan", "--quiet", "--phash-now", "--mem", MEM_HEAD, "--db", db, root] + (["--quick"] if quick
                                                                         else [])
        p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        if rnd % 3 != 2:
            # an incremental scan reads a few files: killed early in
            # it, or while the first one reads the tree
            time.sleep(rng.uniform(0.005, 0.08) if rnd else whole * rng.uniform(0.1, 0.7))
            if p.poll() is None:
                p.send_signal(signal.SIGKILL)
                killed += 1
        err = p.communicate()[1].decode(errors="replace")
        check(p.returncode in (0, 1, -signal.SIGKILL), "round %d: scan exit %d: %s"
              % (rnd, p.returncode, err[-300:]))
        if os.path.exists(db):
            check(db_rows(db, "PRAGMA integrity_check") == [("ok",)], "round %d: integrity" % rnd)
        if p.returncode in (0, 1):
            ended += 1
            records_true(db, root, "round %d (%s)" % (rnd, "quick" if quick else "full"))
            if not quick:
                check(db_rows(db, "SELECT count(*) FROM files WHERE deleted_at IS NULL AND "
                              "content_hash IS NULL AND quick_hash IS NOT NULL AND "
                              "error IS NULL")[0][0] == 0,
                      "round %d: a full scan leaves nothing pending" % rnd)
    scan(db, root, mem=MEM_HEAD)
    records_true(db, root, "the end")
    fresh = os.path.join(work, "fresh.db")
    scan(fresh, root, mem=MEM_HEAD)
    diff = differences(fresh, db)
    check(not diff, "after a scan without --quick the index is a fresh full scan's: %s"
          % diff[:5])
    print("model: 14 rounds, %d scans killed, %d ended" % (killed, ended))
    check(killed >= 3 and ended >= 3, "killed %d, ended %d" % (killed, ended))
done()
