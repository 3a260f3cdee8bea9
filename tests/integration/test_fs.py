"""A real file system on a loop device (ext4, xfs or btrfs, argv[1]):
the physical plan is ascending in first physical offset as filefrag reports
it independently (on btrfs, filefrag's logical address taken to the device
through the chunk map as btrfs-progs reads it; the data are balanced first,
so that the two differ), fragmented files show fragments > 1, and a scan stores
exactly one row per file with the right sizes, hashes and EXIF; a rescan
after changes keeps it that way."""
import json
import os
import re
import subprocess
import sys

from lib import (btrfs_chunks, btrfs_device_offset, check, db_rows, done, export, filefrag,
                 filefrag_runs, loop_fs, mkcorpus, regular_files, run, sync_fs, tempdir, xxh128)

fstype = sys.argv[1]

with loop_fs(fstype) as lfs, tempdir("fsdb") as work:
    mnt, loop = lfs.mnt, lfs.loop
    root = os.path.join(mnt, "photos")
    manifest = os.path.join(work, "manifest.jsonl")
    mkcorpus(root, "--files", 150, "--median", "80k", "--fragment", 20, "--churn", 15,
             "--seed", 7, "--manifest", manifest)
    # odd ones out: empty, tiny (inline on btrfs), not a JPEG, a symlink, a FIFO
    open(os.path.join(root, "empty.jpg"), "w").close()
    with open(os.path.join(root, "tiny.txt"), "w") as f:
        f.write("small enough to live inside the metadata\n")
    with open(os.path.join(root, "broken.jpg"), "wb") as f:
        f.write(b"\xff\xd8\xff\xe0\x00\x10JFIF\x00" + b"\x00" * 200)
    os.symlink("empty.jpg", os.path.join(root, "link.jpg"))
    os.mkfifo(os.path.join(root, "fifo"))
    sync_fs(root)
    files = regular_files(root)
    chunks = None
    if fstype == "btrfs":
        # relocated chunks get new logical addresses, and their place on
        # the device is wherever there was room
        subprocess.run(["btrfs", "balance", "start", "-d", mnt], check=True,
                       capture_output=True)
        sync_fs(mnt)
        chunks = btrfs_chunks(loop)

    # --- the plan, against filefrag ---------------------------------------
    rc, out, err = run("plan", "--order", "physical", "--json", root, check_rc=0)
    plan = json.loads(out)
    check(len(plan["devices"]) == 1, "one device")
    dev = plan["devices"][0]
    check(dev["order"] == "physical", "physical order used: %s" % dev["reason"])
    check(dev["extents"] is True, "extent maps available")
    check(dev["file_systems"][0]["fstype"] == fstype, "fstype %s" % dev["file_systems"][0])
    check(dev["name"] == os.path.basename(loop), "device named after the loop device: %s"
          % dev["name"])
    check(len(plan["files"]) == len(files), "plan lists every file: %d of %d"
          % (len(plan["files"]), len(files)))
    located = [f for f in plan["files"] if f["phys_offset"] is not None]
    check(len(located) >= 150, "photos located: %d" % len(located))
    # located files come first, in ascending order
    seen_unlocated = False
    for f in plan["files"]:
        if f["phys_offset"] is None:
            seen_unlocated = True
        else:
            check(not seen_unlocated, "located after unlocated: %s" % f["path"])
    offsets = [f["phys_offset"] for f in located]
    check(offsets == sorted(offsets), "physical plan ascending")
    agree = frag_agree = moved = 0
    fragmented = []
    for f in located:
        phys, count = filefrag(f["path"])
        if chunks is not None and phys is not None:
            logical, phys = phys, btrfs_device_offset(chunks, phys)
            moved += logical != phys
        agree += phys == f["phys_offset"]
        frag_agree += count == f["fragments"]
        if f["fragments"] > 1:
            fragmented.append(f)
            check(count is not None and count > 1,
                  "filefrag agrees %s is fragmented (%s vs %s)" % (f["path"], count,
                                                                   f["fragments"]))
    check(agree == len(located), "first physical byte equals filefrag's for %d of %d files"
          % (agree, len(located)))
    if chunks is not None:
        check(moved == len(located), "btrfs: every position is on the device, not logical: "
              "%d of %d differ from filefrag's logical address" % (moved, len(located)))
        fs0 = dev["file_systems"][0]
        check(fs0["positions"] == "device" and "chunk map" in dev["reason"],
              "btrfs positions said to be the device's: %s; %s" % (fs0, dev["reason"]))
    check(frag_agree == len(located), "fragment count equals filefrag's for %d of %d files"
          % (frag_agree, len(located)))
    # a fragmented file's runs, extent by extent (they are what the extent
    # schedule reads); one run keeps none
    for f in located:
        want = filefrag_runs(f["path"])
        if chunks is not None:
            want = [(lo, btrfs_device_offset(chunks, ph), ln) for lo, ph, ln in want]
        if f["fragments"] < 2:
            check(f["runs"] is None, "%s in one run keeps no runs: %s" % (f["path"], f["runs"]))
            continue
        got = [tuple(r) for r in f["runs"] or []]
        check(got == want, "runs of %s equal filefrag's: %s vs %s" % (f["path"], got, want))
        check(got and got[0][1] == f["phys_offset"], "first run at phys_offset: %s" % f["path"])
    # the schedule covers every byte of every file once, and reads the
    # fragmented files' pieces in their places
    sch = dev["schedule"]
    check(sch is not None, "a schedule for a disk with fragmented files: %s" % dev["reason"])
    if sch:
        cover = {}
        for fi, kind, off, ln, ph in sch["ops"]:
            cover.setdefault(fi, []).append((off, ln))
        for fi, f in enumerate(plan["files"]):
            spans = sorted(cover.get(fi, []))
            at = 0
            for off, ln in spans:
                check(off == at, "schedule: %s read once, in whole: %s" % (f["path"], spans))
                at = off + ln
            check(at == f["size"], "schedule covers %s: %d of %d" % (f["path"], at, f["size"]))
        check(sch["read_across"] >= 1, "fragmented files read across the sweep: %s"
              % {k: v for k, v in sch.items() if k != "ops"})
        check(sch["peak_held"] <= sch["window"], "schedule within its window")
    print("%s: %d files, %d located, %d fragmented (max %d), %d agree with filefrag"
          % (fstype, len(files), len(located), len(fragmented),
             max([f["fragments"] for f in located] or [0]), agree), file=sys.stderr)
    check(len(fragmented) >= 2, "interleaved writes produced fragmented files: %d"
          % len(fragmented))
    # the physical order differs from the path order: the tree was shuffled
    by_path = sorted(f["path"] for f in located)
    check([f["path"] for f in located] != by_path, "physical order is not path order")
    if fstype == "btrfs":
        tiny = [f for f in plan["files"] if f["path"].endswith("tiny.txt")][0]
        check(tiny["placement"] == "inline" and tiny["phys_offset"] is None,
              "btrfs inline file placed by inode: %s" % tiny)

    # --- auto picks physical on a rotational disk --------------------------
    rc, out, err = run("plan", "--json", root, check_rc=0)
    auto = json.loads(out)["devices"][0]
    check(auto["order"] == "physical" and auto["rotational"] is True,
          "auto on a rotational loop device: %s" % auto["reason"])
    check("queue/rotational=1" in auto["reason"], "reason names the evidence: %s"
          % auto["reason"])

    # --- a scan: one row per file, right bytes ------------------------------
    db = os.path.join(work, "index.db")
    rc, out, err = run("scan", "--db", db, root, check_rc=1)  # broken.jpg is an error
    check("order physical" in out, "summary names the order: " + out)
    check("1 error\n" in out, "summary counts the broken JPEG: " + out)
    recs = export(db)
    by = {r["path"]: r for r in recs}
    check(len(recs) == len(files) and set(by) == set(files), "one record per file")
    hashes = xxh128(files)
    man = {}
    with open(manifest) as f:
        for line in f:
            m = json.loads(line)
            man[os.path.join(root, m["path"])] = m
    plan_phys = {f["path"]: f["phys_offset"] for f in plan["files"]}
    bad = 0
    for p in files:
        r = by.get(p)
        if not r:
            continue
        st = os.stat(p)
        bad += not check(r["size"] == st.st_size, "size of %s" % p)
        bad += not check(r["content_hash"] == hashes[p], "hash of %s" % p)
        bad += not check(r["phys_offset"] == plan_phys[p], "phys_offset of %s" % p)
        bad += not check(abs(r["mtime"] - st.st_mtime) < 1e-3, "mtime of %s" % p)
        if p in man:
            for k, v in man[p].items():
                if k in ("path",):
                    continue
                rv = r[k]
                if isinstance(v, float) and rv is not None:
                    ok = abs(v - rv) <= 1e-6 * max(1.0, abs(v))
                else:
                    ok = v == rv
                bad += not check(ok, "%s of %s: %r vs %r" % (k, p, rv, v))
    check(by[os.path.join(root, "broken.jpg")]["error"] is not None, "broken.jpg has an error")
    check(by[os.path.join(root, "empty.jpg")]["size"] == 0, "empty file recorded")
    rows = db_rows(db, "SELECT count(*), count(DISTINCT path) FROM files")
    check(rows[0][0] == rows[0][1] == len(files), "one row per path: %s" % (rows,))
    dev_rows = db_rows(db, "SELECT device, order_used, rotational, extents FROM scan_devices")
    check(dev_rows == [(os.path.basename(loop), "physical", 1, 1)], "scan_devices: %s" % dev_rows)
    scans = db_rows(db, "SELECT status, files, errors FROM scans")
    check(scans == [("errors", len(files), 1)], "scans row: %s" % scans)

    check(re.search(r"swept its extents \(0 read whole after all\)", out) is not None,
          "the reader followed the extent schedule: " + out)

    # --- extents out of logical order: the reader's bytes in their places ---
    # The second part of each file written (and allocated) before the first,
    # with another file in between: xfs and btrfs put it lower on the disk,
    # so the sweep reads a file's end before its start.  Whole files are
    # filled out of order; at --mem 1M they are streamed and their end is
    # read back once their head is in; at 32M a streamed file's end is kept
    # until its turn.  ext4 places such writes contiguously; there the same
    # scans only check the bytes.
    rev = os.path.join(mnt, "reversed")
    os.makedirs(rev)
    for i in range(7):
        size = 12 << 20 if i == 6 else (i + 1) * 700 * 1024
        data = os.urandom(size)
        cut = (size - (2 << 20) if i == 6 else size // 2) // 4096 * 4096
        fd = os.open(os.path.join(rev, "r%d.bin" % i), os.O_WRONLY | os.O_CREAT, 0o644)
        os.pwrite(fd, data[cut:], cut)
        os.fsync(fd)
        with open(os.path.join(rev, "fill%d.bin" % i), "wb") as f:
            f.write(os.urandom(300 * 1024))
            f.flush()
            os.fsync(f.fileno())
        os.pwrite(fd, data[:cut], 0)
        os.fsync(fd)
        os.close(fd)
    rev_files = regular_files(rev)
    rev_hashes = xxh128(rev_files)
    reversed_ = 0
    for p in rev_files:
        runs = filefrag_runs(p)
        reversed_ += len(runs) > 1 and runs[1][1] < runs[0][1]
    if fstype != "ext4":
        check(reversed_ >= 5, "%s put the parts written first lower: %d files" % (fstype, reversed_))
    for mem, kind in (("64M", "read_across"), ("1M", "read_back"), ("32M", "kept_ahead")):
        rc, out, err = run("plan", "--json", "--mem", mem, rev, check_rc=0)
        sch = json.loads(out)["devices"][0]["schedule"]
        if fstype != "ext4":
            check(sch is not None and sch[kind] >= 1, "--mem %s: %s in the schedule: %s"
                  % (mem, kind, sch and {k: v for k, v in sch.items() if k != "ops"}))
        rdb = os.path.join(work, "reversed-%s.db" % mem)
        rc, out, err = run("scan", "--json", "--mem", mem, "--db", rdb, rev, check_rc=0)
        dev = json.loads(out)["devices"][0]
        if sch is not None:
            check(dev["swept"] and dev["unswept"] == 0, "--mem %s: swept: %s" % (mem, dev))
        recs = {r["path"]: r for r in export(rdb)}
        wrong = [p for p in rev_files if recs.get(p, {}).get("content_hash") != rev_hashes[p]
                 or recs[p]["size"] != os.stat(p).st_size or recs[p]["error"] is not None]
        check(not wrong, "--mem %s: every file's bytes as xxh128sum's: %s" % (mem, wrong))

    # --- change the tree, scan again ---------------------------------------
    gone = sorted(man)[:3]
    for p in gone:
        os.unlink(p)
    with open(os.path.join(root, "new.bin"), "wb") as f:
        f.write(os.urandom(50000))
    changed = sorted(man)[5]
    with open(changed, "ab") as f:
        f.write(b"appended")
    os.unlink(os.path.join(root, "broken.jpg"))
    sync_fs(root)
    files2 = regular_files(root)
    rc, out, err = run("scan", "--db", db, root, check_rc=0)
    check("4 files no longer present marked deleted" in out, "summary counts deletions: " + out)
    recs2 = export(db)
    by2 = {r["path"]: r for r in recs2}
    check(set(by2) == set(files2), "export matches the tree after changes")
    check(by2[changed]["size"] == os.stat(changed).st_size, "changed file re-read")
    check(by2[changed]["content_hash"] == xxh128([changed])[changed], "changed file rehashed")
    rows = db_rows(db, "SELECT count(*), count(DISTINCT path), sum(deleted_at IS NOT NULL)"
                       " FROM files")
    check(rows[0] == (len(files2) + 4, len(files2) + 4, 4), "deleted rows kept, marked: %s"
          % (rows,))

    # --- hard links: a file with several names is read once -----------------
    # a record per name, every one with the file's bytes; the bytes read are
    # those of the distinct inodes, as os.stat counts them
    ldir = os.path.join(mnt, "linked")
    os.makedirs(os.path.join(ldir, "sub"))
    big = os.path.join(ldir, "a.jpg")
    with open(big, "wb") as f:
        f.write(os.urandom(3 << 20))
    os.link(big, os.path.join(ldir, "b.jpg"))
    os.link(big, os.path.join(ldir, "sub", "c.jpg"))
    with open(os.path.join(ldir, "lone.jpg"), "wb") as f:
        f.write(os.urandom(70000))
    os.link(os.path.join(ldir, "lone.jpg"), os.path.join(ldir, "sub", "lone2.jpg"))
    with open(os.path.join(ldir, "single.bin"), "wb") as f:
        f.write(os.urandom(5000))
    sync_fs(ldir)

    def distinct_bytes(paths):
        seen = {}
        for p in paths:
            st = os.stat(p)
            seen[(st.st_dev, st.st_ino)] = st.st_size
        return len(seen), sum(seen.values())

    lfiles = regular_files(ldir)
    ninodes, nbytes = distinct_bytes(lfiles)
    rc, out, err = run("plan", "--json", ldir, check_rc=0)
    lp = json.loads(out)
    check(lp["joined"] == len(lfiles) - ninodes == 3,
          "plan joins the names: %s of %d names, %d files" %
          (lp["joined"], len(lfiles), ninodes))
    check(len(lp["files"]) == ninodes, "the plan lists each file once: %d" % len(lp["files"]))
    ldb = os.path.join(work, "links.db")

    def scan_links(what):
        run("scan", "--db", ldb, "--quiet", ldir, check_rc=0)
        by = {r["path"]: r for r in export(ldb)}
        now = regular_files(ldir)
        sums = xxh128(now)
        check(set(by) == set(now), what + ": a record per name")
        check(all(by[p]["content_hash"] == sums[p] and by[p]["size"] == os.stat(p).st_size
                  for p in now), what + ": every name has the file's hash and size")
        return db_rows(ldb, "SELECT files, bytes FROM scans ORDER BY id DESC LIMIT 1")[0]

    nfiles, nread = scan_links("first scan")
    check(nfiles == len(lfiles) and nread == nbytes,
          "read once: %s records, %s bytes read, %d bytes in %d distinct files"
          % (nfiles, nread, nbytes, ninodes))
    # a change through one name is a change of all: read again once
    with open(os.path.join(ldir, "sub", "c.jpg"), "ab") as f:
        f.write(b"appended through one name")
    sync_fs(ldir)
    nfiles, nread = scan_links("after a change through one name")
    check(nread == os.stat(big).st_size,
          "the changed file read once: %s bytes, its size %d" % (nread, os.stat(big).st_size))
    # unlinking a name moves the inode's ctime: the two names left are read
    # again, as one
    size = os.stat(big).st_size
    os.unlink(big)
    nfiles, nread = scan_links("after one name deleted")
    check(nread == size, "the names left read once: %s bytes, the file has %d" % (nread, size))

    # --- reflink copies: a file whose data is all another's is read once ----
    # (xfs and btrfs share extents; ext4 cannot).  filefrag -v is the
    # independent witness that the copies share every extent and the
    # edited one does not; the bytes read are the distinct data's.
    if fstype in ("xfs", "btrfs"):
        rdir = os.path.join(mnt, "reflinked")
        os.makedirs(os.path.join(rdir, "sub"))
        orig = os.path.join(rdir, "orig.jpg")
        with open(orig, "wb") as f:
            f.write(os.urandom((2 << 20) + 12345))
        copies = [os.path.join(rdir, "copy.jpg"), os.path.join(rdir, "sub", "copy2.jpg")]
        edited = os.path.join(rdir, "edited.jpg")
        for c in copies + [edited]:
            subprocess.run(["cp", "--reflink=always", orig, c], check=True)
        with open(edited, "r+b") as f:  # one block of its own, the rest shared
            f.seek(1 << 20)
            f.write(os.urandom(4096))
        with open(os.path.join(rdir, "same-size.jpg"), "wb") as f:
            f.write(os.urandom((2 << 20) + 12345))
        sync_fs(rdir)

        def extent_flags(p):
            out = subprocess.run(["filefrag", "-v", p], capture_output=True, text=True,
                                 check=True).stdout
            return [l for l in out.splitlines() if re.match(r"\s*\d+:", l)]

        for c in [orig] + copies:
            ex = extent_flags(c)
            check(ex and all("shared" in l for l in ex), "filefrag: %s shares every extent" % c)
        check(not all("shared" in l for l in extent_flags(edited)),
              "filefrag: the edited copy has an extent of its own")
        rfiles = regular_files(rdir)
        rc, out, err = run("plan", "--json", rdir, check_rc=0)
        rp = json.loads(out)
        check(rp["joined"] == 2 and len(rp["files"]) == len(rfiles) - 2,
              "plan: the two whole copies joined (%s), %d of %d files listed"
              % (rp["joined"], len(rp["files"]), len(rfiles)))
        rdb = os.path.join(work, "reflinks.db")

        def scan_reflinks(what):
            run("scan", "--db", rdb, "--quiet", rdir, check_rc=0)
            by = {r["path"]: r for r in export(rdb)}
            now = regular_files(rdir)
            sums = xxh128(now)
            check(set(by) == set(now), what + ": a record per file")
            for p in now:
                st = os.stat(p)
                check(by[p]["content_hash"] == sums[p] and by[p]["size"] == st.st_size,
                      "%s: %s has its hash and size" % (what, p))
            inos = dict(db_rows(rdb, "SELECT path, ino FROM files WHERE deleted_at IS NULL"))
            check(all(inos[p] == os.stat(p).st_ino for p in now),
                  what + ": each record has its own file's inode")
            return db_rows(rdb, "SELECT files, bytes FROM scans ORDER BY id DESC LIMIT 1")[0]

        size = os.stat(orig).st_size
        nfiles, nread = scan_reflinks("reflinks, first scan")
        check(nfiles == len(rfiles) and nread == 3 * size,
              "whole copies not read: %s bytes read for 5 files of %d, 3 distinct" % (nread, size))
        # writing into a copy gives it blocks of its own: it is read again,
        # and only it
        with open(copies[0], "r+b") as f:
            f.seek(4096)
            f.write(b"edited in place")
        sync_fs(rdir)
        nfiles, nread = scan_reflinks("reflinks, a copy edited in place")
        check(nread == size, "the edited copy alone read: %s bytes" % nread)
        # two new copies, one written a moment ago and not yet written back
        # (no sync here, on purpose): xfs maps it to the shared extents until
        # writeback, so its map alone would join it to the other copy
        # (a scan first: the copy edited just before the last one was read
        # within a timestamp tick of its change, racy, and is read once more)
        scan_reflinks("reflinks, settled")
        fresh = [os.path.join(rdir, "fresh.jpg"), os.path.join(rdir, "fresh-edited.jpg")]
        for c in fresh:
            subprocess.run(["cp", "--reflink=always", orig, c], check=True)
        sync_fs(rdir)
        with open(fresh[1], "r+b") as f:
            f.seek(8192)
            f.write(b"not yet written back")
        nfiles, nread = scan_reflinks("reflinks, a copy edited and not written back")
        check(nread == 2 * size, "both new copies read, the dirty one on its own: %s bytes"
              % nread)


    # --- the first plan after copying photos: data not yet on the disk -------
    # cp writes into the page cache; ext4, xfs and btrfs give blocks only at
    # writeback (delayed allocation), so a plan made at once found no position
    # for any file.  Each such file is written back and placed; filefrag, after
    # a sync, says where each one is.  (Bytes read and written, as a copy
    # from another drive makes them: cp on xfs and btrfs would share the
    # source's blocks, already on the disk, even with --reflink=never, since
    # btrfs's copy_file_range clones.)
    copy = os.path.join(mnt, "copied")
    for d, _, names in os.walk(root):
        os.makedirs(os.path.join(copy, os.path.relpath(d, root)), exist_ok=True)
        for n in names:
            src = os.path.join(d, n)
            if os.path.isfile(src) and not os.path.islink(src):
                with open(src, "rb") as fi, open(os.path.join(copy, os.path.relpath(src, root)),
                                                  "wb") as fo:
                    fo.write(fi.read())
    rc, out, err = run("plan", "--order", "physical", "--json", copy, check_rc=0)
    sync_fs(copy)
    plan = json.loads(out)
    dev = plan["devices"][0]
    chunks = btrfs_chunks(loop) if fstype == "btrfs" else None
    with_data = [f for f in plan["files"] if f["size"] > 0 and
                 not (fstype == "btrfs" and f["size"] < 4096)]  # btrfs keeps tiny files inline
    check(len(with_data) >= 140, "copied files with data: %d" % len(with_data))
    # a few alone, then (this many) the whole file system at once; btrfs
    # (kernel 6.x) writes most of a file's delayed data back itself when its
    # map is asked, and says DELALLOC of few
    if fstype != "btrfs":
        check(1 <= dev["written_back"] <= 8 and dev["synced_fs"] is True and
              dev["writeback_s"] > 0,
              "files copied a moment ago were written back to be placed: %s alone of %d, then "
              "the file system: %s (%s s); %s" % (dev["written_back"], len(with_data),
                                                 dev["synced_fs"], dev["writeback_s"],
                                                 dev["reason"]))
        check("written back first" in dev["reason"], "the plan says so: %s" % dev["reason"])
    placed = [f for f in with_data if f["phys_offset"] is not None]
    check(len(placed) == len(with_data), "every copied file with data has a position: %d of %d"
          % (len(placed), len(with_data)))
    wrong = []
    for f in placed:
        phys, count = filefrag(f["path"])
        if chunks is not None and phys is not None:
            phys = btrfs_device_offset(chunks, phys)
        if phys != f["phys_offset"]:
            wrong.append((f["path"], f["phys_offset"], phys))
    check(not wrong, "each position is where filefrag finds the file after a sync: %s" % wrong[:3])
    offsets = [f["phys_offset"] for f in plan["files"] if f["phys_offset"] is not None]
    check(offsets == sorted(offsets), "and the plan is in that order")

done()
