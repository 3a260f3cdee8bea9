"""Issue 16's fields against exiftool, field by field, and the re-read that
brings them to an index an older seekless made.

Oracles (nothing here is computed by seekless):
  ../shared/corpus/media   its expected.json (exiftool -j -n -G -a
                           -api LargeFileSupport=1, SOURCES.md)
  ../shared/corpus/real    exiftool run here on the fields below (that
                           corpus's expected.json holds only the basics)

Fields compared so far (each parser that lands adds its own):
  tz_offset   EXIF:OffsetTimeOriginal, else EXIF:OffsetTime ("+HH:MM";
              blank is none)
  subsec      EXIF:SubSecTimeOriginal: its leading digits, as text

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
import os
import re
import sqlite3
import subprocess
import sys

from lib import check, db_rows, done, export, run, skip, tempdir

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


def expected_fields(e):
    out = {}
    tz = text(e.get("EXIF:OffsetTimeOriginal")) or text(e.get("EXIF:OffsetTime"))
    out["tz_offset"] = tz
    ss = text(e.get("EXIF:SubSecTimeOriginal"))
    if ss is not None:
        ss = re.match(r"\d*", ss).group(0) or None
    out["subsec"] = ss
    return out


def sql(db, statement):
    con = sqlite3.connect(db)
    try:
        con.execute(statement)
        con.commit()
    finally:
        con.close()


def live_exiftool(root):
    """exiftool's reading of every EXIF tag of every file under root, by
    file name: all of them, so that a file whose EXIF it read is known as
    such even when none of the compared tags is there (a value only seekless finds in it
    is then a disagreement, not an extra)."""
    files = sorted(os.path.join(root, f) for f in os.listdir(root)
                   if f not in ("expected.json", "SOURCES.md"))
    p = subprocess.run(["exiftool", "-j", "-n", "-G", "-a", "-EXIF:all"] + files,
                       capture_output=True, text=True)
    check(p.stdout.strip() != "", "exiftool ran: %s" % p.stderr[-300:])
    return {os.path.basename(e["SourceFile"]): e for e in json.loads(p.stdout or "[]")}


with open(os.path.join(media, "expected.json")) as f:
    oracle = {("media", e["SourceFile"]): e for e in json.load(f)}
for name, e in live_exiftool(real).items():
    oracle[("real", name)] = e

with tempdir("media") as work:
    db = os.path.join(work, "i.db")
    rc, out, err = run("scan", "--db", db, media, real)
    check(rc in (0, 1), "scan finishes (exit %d): %s" % (rc, err[-500:]))
    recs = {}
    for r in export(db):
        side = "media" if r["path"].startswith(os.path.realpath(media) + "/") else "real"
        recs[(side, os.path.basename(r["path"]))] = r

    compared = agreed = 0
    per_field = {}
    bad = []
    extras = []
    for key in sorted(oracle):
        r = recs.get(key)
        if r is None:
            check(False, "no record for %s" % (key,))
            continue
        read_exif = any(k.startswith("EXIF:") for k in oracle[key])
        for k, w in expected_fields(oracle[key]).items():
            g = r.get(k)
            if w is None and g is None:
                continue
            if w is None and not read_exif:
                extras.append("%s/%s: %s = %r" % (key[0], key[1], k, g))
                continue
            ok = w == g
            compared += 1
            agreed += ok
            s = per_field.setdefault(k, [0, 0])
            s[0] += ok
            s[1] += 1
            if not ok:
                bad.append("%s/%s: %s = %r, exiftool %r" % (key[0], key[1], k, g, w))
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
    check(compared >= 60, "enough values compared: %d" % compared)
    check(rate >= THRESHOLD, "agreement %.2f%% >= %.0f%%" % (100 * rate, 100 * THRESHOLD))

    # the upgrade: records as an older extractor left them
    before = {r["path"]: r for r in export(db)}
    with_tz = [p for p, r in before.items() if r["tz_offset"] or r["subsec"]]
    check(len(with_tz) >= 30, "files with the new fields: %d" % len(with_tz))
    stale_formats = db_rows(db, "SELECT count(*) FROM files WHERE deleted_at IS NULL AND"
                                " error IS NULL AND format IN ('jpeg', 'tiff', 'heic', 'png',"
                                " 'webp', 'dng', 'cr3', 'nef', 'arw')")[0][0]
    other = db_rows(db, "SELECT count(*) FROM files WHERE deleted_at IS NULL AND"
                        " (error IS NOT NULL OR format NOT IN ('jpeg', 'mpo', 'exv', 'png',"
                        " 'webp', 'tiff', 'bigtiff', 'cr2', 'nef', 'arw', 'dng', 'orf', 'rw2',"
                        " 'pef', 'srw', 'raf', 'mrw', 'heic', 'heif', 'avif', 'cr3', 'jp2')"
                        " OR format IS NULL)")[0][0]
    check(other > 10, "files of formats the upgrade does not touch: %d" % other)
    phashes = db_rows(db, "SELECT count(*) FROM files WHERE phash IS NOT NULL")[0][0]
    sql(db, "UPDATE files SET tz_offset = NULL, subsec = NULL, meta_version = NULL")
    rc, out, err = run("scan", "--json", "--db", db, media, real)
    summary = json.loads(out.splitlines()[-1]) if out.strip() else {}
    total = len(before)
    check(summary.get("upgraded", 0) == total - other,
          "every record of an EXIF format read again: %s of %d (%d others)" %
          (summary.get("upgraded"), total, other))
    check(summary.get("files_read") == total - other + summary.get("changed", 0),
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
    rc, out, err = run("scan", "--json", "--db", db, media, real)
    summary = json.loads(out.splitlines()[-1]) if out.strip() else {}
    # (files whose record holds an error are read by every scan)
    check(summary.get("upgraded") == 0 and summary.get("files_read") == summary.get("changed"),
          "then nothing else is read: %s upgraded, %s read, %s with errors" %
          (summary.get("upgraded"), summary.get("files_read"), summary.get("changed")))
    # --no-phash on the upgrade keeps the hashes it did not try: the same
    # files read again, and every hash and its source as it was
    hashes = db_rows(db, "SELECT path, phash, phash_src FROM files WHERE phash IS NOT NULL"
                         " ORDER BY path")
    check(len(hashes) == phashes, "hashes before the --no-phash upgrade: %d" % len(hashes))
    sql(db, "UPDATE files SET meta_version = NULL")
    rc, out, err = run("scan", "--no-phash", "--json", "--db", db, media, real)
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
    rc, out, err = run("scan", "--full", "--json", "--db", db, media, real)
    summary = json.loads(out.splitlines()[-1]) if out.strip() else {}
    check(summary.get("upgraded") == 0 and summary.get("files_read") == total,
          "--full: %s upgraded, %s of %d read" % (summary.get("upgraded"),
                                                  summary.get("files_read"), total))

done()
