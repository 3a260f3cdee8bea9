"""seekless stats: the counts agree with the tree itself (totals by os.walk
and stat; by format, camera and year as exiftool reads the files; the
error and the deletion the test made), and the last scans list each
disk's order and speed, so a sorted and an unsorted run sit side by side;
--json gives the same as one document, each file system an object whose
every field is checked against what findmnt, stat -f and SQLite say.
export --scans gives each scan's roots as an array.  purge --file-system
takes the identity stats gives; on a file system mounted now it refuses
without --force (exit 2, the index untouched), --dry-run counts what
SQLite counts and changes nothing, and --force removes exactly those
records."""
import collections
import json
import os
import shutil
import subprocess
import tempfile

from lib import check, db_rows, done, mkcorpus, regular_files, run, skip, tempdir


FS_KEYS = {"id", "alt", "fstype", "last_mount", "present", "mounted_at", "last_scan",
           "last_walked", "files", "bytes", "deleted"}


def findmnt(path):
    """(mount point, type) of the file system holding path, as findmnt
    says; stat -f must agree on tmpfs (it calls ext4 "ext2/ext3")."""
    p = subprocess.run(["findmnt", "-n", "-o", "TARGET,FSTYPE", "--target", path],
                       capture_output=True, text=True, check=True)
    target, fstype = p.stdout.splitlines()[-1].rsplit(None, 1)
    return target.strip(), fstype


def mounted_now():
    with open("/proc/self/mounts") as f:
        return {line.split()[1].replace("\\040", " ") for line in f}


def check_file_systems(db, roots):
    """stats --json: a file system is an object of separate fields, each
    what the index and the machine say, not one formatted string."""
    rc, out, err = run("stats", "--db", db, "--json", check_rc=0)
    fss = json.loads(out)["file_systems"]
    rows = {r[0]: r for r in db_rows(
        db, "SELECT fs.ident, fs.alt, fs.fstype, fs.mount, fs.last_scan, s.started_at,"
            " (SELECT count(*) FROM files WHERE fs_id = fs.id AND deleted_at IS NULL),"
            " (SELECT coalesce(sum(size), 0) FROM files WHERE fs_id = fs.id"
            "  AND deleted_at IS NULL),"
            " (SELECT count(*) FROM files WHERE fs_id = fs.id AND deleted_at IS NOT NULL)"
            " FROM filesystems fs LEFT JOIN scans s ON s.id = fs.last_scan")}
    check(sorted(f["id"] for f in fss) == sorted(rows), "one object per file system: %s vs %s"
          % ([f["id"] for f in fss], sorted(rows)))
    check(all(set(f) == FS_KEYS for f in fss), "the fields: %s" % [sorted(f) for f in fss])
    for f in fss:
        r = rows.get(f["id"])
        if not check(r is not None, "%s is in the index" % f["id"]):
            continue
        check((f["alt"], f["fstype"], f["last_mount"], f["last_scan"], f["last_walked"],
               f["files"], f["bytes"], f["deleted"]) == (r[1] or None,) + r[2:],
              "%s as SQLite has it: %s vs %s" % (f["id"], f, r))
        check(isinstance(f["last_walked"], str) and f["last_walked"].endswith("Z"),
              "last_walked is ISO 8601 UTC, as scans' started_at: %r" % f["last_walked"])
        # every file system here is mounted: it was just scanned
        check(f["present"] is True and f["mounted_at"] in mounted_now(),
              "%s present, at one of /proc/self/mounts' mount points: %s"
              % (f["id"], f["mounted_at"]))
    want_files = {}
    for root in roots:
        target, fstype = findmnt(root)
        by_mount = [f for f in fss if f["mounted_at"] == target]
        if not check(len(by_mount) == 1, "one file system at %s: %s" % (target, by_mount)):
            continue
        f = by_mount[0]
        check(f["last_mount"] == target and f["fstype"] == fstype,
              "%s: at %s, type %s, as findmnt says: %s" % (root, target, fstype, f))
        if fstype == "tmpfs":
            st = subprocess.run(["stat", "-f", "-c", "%T", root], capture_output=True,
                                text=True).stdout.strip()
            check(st == f["fstype"], "stat -f agrees: %s" % st)
        want_files[f["id"]] = want_files.get(f["id"], 0) + sum(
            len(fs) for _, _, fs in os.walk(root))
    check(all(f["files"] == want_files[f["id"]] for f in fss if f["id"] in want_files),
          "live records per file system are the files os.walk finds: %s vs %s"
          % ({f["id"]: f["files"] for f in fss}, want_files))
    # the text keeps its one line per file system, identity first
    rc, text, err = run("stats", "--db", db, check_rc=0)
    for f in fss:
        check("  %s %s at %s, last walked %s\n" % (f["id"], f["fstype"], f["last_mount"],
                                                   f["last_walked"]) in text,
              "text line for %s: %s" % (f["id"], text))


def check_scan_roots(db):
    """export --scans: roots is an array, the roots each scan was given;
    --extended has nothing to add to a scan and is refused with it."""
    scans = {r[0]: json.loads(r[1]) for r in db_rows(db, "SELECT id, roots FROM scans")}
    rc, out, err = run("export", "--db", db, "--scans", check_rc=0)
    got = [json.loads(line) for line in out.splitlines()]
    check(len(got) == len(scans) and
          all(isinstance(g["roots"], list) and g["roots"] == scans[g["id"]] for g in got),
          "roots as arrays: %s" % [g["roots"] for g in got])
    check([os.path.realpath(p) for p in got[-1]["roots"]] == got[-1]["roots"] and
          len(got[-1]["roots"]) == 2, "canonical paths: %s" % got[-1]["roots"])
    rc, out, err = run("export", "--db", db, "--scans", "--extended")
    check(rc == 2 and not out and
          err == "seekless export: --extended and --scans do not go together"
          " (--extended adds keys to file records, --scans writes scans);"
          " see 'seekless export --help'\n",
          "--scans --extended refused: %d %r" % (rc, err))


def check_purge_present(db, root):
    """purge --file-system on a file system mounted now: refused without
    --force, counted by --dry-run, removed with it; by the identity stats
    gives."""
    rc, out, err = run("stats", "--db", db, "--json", check_rc=0)
    target = findmnt(root)[0]
    f = [f for f in json.loads(out)["file_systems"] if f["mounted_at"] == target][0]
    count = "SELECT count(*) FROM files f JOIN filesystems s ON s.id = f.fs_id WHERE s.ident = ?"
    n = db_rows(db, count, (f["id"],))[0][0]
    live = db_rows(db, count + " AND f.deleted_at IS NULL", (f["id"],))[0][0]
    check(n == f["files"] + f["deleted"] and f["deleted"] >= 1 and live == f["files"],
          "its records, live and deleted: %d" % n)
    everything = "SELECT * FROM files ORDER BY id"
    before, fs_before = db_rows(db, everything), db_rows(db, "SELECT * FROM filesystems")

    for name in (f["id"], target):
        rc, out, err = run("purge", "--db", db, "--file-system", name)
        check(rc == 2 and not out and "is mounted at %s now" % target in err and
              "would remove %d records (%d of files there now, %d marked deleted)"
              % (n, live, n - live) in err and "--force" in err,
              "refused without --force (%s): %d %s" % (name, rc, err))
    rc, out, err = run("purge", "--db", db, "--file-system", f["id"], "--json")
    check(rc == 2 and not out, "refused with --json too: %d %s" % (rc, out))
    rc, out, err = run("purge", "--db", db, "--file-system", f["id"], "--dry-run", "--json",
                       check_rc=0)
    check(json.loads(out) == {"removed": 0, "file_system": f["id"], "present": True,
                              "mounted_at": target, "live": live, "deleted": n - live,
                              "dry_run": True, "would_remove": n},
          "--dry-run --json: %s" % out)
    rc, out, err = run("purge", "--db", db, "--file-system", f["id"], "--dry-run", "--force",
                       check_rc=0)
    check("would remove %d records, %d live and %d marked deleted; nothing removed"
          % (n, live, n - live) in out and "mounted at %s" % target in out,
          "--dry-run in words: %s" % out)
    check(db_rows(db, everything) == before and
          db_rows(db, "SELECT * FROM filesystems") == fs_before,
          "refusals and dry runs leave the index as it was")

    rc, out, err = run("purge", "--db", db, "--file-system", f["id"], "--force", "--json",
                       check_rc=0)
    check(json.loads(out) == {"removed": n, "file_system": f["id"], "present": True,
                              "mounted_at": target, "live": live, "deleted": n - live},
          "--force: %s" % out)
    check(db_rows(db, count, (f["id"],)) == [(0,)] and
          db_rows(db, "SELECT count(*) FROM filesystems WHERE ident = ?", (f["id"],)) == [(0,)],
          "its records and its row are gone")
    check(len(db_rows(db, everything)) == len(before) - n, "and nothing else")
    rc, out, err = run("stats", "--db", db, "--json", check_rc=0)
    check(f["id"] not in [g["id"] for g in json.loads(out)["file_systems"]],
          "stats no longer lists it")


def exiftool_groups(root):
    """stats' groups as exiftool reads the files below root, with their
    sizes from stat: {section: {name: (files, bytes)}}.  The tree is
    mkcorpus's: JPEGs only, each exiftool's FileType in lower case."""
    p = subprocess.run(["exiftool", "-j", "-q", "-q", "-fast", "-r", "-FileType", "-Make",
                        "-Model", "-DateTimeOriginal", root], capture_output=True, text=True,
                       check=True)
    groups = {"formats": collections.defaultdict(lambda: [0, 0]),
              "cameras": collections.defaultdict(lambda: [0, 0]),
              "years": collections.defaultdict(lambda: [0, 0])}
    for e in json.loads(p.stdout):
        size = os.path.getsize(e["SourceFile"])
        camera = ("%s %s" % (e.get("Make", ""), e.get("Model", ""))).strip()
        date = str(e.get("DateTimeOriginal", ""))
        for section, name in (("formats", e["FileType"].lower()), ("cameras", camera),
                              ("years", date[:4] if date[:4].isdigit() else "(no date)")):
            if name:
                groups[section][name][0] += 1
                groups[section][name][1] += size
    return {k: {n: tuple(v) for n, v in g.items()} for k, g in groups.items()}


with tempdir("stats", base="/dev/shm") as work:
    if shutil.which("exiftool") is None:
        skip("exiftool is not installed (libimage-exiftool-perl)")
    root = os.path.join(work, "photos")
    mkcorpus(root, "--files", 120, "--median", "20k", "--seed", 21, "--no-sync")
    with open(os.path.join(root, "broken.jpg"), "wb") as f:
        f.write(b"\xff\xd8\xff\xe1\x00\x10Exif\x00\x00II*\x00")
    db = os.path.join(work, "i.db")
    # broken.jpg is an error: exit 1, as long as it is there
    run("scan", "--db", db, "--order", "physical", root, check_rc=1)
    run("scan", "--db", db, "--order", "fs", "--full", root, check_rc=1)
    rc, out, err = run("stats", "--db", db, "--json", check_rc=0)
    check(json.loads(out)["errors"] == 1, "the broken file is counted an error: %s" % out[:200])
    os.remove(os.path.join(root, "broken.jpg"))
    run("scan", "--db", db, root, check_rc=0)

    # against what the tree holds: os.walk and stat for the totals,
    # exiftool for the groups, broken.jpg the one file deleted
    files = regular_files(root)
    rc, out, err = run("stats", "--db", db, "--json", check_rc=0)
    s = json.loads(out)
    check(s["files"] == len(files) and s["bytes"] == sum(os.path.getsize(f) for f in files),
          "totals: %d files, %d bytes; the tree %d, %d" % (
              s["files"], s["bytes"], len(files), sum(os.path.getsize(f) for f in files)))
    check(s["deleted"] == 1 and s["errors"] == 0,
          "deleted and errors: %r" % ((s["deleted"], s["errors"]),))
    ref = exiftool_groups(root)
    check(len(ref["cameras"]) >= 3 and len(ref["years"]) >= 3,
          "the corpus has several cameras and years: %r" % ref)
    for section in ("formats", "cameras", "years"):
        got = {g["name"]: (g["files"], g["bytes"]) for g in s[section]}
        check(got == ref[section], "by %s, as exiftool and stat say: %r vs %r"
              % (section[:-1], got, ref[section]))
    orders = [sc["order"] for sc in s["scans"]]
    check(orders == ["auto", "fs", "physical"], "the scans, newest first: %r" % orders)
    used = [d["order"] for sc in s["scans"][1:] for d in sc["devices"]]
    # tmpfs has no extent map: physical asked, inode order used, and stats
    # shows what was used
    check(used == ["fs", "inode"], "each disk's order: %r" % used)
    check(all(d["mb_per_s"] > 0 for sc in s["scans"][1:] for d in sc["devices"]),
          "speeds are given")

    rc, out, err = run("stats", "--db", db, "--scans", "2", check_rc=0)
    check("by format:" in out and "by camera" in out and "last scans" in out, "text: " + out)
    check(out.count("\n  #") == 2, "--scans 2 shows two")
    rc, out, err = run("purge", "--db", db, "--dry-run", "--json", check_rc=0)
    check(json.loads(out) == {"removed": 0, "dry_run": True, "would_remove": 1} and
          db_rows(db, "SELECT count(*) FROM files WHERE deleted_at IS NOT NULL") == [(1,)],
          "purge --dry-run counts and keeps: " + out)
    rc, out, err = run("purge", "--db", db, "--json", check_rc=0)
    check(json.loads(out) == {"removed": 1}, "purge --json: " + out)
    rc, out, err = run("stats", "--db", db, "--json", check_rc=0)
    check(json.loads(out)["deleted"] == 0, "purged")
    rc, out, err = run("purge", "--db", db, "--force")
    check(rc == 2 and "--force goes with --file-system" in err,
          "--force without --file-system is refused: %d %s" % (rc, err))

    # a second file system beside /dev/shm's tmpfs (the temporary
    # directory's, when it is another), so that stats lists two
    other = tempfile.mkdtemp(prefix="seekless-stats-")
    try:
        mkcorpus(os.path.join(other, "more"), "--files", 6, "--median", "20k", "--seed", 22,
                 "--no-sync")
        run("scan", "--db", db, "--quiet", root, os.path.join(other, "more"), check_rc=0)
        os.remove(sorted(os.path.join(d, n) for d, _, names in os.walk(root)
                         for n in names)[0])  # one record of root's marked deleted
        run("scan", "--db", db, "--quiet", root, os.path.join(other, "more"), check_rc=0)
        check_file_systems(db, [root, os.path.join(other, "more")])
        check_scan_roots(db)
        check_purge_present(db, root)
    finally:
        subprocess.run(["rm", "-rf", other])

    rc, out, err = run("stats", "--db", os.path.join(work, "none.db"))
    check(rc == 3 and "no index at" in err, "no index: %d %s" % (rc, err))
done()
