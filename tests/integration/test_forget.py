"""Forgetting a file system gone for good (`purge --file-system`).

A photo drive A and a card B (real ext4 and xfs on loop devices) are
indexed; the card is unplugged, and its records stay live as unavailable,
as they must while it may come back.  `stats` lists both file systems,
the card's with the scan that last walked it, each with the identity blkid
gives, the type and mount point findmnt gives, and whether it is mounted
now.  While the card is plugged in, forgetting it is refused without
--force (exit 2, saying how many records would go, the index untouched),
and --dry-run counts what SQLite counts.  Then, the card unplugged:
  - a name that is no file system's, or a mount point two drives were
    last seen at in turn (a second card C, mounted at the same place),
    is refused (exit 2), naming both drives in the second case;
  - `purge --file-system` with the card's identity removes exactly its
    records, live and deleted, and its row, and nothing of A or C (checked
    against os.walk of what is left and counted by SQLite itself); the
    stored change-journal positions go too (a volume forgotten while it
    is there must be walked again, not trusted to be quiet);
  - plugged in again, the card is read as new: every file a new record,
    with the hash xxh128sum gives.
"""
import json
import os
import sqlite3
import subprocess
import tempfile

from lib import (check, db_rows, done, export, loop_fs, mkcorpus, regular_files, run, tempdir,
                 xxh128)


def scan(db, *roots):
    rc, out, err = run("scan", "--db", db, "--json", *roots)
    check(rc == 0, "scan ok: %s %s" % (out[-300:], err[-300:]))
    return json.loads(out)


def file_systems(db):
    """{identity: its object} from stats --json."""
    rc, out, err = run("stats", "--db", db, "--json", check_rc=0)
    return {g["id"]: g for g in json.loads(out)["file_systems"]}


def blkid_uuid(dev):
    p = subprocess.run(["blkid", "-p", "-s", "UUID", "-o", "value", dev], capture_output=True,
                       text=True)
    return p.stdout.strip()


def fstype_at(mnt):
    p = subprocess.run(["findmnt", "-n", "-o", "FSTYPE", "--mountpoint", mnt],
                       capture_output=True, text=True)
    return p.stdout.strip()


with tempdir("forget") as work, loop_fs("ext4", 128, rotational=False) as a, \
        loop_fs("xfs", 300, rotational=False) as b, loop_fs("ext4", 64, rotational=False) as c:
    db = os.path.join(work, "i.db")
    mkcorpus(os.path.join(a.mnt, "photos"), "--files", 30, "--median", "20k", "--seed", 3)
    mkcorpus(os.path.join(b.mnt, "DCIM"), "--files", 12, "--median", "20k", "--seed", 4)
    mkcorpus(os.path.join(c.mnt, "DCIM"), "--files", 5, "--median", "20k", "--seed", 6)
    on_a = regular_files(a.mnt)
    on_b = regular_files(b.mnt)
    scan(db, a.mnt, b.mnt)
    os.unlink(on_b[0])  # one record of the card's marked deleted
    on_b = on_b[1:]
    s = scan(db, a.mnt, b.mnt)
    check(s["deleted"] == 1, "a deleted file on the card: %s" % s["deleted"])
    fs = file_systems(db)
    check(len(fs) == 2 and any(f["last_mount"] == a.mnt for f in fs.values()),
          "stats lists the two file systems: %s" % fs)
    for d, files, deleted in ((a, on_a, 0), (b, on_b, 1)):
        f = [f for f in fs.values() if f["last_mount"] == d.mnt]
        if not check(len(f) == 1, "one file system last at %s: %s" % (d.mnt, fs)):
            continue
        f = f[0]
        check(f["id"] == "uuid:" + blkid_uuid(d.loop) and f["fstype"] == fstype_at(d.mnt) ==
              d.fstype and f["present"] is True and f["mounted_at"] == d.mnt,
              "%s: the identity blkid gives, the type findmnt gives, mounted: %s" % (d.mnt, f))
        check(f["files"] == len(files) and f["deleted"] == deleted,
              "%s: its live and deleted records: %s" % (d.mnt, f))
    ident_b = [i for i, f in fs.items() if f["last_mount"] == b.mnt]
    ident_b = ident_b[0] if ident_b else ""
    want_b = xxh128(on_b)

    # the card plugged in: forgetting it is refused, counted, not done
    with_b = db_rows(db, "SELECT count(*) FROM files f JOIN filesystems s ON s.id = f.fs_id"
                         " WHERE s.ident = ?", (ident_b,))[0][0]
    before = db_rows(db, "SELECT * FROM files ORDER BY id")
    rc, out, err = run("purge", "--db", db, "--file-system", ident_b)
    check(rc == 2 and "is mounted at %s now" % b.mnt in err and
          "would remove %d records (%d of files there now, 1 marked deleted)"
          % (with_b, len(on_b)) in err,
          "a mounted card is not forgotten without --force: %d %s" % (rc, err))
    rc, out, err = run("purge", "--db", db, "--file-system", b.mnt, "--dry-run", "--json",
                       check_rc=0)
    check(json.loads(out) == {"removed": 0, "file_system": ident_b, "present": True,
                              "mounted_at": b.mnt, "live": len(on_b), "deleted": 1,
                              "dry_run": True, "would_remove": with_b},
          "--dry-run by its mount point: %s" % out)
    check(db_rows(db, "SELECT * FROM files ORDER BY id") == before, "nothing removed")

    # the card unplugged: unavailable, not deleted
    b.umount()
    s = scan(db, a.mnt, b.mnt)
    check(s["unavailable"] == len(on_b) and s["deleted"] == 0,
          "the card's records unavailable: %s, %s" % (s["unavailable"], s["deleted"]))
    check(len(export(db)) == len(on_a) + len(on_b), "and still live")

    # another card at the same place, indexed there once
    subprocess.run(["umount", c.mnt], check=True)
    subprocess.run(["mount", c.loop, b.mnt], check=True)
    try:
        on_c = regular_files(b.mnt)
        scan(db, b.mnt)
        # another drive at the card's old place does not make the card there
        rc, out, err = run("purge", "--db", db, "--file-system", ident_b, "--dry-run",
                           "--json", check_rc=0)
        check(json.loads(out)["present"] is False,
              "the second card at its mount point is not the card: %s" % out)
    finally:
        subprocess.run(["umount", b.mnt], check=True)
        c.mount()
    # (the empty mount point's own file system is known now too)
    fs = file_systems(db)
    check(sum(f["last_mount"] == b.mnt for f in fs.values()) == 2,
          "two file systems last seen at the card's mount point: %s" % fs)
    check(fs.get(ident_b, {}).get("present") is False and fs[ident_b]["mounted_at"] is None,
          "the card is not mounted now: %s" % fs.get(ident_b))
    # the card mounted somewhere else is still the card
    elsewhere = tempfile.mkdtemp(prefix="seekless-mnt-elsewhere-")
    subprocess.run(["mount", b.loop, elsewhere], check=True)
    try:
        f = file_systems(db).get(ident_b, {})
        check(f.get("present") is True and f.get("mounted_at") == elsewhere and
              f.get("last_mount") == b.mnt, "mounted elsewhere, stats says where: %s" % f)
        rc, out, err = run("purge", "--db", db, "--file-system", ident_b)
        check(rc == 2 and "is mounted at %s now" % elsewhere in err,
              "and purge refuses: %d %s" % (rc, err))
    finally:
        subprocess.run(["umount", elsewhere], check=True)
        os.rmdir(elsewhere)

    rc, out, err = run("purge", "--db", db, "--file-system", "/no/such/drive")
    check(rc == 2 and "no file system in the index is '/no/such/drive'" in err,
          "an unknown name is refused: %d %s" % (rc, err))
    rc, out, err = run("purge", "--db", db, "--file-system", b.mnt + "/")
    others = [i for i in fs if i != ident_b and fs[i]["last_mount"] == b.mnt]
    check(rc == 2 and "2 file systems were last mounted at" in err and ident_b in err and
          len(others) == 1 and others[0] in err,
          "a mount point two drives shared is refused, naming both: %d %s" % (rc, err))
    rc, out, err = run("purge", "--db", db, "--file-system", ident_b, "--older-than", "3")
    check(rc == 2, "--file-system with --older-than is refused: %d" % rc)
    check(len(export(db)) == len(on_a) + len(on_b) + len(on_c), "nothing removed by refusals")

    # forget the first card by the identity stats gave: gone, so no --force
    check(with_b == len(on_b) + 1, "its records, live and deleted: %d" % with_b)
    with sqlite3.connect(db) as h:
        h.execute("INSERT INTO journals VALUES('\\\\?\\Volume{x}\\', 1, 2, 1)")
    rc, out, err = run("purge", "--db", db, "--file-system", ident_b, "--json")
    check(rc == 0 and json.loads(out) == {"removed": with_b, "file_system": ident_b,
                                          "present": False, "mounted_at": None,
                                          "live": len(on_b), "deleted": 1},
          "purge --file-system --json: %d %s %s" % (rc, out, err))
    recs = export(db)
    left = sorted(r["path"] for r in recs)
    check(left == sorted(on_a + on_c), "exactly A's and the second card's records are left")
    check(db_rows(db, "SELECT count(*) FROM files WHERE deleted_at IS NOT NULL") == [(0,)],
          "its deleted record went too")
    check(db_rows(db, "SELECT count(*) FROM filesystems WHERE ident = ?", (ident_b,)) == [(0,)]
          and ident_b not in file_systems(db), "its row is gone, and stats no longer lists it")
    check(db_rows(db, "SELECT count(*) FROM journals") == [(0,)], "journal positions dropped")
    check(db_rows(db, "PRAGMA integrity_check") == [("ok",)], "index intact")
    rc, out, err = run("purge", "--db", db, "--file-system", ident_b)
    check(rc == 2, "forgotten once: a second time it is unknown (%d)" % rc)

    # back again: read as new
    b.mount()
    s = scan(db, a.mnt, b.mnt)
    check(s["new"] == len(on_b) and s["unchanged"] == len(on_a),
          "the card read as new: %s new, %s unchanged" % (s["new"], s["unchanged"]))
    by = {r["path"]: r for r in export(db)}
    check(all(by[p]["content_hash"] == want_b[p] for p in on_b), "with xxh128sum's hashes")
    check(ident_b in file_systems(db), "and known again by the same identity")
done()
