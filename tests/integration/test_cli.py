"""The command-line contract: exit codes, --help, default database place,
export keys and formats, per-file errors (as an unprivileged user), fatal
database errors, --quiet and --progress."""
import csv
import io
import json
import os
import re
import stat
import subprocess
import time

from lib import BIN, EXPORT_KEYS, check, done, mkcorpus, regular_files, run, tempdir


def cgroup_limits():
    """The memory limits of this process's cgroups and their parents (v2
    memory.max, v1 memory.limit_in_bytes), as numbers."""
    out = []
    with open("/proc/self/cgroup") as f:
        for line in f:
            _, ctl, rel = line.rstrip("\n").split(":", 2)
            base, name = {"": ("/sys/fs/cgroup", "memory.max"),
                          "memory": ("/sys/fs/cgroup/memory", "memory.limit_in_bytes")}.get(
                              ctl, (None, None))
            while base and rel.startswith("/"):
                try:
                    with open(base + rel.rstrip("/") + "/" + name) as g:
                        v = g.read().strip()
                    if v.isdigit():
                        out.append(int(v))
                except OSError:
                    pass
                if rel == "/":
                    break
                rel = rel.rsplit("/", 1)[0] or "/"
    return out


# --- usage errors: 2 -------------------------------------------------------
for args in ([], ["bogus"], ["scan"], ["scan", "--order", "sideways", "/"],
             ["scan", "--jobs", "0", "/"], ["scan", "--progress", "--quiet", "/"],
             ["plan"], ["export", "--format", "xml"], ["export", "extra"],
             ["scan", "--no-such-option", "/"]):
    rc, out, err = run(*args)
    check(rc == 2, "usage error %s -> 2, got %d" % (args, rc))
    check(err != "", "usage error %s explains itself" % (args,))
rc, out, err = run("scan", "/no/such/root")
check(rc == 2 and "cannot access '/no/such/root': No such file or directory" in err,
      "missing root: %d %s" % (rc, err))

# --- help and version: 0 ---------------------------------------------------
for args in (["--help"], ["help"], ["scan", "--help"], ["plan", "--help"],
             ["export", "--help"], ["help", "scan"], ["--version"]):
    rc, out, err = run(*args)
    check(rc == 0 and out, "%s -> 0 with output" % (args,))
rc, out, err = run("scan", "--help")
for word in ("--db", "--order", "--jobs", "--progress", "--quiet", "physical", "inode", "fs",
             "path", "random"):
    check(word in out, "scan --help mentions %s" % word)

with tempdir("cli") as work:
    os.chmod(work, 0o755)
    root = os.path.join(work, "photos")
    mkcorpus(root, "--files", 30, "--median", "30k", "--no-sync")
    with open(os.path.join(root, "not-a.jpg"), "wb") as f:
        f.write(b"\xff\xd8\xff" + b"\x00" * 64)
    files = regular_files(root)

    # --- default database place, mode 0600 ---------------------------------
    home = os.path.join(work, "home")
    os.mkdir(home)
    env = dict(os.environ, HOME=home)
    env.pop("XDG_DATA_HOME", None)
    rc, out, err = run("scan", "--quiet", root, env=env)
    check(rc == 1, "corrupt file -> exit 1, got %d" % rc)
    check(out == "", "--quiet prints nothing on stdout")
    dflt = os.path.join(home, ".local/share/seekless/index.db")
    check(os.path.exists(dflt), "default database under ~/.local/share")
    check(stat.S_IMODE(os.stat(dflt).st_mode) == 0o600, "database mode 0600")
    check(stat.S_IMODE(os.stat(dflt + ".lock").st_mode) == 0o600, "lock file mode 0600")
    # while a scan runs, its -wal and -shm too, whatever the umask: stop it
    # once they are there
    moded = os.path.join(work, "modes.db")
    p = subprocess.Popen(["sh", "-c", 'umask 000; exec "$0" "$@"', BIN, "scan", "--db", moded,
                          "--quiet", "--full", "--mem", "1M", root],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    seen = {}
    deadline = time.monotonic() + 20
    while p.poll() is None and time.monotonic() < deadline and len(seen) < 3:
        for suffix in ("-wal", "-shm", ".lock"):
            try:
                seen[suffix] = stat.S_IMODE(os.stat(moded + suffix).st_mode)
            except OSError:
                pass
    p.wait()
    check(seen.get(".lock") == 0o600 and seen.get("-wal") == 0o600 and seen.get("-shm") == 0o600,
          "index, -wal, -shm and .lock 0600 under umask 000: %s" %
          {k: oct(v) for k, v in seen.items()})
    check(stat.S_IMODE(os.stat(moded).st_mode) == 0o600, "and the index itself")
    xdg = os.path.join(work, "xdg")
    env["XDG_DATA_HOME"] = xdg
    run("scan", "--quiet", root, env=env)
    check(os.path.exists(os.path.join(xdg, "seekless/index.db")), "XDG_DATA_HOME honoured")

    # --- export: exactly the contract's keys, both formats -----------------
    db = os.path.join(work, "i.db")
    # --phash-now: every hash in this scan, whatever the page cache holds
    # (by default one the disk outruns is left for the next scan: test_pending)
    rc, out, err = run("scan", "--phash-now", "--db", db, "--progress", root)
    check(rc == 1, "exit 1 with per-file errors")
    check("[read]" in err, "--progress reports on stderr")
    check("error: " in err and "not-a.jpg" in err, "errors listed on stderr: " + err)
    check("seekless scan: errors: %d files" % len(files) in out, "summary line: " + out)
    for phase in ("walk", "locate", "read", "extract", "store"):
        check("\n  %s " % phase in out, "summary has phase %s" % phase)
    rc, out, err = run("export", "--db", db)
    lines = out.splitlines()
    check(len(lines) == len(files), "one JSON line per file")
    for line in lines:
        keys = list(json.loads(line).keys())
        if not check(keys == EXPORT_KEYS, "JSON keys in contract order: %s" % keys):
            break
    recs = [json.loads(l) for l in lines]
    bad = [r for r in recs if r["error"]]
    check(len(bad) == 1 and bad[0]["path"].endswith("not-a.jpg"), "the one error: %s" % bad)
    check(bad[0]["content_hash"] is not None, "a corrupt file is still hashed")
    rc, out, err = run("export", "--db", db, "--format", "csv")
    rows = list(csv.reader(io.StringIO(out)))
    check(rows[0] == EXPORT_KEYS, "CSV header: %s" % rows[0])
    check(len(rows) == len(files) + 1, "CSV rows")
    check(sorted(r[0] for r in rows[1:]) == sorted(r["path"] for r in recs), "CSV paths")

    # --- extended export: the contract's keys, then phash and its source,
    # warnings, placement
    rc, out, err = run("export", "--db", db, "--extended", check_rc=0)
    ext = [json.loads(l) for l in out.splitlines()]
    check(list(ext[0].keys()) == EXPORT_KEYS + ["phash", "phash_src", "warnings", "placement",
                                            "meta_version"],
          "extended keys: %s" % list(ext[0].keys()))
    srcs = {r["phash_src"] for r in ext if r["format"] == "jpeg"}
    check(srcs and srcs <= {"exif-thumbnail", "image", "image-dc", "none"},
          "every JPEG says where its hash came from: %s" % srcs)
    check("exif-thumbnail" in srcs, "mkcorpus's camera-like photos are hashed from their "
          "thumbnails: %s" % srcs)
    jpegs = [r for r in ext if r["format"] == "jpeg" and not r["error"]]
    check(jpegs and all(re.fullmatch(r"[0-9a-f]{16}", r["phash"]) for r in jpegs),
          "every readable JPEG has a perceptual hash")
    ndb = os.path.join(work, "nophash.db")
    run("scan", "--no-phash", "--quiet", "--db", ndb, root)
    rc, out, err = run("export", "--db", ndb, "--extended", check_rc=0)
    check(all(json.loads(l)["phash"] is None for l in out.splitlines()), "--no-phash")

    # --- plan text and JSON --------------------------------------------------
    rc, out, err = run("plan", root, check_rc=0)
    # the default budget: a sixteenth of the memory, 64M to 512M; memory is
    # physical memory unless a cgroup limits this process to less
    m = re.match(r"# order requested: auto; memory for file bytes: (\d+)M\n# device ", out)
    check(m is not None, "plan text header: " + out[:200])
    mem = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    mem = min([mem] + cgroup_limits())
    want = min(512, max(64, mem // 16 >> 20))
    check(m is not None and int(m.group(1)) == want,
          "default memory budget %sM, a sixteenth of %d MiB clamped to 64M-512M is %dM"
          % (m and m.group(1), mem >> 20, want))
    rc, out, err = run("plan", "--mem", "100M", "--json", root, check_rc=0)
    check(json.loads(out)["mem"] == 100 << 20, "plan --mem 100M plans with 100M")
    check(len([l for l in out.splitlines() if not l.startswith("#")]) == len(files) + 1,
          "plan text: header row plus one line per file")
    rc, out, err = run("plan", "--order", "random", "--seed", "5", "--json", root, check_rc=0)
    p1 = json.loads(out)
    rc, out, err = run("plan", "--order", "random", "--seed", "5", "--json", root, check_rc=0)
    p2 = json.loads(out)
    check(p1["files"] == p2["files"] and p1["seed"] == 5, "random order reproducible by seed")
    rc, out, err = run("plan", "--order", "random", "--seed", "6", "--json", root, check_rc=0)
    p3 = json.loads(out)
    check(len(p1["files"]) >= 10 and [f["path"] for f in p3["files"]] !=
          [f["path"] for f in p1["files"]], "another seed, another order")
    check(sorted(f["path"] for f in p3["files"]) == sorted(f["path"] for f in p1["files"]),
          "of the same files")
    rc, out, err = run("plan", "--order", "path", "--json", root, check_rc=0)
    paths = [f["path"] for f in json.loads(out)["files"]]
    check(paths == sorted(paths, key=lambda s: s.encode()), "path order is bytewise")

    # --- unreadable file and directory, as an unprivileged user -------------
    if os.geteuid() == 0 and subprocess.run(["id", "nobody"], capture_output=True).returncode == 0:
        secret = os.path.join(root, "secret.jpg")
        with open(secret, "wb") as f:
            f.write(b"x" * 100)
        os.chmod(secret, 0)
        locked = os.path.join(root, "locked")
        os.mkdir(locked)
        with open(os.path.join(locked, "inside.jpg"), "wb") as f:
            f.write(b"y")
        os.chmod(locked, 0)
        nobody_db = os.path.join(work, "nobody")
        os.mkdir(nobody_db)
        os.chown(nobody_db, int(subprocess.run(["id", "-u", "nobody"], capture_output=True,
                                               text=True).stdout), -1)
        ndb = os.path.join(nobody_db, "i.db")
        rc, out, err = run("scan", "--db", ndb, root, user="nobody")
        check(rc == 1, "unreadable entries -> exit 1, got %d (%s)" % (rc, err))
        check("missing files not marked deleted" in out, "no deletions after a dir error: " + out)
        rc, out, err = run("export", "--db", ndb, user="nobody")
        by = {json.loads(l)["path"]: json.loads(l) for l in out.splitlines()}
        check(by.get(secret, {}).get("error") == "open: Permission denied",
              "secret.jpg: %s" % by.get(secret))
        check(by.get(locked, {}).get("error") == "opendir: Permission denied",
              "locked dir: %s" % by.get(locked))
        check(by.get(secret, {}).get("size") == 100, "unreadable, but its size is known")
        os.chmod(locked, 0o755)

    # --- the index inside the tree it indexes leaves itself out ------------
    inner = os.path.join(root, "index.db")
    rc, out, err = run("scan", "--db", inner, root)
    check("the index's own files" in out, "summary mentions the exclusion: " + out)
    rc, out, err = run("export", "--db", inner, check_rc=0)
    paths = [json.loads(l)["path"] for l in out.splitlines()]
    check(not [p for p in paths if "index.db" in p], "index files not indexed")
    want = sorted(p for p in regular_files(root) if not os.path.basename(p).startswith("index.db"))
    check(sorted(paths) == want, "everything else is: %d of %d" % (len(paths), len(want)))
    for suffix in ("", "-wal", "-shm", ".lock"):
        if os.path.exists(inner + suffix):
            os.unlink(inner + suffix)

    # --- a database that cannot be written: 3 ------------------------------
    rc, out, err = run("scan", "--db", "/proc/seekless.db", root)
    check(rc == 3 and "cannot create" in err, "unwritable database -> 3: %d %s" % (rc, err))
    rc, out, err = run("export", "--db", os.path.join(work, "none.db"))
    check(rc == 3 and "no index at" in err, "export without index -> 3: %d %s" % (rc, err))
    check(not os.path.exists(os.path.join(work, "none.db")), "export creates nothing")

done()
