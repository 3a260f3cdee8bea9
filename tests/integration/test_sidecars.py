"""XMP sidecars speak for their images: a model-based test of the link.

Random sequences of operations in two folders of a real file system:
images created and rewritten (JPEGs made by libjpeg-turbo's cjpeg, some
with an XMP rating and label of their own spliced in), sidecars created,
edited in place, renamed, moved, deleted, named every way the rule
distinguishes (IMG.xmp, IMG.XMP, IMG.JPG.xmp, IMG.x.jpg beside IMG.xmp,
names that merely begin like another, a folder named like a stem), files
that are named *.xmp but hold no XMP, files of no known format.  After
each step an incremental scan (sometimes --full), then `export`, checked
against a Python reference of the rule (docs/extraction.md, "Sidecars")
over what the test itself wrote: every live record's `sidecar`, and its
rating and label (the sidecar's where it has one, else the image's own).

Then, deterministically: a sidecar edited while its image is not reads
one file and changes the image's exported values; an index from before
the links (schema 10: the column dropped, the version set back) gets its
links on opening, with no file read by the next scan.

    test_sidecars.py [--seed N] [--steps N]
"""
import argparse
import json
import os
import random
import sqlite3
import subprocess
import sys
import time

from lib import BIN, check, done, export, run, tempdir

ap = argparse.ArgumentParser()
ap.add_argument("--seed", type=int, default=None)
ap.add_argument("--steps", type=int, default=120)
args = ap.parse_args()
seed = args.seed if args.seed is not None else random.SystemRandom().randrange(1 << 32)
rng = random.Random(seed)
print("seed %d" % seed)

FOLDERS = ["a", "b", "a/P1.d"]
STEMS = ["P1", "P1.x", "P1 (1)", "P1-edit", "p1", "P2", "P2.x"]
IMAGE_EXTS = [".jpg", ".JPG", ".cr2", ""]
LABELS = ["Red", "Blue", "Green", "Purple"]


def cjpeg(token):
    """A small real JPEG, made by libjpeg-turbo; token makes it unique."""
    w, h = 16, 8
    px = bytes((x * 16 + token * 7) % 256 for y in range(h) for x in range(w) for c in range(3))
    ppm = b"P6 %d %d 255\n" % (w, h) + px
    out = subprocess.run(["cjpeg", "-quality", "80"], input=ppm, capture_output=True,
                         check=True).stdout
    # a comment with the token, so no two images have the same bytes
    com = b"token %d" % token
    return out[:2] + b"\xff\xfe" + (len(com) + 2).to_bytes(2, "big") + com + out[2:]


def xmp_packet(rating, label):
    attrs = ""
    if rating is not None:
        attrs += ' xmp:Rating="%d"' % rating
    if label is not None:
        attrs += ' xmp:Label="%s"' % label
    return ('<x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF'
            ' xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">'
            '<rdf:Description rdf:about="" xmlns:xmp="http://ns.adobe.com/xap/1.0/"%s/>'
            '</rdf:RDF></x:xmpmeta>' % attrs).encode()


def with_xmp(jpeg, rating, label):
    if rating is None and label is None:
        return jpeg
    body = b"http://ns.adobe.com/xap/1.0/\0" + xmp_packet(rating, label)
    return jpeg[:2] + b"\xff\xe1" + (len(body) + 2).to_bytes(2, "big") + body + jpeg[2:]


def rand_values():
    rating = rng.choice([None, -1, 0, 1, 2, 3, 4, 5])
    label = rng.choice([None] + LABELS)
    return rating, label


class Model:
    """What the test wrote: rel path -> (kind, rating, label).  Kinds: jpeg
    (its own values), xmp (a sidecar's), badxmp (named .xmp, not XMP), txt."""

    def __init__(self, root):
        self.root = root
        self.files = {}
        self.token = 0

    def write(self, rel, kind, rating=None, label=None):
        path = os.path.join(self.root, rel)
        if os.path.isdir(path):
            return False
        self.token += 1
        if kind == "jpeg":
            data = with_xmp(cjpeg(self.token), rating, label)
        elif kind == "xmp":
            data = xmp_packet(rating, label)
        elif kind == "badxmp":
            data = b"not xmp at all %d\n" % self.token
        else:
            data = b"notes %d\n" % self.token
        with open(path, "wb") as f:
            f.write(data)
        self.files[rel] = (kind, rating, label)
        return True

    def expect(self):
        """rel path -> (sidecar rel path or None, rating, label)."""
        by_dir = {}
        for rel in self.files:
            by_dir.setdefault(os.path.dirname(rel), []).append(rel)
        out = {}
        for rel, (kind, rating, label) in self.files.items():
            d, name = os.path.split(rel)
            stem, ext = os.path.splitext(name)
            side = None
            if ext.lower() != ".xmp":
                def find(target):
                    c = sorted(r for r in by_dir[d]
                               if self.files[r][0] == "xmp" and
                               os.path.splitext(os.path.basename(r))[1].lower() == ".xmp" and
                               os.path.splitext(os.path.basename(r))[0] == target)
                    return c[0] if c else None
                side = find(name)
                if side is None and kind == "jpeg":
                    side = find(stem)
            if side is not None:
                _, sr, sl = self.files[side]
                rating = sr if sr is not None else rating
                label = sl if sl is not None else label
            out[rel] = (side, rating, label)
        return out


def rand_name(kind):
    stem = rng.choice(STEMS)
    if kind == "jpeg":
        return stem + rng.choice(IMAGE_EXTS)
    if kind in ("xmp", "badxmp"):
        form = rng.random()
        if form < 0.4:
            return stem + rng.choice([".xmp", ".xmp", ".XMP"])
        return stem + rng.choice(IMAGE_EXTS[:3]) + rng.choice([".xmp", ".xmp", ".XMP"])
    return stem + ".txt"


def step_ops(m, log):
    for _ in range(rng.randint(1, 3)):
        op = rng.random()
        live = sorted(m.files)
        if op < 0.25 or not live:
            kind = "jpeg"
            rel = os.path.join(rng.choice(FOLDERS), rand_name(kind))
            r, l = rand_values() if rng.random() < 0.5 else (None, None)
            if m.write(rel, kind, r, l):
                log.append("image %s %s %s" % (rel, r, l))
        elif op < 0.5:
            rel = os.path.join(rng.choice(FOLDERS), rand_name("xmp"))
            r, l = rand_values()
            if m.write(rel, "xmp", r, l):
                log.append("sidecar %s %s %s" % (rel, r, l))
        elif op < 0.6:
            xmps = [p for p in live if m.files[p][0] == "xmp"]
            if xmps:
                rel = rng.choice(xmps)
                r, l = rand_values()
                m.write(rel, "xmp", r, l)
                log.append("edit %s %s %s" % (rel, r, l))
        elif op < 0.75:
            src = rng.choice(live)
            kind = m.files[src][0]
            dst = os.path.join(rng.choice(FOLDERS), rand_name(kind if rng.random() < 0.8
                                                              else rng.choice(["jpeg", "xmp"])))
            if dst != src and not os.path.isdir(os.path.join(m.root, dst)):
                os.rename(os.path.join(m.root, src), os.path.join(m.root, dst))
                m.files[dst] = m.files.pop(src)
                log.append("rename %s -> %s" % (src, dst))
        elif op < 0.87:
            rel = rng.choice(live)
            os.unlink(os.path.join(m.root, rel))
            del m.files[rel]
            log.append("delete %s" % rel)
        elif op < 0.94:
            rel = os.path.join(rng.choice(FOLDERS), rand_name("badxmp"))
            if m.write(rel, "badxmp"):
                log.append("badxmp %s" % rel)
        else:
            rel = os.path.join(rng.choice(FOLDERS), rand_name("txt"))
            if m.write(rel, "txt"):
                log.append("txt %s" % rel)


def compare(m, db, what):
    want = m.expect()
    got = {}
    for r in export(db):
        rel = os.path.relpath(r["path"], m.root)
        side = os.path.relpath(r["sidecar"], m.root) if r["sidecar"] else None
        got[rel] = (side, r["rating"], r["label"])
    bad = sorted(p for p in set(want) | set(got) if want.get(p) != got.get(p))
    for p in bad[:5]:
        print("  %s: want %s, got %s" % (p, want.get(p), got.get(p)), file=sys.stderr)
    return check(not bad, "%s: %d records as the rule says (%d differ)" %
                 (what, len(want) - len(bad), len(bad)))


with tempdir("sidecars") as work:
    root = os.path.join(work, "photos")
    for d in FOLDERS:
        os.makedirs(os.path.join(root, d))
    db = os.path.join(work, "index.db")
    m = Model(root)
    linked = steps = 0
    for step in range(args.steps):
        log = []
        step_ops(m, log)
        flags = ["--full"] if rng.random() < 0.1 else []
        rc, out, err = run("scan", "--db", db, "--quiet", *flags, root)
        if not check(rc == 0, "step %d: scan exit %d: %s" % (step, rc, err[-300:])):
            break
        if not compare(m, db, "step %d" % step):
            print("seed %d, step %d: %s" % (seed, step, "; ".join(log)), file=sys.stderr)
            break
        linked += sum(1 for v in m.expect().values() if v[0])
        steps += 1
    print("%d steps, %d image-sidecar links checked" % (steps, linked))
    check(steps == args.steps and linked > args.steps,
          "every step checked (%d of %d), with links among them (%d)" %
          (steps, args.steps, linked))

    # --- a sidecar edited alone: one file read, the image's values change
    solo = os.path.join(work, "solo")
    os.makedirs(solo)
    m2 = Model(solo)
    m2.write("IMG_0001.CR2", "jpeg", 2, "Red")
    m2.write("IMG_0001.CR2.xmp", "xmp", 4, None)
    m2.write("IMG_0001.xmp", "xmp", 1, "Blue")
    db2 = os.path.join(work, "solo.db")
    time.sleep(0.05)
    run("scan", "--db", db2, "--quiet", solo, check_rc=0)
    compare(m2, db2, "image with two sidecars")
    time.sleep(0.05)
    m2.write("IMG_0001.CR2.xmp", "xmp", 5, "Green")
    time.sleep(0.05)
    rc, out, err = run("scan", "--db", db2, "--json", solo, check_rc=0)
    j = json.loads(out)
    check(j["files_read"] == 1, "a sidecar edited alone reads one file: %d" % j["files_read"])
    check(compare(m2, db2, "after the sidecar's edit") and
          m2.expect()["IMG_0001.CR2"] == ("IMG_0001.CR2.xmp", 5, "Green"),
          "the image's exported values are the edited sidecar's")
    os.unlink(os.path.join(solo, "IMG_0001.CR2.xmp"))
    del m2.files["IMG_0001.CR2.xmp"]
    rc, out, err = run("scan", "--db", db2, "--json", solo, check_rc=0)
    check(json.loads(out)["files_read"] == 0, "a sidecar deleted reads nothing")
    check(compare(m2, db2, "after the sidecar's deletion") and
          m2.expect()["IMG_0001.CR2"] == ("IMG_0001.xmp", 1, "Blue"),
          "the image falls back to IMG_0001.xmp")

    # --- an index from before the links: linked on opening, nothing read
    # (a scan first, the tree quiet: files written within a timestamp tick
    # of the last scan are read once more, racy, whatever the links)
    time.sleep(0.05)
    run("scan", "--db", db, "--quiet", root, check_rc=0)
    with sqlite3.connect(db) as h:
        h.execute("DROP INDEX files_sidecar")
        h.execute("ALTER TABLE files DROP COLUMN sidecar_id")
        h.execute("ALTER TABLE files DROP COLUMN embedded_video")
        h.execute("ALTER TABLE files DROP COLUMN btime_ns")  # schema 12's
        h.execute("ALTER TABLE scans DROP COLUMN retried")   # schema 13's
        h.execute("DROP TABLE bench_orders")                 # schema 14's
        h.execute("DROP TABLE benches")
        h.execute("DROP INDEX files_size")                   # schema 15's
        h.execute("ALTER TABLE files DROP COLUMN quick_hash")
        h.execute("ALTER TABLE scans DROP COLUMN quick")
        h.execute("PRAGMA user_version=10")
    h.close()
    check(compare(m, db, "an index upgraded from schema 10"), "upgrade links")
    rc, out, err = run("scan", "--db", db, "--json", root, check_rc=0)
    # (the records are this version's: none is stale)
    check(json.loads(out)["files_read"] == 0, "the upgrade reads no file: %s" % out[:200])
    compare(m, db, "after the upgrade's first scan")
done()
