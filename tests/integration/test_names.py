"""Hostile file names: bytes that are not UTF-8, newlines, tabs, quotes,
backslashes, a leading dash, a 255-byte name.  Each file is stored with its
exact bytes; JSON export stays valid UTF-8 JSON and carries the exact bytes
in path_hex where the name is not UTF-8; CSV export carries the bytes as
they are, quoted where needed; plan --json stays parseable."""
import csv
import io
import json
import os
import shutil
import sqlite3
import subprocess

from lib import BIN, check, done, mkcorpus, tempdir

NAMES = [b"bad\xff\xfename.jpg", b"latin1-caf\xe9.jpg", b"new\nline.jpg", b"tab\there.jpg",
         b'quote"d,comma.jpg', b"back\\slash.jpg", b"-leading-dash.jpg", b"\xe5\x86\x99.jpg",
         b"cr\rname.jpg", b"x" * 251 + b".jpg"]

with tempdir("names", base="/dev/shm") as work:
    src = os.path.join(work, "src")
    mkcorpus(src, "--files", 1, "--median", "20k", "--seed", 7, "--no-sync")
    one = next(os.path.join(d, f) for d, _, fs in os.walk(src) for f in fs)
    root = os.path.join(work, "tree").encode()
    os.makedirs(root)
    os.makedirs(root + b"/dir\xff\nsub")
    paths = [root + b"/" + n for n in NAMES] + [root + b"/dir\xff\nsub/inner.jpg"]
    for p in paths:
        shutil.copy(one, p)
    db = os.path.join(work, "i.db")
    p = subprocess.run([BIN, "scan", "--db", db, root], capture_output=True)
    check(p.returncode == 0, "scan: %d %r" % (p.returncode, p.stderr[-300:]))

    con = sqlite3.connect(db)
    con.text_factory = bytes
    stored = sorted(r[0] for r in con.execute("SELECT path FROM files"))
    errors = [r for r in con.execute("SELECT path, error FROM files WHERE error IS NOT NULL")]
    con.close()
    check(stored == sorted(paths), "every name stored with its exact bytes: %r" % stored[:3])
    check(errors == [], "every file read: %r" % errors)

    p = subprocess.run([BIN, "export", "--db", db], capture_output=True)
    check(p.returncode == 0, "export runs")
    recs = []
    for line in p.stdout.split(b"\n")[:-1]:
        try:
            recs.append(json.loads(line.decode("utf-8")))  # strict: valid UTF-8
        except (UnicodeDecodeError, ValueError) as e:
            check(False, "export line is valid UTF-8 JSON: %r %s" % (line[:80], e))
    check(len(recs) == len(paths), "one JSON line per file (newlines escaped)")
    exact = sorted(bytes.fromhex(r["path_hex"]) if "path_hex" in r else r["path"].encode()
                   for r in recs)
    check(exact == sorted(paths), "path, or path_hex where not UTF-8, gives the exact bytes")
    def utf8(b):
        try:
            b.decode("utf-8")
            return True
        except UnicodeDecodeError:
            return False

    # which names are UTF-8 is known from the names written, not from the
    # export: path_hex exactly for the others, path alone for these
    by = {(bytes.fromhex(r["path_hex"]) if "path_hex" in r else r["path"].encode()): r
          for r in recs}
    misplaced = [p for p in paths if p not in by or ("path_hex" in by[p]) == utf8(p)]
    check(not misplaced, "path_hex exactly where the name is not UTF-8: %r" % misplaced)
    check(sum(not utf8(p) for p in paths) == 3 and sum("path_hex" in r for r in recs) == 3,
          "three names are not UTF-8")

    p = subprocess.run([BIN, "export", "--db", db, "--format", "csv"], capture_output=True)
    rows = list(csv.reader(io.StringIO(p.stdout.decode("utf-8", "surrogateescape"),
                                       newline="")))
    got = sorted(r[0].encode("utf-8", "surrogateescape") for r in rows[1:])
    check(rows[0][0] == "path" and got == sorted(paths), "CSV carries the exact bytes")

    p = subprocess.run([BIN, "plan", "--json", root], capture_output=True)
    try:
        json.loads(p.stdout.decode("utf-8"))
        ok = True
    except (UnicodeDecodeError, ValueError):
        ok = False
    check(p.returncode == 0 and ok, "plan --json is valid UTF-8 JSON")
done()
