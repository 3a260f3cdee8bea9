"""Every example in README.md, docs/usage.md and the manual page runs as
written and does what its text says.

The examples are read out of the documents themselves (the lines of the
```sh and ```bash blocks of the two Markdown files, backslash continuations
joined and trailing comments dropped; the .nf/.EX blocks of the manual
page, groff escapes undone), so an example is tested the day it is
written: one that is neither in REGISTRY (its exit status and, where it
says something checkable, an independent check) nor in SKIP (with the
reason) fails this test, saying to add it.

They run as written, as root, through sh -c (bash for ```bash blocks), in
document order within a document, in a sandbox that makes the documented
paths real without touching the machine: the test runs in a private mount
namespace (unshare -m) whose root is a tmpfs holding binds of the real
top-level folders plus the ones the examples name:
  /media/photos   a real ext4 on a loop device, with copies of the shared
                  corpus's JPEGs, HEICs and RAWs, a mkcorpus tree, a few
                  movies, photos tagged with exiftool (an EOS R5 in Paris,
                  ratings, keywords, a label, a raw+jpeg pair), a copy, a
                  hard link, names with spaces and a JPEG cut before its
                  image (an error: scans of the tree exit 1, as the
                  corpus's broken files would make them anyway)
  /media/old-card a second ext4, indexed and then unplugged before the
                  examples of a document that names it (`purge
                  --file-system`)
  /backup, /var/tmp  tmpfs (/backup/raw a folder, /var/tmp/last-import the
                  marker of the last import)
and per document a fresh HOME (the default index is
~/.local/share/seekless/index.db) and working folder (holding links to the
source tree's dist/, tools/, tests/ and build/, for the README's
source-tree commands); PATH starts with a folder whose `seekless` is the
build under test.

Some examples need a state the documents take for granted; a registry
entry's `before` makes it: a photo deleted before `scan --full`, photos
imported after /var/tmp/last-import before the `find -newer` example.  A
leading `sudo` is kept (and reported) unless the document says the
commands run "with sudo elsewhere".

Each check is independent of seekless: tar's listing (Python's tarfile)
against find, counts against os.walk and SQLite on the index, query
results against exiftool's reading of the files, duplicates against
xxhsum, the SVG through an XML parser, offsets against filefrag.  The
test ends with how many examples it found, ran, checked and skipped (and
why); -v shows each example's exit status and first lines of output.
"""
import csv
import io
import json
import math
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tarfile
import tempfile
import time
import xml.etree.ElementTree as ET

from lib import (BIN, check, db_rows, done, filefrag, loop_fs, mkcorpus, need_root, regular_files,
                 skip, sync_fs, xxh128)

SRC = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
DOCS = ["README.md", "docs/usage.md", "docs/seekless.1"]
CORPUS = os.environ.get("SEEKLESS_CORPUS") or os.path.join(SRC, "..", "shared", "corpus", "real")
MEDIA = os.environ.get("SEEKLESS_MEDIA") or os.path.join(os.path.dirname(CORPUS), "media")
PHOTOS = "/media/photos"
CARD = "/media/old-card"
NS_MARK = "SEEKLESS_EXAMPLES_NS"
VERBOSE = "-v" in sys.argv[1:]  # each example's exit status, time and first lines

# ---------------------------------------------------------------------------
# Extracting the examples


def shell_words_end(line):
    """line without a trailing `# comment` (a # that starts a word outside
    quotes)."""
    quote = None
    i = 0
    while i < len(line):
        c = line[i]
        if quote:
            if c == "\\" and quote == '"':
                i += 1
            elif c == quote:
                quote = None
        elif c == "\\":
            i += 1
        elif c in "'\"":
            quote = c
        elif c == "#" and (i == 0 or line[i - 1] in " \t"):
            return line[:i].rstrip()
        i += 1
    return line.rstrip()


def md_examples(rel):
    """[(line number, shell, command)] from a Markdown file's ```sh/```bash
    blocks; also complains about command-looking lines in untagged blocks
    (they would never be run)."""
    out, lang, pending = [], None, None
    with open(os.path.join(SRC, rel)) as f:
        lines = f.read().split("\n")
    for no, line in enumerate(lines, 1):
        if line.lstrip().startswith("```"):
            lang = line.strip()[3:].strip().lower() if lang is None else None
            continue
        if lang is None:
            continue
        if lang not in ("sh", "bash", "shell"):
            check(not (lang == "" and re.match(r"\s*(\$ |sudo |seekless )", line)),
                  "%s:%d: a command in an untagged ``` block is never tested: tag the block "
                  "```sh: %s" % (rel, no, line.strip()))
            continue
        if pending is not None:
            line = pending[1] + " " + line.strip()
            start = pending[0]
            pending = None
        else:
            start = no
        if line.rstrip().endswith("\\"):
            pending = (start, line.rstrip()[:-1].rstrip())
            continue
        cmd = shell_words_end(line).strip()
        if not cmd or cmd.startswith("#"):
            continue
        out.append((start, "bash" if lang == "bash" else "sh", cmd))
    return out


def groff_text(s):
    for a, b in (("\\-", "-"), ("\\(dq", '"'), ("\\(aq", "'"), ("\\(ga", "`"), ("\\(ti", "~"),
                 ("\\(ha", "^"), ("\\e", "\\"), ("\\&", ""), ("\\ ", " ")):
        s = s.replace(a, b)
    return re.sub(r"\\f(\(..|\[[^]]*\]|.)", "", s)


def man_examples(rel):
    """[(line number, "sh", command)]: the text lines of the manual page's
    .nf/.fi and .EX/.EE blocks, and lines starting with "seekless " or
    "sudo " anywhere in its EXAMPLES section."""
    out, section, block, pending = [], None, False, None
    with open(os.path.join(SRC, rel)) as f:
        lines = f.read().split("\n")
    for no, line in enumerate(lines, 1):
        if line.startswith(".SH"):
            section = line[3:].strip().strip('"').upper()
            continue
        if line.startswith((".nf", ".EX")):
            block = True
            continue
        if line.startswith((".fi", ".EE")):
            block = False
            continue
        if line.startswith((".", "'")):
            continue
        if not block and not (section == "EXAMPLES" and re.match(r"(seekless|sudo) ", line)):
            continue
        if pending is not None:
            start, line = pending[0], pending[1] + line
            pending = None
        else:
            start = no
        if line.endswith("\\") and not line.endswith("\\\\"):
            pending = (start, line[:-1])
            continue
        cmd = shell_words_end(groff_text(line)).strip()
        if cmd and not cmd.startswith("#"):
            out.append((start, "sh", cmd))
    return out


def examples(rel):
    return man_examples(rel) if rel.endswith(".1") else md_examples(rel)


def norm(cmd):
    return " ".join(cmd.split())


# ---------------------------------------------------------------------------
# Independent oracles


def sql(db, q, args=()):
    return db_rows(db, q, args)


def live_paths(db, under=PHOTOS):
    return {r[0] for r in sql(db, "SELECT path FROM files WHERE deleted_at IS NULL AND "
                                  "substr(path, 1, ?) = ?", (len(under) + 1, under + "/"))}


def tree():
    """Every regular file below /media/photos, by os.walk."""
    return set(regular_files(PHOTOS))


EXIF_TAGS = ["-FileType", "-Make", "-Model", "-DateTimeOriginal", "-CreateDate",
             "-Composite:GPSLatitude", "-Composite:GPSLongitude", "-Rating", "-Label",
             "-Keywords", "-Subject", "-HierarchicalSubject"]
_exif = {}


def exif(paths):
    """exiftool's reading of each file (cached by path and mtime)."""
    todo = [p for p in paths if _exif.get(p, (None,))[0] != os.stat(p).st_mtime_ns]
    if todo:
        with tempfile.NamedTemporaryFile("w", suffix=".args", delete=False) as f:
            f.write("\n".join(todo) + "\n")
        p = subprocess.run(["exiftool", "-q", "-q", "-j", "-n", "-charset", "filename=utf8",
                            "-@", f.name] + EXIF_TAGS, capture_output=True, text=True)
        os.unlink(f.name)
        got = {e["SourceFile"]: e for e in json.loads(p.stdout or "[]")}
        for t in todo:
            _exif[t] = (os.stat(t).st_mtime_ns, got.get(t, {}))
    return {p: _exif[p][1] for p in paths}


VIDEO = {"MOV", "MP4", "M4V", "3GP", "3G2", "AVI"}
RAW = {"DNG", "CR2", "CR3", "CRW", "NEF", "ARW", "ORF", "RAF", "RW2", "MRW", "PEF", "SRW"}


def as_list(v):
    if v is None:
        return []
    return [str(x) for x in v] if isinstance(v, list) else [str(v)]


def taken(e):
    """YYYY-MM-DD HH:MM:SS when the picture was taken (a movie: when it was
    recorded), by exiftool; None when it does not say."""
    for k in ("DateTimeOriginal",) + (("CreateDate",) if e.get("FileType") in VIDEO else ()):
        v = str(e.get(k) or "")
        if re.match(r"\d{4}:\d\d:\d\d", v) and not v.startswith("0000"):
            return v[:10].replace(":", "-") + v[10:19]
    return None


def file_type(e):
    """exiftool's FileType, but a JPEG whose EXIF carries a DNGVersion is a
    JPEG (exiftool calls it DNG): a DNG is a TIFF."""
    t = str(e.get("FileType", ""))
    if t == "DNG":
        with open(e["SourceFile"], "rb") as f:
            if f.read(4) not in (b"II*\0", b"MM\0*"):
                return "JPEG"
    return t


def km(lat1, lon1, lat2, lon2):
    p1, p2 = math.radians(lat1), math.radians(lat2)
    a = (math.sin((p2 - p1) / 2) ** 2 +
         math.cos(p1) * math.cos(p2) * math.sin(math.radians(lon2 - lon1) / 2) ** 2)
    return 2 * 6371.0 * math.asin(math.sqrt(a))


def query_expected(args):
    """The files `seekless query ARGS` should print, by exiftool over
    os.walk.  Understands what the documented examples use."""
    conds = []
    i = 0
    while i < len(args):
        a = args[i]
        v = args[i + 1] if i + 1 < len(args) else None
        if a == "--camera":
            t = v.lower()
            conds.append(lambda e, t=t: t in str(e.get("Make", "")).lower() or
                         t in str(e.get("Model", "")).lower())
        elif a in ("--from", "--to"):
            lo = a == "--from"
            conds.append(lambda e, v=v, lo=lo: taken(e) is not None and
                         (taken(e)[:len(v)] >= v if lo else taken(e)[:len(v)] <= v))
        elif a == "--near":
            la, lo_, r = (float(x) for x in v.split(","))
            conds.append(lambda e, la=la, lo_=lo_, r=r: isinstance(e.get("GPSLatitude"), float)
                         and isinstance(e.get("GPSLongitude"), float)
                         and km(la, lo_, e["GPSLatitude"], e["GPSLongitude"]) <= r)
        elif a == "--rating":
            lo_s, _, hi_s = v.partition("..") if ".." in v else (v, None, v)
            lo_r = int(lo_s) if lo_s else -1
            hi_r = int(hi_s) if hi_s else 5
            conds.append(lambda e, a=lo_r, b=hi_r: isinstance(e.get("Rating"), int) and
                         a <= e["Rating"] <= b)
        elif a == "--keyword":
            k = v.lower()

            def has(e, k=k):
                flat = [x.lower() for x in as_list(e.get("Keywords")) + as_list(e.get("Subject"))]
                hier = [x.lower() for x in as_list(e.get("HierarchicalSubject"))]
                return k in flat or any(h == k or h.split("|")[-1] == k for h in hier)
            conds.append(has)
        elif a == "--label":
            conds.append(lambda e, v=v: str(e.get("Label", "")).lower() == v.lower())
        elif a == "--video":
            conds.append(lambda e: e.get("FileType") in VIDEO)
            i -= 1
        elif a == "--format":
            conds.append(lambda e, v=v: file_type(e).lower() == v.lower())
        elif a in ("--json", "--csv", "-0", "--print0"):
            i -= 1
        else:
            raise ValueError("query_expected: %s" % a)
        i += 2
    files = sorted(tree())
    return {p for p, e in exif(files).items() if all(c(e) for c in conds)}


def query_output(args, stdout):
    if "--json" in args:
        return [json.loads(l)["path"] for l in stdout.splitlines() if l.strip()]
    if "-0" in args or "--print0" in args:
        return [x for x in stdout.split("\0") if x]
    if "--csv" in args:
        rows = list(csv.reader(io.StringIO(stdout)))
        return [r[rows[0].index("path")] for r in rows[1:]]
    return stdout.splitlines()


# ---------------------------------------------------------------------------
# The checks: each gets the context, the example, the completed process and
# the registry pattern's match, and returns nothing (lib.check records).


class Ctx:
    def __init__(self, doc, home, work, env):
        self.doc, self.home, self.work, self.env = doc, home, work, env
        self.db = os.path.join(home, ".local", "share", "seekless", "index.db")
        self.before = {}

    def path(self, p):
        """A path as the example's shell sees it."""
        if p.startswith("~/"):
            p = os.path.join(self.home, p[2:])
        return p if os.path.isabs(p) else os.path.join(self.work, p)

    def dbof(self, m):
        return self.path(m.group("db")) if m.groupdict().get("db") else self.db


STATE = {"generation": 0, "scanned": {}, "deleted": None, "imported": [], "cut": None}


def say(ex, what):
    return "%s:%d: `%s`: %s" % (ex[0], ex[1], ex[3], what)


def chk_scan(ctx, ex, p, m):
    db = ctx.dbof(m)
    if not check(os.path.exists(db), say(ex, "no index at %s" % db)):
        return
    files, recs = tree(), live_paths(db)
    check(recs == files, say(ex, "live records are os.walk's files: %d records, %d files, "
                                 "missing %s, extra %s" % (len(recs), len(files),
                                                            sorted(files - recs)[:3],
                                                            sorted(recs - files)[:3])))
    check(sql(db, "SELECT count(*) FROM files WHERE deleted_at IS NULL AND error IS NOT NULL "
                  "AND path = ?", (STATE["cut"],))[0][0] == 1,
          say(ex, "the cut JPEG is recorded with its error (the reason for exit status 1)"))
    last = sql(db, "SELECT id, unchanged, changed, added, retried, files FROM scans "
                   "WHERE command = 'scan' ORDER BY id DESC LIMIT 1")
    sid, unchanged, changed, added, retried, nread = last[0]
    order = m.groupdict().get("order")
    if order:
        used = sql(db, "SELECT DISTINCT order_used FROM scan_devices WHERE scan_id = ?", (sid,))
        check([r[0] for r in used] == [order], say(ex, "read in order %s: %s" % (order, used)))
    prev = STATE["scanned"].get(db)
    if "--full" in ex[3]:
        check(nread in (len(files), len(plan_inodes(files))),
              say(ex, "--full rereads everything: %d files read of %d" % (nread, len(files))))
        gone = STATE["deleted"]
        check(sql(db, "SELECT count(*) FROM files WHERE path = ? AND deleted_at IS NOT NULL",
                  (gone,))[0][0] == 1, say(ex, "the photo deleted since is marked deleted"))
    elif prev is None:
        check(added == len(files), say(ex, "a first scan: %d new, os.walk finds %d"
                                           % (added, len(files))))
    elif prev == STATE["generation"]:
        # "again: reads only new and changed files": nothing was
        check(added == 0 and changed == 0 and unchanged + retried == len(files),
              say(ex, "a scan of an unchanged tree reads only the files with errors again: "
                      "unchanged %d + retried %d of %d, changed %d, new %d"
                      % (unchanged, retried, len(files), changed, added)))
    STATE["scanned"][db] = STATE["generation"]


def chk_quick(ctx, ex, p, m):
    """A quick scan: recorded as one; the photos here are all smaller than
    the least a pipeline holds whole (16 MiB), so none is left pending."""
    chk_scan(ctx, ex, p, m)
    db = ctx.dbof(m)
    last = sql(db, "SELECT quick FROM scans WHERE command = 'scan' ORDER BY id DESC LIMIT 1")
    check(last == [(1,)], say(ex, "the scan is recorded as quick: %s" % last))
    big = [f for f in tree() if os.path.getsize(f) > 16 << 20]
    pending = sql(db, "SELECT count(*) FROM files WHERE deleted_at IS NULL AND error IS NULL"
                      " AND content_hash IS NULL")[0][0]
    check(pending == len(big) == 0,
          say(ex, "no photo over 16 MiB, none pending: %d over, %d pending" % (len(big), pending)))


def index_state(ctx):
    out = []
    for suffix in ("", "-wal"):
        try:
            st = os.stat(ctx.db + suffix)
            out.append((st.st_size, st.st_mtime_ns))
        except FileNotFoundError:
            out.append(None)
    return out


def before_plan(ctx, ex):
    ctx.before["index"] = index_state(ctx)


def chk_untouched(ctx, ex, p=None, m=None):
    """plan: "Nothing is read and the index is not touched"."""
    check(index_state(ctx) == ctx.before["index"], say(ex, "the index is not touched"))


def plan_inodes(paths):
    return {(os.stat(x).st_dev, os.stat(x).st_ino) for x in paths}


def chk_plan_table(ctx, ex, p, m):
    chk_untouched(ctx, ex)
    rows = [l.split("\t") for l in p.stdout.splitlines() if l and not l.startswith("#")]
    check(rows and rows[0][-1] == "path", say(ex, "a table with a path column"))
    paths = [r[-1] for r in rows[1:]]
    files = tree()
    check(set(paths) <= files and plan_inodes(paths) == plan_inodes(files) and
          len(paths) == len(plan_inodes(files)),
          say(ex, "every file once (a hard-linked one under one name): %d rows, %d files, "
                  "%d inodes" % (len(paths), len(files), len(plan_inodes(files)))))
    offs = [int(r[0]) for r in rows[1:] if r[0] != "-"]
    check(offs == sorted(offs), say(ex, "in ascending physical order"))


def chk_plan_json(ctx, ex, p, m):
    chk_untouched(ctx, ex)
    d = json.loads(p.stdout)
    entries = d["files"]
    named = sorted([e["path"] for e in entries] + [n for e in entries for n in e["other_names"]])
    check(named == sorted(tree()), say(ex, "path and other_names name every file os.walk "
                                           "finds: %d of %d" % (len(named), len(tree()))))
    offs = [e["phys_offset"] for e in entries if e["phys_offset"] is not None]
    check(offs == sorted(offs) and len(offs) >= len(entries) - 3,
          say(ex, "--order physical: ascending offsets"))
    # the offsets are filefrag's (a few files, across the tree)
    placed = [e for e in entries if e["phys_offset"] is not None and e["fragments"] == 1]
    for e in placed[::max(1, len(placed) // 6)]:
        first, _ = filefrag(e["path"])
        check(first == e["phys_offset"], say(ex, "%s at %s, filefrag: %s"
                                                 % (e["path"], e["phys_offset"], first)))


def chk_export_jsonl(ctx, ex, p, m):
    db = ctx.dbof(m)
    out = ctx.path(m.group("out"))
    with open(out) as f:
        lines = f.read().splitlines()
    recs = [json.loads(l) for l in lines]
    live = sql(db, "SELECT count(*) FROM files WHERE deleted_at IS NULL")[0][0]
    check(len(recs) == live, say(ex, "one JSON line per live record: %d lines, SQLite counts %d"
                                     % (len(recs), live)))
    mine = {r["path"] for r in recs if r["path"].startswith(PHOTOS + "/")}
    check(mine == tree(), say(ex, "the photos' lines are os.walk's files: %d of %d"
                                  % (len(mine), len(tree()))))
    hashes = xxh128(sorted(tree())[:40])
    by_path = {r["path"]: r for r in recs}
    check(all(by_path.get(k, {}).get("content_hash") == v for k, v in hashes.items()),
          say(ex, "content_hash is xxhsum -H2's"))


def chk_export_csv(ctx, ex, p, m):
    db = ctx.dbof(m)
    with open(ctx.path(m.group("out")), newline="") as f:
        rows = list(csv.reader(f))
    live = sql(db, "SELECT count(*) FROM files WHERE deleted_at IS NULL")[0][0]
    check(rows and "path" in rows[0] and len(rows) - 1 == live,
          say(ex, "a header and a row per live record: %d rows, SQLite counts %d"
                  % (len(rows) - 1, live)))
    if rows and "path" in rows[0]:
        i = rows[0].index("path")
        mine = {r[i] for r in rows[1:] if r[i].startswith(PHOTOS + "/")}
        check(mine == tree(), say(ex, "the photos' rows are os.walk's files"))


ORDERS = ["physical", "first-extent", "inode", "path", "fs", "random"]


def chk_report(ctx, ex, p, m):
    """One HTML page with the sections the comment's 'all of it' names, its
    file count the index's (the browser test, test_report, checks the rest)."""
    try:
        page = open(ctx.path(m.group("out")), encoding="utf-8").read()
    except OSError as e:
        check(False, say(ex, "no page: %s" % e))
        return
    check(page.startswith("<!DOCTYPE html>"), say(ex, "an HTML page"))
    check(all('<section id="%s">' % s in page for s in ("glance", "history", "bench", "dupes",
                                                         "errors")),
          say(ex, "every section"))
    n = sql(ctx.db, "SELECT count(*) FROM files WHERE deleted_at IS NULL")[0][0]
    check('id="total-files" data-v="%d"' % n in page, say(ex, "the index's %d files" % n))


def chk_bench(ctx, ex, p, m):
    svg = ctx.path(m.group("svg"))
    try:
        root = ET.parse(svg).getroot()
    except (OSError, ET.ParseError) as e:
        check(False, say(ex, "%s is not valid XML: %s" % (svg, e)))
        return
    check(root.tag == "{http://www.w3.org/2000/svg}svg", say(ex, "an SVG: %s" % root.tag))
    texts = " ".join(t.text or "" for t in root.iter("{http://www.w3.org/2000/svg}text"))
    check(all("order %s:" % o in texts for o in ORDERS),
          say(ex, "a picture per order, every order (the comment: 'in every order')"))
    rows = sql(ctx.db, "SELECT order_requested, count(*) FROM scans WHERE command = 'bench' "
                       "GROUP BY order_requested")
    check(sorted(r[0] for r in rows) == sorted(ORDERS) and all(r[1] == 3 for r in rows),
          say(ex, "3 runs of every order recorded in the index: %s" % rows))


def chk_query(ctx, ex, p, m):
    args = shlex.split(m.group("args"))
    got = query_output(args, p.stdout)
    want = query_expected(args)
    check(len(got) == len(set(got)), say(ex, "each file once"))
    check(set(got) == want, say(ex, "exiftool finds %d: missing %s, extra %s"
                                    % (len(want), sorted(want - set(got))[:4],
                                       sorted(set(got) - want)[:4])))
    check(want, say(ex, "the sandbox has files this query finds (else the check is empty)"))


def chk_query_errors(ctx, ex, p, m):
    want = {r[0] for r in sql(ctx.db, "SELECT path FROM files WHERE deleted_at IS NULL "
                                      "AND error IS NOT NULL")}
    got = set(p.stdout.splitlines())
    check(got == want and STATE["cut"] in got,
          say(ex, "the records SQLite has with an error, the cut JPEG among them: %d of %d"
                  % (len(got), len(want))))


def chk_cp_raw(ctx, ex, p, m):
    dest = m.group("dest")
    want = query_expected(["--format", m.group("fmt")])
    copied = sorted(os.listdir(dest))
    check(sorted(os.path.basename(w) for w in want) == copied,
          say(ex, "%s holds exiftool's %s files: %s" % (dest, m.group("fmt"), copied)))
    a = xxh128(sorted(want))
    b = xxh128([os.path.join(dest, os.path.basename(w)) for w in sorted(want)])
    check(sorted(a.values()) == sorted(b.values()), say(ex, "the copies' bytes (xxhsum)"))


def chk_pairs(ctx, ex, p, m):
    kinds = [l.split("\t") for l in p.stdout.splitlines()]
    check(all(k[0] in ("raw+jpeg", "live", "motion") and len(k) >= 3 for k in kinds),
          say(ex, "tab-separated kind and paths: %s" % kinds[:2]))
    got = {frozenset(k[1:]) for k in kinds if k[0] == "raw+jpeg"}
    ex_ = exif(sorted(tree()))
    groups = {}
    for path, e in ex_.items():
        stem = os.path.splitext(path)[0].lower()
        groups.setdefault((stem, taken(e)), []).append((path, e.get("FileType")))
    want = set()
    for (stem, when), members in groups.items():
        raws = [q for q, t in members if t in RAW]
        stills = [q for q, t in members if t in ("JPEG", "HEIC", "HEIF")]
        if when and raws and stills:
            want.add(frozenset(raws + stills))
    check(got == want and want, say(ex, "raw+jpeg groups as exiftool's types, names and dates "
                                        "make them: %s against %s" % (got, want)))


def before_near(ctx, ex):
    """The documents take an index whose pictures are hashed for granted; a
    scan leaves hashes for the next one while the disk is faster than
    hashing, as under ASan here (the README's example once found the copies
    without theirs).  A scan that waits for every hash makes it so."""
    p = subprocess.run([BIN, "scan", "--phash-now", "--quiet", "--db", ctx.db, PHOTOS],
                       env=ctx.env, capture_output=True, text=True)
    check(p.returncode in (0, 1), say(ex, "setup: scan --phash-now: %d %s"
                                          % (p.returncode, p.stderr[-300:])))


def text_groups(out):
    """dupes' text: a heading line per group, then its paths indented."""
    groups, cur = [], None
    for l in out.splitlines():
        if l.startswith("  /"):
            cur.add(l[2:])
        elif l.strip():
            cur = set()
            groups.append(cur)
    return groups


def chk_dupes(ctx, ex, p, m):
    if "--json" in ex[3]:
        groups = [set(json.loads(l)["paths"]) for l in p.stdout.splitlines() if l.strip()]
    else:
        groups = text_groups(p.stdout)
    check(groups and all(g <= tree() for g in groups), say(ex, "groups of files in the tree"))
    hashed = {r[0] for r in sql(ctx.db, "SELECT path FROM files WHERE deleted_at IS NULL AND "
                                        "phash IS NOT NULL")}
    by_hash = {}
    for path, h in xxh128(sorted(tree())).items():
        by_hash.setdefault(h, set()).add(path)
    same = [g & hashed for g in by_hash.values() if len(g & hashed) > 1]
    check(same, say(ex, "the sandbox has identical pictures (a copy, a hard link)"))
    for g in same:
        check(any(g <= n for n in groups),
              say(ex, "identical files (xxhsum) in one near group: %s" % sorted(g)))


def chk_dupes_no_read(ctx, ex, p, m):
    """Groups of files that xxhsum finds identical; nothing read (no scan
    row with the command dupes)."""
    groups = text_groups(p.stdout)
    hashes = xxh128(sorted(tree()))
    check(groups and all(g <= tree() and len({hashes[f] for f in g}) == 1 for g in groups),
          say(ex, "groups of identical files (xxhsum): %s" % groups[:2]))
    check(not sql(ctx.db, "SELECT 1 FROM scans WHERE command = 'dupes'") and
          "reading" not in p.stderr, say(ex, "nothing read: %s" % p.stderr[-200:]))


def stats_expect(db):
    live = sql(db, "SELECT count(*), coalesce(sum(size), 0), "
                   "count(error) FROM files WHERE deleted_at IS NULL")[0]
    deleted = sql(db, "SELECT count(*) FROM files WHERE deleted_at IS NOT NULL")[0][0]
    formats = dict(sql(db, "SELECT coalesce(format, '(unknown)'), count(*) FROM files "
                           "WHERE deleted_at IS NULL GROUP BY 1"))
    return live, deleted, formats


def chk_stats(ctx, ex, p, m):
    (n, size, errors), deleted, formats = stats_expect(ctx.db)
    first = p.stdout.split("\n", 1)[0]
    head = [re.search(r, first) for r in (r"files: (\d+)", r"(\d+) (with )?errors?",
                                          r"(\d+) marked deleted")]
    check(all(head) and [int(h.group(1)) for h in head] == [n, errors, deleted],
          say(ex, "files, errors, deleted as SQLite counts them (%d, %d, %d): %s"
                  % (n, errors, deleted, first)))
    part = p.stdout.split("by format:")[1].split("\n\n")[0] if "by format:" in p.stdout else ""
    got = {}
    for l in part.strip().splitlines():
        mm = re.match(r"\s*(\d+)\s+[\d.]+ MB\s+(.*)$", l)
        if mm:
            got[mm.group(2)] = int(mm.group(1))
    check(got == formats, say(ex, "by format, as SQLite groups: %s against %s" % (got, formats)))
    check(len(tree()) <= n, say(ex, "at least os.walk's files"))
    # "by file system": each the index knows with live records, by identity
    part = p.stdout.split("by file system")[1].split("\n\n")[0] if "by file system" in p.stdout \
        else ""
    for ident, count in sql(ctx.db, "SELECT ident, count(f.id) FROM filesystems s JOIN files f "
                                    "ON f.fs_id = s.id AND f.deleted_at IS NULL GROUP BY s.id"):
        check(re.search(r"^\s*%d\s.*\s%s\s" % (count, re.escape(ident)), part, re.M),
              say(ex, "file system %s with its %d records: %s" % (ident, count, part[:300])))


def chk_stats_json(ctx, ex, p, m):
    d = json.loads(p.stdout)
    (n, size, errors), deleted, formats = stats_expect(ctx.db)
    check((d["files"], d["bytes"], d["errors"], d["deleted"]) == (n, size, errors, deleted),
          say(ex, "files, bytes, errors, deleted as SQLite counts them"))
    check({f["name"]: f["files"] for f in d["formats"]} == formats, say(ex, "by format"))
    want = int(m.group("n"))
    scans = sql(ctx.db, "SELECT count(*) FROM scans WHERE command <> 'bench'")[0][0]
    check(len(d["scans"]) == min(want, scans), say(ex, "the last %d scans: %d (SQLite: %d)"
                                                       % (want, len(d["scans"]), scans)))


def chk_tar(ctx, ex, p, m):
    chk_untouched(ctx, ex)
    tar = ctx.path(m.group("tar"))
    with tarfile.open(tar) as t:
        in_tar = sorted("/" + x.name for x in t.getmembers() if not x.isdir())
    f = subprocess.run(["find", PHOTOS, "-type", "f", "-print0"], capture_output=True)
    found = sorted(x.decode() for x in f.stdout.split(b"\0") if x)
    check(in_tar == found, say(ex, "tar's listing is find's: %d against %d, missing %s"
                                   % (len(in_tar), len(found), sorted(set(found) -
                                                                        set(in_tar))[:3])))


def chk_conf(ctx, ex, p, m):
    with open(os.path.join(SRC, "dist", "systemd", "seekless.conf"), "rb") as a, \
            open(os.path.join(ctx.home, ".config", "seekless", "config"), "rb") as b:
        check(a.read() == b.read(), say(ex, "the sample configuration copied"))


def chk_status(ctx, ex, p, m):
    conf = os.path.join(ctx.home, ".config", "seekless", "config")
    check("config: %s" % conf in p.stdout and "index: %s" % ctx.db in p.stdout,
          say(ex, "names the user's configuration and index: %s" % p.stdout[:400]))
    # "last scans": the index's last five, bench's runs left out
    shown = re.findall(r"^  #(\d+) \S+ (\w+)", p.stdout, re.M)
    want = sql(ctx.db, "SELECT id FROM scans WHERE command <> 'bench' ORDER BY id DESC LIMIT 5")
    check([int(i) for i, c in shown] == [r[0] for r in want],
          say(ex, "the last scans as SQLite lists them, bench's left out: %s against %s"
                  % (shown, want)))


def chk_export_scans(ctx, ex, p, m):
    n = sql(ctx.db, "SELECT count(*) FROM scans")[0][0]
    if "csv" in ex[3]:
        rows = list(csv.reader(io.StringIO(p.stdout)))[1:]
    else:
        rows = [json.loads(l) for l in p.stdout.splitlines()]
    check(len(rows) == n, say(ex, "a row per scan, bench's runs too: %d, SQLite counts %d"
                                  % (len(rows), n)))


def before_purge(ctx, ex):
    ctx.before["purge"] = (
        sql(ctx.db, "SELECT count(*) FROM files WHERE deleted_at IS NULL")[0][0],
        sql(ctx.db, "SELECT count(*) FROM files WHERE deleted_at IS NOT NULL")[0][0])


def chk_purge_older(ctx, ex, p, m):
    days = int(m.group("days"))
    live0, deleted0 = ctx.before["purge"]
    old = sql(ctx.db, "SELECT count(*) FROM files WHERE deleted_at IS NOT NULL AND "
                      "julianday(deleted_at) < julianday('now') - ?", (days,))[0][0]
    live, deleted = (sql(ctx.db, "SELECT count(*) FROM files WHERE deleted_at IS NULL")[0][0],
                     sql(ctx.db, "SELECT count(*) FROM files WHERE deleted_at IS NOT NULL")[0][0])
    check(old == 0 and live == live0 and deleted == deleted0 and deleted0 >= 1,
          say(ex, "the live records (%d, %d before) and those deleted today (%d, %d before) "
                  "stay; none deleted over %d days ago (%d)" % (live, live0, deleted, deleted0,
                                                                days, old)))


def chk_purge_fs(ctx, ex, p, m):
    live0, deleted0 = ctx.before["purge"]
    card = sql(ctx.db, "SELECT count(*) FROM files WHERE substr(path, 1, ?) = ?",
               (len(CARD) + 1, CARD + "/"))[0][0]
    check(card == 0 and live_paths(ctx.db) == tree() and ctx.before["card"] > 0,
          say(ex, "the card's %d records are gone (%d left), the photos' kept"
                  % (ctx.before["card"], card)))
    check(sql(ctx.db, "SELECT count(*) FROM filesystems WHERE mount = ?", (CARD,))[0][0] == 0,
          say(ex, "the card's file system forgotten"))


def before_purge_fs(ctx, ex):
    before_purge(ctx, ex)
    ctx.before["card"] = sql(ctx.db, "SELECT count(*) FROM files WHERE substr(path, 1, ?) = ?",
                             (len(CARD) + 1, CARD + "/"))[0][0]


def chk_purge_dry(ctx, ex, p, m):
    card = sql(ctx.db, "SELECT count(*) FROM files WHERE substr(path, 1, ?) = ?",
               (len(CARD) + 1, CARD + "/"))[0][0]
    got = re.search(r"would remove (\d+) records", p.stdout)
    check(got and int(got.group(1)) == card and card == ctx.before["card"] and card > 0,
          say(ex, "says the %d records SQLite has on the card: %r" % (card, p.stdout[-200:])))
    check(live_paths(ctx.db) == tree(), say(ex, "nothing removed"))


def chk_query_leap(ctx, ex, p, m):
    got = set(p.stdout.splitlines())
    want = {path for path, e in exif(sorted(tree())).items()
            if e.get("FileType") == "JPEG" and taken(e) and taken(e)[:10] == "2024-02-29"}
    check(got == want and want, say(ex, "exiftool's JPEGs taken on 2024-02-29: %d, got %d"
                                       % (len(want), len(got))))


def before_full(ctx, ex):
    """A photo deleted since the last scan (what --full applies as any scan)."""
    victim = sorted(x for x in tree() if "/mk/" in x)[0]
    os.unlink(victim)
    STATE["deleted"] = victim
    STATE["generation"] += 1


def before_import(ctx, ex):
    """New photos copied after the marker /var/tmp/last-import."""
    dest = os.path.join(PHOTOS, "2024", "2024-05-02 Import")
    os.makedirs(dest, exist_ok=True)
    srcs = ["exif-samples__jpg__Nikon_D70.jpg", "exiftool__Pentax.jpg",
            "metadata-extractor-images__jpg__Canon EOS 7D.jpg"]
    for s in srcs:
        shutil.copyfile(os.path.join(CORPUS, s), os.path.join(dest, "new " + s))
    STATE["imported"] = [os.path.join(dest, "new " + s) for s in srcs]
    STATE["generation"] += 1


def chk_files_from(ctx, ex, p, m):
    marker = os.stat("/var/tmp/last-import").st_mtime_ns
    newer = {x for x in tree() if os.stat(x).st_mtime_ns > marker}
    check(newer == set(STATE["imported"]), say(ex, "the newer files are the imported ones"))
    sid = sql(ctx.db, "SELECT max(id) FROM scans WHERE command = 'scan'")[0][0]
    read = {r[0] for r in sql(ctx.db, "SELECT path FROM files WHERE deleted_at IS NULL AND "
                                      "last_scan = ?", (sid,))}
    check(read == newer, say(ex, "exactly the listed files indexed by the last scan: %s"
                                 % sorted(read)[:4]))
    check(live_paths(ctx.db) == tree(), say(ex, "no other record touched or marked deleted"))


# The registry: a regular expression over the example (whitespace
# collapsed) -> exit status and check.  Status 1 where the scan reads the
# tree's photos that cannot be read (the cut JPEG, the corpus's broken
# files): "1 finished but some files had errors".
S = r"seekless"
REGISTRY = [
    (S + r" scan( --db (?P<db>\S+))?( --order (?P<order>\S+))? /media/photos", 1,
     chk_scan, None),
    (S + r" scan --full /media/photos", 1, chk_scan, before_full),
    (S + r" scan --quick /media/photos", 1, chk_quick, None),
    (S + r" plan /media/photos", 0, chk_plan_table, before_plan),
    (S + r" plan --json --order physical /media/photos", 0, chk_plan_json, before_plan),
    (S + r" export( --db (?P<db>\S+))? > (?P<out>\S+\.jsonl)", 0, chk_export_jsonl, None),
    (S + r" export( --db (?P<db>\S+))? --format csv > (?P<out>\S+)", 0, chk_export_csv, None),
    (S + r" export --scans( --format csv)?", 0, chk_export_scans, None),
    (S + r" bench --svg (?P<svg>\S+) /media/photos", 0, chk_bench, None),
    (S + r" report -o (?P<out>\S+\.html)", 0, chk_report, None),
    (S + r" query (?P<args>(--(camera|from|to|near|rating|keyword|label) (\"[^\"]*\"|\S+) ?"
         r"|--video ?|--json ?)+)", 0, chk_query, None),
    (S + r" query --errors", 0, chk_query_errors, None),
    (S + r" query --format (?P<fmt>\w+) -0 \| xargs -0 cp -t (?P<dest>\S+)", 0, chk_cp_raw,
     None),
    (S + r" query --pairs", 0, chk_pairs, None),
    (S + r" dupes --near( --json)?", 0, chk_dupes, before_near),
    (S + r" dupes --no-read", 0, chk_dupes_no_read, None),
    (S + r" stats", 0, chk_stats, None),
    (S + r" stats --json --scans (?P<n>\d+)", 0, chk_stats_json, None),
    (S + r" plan -0 /media/photos \| xargs -0 tar cf (?P<tar>\S+)", 0, chk_tar, before_plan),
    (S + r" plan -0 /media/photos \| xargs -0 cat > /dev/null", 0, chk_untouched, before_plan),
    (S + r" purge --older-than (?P<days>\d+)", 0, chk_purge_older, before_purge),
    (S + r" purge --file-system /media/old-card --dry-run", 0, chk_purge_dry, before_purge_fs),
    (S + r" purge --file-system /media/old-card", 0, chk_purge_fs, before_purge_fs),
    (S + r" query --format jpg --from 2024-02-29 --to 2024-02-29", 0, chk_query_leap, None),
    (r"find /media/photos -newer /var/tmp/last-import -type f \| seekless scan --files-from -",
     0, chk_files_from, before_import),
    (r"mkdir -p ~/.config/seekless && cp dist/systemd/seekless.conf ~/.config/seekless/config",
     0, chk_conf, None),
    (S + r" service status --user", 0, chk_status, None),
]

# Examples not run here, each with why.
MACHINE = "changes the machine"
SKIP = [
    (r"bash tools/quickstart\.sh", MACHINE + ": installs packages (apt-get) and builds"),
    (r"bash tests/run\.sh", MACHINE + ": installs packages, then runs the whole suite, this "
                            "test among them"),
    (r"cmake -S \. -B build( -DSEEKLESS_WERROR=ON)? && cmake --build build .*",
     "builds the program this test runs (minutes on 2 cores)"),
    (r"cmake -S \. -B build-release .* && cmake --build build-release .*",
     "a Release build (CI builds it: .ci/run)"),
    (r"cmake --install build-release", MACHINE + ": installs into /usr/local "
                                       "(tests/integration/test_install.py installs with --prefix)"),
    (r"bash tools/deb/build\.sh|apt-get install \./build-deb/seekless_\*\.deb",
     MACHINE + ": builds and installs the Debian package (tests/deb/run.sh, in CI)"),
    (r"bash tools/win/cross-build\.sh( --no-test)?",
     MACHINE + ": installs mingw-w64, Wine and msitools (apt-get), builds and packages for "
               "Windows (CI runs it; tests/win/test_win_install.py installs the MSI under Wine)"),
    (r"cp /usr/share/doc/seekless/examples/seekless\.conf /etc/seekless\.conf|"
     r"mkdir -p ~/\.config/seekless && cp /usr/share/doc/seekless/examples/seekless\.conf "
     r"~/\.config/seekless/config|systemctl (--user )?enable --now seekless\.timer",
     MACHINE + ": the installed package's configuration and timer (tests/deb/run.sh checks "
               "the files are there)"),
    (r"(SEEKLESS_REQUIRE_ALL=1 )?ctest --test-dir build .*", "runs the test suite (this test "
                                                             "among them) in its build tree"),
    (r"(sudo )?seekless service (install|uninstall)( .*)?",
     MACHINE + ": writes systemd units, systemctl enable (tests/integration/test_service.py "
               "installs with --dest)"),
    (r".*tools/hddsim/hddsim\.sh .*|sudo build/seekless bench .*\$mnt.*",
     "the emulated hard disk: FUSE, a 2G image, minutes of emulated seeks "
     "(tests/integration/test_hddsim.py)"),
]


def lookup(cmd):
    n = norm(cmd)
    for pat, rc, chk, before in REGISTRY:
        m = re.fullmatch(pat, n)
        if m:
            return ("run", pat, rc, chk, before, m)
    for pat, why in SKIP:
        if re.fullmatch(pat, n):
            return ("skip", pat, why)
    return None


# ---------------------------------------------------------------------------
# The sandbox


def sh(*cmd):
    subprocess.run(cmd, check=True)


def make_root(newroot):
    """A tmpfs root holding binds of every top-level entry of /, in this
    (private) mount namespace; chroot into it.  Folders the examples name
    that the machine lacks (/backup) can then be made without touching it."""
    sh("mount", "-t", "tmpfs", "-o", "mode=755,size=16m", "seekless-examples-root", newroot)
    for name in sorted(os.listdir("/")):
        src, dst = "/" + name, os.path.join(newroot, name)
        if name in ("media", "backup"):
            continue
        if os.path.islink(src):
            os.symlink(os.readlink(src), dst)
        elif os.path.isdir(src):
            os.mkdir(dst)
            sh("mount", "--rbind", src, dst)
        else:
            open(dst, "w").close()
            sh("mount", "--bind", src, dst)
    for name in ("media", "backup"):
        os.mkdir(os.path.join(newroot, name))
        sh("mount", "-t", "tmpfs", "-o", "mode=755,size=512m", "seekless-" + name,
           os.path.join(newroot, name))
    sh("mount", "-t", "tmpfs", "-o", "mode=1777,size=16m", "seekless-vartmp",
       os.path.join(newroot, "var", "tmp"))
    if os.path.exists("/etc/seekless.conf"):  # the machine's own: not the examples'
        sh("mount", "--bind", "/dev/null", os.path.join(newroot, "etc", "seekless.conf"))
    os.chroot(newroot)
    os.chdir("/")


def exiftool(*args):
    subprocess.run(["exiftool", "-q", "-q", "-overwrite_original"] + list(args), check=True,
                   capture_output=True)


def fill_photos():
    """The photo drive: real photos, generated ones, tagged ones, a copy, a
    hard link, a movie of 2024, a raw+jpeg pair, a cut JPEG."""
    raw = re.compile(r"\.(jpe?g|heic|hif|dng|cr2|cr3|crw|nef|arw|orf|raf|rw2|mrw)$", re.I)
    os.makedirs(os.path.join(PHOTOS, "corpus"))
    for name in sorted(os.listdir(CORPUS)):
        if raw.search(name):
            shutil.copy2(os.path.join(CORPUS, name), os.path.join(PHOTOS, "corpus", name))
    mkcorpus(os.path.join(PHOTOS, "mk"), "--files", 60, "--median", "40k", "--seed", 42,
             "--no-sync")
    nature = os.path.join(CORPUS, "immich-test-assets__albums__nature__%s.jpg")
    paris = os.path.join(PHOTOS, "2023", "2023-07-14 Paris")
    later = os.path.join(PHOTOS, "2023", "2023-09-01 Versailles")
    june = os.path.join(PHOTOS, "2023", "2023-06-15 Lyon")
    leap = os.path.join(PHOTOS, "2024", "2024-02-29 Leap day")
    for d in (paris, later, june, leap):
        os.makedirs(d)
    tagged = [
        (nature % "cyclamen_persicum", os.path.join(paris, "IMG_0001.JPG"),
         ["-Model=Canon EOS R5", "-DateTimeOriginal=2023:07:14 10:00:00", "-GPSLatitude=48.8606",
          "-GPSLatitudeRef=N", "-GPSLongitude=2.3376", "-GPSLongitudeRef=E", "-XMP:Rating=5",
          "-IPTC:Keywords=family", "-XMP:Subject=family"]),
        (nature % "el_torcal_rocks", os.path.join(paris, "IMG_0002 at the arc.JPG"),
         ["-Model=Canon EOS R5", "-DateTimeOriginal=2023:08:31 18:00:00", "-GPSLatitude=48.8738",
          "-GPSLatitudeRef=N", "-GPSLongitude=2.2950", "-GPSLongitudeRef=E", "-XMP:Rating=4",
          "-XMP:Label=Red", "-XMP:Subject=sea", "-XMP:HierarchicalSubject=Places|Coast|Sea"]),
        (nature % "tanners_ridge", os.path.join(later, "IMG_0003.JPG"),
         ["-Model=Canon EOS R5", "-DateTimeOriginal=2023:09:01 09:00:00", "-GPSLatitude=48.8049",
          "-GPSLatitudeRef=N", "-GPSLongitude=2.1204", "-GPSLongitudeRef=E", "-XMP:Rating=5",
          "-XMP:Label=Blue", "-XMP:HierarchicalSubject=Places|Coast|Sea"]),
        (nature % "wood_anemones", os.path.join(june, "IMG_0004.JPG"),
         ["-Model=Canon EOS R6", "-DateTimeOriginal=2023:06:15 12:00:00", "-XMP:Rating=5",
          "-IPTC:Keywords=family trip"]),
        # the leap day's (and the day after, just past --to)
        (nature % "el_torcal_rocks", os.path.join(leap, "IMG_0229.JPG"),
         ["-Model=Canon EOS R6", "-DateTimeOriginal=2024:02:29 23:59:00"]),
        (nature % "tanners_ridge", os.path.join(leap, "IMG_0301.JPG"),
         ["-Model=Canon EOS R6", "-DateTimeOriginal=2024:03:01 00:01:00"]),
    ]
    for src, dst, tags in tagged:
        shutil.copyfile(src, dst)
        exiftool("-Make=Canon", *tags, dst)
    # identical pictures: a copy (with a space in its name) and a hard link
    shutil.copyfile(os.path.join(later, "IMG_0003.JPG"), os.path.join(later, "IMG_0003 copy.JPG"))
    first = sorted(x for x in regular_files(os.path.join(PHOTOS, "mk")))[5]
    os.link(first, os.path.join(PHOTOS, "mk", "hard link.JPG"))
    # a raw and its JPEG, taken together
    pair = os.path.join(PHOTOS, "2020", "2020-12-29")
    os.makedirs(pair)
    shutil.copyfile(os.path.join(CORPUS, "exiv2__IMG_1361.dng"), os.path.join(pair, "IMG_1361.DNG"))
    shutil.copyfile(nature % "wood_anemones", os.path.join(pair, "IMG_1361.JPG"))
    exiftool("-tagsFromFile", os.path.join(pair, "IMG_1361.DNG"), "-DateTimeOriginal",
             os.path.join(pair, "IMG_1361.JPG"))
    # movies, one of them from 2024
    movies = os.path.join(PHOTOS, "movies")
    os.makedirs(movies)
    for name in ("qt6-multimedia__tests__auto__integration__qmediaplayerbackend__testdata__"
                 "colors.mp4", "taglib__tests__data__blank_video.m4v",
                 "exempi__samples__testfiles__BlueSquare.mov"):
        if os.path.exists(os.path.join(MEDIA, name)):
            shutil.copy2(os.path.join(MEDIA, name), os.path.join(movies, name.split("__")[-1]))
    if os.path.exists(os.path.join(movies, "colors.mp4")):
        exiftool("-QuickTime:CreateDate=2024:05:01 12:00:00", os.path.join(movies, "colors.mp4"))
    # a JPEG cut before its image (headers and EXIF only): an error for
    # every scan, exit status 1
    cut = os.path.join(PHOTOS, "cut", "cut before its image.jpg")
    os.makedirs(os.path.dirname(cut))
    with open(nature % "tanners_ridge", "rb") as f:
        data = f.read()
    with open(cut, "wb") as f:
        f.write(data[:min(i for i in (data.find(b"\xff\xc0"), data.find(b"\xff\xc2")) if i > 0)])
    STATE["cut"] = cut
    # everything so far is older than the last import
    now = time.time()
    for x in regular_files(PHOTOS):
        os.utime(x, (now - 86400, now - 86400), follow_symlinks=False)
    with open("/var/tmp/last-import", "w"):
        pass
    os.utime("/var/tmp/last-import", (now - 3600, now - 3600))
    sync_fs(PHOTOS)


def mount_at(fs, where):
    """Move a loop_fs's mount to a documented path."""
    os.makedirs(where, exist_ok=True)
    sh("mount", "-o", "noatime", fs.loop, where)
    sh("umount", fs.mnt)


def doc_env(home, bindir):
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("XDG_", "SEEKLESS_", "MKCORPUS", "HDDSIM"))}
    env.update(HOME=home, PATH=bindir + ":/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:"
               "/sbin:/bin", LC_ALL="C.UTF-8")
    env.pop("NO_COLOR", None)
    return env


EXAMPLE_TIMEOUT = 180


def run_example(shell, cmd, cwd, env):
    """Run one example in a session of its own; a timeout, or this test
    stopped, ends the whole session (the shell and what it started), so no
    example outlives the test and keeps a mount busy.  None on timeout."""
    proc = subprocess.Popen([shell, "-c", cmd], cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            errors="surrogateescape", start_new_session=True)
    try:
        out, err = proc.communicate(timeout=EXAMPLE_TIMEOUT)
    except BaseException as e:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.communicate()
        if isinstance(e, subprocess.TimeoutExpired):
            return None
        raise
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


def run_doc(rel, exs, base, bindir, counts, setup=None):
    slug = os.path.basename(rel).replace(".", "-")
    home, work = os.path.join(base, slug, "home"), os.path.join(base, slug, "work")
    os.makedirs(home)
    os.makedirs(work)
    for d in ("dist", "tools", "tests"):
        os.symlink(os.path.join(SRC, d), os.path.join(work, d))
    os.symlink(os.path.dirname(BIN), os.path.join(work, "build"))
    ctx = Ctx(rel, home, work, doc_env(home, bindir))
    if setup:
        setup(ctx)
    sudo_ok = re.search(r"with `?sudo`? elsewhere", open(os.path.join(SRC, rel)).read())
    for no, shell, cmd in exs:
        found = lookup(cmd)
        ex = (rel, no, shell, cmd)
        if found is None:
            check(False, say(ex, "neither in REGISTRY nor in SKIP of "
                                 "tests/integration/test_examples.py: add it (its exit status "
                                 "and a check of what its text says), or a reason to skip it"))
            counts["unregistered"] += 1
            continue
        if found[0] == "skip":
            counts["skipped"].setdefault(found[2], []).append("%s:%d" % (rel, no))
            if re.search(r"(^|[;&|(]\s*)sudo ", norm(cmd)):
                counts["sudo"].append("%s:%d: %s" % (rel, no, cmd))
            continue
        _, pat, rc, chk, before, m = found
        run_cmd = cmd
        if norm(cmd).startswith("sudo "):
            counts["sudo"].append("%s:%d: %s" % (rel, no, cmd))
            if sudo_ok:
                run_cmd = cmd.split("sudo", 1)[1]
        if before:
            before(ctx, ex)
        t0 = time.time()
        p = run_example(shell, run_cmd, work, ctx.env)
        if p is None:
            check(False, say(ex, "still running after %d s" % EXAMPLE_TIMEOUT))
            counts["failed"].append("%s:%d: %s (timeout)" % (rel, no, cmd))
            continue
        took = time.time() - t0
        if VERBOSE:
            print("%s:%d: %s -> exit %d, %.1f s\n    %s" % (
                rel, no, cmd, p.returncode, took,
                "\n    ".join((p.stdout.replace("\0", "\\0\n") or p.stderr).splitlines()[:6])),
                file=sys.stderr)
        counts["ran"] += 1
        counts["time"].append((took, "%s:%d" % (rel, no)))
        if not check(p.returncode == rc, say(ex, "exit status %d, the docs promise %d\n"
                                                 "stdout: %s\nstderr: %s"
                                             % (p.returncode, rc, p.stdout[-1500:],
                                                p.stderr[-1500:]))):
            counts["failed"].append("%s:%d: %s (exit %d)" % (rel, no, cmd, p.returncode))
            continue
        if chk:
            before_fail = len(sys.modules["lib"]._failures)
            try:
                chk(ctx, ex, p, m)
            except Exception as e:  # a check that cannot read the output fails
                check(False, say(ex, "the check raised %r\nstdout: %s\nstderr: %s"
                                     % (e, p.stdout[-800:], p.stderr[-800:])))
            counts["checked"] += 1
            if len(sys.modules["lib"]._failures) > before_fail:
                counts["failed"].append("%s:%d: %s (check)" % (rel, no, cmd))


def main():
    need_root()
    if os.environ.get(NS_MARK) is None:
        for tool in ("unshare", "exiftool", "xxhsum", "tar", "xargs", "find"):
            if shutil.which(tool) is None:
                skip("%s not installed" % tool)
        if subprocess.run(["unshare", "-m", "--propagation", "private", "true"]).returncode:
            skip("no private mount namespace (unshare -m)")
        # the whole test in a private mount namespace: every mount it makes
        # goes with it, whatever happens; the folder its root is mounted on
        # is made and removed out here
        newroot = tempfile.mkdtemp(prefix="seekless-examples-root-")
        try:
            p = subprocess.Popen(["unshare", "-m", "--propagation", "private", sys.executable,
                                  os.path.abspath(__file__)] + sys.argv[1:],
                                 env=dict(os.environ, **{NS_MARK: newroot}))
            # a timeout's SIGTERM goes on to the test, which cleans up
            signal.signal(signal.SIGTERM, lambda sig, frame: p.send_signal(sig))
            rc = p.wait()
        finally:
            os.rmdir(newroot)
        sys.exit(rc)
    newroot = os.environ[NS_MARK]
    # SIGTERM (a timeout) unwinds like an exception: every finally runs,
    # the loop devices are detached
    signal.signal(signal.SIGTERM, lambda sig, frame: sys.exit(128 + sig))
    if not os.path.isdir(CORPUS):
        skip("no shared corpus at %s" % CORPUS)
    all_ex = {rel: examples(rel) for rel in DOCS}
    for rel in DOCS:  # the extraction itself
        check(len(all_ex[rel]) >= 5, "%s: %d examples found" % (rel, len(all_ex[rel])))
    counts = {"ran": 0, "checked": 0, "skipped": {}, "unregistered": 0, "failed": [],
              "sudo": [], "time": []}
    t0 = time.time()
    # the root first: the loop devices' own mounts (below /tmp) must not
    # be copied into it, or they stay busy
    make_root(newroot)
    base = tempfile.mkdtemp(prefix="seekless-examples-")
    with loop_fs("ext4", 192) as photos, loop_fs("ext4", 32) as card:
        try:
            bindir = os.path.join(base, "bin")
            os.makedirs(bindir)
            os.symlink(BIN, os.path.join(bindir, "seekless"))
            mount_at(photos, PHOTOS)
            mount_at(card, CARD)
            os.makedirs("/backup/raw")
            fill_photos()
            mkcorpus(os.path.join(CARD, "DCIM"), "--files", 4, "--median", "20k", "--seed", 7)

            def unplug_card(ctx):
                # the card, indexed with the rest, then gone for good
                if not os.path.ismount(CARD):
                    sh("mount", "-o", "noatime", card.loop, CARD)
                p = subprocess.run([BIN, "scan", CARD], env=ctx.env, capture_output=True,
                                   text=True)
                check(p.returncode == 0, "indexing the card: %s" % p.stderr[-300:])
                sh("umount", CARD)

            print("setup %.1f s" % (time.time() - t0), file=sys.stderr)
            for rel in DOCS:
                card_named = any(CARD in c for n, shl, c in all_ex[rel])
                run_doc(rel, all_ex[rel], base, bindir, counts,
                        unplug_card if card_named else None)
        finally:
            os.chdir("/")
            for where in (PHOTOS, CARD):
                if os.path.ismount(where) and subprocess.run(["umount", where]).returncode:
                    subprocess.run(["umount", "-l", where])
            # loop_fs's close() detaches the devices; nothing else is left
            # outside this namespace
            shutil.rmtree(base, ignore_errors=True)
    found = sum(len(v) for v in all_ex.values())
    skipped = sum(len(v) for v in counts["skipped"].values())
    print("examples found: %d (%s); ran %d, checked independently %d, skipped %d, "
          "unregistered %d; %.1f s" % (found, ", ".join("%s %d" % (r, len(all_ex[r]))
                                                        for r in DOCS),
                                       counts["ran"], counts["checked"], skipped,
                                       counts["unregistered"], time.time() - t0),
          file=sys.stderr)
    for why, where in counts["skipped"].items():
        print("  skipped %d (%s): %s" % (len(where), ", ".join(where), why), file=sys.stderr)
    for s in counts["sudo"]:
        print("  uses sudo (kept: no document says \"with sudo elsewhere\"%s): %s"
              % ("" if shutil.which("sudo") else "; sudo is not installed here", s),
              file=sys.stderr)
    for s in counts["failed"]:
        print("  FAILED: " + s, file=sys.stderr)
    slow = sorted(counts["time"], reverse=True)[:3]
    print("  slowest: " + ", ".join("%s %.1f s" % (w, t) for t, w in slow), file=sys.stderr)
    done()


main()
