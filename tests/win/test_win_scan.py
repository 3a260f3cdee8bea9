"""seekless.exe end to end under Wine: a generated photo tree plus Unicode,
over-long, empty and truncated files.  Wine's retrieval pointers are
refused, so the scan must fall back, say why, and still store every file
exactly, each with the content hash xxhsum gives on the host; a second scan
must see what changed.  Every scan's exit status is the one the contract
gives (docs/usage.md): 0, since every file here can be read (a truncated
JPEG is read whole, its record warns)."""
import json
import os
import shutil
import sqlite3

from winlib import check, done, need_tools, seekless, tmpdir, corpus, winpath, ourpath, xxh128

need_tools()
base = tmpdir("scan")
tree = os.path.join(base, "tree")
corpus(tree, 40)
# Unicode names (BMP and beyond), a path longer than MAX_PATH, an empty
# file and a truncated JPEG
some = next(os.path.join(d, f) for d, _, fs in os.walk(tree) for f in fs)
uni = os.path.join(tree, "\u5199\u771f", "\u00e9t\u00e9 \U0001F4F7.jpg")
os.makedirs(os.path.dirname(uni))
shutil.copy(some, uni)
deep = os.path.join(tree, *(["a-rather-long-folder-name-to-pass-max-path-0123456789"] * 6))
os.makedirs(deep)
shutil.copy(some, os.path.join(deep, "deep.jpg"))
open(os.path.join(tree, "empty.jpg"), "wb").close()
with open(some, "rb") as f:
    head = f.read(3000)
with open(os.path.join(tree, "truncated.jpg"), "wb") as f:
    f.write(head)

on_disk = sorted(ourpath(os.path.join(d, f)) for d, _, fs in os.walk(tree) for f in fs)
check(len(on_disk) == 44, "tree has %d files" % len(on_disk))
check(len(ourpath(os.path.join(deep, "deep.jpg"))) > 300, "the deep path passes MAX_PATH")
db = os.path.join(base, "index.db")

rc, out, err = seekless("scan", "--db", winpath(db), winpath(tree))
print(out, err)
check(rc == 0, "scan exit status %d, expected 0: %s" % (rc, err[-400:]))
check("extents unavailable" in out, "the fallback names its reason")
check("by inode number instead" in out, "and the order it fell back to")
# Wine has no change journal to offer: the summary says why the root is walked
check(any(l.strip().startswith("journal") and l.rstrip().endswith("walked")
          for l in out.splitlines()), "the change journal's verdict is reported")

con = sqlite3.connect(db)
rows = {p: (s, fmt, err or warn) for p, s, fmt, err, warn in
        con.execute("SELECT path, size, format, error, warnings FROM files "
                    "WHERE deleted_at IS NULL")}
check(sorted(rows) == on_disk, "every file stored once, paths exact: %d vs %d" %
      (len(rows), len(on_disk)))
check(ourpath(uni) in rows, "the Unicode name is stored as UTF-8")
for p, (size, fmt, e) in rows.items():
    host = p[2:]
    check(size == os.path.getsize(host), "size of " + p)
t = con.execute("SELECT error, warnings FROM files WHERE path = ?",
                (ourpath(os.path.join(tree, "truncated.jpg")),)).fetchone()
check(t is not None and t[0] is None and "ends before its end marker" in (t[1] or ""),
      "the truncated JPEG is read, and its record says it is cut short: %r" % (t,))
# the content hash: XXH3-128 of the bytes, what xxhsum -H2 prints for the
# same file read on the host (docs/schema.md)
stored = dict(con.execute("SELECT path, content_hash FROM files WHERE deleted_at IS NULL"))
sums = xxh128(sorted(p[2:] for p in stored))
wrong = [(p, h, sums.get(p[2:])) for p, h in stored.items() if h != sums.get(p[2:])]
check(len(stored) == 44 and not wrong,
      "every file's content hash is xxhsum's: %d files, %r" % (len(stored), wrong[:3]))
ok_jpegs = con.execute("SELECT count(*) FROM files WHERE format='jpeg' AND width > 0").fetchone()[0]
check(ok_jpegs >= 42, "JPEG metadata read under Windows: %d" % ok_jpegs)
placement = con.execute("SELECT DISTINCT placement FROM files").fetchall()
check(("no-extent-map",) in placement, "placement recorded: %r" % placement)
con.close()

# physical order asked for explicitly: refused with the reason
rc, out, err = seekless("plan", "--order", "physical", winpath(tree))
check(rc == 0 and "fell back to inode order" in out and "extents unavailable" in out,
      "plan --order physical falls back and says why: %s %s" % (out[-600:], err))

# plan --verify: Wine answers no retrieval pointers, so no file has a
# position to prove; that is said, and the exit status is 3 (nothing read)
rc, out, err = seekless("plan", "--verify", "--json", winpath(tree))
try:
    v = json.loads(out)
except ValueError:
    v = {}
g = (v.get("verify") or [{}])[0]
check(rc == 3 and v.get("exit") == 3 and g.get("verified") == 0 and
      g.get("why", {}).get("no extent map") == g.get("files") and g.get("files", 0) > 0,
      "plan --verify under Wine: nothing placed, said, exit 3: %d %s %s" % (rc, out[-400:], err))

# the incremental scan: one file changed, one deleted, the rest not read
with open(uni, "ab") as f:
    f.write(b"\0" * 100)
os.remove(os.path.join(tree, "empty.jpg"))
rc, out, err = seekless("scan", "--db", winpath(db), winpath(tree))
print(out, err)
check(rc == 0, "second scan exit status %d, expected 0: %s" % (rc, err[-400:]))
check("42 unchanged" in out and "1 changed" in out, "incremental scan sees the change")
con = sqlite3.connect(db)
gone = con.execute("SELECT count(*) FROM files WHERE deleted_at IS NOT NULL").fetchone()[0]
check(gone == 1, "the deleted file is marked deleted (%d)" % gone)
con.close()

# a rename keeps its record: the file ID and the CreationTime (the birth
# time in a file's identity) both go with the file
jpegs = sorted(p for p in on_disk if p.endswith(".jpg") and "deep" not in p and "empty" not in p)
old_host = [os.path.join(d, f) for d, _, fs in os.walk(tree) for f in fs
            if ourpath(os.path.join(d, f)) == jpegs[0]][0]
con = sqlite3.connect(db)
rid = con.execute("SELECT id FROM files WHERE path = ?", (jpegs[0],)).fetchone()
con.close()
new_host = old_host[:-4] + "-renamed.jpg"
os.rename(old_host, new_host)
rc, out, err = seekless("scan", "--db", winpath(db), winpath(tree))
check(rc == 0 and "1 moved or renamed" in out,
      "the rename is seen as one: exit %d, %s" % (rc, out[-400:]))
con = sqlite3.connect(db)
now = con.execute("SELECT id FROM files WHERE path = ? AND deleted_at IS NULL",
                  (ourpath(new_host),)).fetchone()
con.close()
check(rid is not None and now == rid, "and keeps its record: %r, %r" % (rid, now))

# export: one JSON record per live file, its path, size and content hash
# what the host sees of that file
rc, out, err = seekless("export", "--db", winpath(db))
try:
    recs = [json.loads(line) for line in out.splitlines()]
except ValueError as e:
    recs = []
    check(False, "export's lines are JSON: %s" % e)
live = sorted(ourpath(os.path.join(d, f)) for d, _, fs in os.walk(tree) for f in fs)
check(rc == 0 and sorted(r["path"] for r in recs) == live,
      "export: exit %d, a record for each of the %d files there: %d" % (rc, len(live), len(recs)))
sums = xxh128(sorted(p[2:] for p in live))
wrong = [r["path"] for r in recs
         if r["content_hash"] != sums.get(r["path"][2:]) or
         r["size"] != os.path.getsize(r["path"][2:])]
check(not wrong, "exported hash and size are the host's: %r" % wrong[:3])

# an index kept inside the tree it indexes leaves itself out (by file ID)
inner = os.path.join(tree, "index-inside.db")
rc, out, err = seekless("scan", "--db", winpath(inner), winpath(tree))
check(rc == 0, "scan with the index inside: %d %s" % (rc, err))
con = sqlite3.connect(inner)
own = con.execute("SELECT count(*) FROM files WHERE path LIKE '%index-inside%'").fetchone()[0]
total = con.execute("SELECT count(*) FROM files").fetchone()[0]
con.close()
check(own == 0 and total == 43, "the index is not in itself: %d own, %d files" % (own, total))


def scan_json(name, *args):
    """A scan of its own index base/name.db; returns the JSON summary and
    the live paths stored."""
    idx = os.path.join(base, name + ".db")
    rc, out, err = seekless("scan", "--json", "--db", winpath(idx), *args)
    check(rc == 0, "scan %s: exit status %d %s" % (name, rc, err))
    js = json.loads(out) if out.strip().startswith("{") else {}
    con = sqlite3.connect(idx)
    paths = sorted(p for (p,) in con.execute("SELECT path FROM files WHERE deleted_at IS NULL"))
    con.close()
    return js, paths


# Links: Wine lists a Unix symlink to a folder as a folder with the reparse
# attribute and no tag (0).  It is not followed (win_entry_kind): what it
# points to is stored once, under its own name.
links = os.path.join(base, "links")
os.makedirs(os.path.join(links, "real"))
shutil.copy(some, os.path.join(links, "real", "a.jpg"))
os.symlink("real", os.path.join(links, "via"))
js, paths = scan_json("links", winpath(links))
check(js.get("walk", {}).get("symlinks") == 1, "the folder link is counted: %r" % js.get("walk"))
check(paths == [ourpath(os.path.join(links, "real", "a.jpg"))],
      "the linked folder is not walked twice: %r" % paths)

# Roots are named as the disk names them, so that they match the names the
# change journal reports: typed in capitals, a root is stored in the disk's
# case; a link to a folder (a Unix symlink, the only kind Wine can make) is
# stored as the folder it leads to.
case = os.path.join(base, "case")
os.makedirs(os.path.join(case, "Photos", "Sub"))
shutil.copy(some, os.path.join(case, "Photos", "Sub", "Img.jpg"))
want = [ourpath(os.path.join(case, "Photos", "Sub", "Img.jpg"))]
js, paths = scan_json("case", winpath(os.path.join(case, "PHOTOS", "sub")).upper() + "\\")
check(paths == want, "a root typed in capitals is stored in the disk's case: %r" % paths)
os.symlink(os.path.join(case, "Photos"), os.path.join(base, "photolink"))
js, paths = scan_json("rootlink", winpath(os.path.join(base, "photolink")))
check(paths == want, "a root that is a link is stored as its target: %r" % paths)

# Excludes compare names as Windows does: without case, and '\' separates
# like '/' (a path written the Windows way), instead of quoting.
excl = os.path.join(base, "excl")
for d in ("keep", "skip"):
    os.makedirs(os.path.join(excl, d))
for rel in ("IMG.JPG", "thumbs.db", os.path.join("keep", "a.jpeg"), os.path.join("skip", "b.jpeg")):
    shutil.copy(some, os.path.join(excl, rel))
js, paths = scan_json("excl", "--exclude", "*.jpg", "--exclude", "Thumbs.db",
                      "--exclude", winpath(os.path.join(excl, "skip")), winpath(excl))
check(paths == [ourpath(os.path.join(excl, "keep", "a.jpeg"))],
      "*.jpg, Thumbs.db and a backslashed path leave out IMG.JPG, thumbs.db, skip: %r" % paths)
w = js.get("walk", {})
check(w.get("excluded_files") == 2 and w.get("excluded_dirs") == 1, "counted: %r" % w)
shutil.rmtree(base)
done()
