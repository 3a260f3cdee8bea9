"""Incremental scans on a real file system (ext4 on a loop device): a
rescan of an unchanged tree reads nothing; chmod is not a change; an
appended file is re-read; a rename keeps its record unread; a move to
another file system keeps its record through its content; deleted files
are marked, then purged; and the same file system attached as another
device (another st_dev) is still recognised by its UUID."""
import os
import re
import subprocess

from lib import (check, db_rows, done, export, loop_fs, mkcorpus, need_root, regular_files, run,
                 tempdir, xxh128)

need_root()


def scan(db, root, *extra):
    rc, out, err = run("scan", "--db", db, *extra, root)
    check(rc == 0, "scan ok: %s %s" % (out[-300:], err[-300:]))
    m = re.search(r"index\s+(\d+) unchanged \(not read\), (\d+) changed, (\d+) new, (\d+) moved",
                  out)
    read = re.search(r"seekless scan: \w+: (\d+) files", out)
    return {"unchanged": int(m.group(1)), "changed": int(m.group(2)), "new": int(m.group(3)),
            "moved": int(m.group(4)), "stored": int(read.group(1)), "out": out}


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
    os.rename(files[2], renamed)
    gone = files[3]
    os.unlink(gone)
    s = scan(db, root)
    check(s["unchanged"] == 117 and s["changed"] == 1 and s["moved"] == 1 and s["stored"] == 1,
          "chmod, append, rename, delete: %s" % s)
    check("1 files no longer present marked deleted" in s["out"], "deletion reported")
    now = {r["path"]: r for r in export(db)}
    check(now[files[1]]["content_hash"] == xxh128([files[1]])[files[1]], "changed file rehashed")
    check(files[2] not in now and renamed in now, "renamed record follows the file")
    check(now[renamed]["content_hash"] == first[files[2]]["content_hash"], "renamed, same hash")
    check(gone not in now, "deleted file not exported")
    check(db_rows(db, "SELECT first_scan FROM files WHERE path=?", (renamed,)) == [(1,)],
          "renamed record is the original one")
    check(db_rows(db, "SELECT count(*) FROM files WHERE deleted_at IS NOT NULL") == [(1,)],
          "deleted row kept")

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
        check("1 moved across file systems" in s["out"], "relink reported: " + s["out"])
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
    # 118: the card went away with the file moved onto it; its file system
    # was not seen, so that record is kept, not marked deleted
    check(s["unchanged"] == 118 and s["stored"] == 0,
          "recognised by its UUID after the device number changed: %s" % s)
    check("no longer present" not in s["out"], "nothing marked deleted: " + s["out"])
    check("1 files on file systems this scan did not see" in s["out"],
          "the card's file is unavailable, not gone: " + s["out"])
    devs = db_rows(db, "SELECT DISTINCT dev FROM files WHERE deleted_at IS NULL AND ino > 0"
                       " AND path NOT LIKE ?", (card + "%",))
    check(devs == [(os.stat(root).st_dev,)], "device numbers refreshed: %s" % devs)
    check(db_rows(db, "SELECT count(*) FROM filesystems WHERE ident LIKE 'uuid:%'")[0][0] >= 1,
          "the file system is known by its UUID")

    # purge removes what was marked deleted, nothing else
    rc, out, err = run("purge", "--db", db)
    check(rc == 0 and "1 records of deleted files removed" in out, "purge: %s %s" % (out, err))
    check(db_rows(db, "SELECT count(*) FROM files WHERE deleted_at IS NOT NULL") == [(0,)],
          "no deleted rows left")
    check(len(export(db)) == len(regular_files(root)) + 1, "live rows untouched (+ the card's)")

    # the drive unplugged: its empty mount point is not an empty drive
    n = len(regular_files(root)) + 1  # and the card's
    subprocess.run(["umount", lfs.mnt], check=True)
    try:
        s = scan(db, lfs.mnt)
        check(s["stored"] == 0 and "no longer present" not in s["out"],
              "nothing marked deleted while the drive is away: " + s["out"])
        check("%d files on file systems this scan did not see" % n in s["out"],
              "its files reported unavailable: " + s["out"])
        check(db_rows(db, "SELECT unavailable FROM scans ORDER BY id DESC LIMIT 1") == [(n,)],
              "the scans row counts them")
    finally:
        lfs.mount()
    s = scan(db, lfs.mnt)
    check(s["unchanged"] == n - 1 and s["stored"] == 0, "back again, nothing to read: %s" % s)

done()
