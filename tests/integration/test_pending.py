"""Perceptual hashes left for the next scan (issue 41, px_opts.phash_defer):
none is lost, across kills, renames, deletions and rewrites.

Real pictures of every hashed kind on ext4 on a loop device, its page
cache emptied before every scan (unmount, mount) so that every file comes
from the "disk": the shared corpus's camera JPEGs, and PNG and WebP
re-encodes of them made with Debian's own encoders (djpeg | pnmscale |
pnmtopng, cwebp), and among them 25-megapixel ramps (pgmramp) of at most
0.6 MB.  A loop device in memory serves a file far faster than one
extractor decodes it, a ramp hundreds of times faster whatever share of the
CPU each gets, so a default scan with --jobs 1 leaves hashes:

- the reference: a --phash-now scan into its own index: nothing deferred,
  every picture hashed;
- a default scan defers some (scan --json phash_deferred >= 1), says how
  many are pending (scan --json, stats --json, dupes --near), and every
  hash it did make is the reference's;
- the next scan reads exactly the pending ones (rehashed), defers none of
  them, and then every hash is the reference's;
- a model run: random renames, deletions, rewrites and new files between
  scans that are killed (SIGKILL) at random moments; PRAGMA integrity_check
  after each; then scans until nothing is pending (each completes what
  the one before left: at most three), and every live record's content
  hash and perceptual hash are those of a fresh --phash-now scan of the
  final tree.
"""
import json
import os
import random
import shutil
import signal
import subprocess
import time

import lib
from lib import BIN, check, db_rows, done, loop_fs, run, skip, sync_fs, tempdir

corpus = os.environ.get("SEEKLESS_CORPUS")
if not corpus or not os.path.isdir(corpus):
    skip("shared corpus not found at %s" % corpus)
for tool in ("djpeg", "pnmscale", "pnmtopng", "pnmflip", "pgmramp", "cwebp"):
    if shutil.which(tool) is None:
        skip("%s not installed" % tool)

rng = random.Random(4141)


def sh(cmd):
    subprocess.run(cmd, shell=True, check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)


def sources():
    """The corpus's largest JPEGs that djpeg decodes without a complaint."""
    names = sorted((n for n in os.listdir(corpus) if n.lower().endswith(".jpg")),
                   key=lambda n: -os.path.getsize(os.path.join(corpus, n)))
    out = []
    for n in names:
        p = subprocess.run(["djpeg", "-pnm", os.path.join(corpus, n)], capture_output=True)
        if p.returncode == 0 and not p.stderr and len(p.stdout) > 1 << 20:
            out.append(os.path.join(corpus, n))
        if len(out) == 8:
            break
    return out


def make_pictures(dest, srcs):
    """PNG and WebP re-encodes at a few sizes and turns, and the JPEGs."""
    os.makedirs(dest)
    made = []
    for i, src in enumerate(srcs):
        q = "'%s'" % src
        if i % 2 == 0:
            # Pictures far costlier to decode than to read (25 Mpx from
            # 0.1 to 0.6 MB), written first in each group so that they lie
            # before it on the disk.  While the extractor decodes one, the
            # reader serves the files after it whatever share of the CPU
            # each gets: the premise below does not rest on the machine's
            # speed.
            ramp = os.path.join(dest, "h%02d.png" % i)
            sh("pgmramp %s 5000 5000 | pnmtopng > '%s'"
               % (["-lr", "-tb", "-diag", "-ellipse"][i // 2 % 4], ramp))
            made.append(ramp)
        for k, (size, flip) in enumerate([(1600, "-lr"), (1200, "-tb"), (2000, "-r90")]):
            png = os.path.join(dest, "p%02d-%d.png" % (i, k))
            sh("djpeg -pnm %s | pnmscale -xysize %d %d | pnmflip %s | pnmtopng > '%s'"
               % (q, size, size, flip, png))
            made.append(png)
        for k, (size, qual) in enumerate([(1600, 80), (2400, 60)]):
            webp = os.path.join(dest, "w%02d-%d.webp" % (i, k))
            sh("cwebp -quiet -q %d -resize %d 0 %s -o '%s'" % (qual, size, q, webp))
            made.append(webp)
        jpg = os.path.join(dest, "j%02d.jpg" % i)
        shutil.copy(src, jpg)
        made.append(jpg)
    return made


lib.LEAVE_HASHES = True  # this test is about leaving them


def scan_json(fs, db, *extra, check_ok=True):
    fs.umount()
    fs.mount()  # the page cache of the file system emptied: a cold scan
    rc, out, err = run("scan", "--json", "--jobs", "1", "--db", db, *extra, fs.mnt)
    if check_ok:
        check(rc == 0, "scan %s exit %d: %s" % (" ".join(extra), rc, err[-500:]))
    return json.loads(out) if out.strip() else {}


PICS = "format IN ('jpeg', 'png', 'webp')"


def hashes(db):
    return {p: (h, s, c) for p, h, s, c in db_rows(
        db, "SELECT path, phash, phash_src, content_hash FROM files "
        "WHERE deleted_at IS NULL AND " + PICS)}


def pending(db):
    return db_rows(db, "SELECT count(*) FROM files WHERE deleted_at IS NULL AND "
                   "phash_src IS NULL AND error IS NULL AND " + PICS)[0][0]


srcs = sources()
check(len(srcs) >= 4, "corpus JPEGs djpeg reads cleanly: %d" % len(srcs))
with tempdir("pending", base="/dev/shm") as work, loop_fs("ext4", 1024) as fs:
    pics = os.path.join(fs.mnt, "pics")
    made = make_pictures(pics, srcs)
    spare = os.path.join(work, "spare")  # pictures for rewrites and new files
    shutil.copytree(pics, spare)
    sync_fs(pics)

    # --- the reference, and the first scan that defers
    ref_db = os.path.join(work, "ref.db")
    ref_s = scan_json(fs, ref_db, "--phash-now")
    ref = hashes(ref_db)
    check(len(ref) == len(made), "reference: %d pictures of %d" % (len(ref), len(made)))
    check(ref_s.get("phash_deferred") == 0 and ref_s.get("phash_pending") == 0,
          "--phash-now defers nothing: %s" % {k: ref_s.get(k) for k in ("phash_deferred",
                                                                       "phash_pending")})
    check(all(s not in (None, "none") for h, s, c in ref.values()),
          "--phash-now: every picture hashed")

    db = os.path.join(work, "i.db")
    s1 = scan_json(fs, db)
    deferred = s1.get("phash_deferred", -1)
    left = pending(db)
    print("first scan: %d of %d pictures deferred, %.2f s (reference %.2f s)"
          % (deferred, len(made), s1.get("wall_s", 0), ref_s.get("wall_s", 0)))
    check(deferred >= 1, "a disk faster than hashing leaves hashes: %d deferred" % deferred)
    check(left == deferred and s1.get("phash_pending") == left,
          "pending: scan says %s deferred %d, the index holds %d"
          % (s1.get("phash_pending"), deferred, left))
    rc, out, err = run("stats", "--json", "--db", db, check_rc=0)
    check(json.loads(out).get("phash_pending") == left, "stats --json phash_pending")
    rc, out, err = run("stats", "--db", db, check_rc=0)
    check(("without a perceptual hash yet: %d" % left) in out, "stats says it: %s" % out[:300])
    rc, out, err = run("dupes", "--near", "--db", db, check_rc=0)
    check(("%d pictures have no perceptual hash yet" % left) in err, "dupes --near says it")
    got = hashes(db)
    wrong = [p for p, v in got.items() if v[1] is not None and v != ref.get(p)]
    check(not wrong, "hashes made while deferring others are the reference's: %s" % wrong[:3])

    s2 = scan_json(fs, db)
    check(s2.get("rehashed") == left and s2.get("files_read") == left,
          "the next scan reads the %d pending, nothing else: rehashed %s, read %s"
          % (left, s2.get("rehashed"), s2.get("files_read")))
    check(s2.get("phash_deferred") == 0 and s2.get("phash_pending") == 0 and pending(db) == 0,
          "... and defers none of them")
    check(hashes(db) == ref, "after it, every hash is the reference's")
    rc, out, err = run("dupes", "--near", "--db", db, check_rc=0)
    check("no perceptual hash yet" not in err, "dupes --near: nothing pending")

    # --- the model: changes, kills, and scans until nothing is pending
    whole = max(s1.get("wall_s", 1.0), 0.2)
    db = os.path.join(work, "m.db")
    spares = sorted(os.listdir(spare))
    killed = 0
    most_pending = 0
    for rnd in range(12):
        live = sorted(os.listdir(pics))
        for _ in range(rng.randint(1, 4)):
            op = rng.choice(["rename", "delete", "rewrite", "add"])
            name = rng.choice(live) if live else None
            if op == "rename" and name:
                new = "r%d-%s" % (rnd, name)
                os.rename(os.path.join(pics, name), os.path.join(pics, new))
                live[live.index(name)] = new
            elif op == "delete" and name and len(live) > 10:
                os.unlink(os.path.join(pics, name))
                live.remove(name)
            elif op == "rewrite" and name:
                other = [s for s in spares if s.rsplit(".", 1)[1] == name.rsplit(".", 1)[1]]
                shutil.copyfile(os.path.join(spare, rng.choice(other)), os.path.join(pics, name))
            else:
                s = rng.choice(spares)
                new = "n%d-%s" % (rnd, s)
                shutil.copy(os.path.join(spare, s), os.path.join(pics, new))
                live.append(new)
        sync_fs(pics)
        fs.umount()
        fs.mount()
        p = subprocess.Popen([BIN, "scan", "--quiet", "--jobs", "1", "--db", db, fs.mnt],
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        if rnd % 4 != 3:  # three in four are killed
            time.sleep(whole * rng.uniform(0.02, 0.6))
            if p.poll() is None:
                p.send_signal(signal.SIGKILL)
                killed += 1
        err = p.communicate()[1].decode(errors="replace")
        check(p.returncode in (0, -signal.SIGKILL), "round %d: scan exit %d: %s"
              % (rnd, p.returncode, err[-300:]))
        if os.path.exists(db):
            check(db_rows(db, "PRAGMA integrity_check") == [("ok",)], "round %d: integrity" % rnd)
            most_pending = max(most_pending, pending(db))
    final_ref_db = os.path.join(work, "final-ref.db")
    final_ref = hashes(final_ref_db) if scan_json(fs, final_ref_db, "--phash-now") else {}
    scans = 0
    while scans < 3:
        s = scan_json(fs, db)
        scans += 1
        if s.get("phash_pending") == 0:
            break
    print("model: %d rounds, %d scans killed, at most %d pending; %d scans to complete; "
          "%d pictures at the end" % (12, killed, most_pending, scans, len(final_ref)))
    check(killed >= 3, "scans were killed mid-way: %d" % killed)
    check(most_pending > 0, "the rounds left hashes pending")
    check(pending(db) == 0, "nothing pending after %d scans: %d" % (scans, pending(db)))
    got = hashes(db)
    check(set(got) == set(final_ref), "the same pictures as a fresh scan: %d against %d"
          % (len(got), len(final_ref)))
    wrong = [p for p in final_ref if got.get(p) != final_ref[p]]
    check(not wrong, "every content and perceptual hash is a fresh scan's: %d differ, e.g. %s"
          % (len(wrong), [(p, got.get(p), final_ref[p]) for p in wrong[:2]]))
done()
