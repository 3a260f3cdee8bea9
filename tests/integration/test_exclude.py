"""`scan --exclude` on Linux, against the rules of docs/usage.md
("Excludes") on a tree built here, whose every entry says by its place in
the tables below whether a pattern leaves it out:

- a pattern without a slash matches the name of every file and directory
  (`*.tmp`, `.thumbnails`, `IMG_????.xmp`, `[a-c]*.raw`, `[!0-9]*.bak`),
  case-sensitively (`*.mov` leaves `CLIP.MOV`), `\\` quoting (`star\\*.jpg`
  is that name, not `starX.jpg`);
- one with a slash matches the absolute path, `*` crossing slashes
  (`ROOT/scratch` is that directory only, `*/cache/*` anything below a
  directory called cache, not the directory itself);
- an excluded directory is not descended at all: strace, the kernel's
  account of every name the scan asked about, never shows a name that
  only a listing of an excluded directory would give;
- the scan counts what was left out (excluded files, excluded directories,
  each as the tree has them).

Then the tree indexed whole, and scanned again with the excludes: every
record of a file excluded now, inside an excluded directory or matched
itself, is marked deleted (docs: "by the next complete scan, like files
that are gone"; sqlite3 on the index), the others untouched; purge
removes exactly those; a scan without the excludes brings them back as
new, with xxhsum's hashes."""
import json
import os
import subprocess

from lib import (check, db_rows, done, need_root, regular_files, run, skip, tempdir, xxh128,
                 BIN)
from readorder import have_strace, strace_env

need_root()  # strace follows a scan that drops capabilities and sandboxes itself
if not have_strace():
    skip("no strace")

# (path below the root, excluded by a pattern itself, kind); files inside an
# excluded directory carry a token no other name has, to be looked for in
# strace's log
TREE = [
    ("a.jpg", False, "f"),
    ("b.tmp", True, "f"),                       # *.tmp
    ("b.tmpx", False, "f"),
    ("sub/c.tmp", True, "f"),
    ("sub/keep.jpg", False, "f"),
    ("dir.tmp", True, "d"),                     # *.tmp names a directory too
    ("dir.tmp/inside-tok1.jpg", None, "f"),
    (".thumbnails", True, "d"),                 # .thumbnails
    (".thumbnails/inside-tok2.jpg", None, "f"),
    ("sub/.thumbnails", True, "d"),
    ("sub/.thumbnails/deeper", None, "d"),
    ("sub/.thumbnails/deeper/inside-tok3.jpg", None, "f"),
    ("IMG_0001.xmp", True, "f"),                # IMG_????.xmp
    ("IMG_01.xmp", False, "f"),
    ("IMG_00001.xmp", False, "f"),
    ("a1.raw", True, "f"),                      # [a-c]*.raw
    ("c1.raw", True, "f"),
    ("d1.raw", False, "f"),
    ("x.bak", True, "f"),                       # [!0-9]*.bak
    ("1.bak", False, "f"),
    ("clip.mov", True, "f"),                    # *.mov, case-sensitive
    ("CLIP.MOV", False, "f"),
    ("star*.jpg", True, "f"),                   # star\*.jpg
    ("starX.jpg", False, "f"),
    ("scratch", True, "d"),                     # ROOT/scratch
    ("scratch/inside-tok4.jpg", None, "f"),
    ("other/scratch", False, "d"),
    ("other/scratch/kept.jpg", False, "f"),
    ("deep/cache", False, "d"),                 # */cache/*: below it, not it
    ("deep/cache/f.jpg", True, "f"),
    ("deep/cache/sub", True, "d"),
    ("deep/cache/sub/inside-tok5.jpg", None, "f"),
    ("deep/cachex/g.jpg", False, "f"),
]
TOKENS = ["inside-tok%d" % i for i in range(1, 6)]

with tempdir("excl", base="/dev/shm") as work:
    root = os.path.join(work, "photos")
    for rel, _, kind in TREE:
        p = os.path.join(root, rel)
        if kind == "d":
            os.makedirs(p, exist_ok=True)
        else:
            os.makedirs(os.path.dirname(p), exist_ok=True)
            with open(p, "wb") as f:
                f.write(b"not a picture: " + rel.encode() * 50)
    pats = ["*.tmp", ".thumbnails", "IMG_????.xmp", "[a-c]*.raw", "[!0-9]*.bak", "*.mov",
            "star\\*.jpg", os.path.join(root, "scratch"), "*/cache/*"]
    excl_args = [a for p in pats for a in ("--exclude", p)]
    everything = sorted(regular_files(root))
    outside = {os.path.join(root, rel) for rel, ex, kind in TREE if ex is None}
    kept = sorted(os.path.join(root, rel) for rel, ex, kind in TREE if ex is False and kind == "f")
    check(sorted(set(everything) - outside - {os.path.join(root, rel) for rel, ex, k in TREE
                                              if ex}) == kept, "the tables add up")
    want_files = sum(1 for rel, ex, kind in TREE if ex and kind == "f")
    want_dirs = sum(1 for rel, ex, kind in TREE if ex and kind == "d")

    # --- a first scan with the excludes, under strace ----------------------
    db = os.path.join(work, "x.db")
    log = os.path.join(work, "strace.log")
    # -v: getdents64's entries with their names
    p = subprocess.run(["strace", "-f", "-qq", "-v", "-s", "256", "-o", log,
                        "-e", "trace=%file,getdents64", BIN, "scan", "--json", "--db", db]
                       + excl_args + [root],
                       capture_output=True, text=True, env=strace_env())
    check(p.returncode == 0, "scan --exclude: exit 0: %d %s" % (p.returncode, p.stderr[-400:]))
    walk = json.loads(p.stdout)["walk"] if p.returncode == 0 else {}
    check((walk.get("excluded_files"), walk.get("excluded_dirs")) == (want_files, want_dirs),
          "what was left out, counted: %s files, %s directories; the tree has %d and %d"
          % (walk.get("excluded_files"), walk.get("excluded_dirs"), want_files, want_dirs))
    indexed = sorted(r[0] for r in db_rows(db, "SELECT path FROM files"))
    check(indexed == kept, "indexed exactly the files no pattern leaves out: extra %s, missing %s"
          % (sorted(set(indexed) - set(kept)), sorted(set(kept) - set(indexed))))
    with open(log, errors="replace") as f:
        traced = f.read()
    check("getdents64" in traced and "a.jpg" in traced, "strace saw the walk")
    seen = [t for t in TOKENS if t in traced]
    check(not seen, "no excluded directory was listed: strace shows %s" % seen)
    # the same summary in words
    rc, out, err = run("scan", "--db", os.path.join(work, "y.db"), *excl_args, root,
                       check_rc=0)
    check("excluded by pattern: %d files, %d directories" % (want_files, want_dirs) in out,
          "the summary counts them: " + out[:600])

    # --- indexed before, excluded now ----------------------------------------
    db2 = os.path.join(work, "z.db")
    run("scan", "--db", db2, root, check_rc=0)
    check(sorted(r[0] for r in db_rows(db2, "SELECT path FROM files")) == everything,
          "without excludes, every file")
    rc, out, err = run("scan", "--json", "--db", db2, *excl_args, root, check_rc=0)
    gone = sorted(set(everything) - set(kept))
    dead = sorted(r[0] for r in db_rows(db2, "SELECT path FROM files WHERE deleted_at IS NOT NULL"))
    live = sorted(r[0] for r in db_rows(db2, "SELECT path FROM files WHERE deleted_at IS NULL"))
    check(dead == gone, "the records of files excluded now are marked deleted: unmarked %s, "
          "wrongly marked %s" % (sorted(set(gone) - set(dead)), sorted(set(dead) - set(gone))))
    check(live == kept, "the others stay live")
    check(rc == 0 and json.loads(out)["deleted"] == len(gone),
          "the scan says how many it marked: %s" % out[:300])
    rc, out, err = run("purge", "--db", db2, "--json", check_rc=0)
    check(json.loads(out) == {"removed": len(gone)}, "purge removes them: %s" % out)
    check(sorted(r[0] for r in db_rows(db2, "SELECT path FROM files")) == kept,
          "and only them")
    rc, out, err = run("scan", "--json", "--db", db2, root, check_rc=0)
    check(json.loads(out)["new"] == len(gone), "without the excludes they come back as new")
    want = xxh128(everything)
    got = dict(db_rows(db2, "SELECT path, content_hash FROM files WHERE deleted_at IS NULL"))
    check(got == want, "every file with xxhsum's hash")

done()
