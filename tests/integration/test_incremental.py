"""Incremental scans on a real file system (ext4 on a loop device): a
rescan of an unchanged tree reads nothing; a chmod moves the ctime, so the
file is read again and found unchanged (--trust-mtime skips that read); an
appended file is re-read; a rename keeps its record; a same-size rewrite
with its mtime put back is read again; a rename onto the path of a record
marked deleted takes that path (it wedged every later scan once); --full
reads everything and still marks deletions; a move to another file system
keeps its record through its content; deleted files are marked, then
purged; and the same file system attached as another device (another
st_dev) is still recognised by its UUID."""
import json
import os
import shutil
import subprocess
import time

from lib import (check, db_rows, done, export, loop_fs, mkcorpus, need_root, regular_files, run,
                 tempdir, xxh128)

need_root()


def scan(db, root, *extra):
    # A file read within a timestamp tick (20 ms here) of its last change is
    # read again by the next scan (racy: another change in the same tick
    # would leave its times as they were); the changes below are made just
    # before a scan, so let them age past that first.
    time.sleep(0.05)
    rc, out, err = run("scan", "--db", db, "--json", *extra, root)
    check(rc == 0, "scan ok: %s %s" % (out[-300:], err[-300:]))
    j = json.loads(out)
    return {"unchanged": j["unchanged"], "changed": j["changed"], "new": j["new"],
            "moved": j["moved"], "stored": j["files_read"], "rechecked": j["ctime_rechecked"],
            "new_content": j["ctime_new_content"], "deleted": j["deleted"],
            "relinked": j["relinked"], "unavailable": j["unavailable"], "out": out}


with tempdir("incr") as work, loop_fs("ext4", 256, rotational=False) as lfs:
    root = os.path.join(lfs.mnt, "photos")
    mkcorpus(root, "--files", 120, "--median", "20k", "--seed", 5)
    db = os.path.join(work, "i.db")

    s = scan(db, root)
    check(s["new"] == 120 and s["stored"] == 120, "first scan reads all: %s" % s)
    first = {r["path"]: r for r in export(db)}

    s = scan(db, root)
    check(s["unchanged"] == 120 and s["stored"] == 0, "no-change rescan reads nothing: %s" % s)
    rows = db_rows(db, "SELECT unchanged, changed, added, moved, deleted, files FROM scans"
                       " ORDER BY id DESC LIMIT 1")
    check(rows == [(120, 0, 0, 0, 0, 0)], "scans row counts: %s" % rows)

    files = sorted(first)
    os.chmod(files[0], 0o600)                  # ctime only
    with open(files[1], "ab") as f:            # content
        f.write(b"more")
    renamed = files[2] + ".renamed.jpg"
    os.rename(files[2], renamed)               # moves the ctime too, on ext4
    gone = files[3]
    os.unlink(gone)
    s = scan(db, root)
    check(s["unchanged"] == 116 and s["changed"] == 1 and s["moved"] == 1 and s["stored"] == 3
          and s["rechecked"] == 2 and s["new_content"] == 0,
          "chmod, append, rename, delete: %s" % s)
    check(s["deleted"] == 1, "deletion reported: %s" % s)
    now = {r["path"]: r for r in export(db)}
    check(now[files[1]]["content_hash"] == xxh128([files[1]])[files[1]], "changed file rehashed")
    check(files[2] not in now and renamed in now, "renamed record follows the file")
    check(now[renamed]["content_hash"] == first[files[2]]["content_hash"], "renamed, same hash")
    check(gone not in now, "deleted file not exported")
    check(db_rows(db, "SELECT first_scan FROM files WHERE path=?", (renamed,)) == [(1,)],
          "renamed record is the original one")
    check(db_rows(db, "SELECT count(*) FROM files WHERE deleted_at IS NOT NULL") == [(1,)],
          "deleted row kept")
    s = scan(db, root)
    check(s["unchanged"] == 119 and s["stored"] == 0, "then nothing to read: %s" % s)

    # --trust-mtime: a ctime that moved alone is no reason to read
    os.chmod(files[0], 0o644)
    s = scan(db, root, "--trust-mtime")
    check(s["unchanged"] == 119 and s["stored"] == 0 and s["rechecked"] == 0,
          "--trust-mtime does not read a chmod'ed file: %s" % s)

    # a same-size rewrite with its mtime put back (cp -p over a same-size
    # file, exiftool -P in place): only the ctime moved, and the content
    victim = files[5]
    st = os.stat(victim)
    with open(victim, "r+b") as f:
        f.seek(st.st_size // 2)
        b = f.read(1)
        f.seek(st.st_size // 2)
        f.write(bytes([b[0] ^ 0xFF]))
    os.utime(victim, ns=(st.st_atime_ns, st.st_mtime_ns))
    check(os.stat(victim).st_mtime_ns == st.st_mtime_ns and os.stat(victim).st_size == st.st_size,
          "size and mtime as before")
    s = scan(db, root)
    check(s["stored"] == 1 and s["rechecked"] == 1 and s["new_content"] == 1,
          "the rewrite is read again and found changed: %s" % s)
    now = {r["path"]: r for r in export(db)}
    check(now[victim]["content_hash"] == xxh128([victim])[victim],
          "its new content is indexed: %s" % now[victim]["content_hash"])

    # the wedge: scan (A, B); rm B; scan; mv A B; scan -> every later scan
    # failed with "UNIQUE constraint failed: files.path" until a purge
    a, b = files[6], files[7]
    os.unlink(b)
    s = scan(db, root)
    check(s["deleted"] == 1, "B marked deleted: %s" % s)
    a_id = db_rows(db, "SELECT id, first_scan FROM files WHERE path=? AND deleted_at IS NULL",
                   (a,))
    os.rename(a, b)
    s = scan(db, root)
    check(s["moved"] == 1 and s["stored"] == 1, "A renamed onto B's path: %s" % s)
    check(db_rows(db, "SELECT id, first_scan FROM files WHERE path=? AND deleted_at IS NULL",
                  (b,)) == a_id, "A's record took B's path")
    check(db_rows(db, "SELECT count(*) FROM files WHERE path=? AND deleted_at IS NOT NULL",
                  (b,)) == [(1,)], "B's deleted record kept as history")
    s = scan(db, root)
    check(s["unchanged"] == len(regular_files(root)) and s["stored"] == 0,
          "and the next scan is a quiet one: %s" % s)

    # --full reads every file and still marks deletions
    os.unlink(files[8])
    s = scan(db, root, "--full")
    n_now = len(regular_files(root))
    check(s["stored"] == n_now and s["deleted"] == 1, "--full reads all, marks the deletion: %s" % s)
    check(files[8] not in {r["path"] for r in export(db)}, "--full: deleted file not exported")

    # a move to another file system: the new file takes the old record over
    card = os.path.join(root, "card")
    os.mkdir(card)
    subprocess.run(["mount", "-t", "tmpfs", "tmpfs", card], check=True)
    try:
        moved_from = files[4]
        moved_to = os.path.join(card, os.path.basename(moved_from))
        subprocess.run(["mv", moved_from, moved_to], check=True)
        s = scan(db, root, "--cross-fs")
        check(s["new"] == 1 and s["stored"] == 1, "moved file read once: %s" % s)
        check(s["relinked"] == 1, "relink reported: %s" % s)
        rows = db_rows(db, "SELECT first_scan, deleted_at FROM files WHERE path=?", (moved_to,))
        check(rows == [(1, None)], "relinked record keeps its history: %s" % rows)
        check(db_rows(db, "SELECT count(*) FROM files WHERE path=?", (moved_from,)) == [(0,)],
              "no row left at the old path")
    finally:
        subprocess.run(["umount", card])
        os.rmdir(card)

    # the same file system under another device number
    check(lfs.reattach(), "attached as another loop device")
    s = scan(db, root)
    # the card went away with the file moved onto it; its file system was
    # not seen, so that record is kept, not marked deleted
    check(s["unchanged"] == len(regular_files(root)) and s["stored"] == 0,
          "recognised by its UUID after the device number changed: %s" % s)
    check(s["deleted"] == 0, "nothing marked deleted: %s" % s)
    check(s["unavailable"] == 1, "the card's file is unavailable, not gone: %s" % s)
    devs = db_rows(db, "SELECT DISTINCT dev FROM files WHERE deleted_at IS NULL AND ino > 0"
                       " AND path NOT LIKE ?", (card + "%",))
    check(devs == [(os.stat(root).st_dev,)], "device numbers refreshed: %s" % devs)
    check(db_rows(db, "SELECT count(*) FROM filesystems WHERE ident LIKE 'uuid:%'")[0][0] >= 1,
          "the file system is known by its UUID")

    # purge removes what was marked deleted, nothing else
    tombstones = db_rows(db, "SELECT count(*) FROM files WHERE deleted_at IS NOT NULL")[0][0]
    check(tombstones == 3, "deleted records: %d" % tombstones)
    rc, out, err = run("purge", "--db", db)
    check(rc == 0 and "%d records of deleted files removed" % tombstones in out,
          "purge: %s %s" % (out, err))
    check(db_rows(db, "SELECT count(*) FROM files WHERE deleted_at IS NOT NULL") == [(0,)],
          "no deleted rows left")
    check(len(export(db)) == len(regular_files(root)) + 1, "live rows untouched (+ the card's)")

    # the drive unplugged: its empty mount point is not an empty drive
    n = len(regular_files(root)) + 1  # and the card's
    subprocess.run(["umount", lfs.mnt], check=True)
    try:
        s = scan(db, lfs.mnt)
        check(s["stored"] == 0 and s["deleted"] == 0,
              "nothing marked deleted while the drive is away: %s" % s)
        check(s["unavailable"] == n, "its files reported unavailable: %s" % s)
        check(db_rows(db, "SELECT unavailable FROM scans ORDER BY id DESC LIMIT 1") == [(n,)],
              "the scans row counts them")
    finally:
        lfs.mount()
    s = scan(db, lfs.mnt)
    check(s["unchanged"] == n - 1 and s["stored"] == 0, "back again, nothing to read: %s" % s)

    # a file whose record has an error is tried again at every scan, and
    # counted as retried: nothing in it changed
    bad_root = os.path.join(work, "bad")
    os.makedirs(bad_root)
    good = sorted(regular_files(root))[:3]
    for g in good:
        shutil.copy(g, bad_root)
    with open(os.path.join(bad_root, "cut.jpg"), "wb") as f:
        f.write(b"\xff\xd8\xff\xe0\x00\x10JFIF\x00" + b"\x00" * 200)
    bdb = os.path.join(work, "bad.db")
    time.sleep(0.05)
    rc, out, err = run("scan", "--json", "--db", bdb, bad_root)
    check(rc == 1, "a file with an error: exit 1 (%d)" % rc)
    time.sleep(0.05)
    rc, out, err = run("scan", "--json", "--db", bdb, bad_root)
    j = json.loads(out)
    check(rc == 1 and j["unchanged"] == 3 and j["changed"] == 0 and j["retried"] == 1 and
          j["files_read"] == 1, "rescan: the file with an error retried, not 'changed': %s"
          % {k: j.get(k) for k in ("unchanged", "changed", "retried", "files_read")})
    check(db_rows(bdb, "SELECT changed, retried FROM scans ORDER BY id DESC LIMIT 1") == [(0, 1)],
          "the scans row counts it as retried")

    # a bench writes a row per order and run; the history of scans that
    # stats and service status show stays the scans'
    scan_ids = [r[0] for r in db_rows(bdb, "SELECT id FROM scans WHERE command = 'scan'")]
    rc, out, err = run("bench", "--db", bdb, "--runs", "2", "--orders", "physical,fs,random",
                       bad_root)
    check(rc == 0, "bench: %s" % err[-300:])
    benches = db_rows(bdb, "SELECT count(*) FROM scans WHERE command = 'bench'")[0][0]
    check(benches == 6, "bench recorded its 6 runs: %d" % benches)
    rc, out, err = run("stats", "--json", "--scans", "5", "--db", bdb)
    shown = [x["id"] for x in json.loads(out)["scans"]]
    check(sorted(shown) == sorted(scan_ids), "stats' last scans are the scans, not bench's "
          "runs: %s, scans %s" % (shown, scan_ids))
    rc, out, err = run("export", "--scans", "--db", bdb)
    check(sum(1 for line in out.splitlines() if '"command":"bench"' in line) == 6,
          "export --scans has every row, bench's too")

done()
