"""The command-line contract: exit codes, --help, default database place,
export keys and formats, per-file errors (as an unprivileged user), fatal
database errors, --quiet and --progress; usage errors in one line, -h,
the unknown command's hint, options after the roots, --db and --config
taken and used by every command, a configured root that is not there."""
import csv
import io
import json
import os
import re
import shutil
import stat
import subprocess
import time

from readorder import traced
from lib import (BIN, EXPORT_KEYS, MKCORPUS, check, done, mkcorpus, regular_files, run,
                 skip_part, tempdir, xxh128)


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

# --- every usage error is one line: program, command, the mistake, --help -
rc, out, err = run("--help", check_rc=0)
COMMANDS = re.findall(r"^  (\w+)\s{2,}", out, re.M)
check(len(COMMANDS) >= 9 and "scan" in COMMANDS and "service" in COMMANDS,
      "commands listed by --help: %r" % COMMANDS)
SERVICE_ACTIONS = ["install", "uninstall", "status"]


def one_usage_line(args, label, *words):
    """args must fail with exit 2 and exactly one stderr line naming
    'seekless LABEL', every word, and 'seekless LABEL --help'; nothing on
    stdout (the help is not printed: it would bury the line)."""
    rc, out, err = run(*args)
    lines = err.splitlines()
    ok = (rc == 2 and out == "" and len(lines) == 1
          and lines[0].startswith("seekless %s: " % label)
          and "'seekless %s --help'" % label in lines[0]
          and all(w in lines[0] for w in words))
    check(ok, "%s: one usage line naming %s, exit 2: rc %d, stdout %d bytes, stderr %r"
          % (args, words, rc, len(out), err))
    return lines[0] if lines else ""


for c in COMMANDS:
    # before, between and after operands: the mistake is the same
    one_usage_line([c, "--dbb", "x"], c, "unrecognized option '--dbb'")
    one_usage_line([c, "x", "--dbb=y"], c, "unrecognized option '--dbb'")
    one_usage_line([c, "-Z"], c, "unrecognized option '-Z'")
    one_usage_line([c, "--db"], c, "'--db'", "needs an argument")
    one_usage_line([c, "--config"], c, "'--config'", "needs an argument")
    one_usage_line([c, "--help=yes"], c, "'--help'", "takes no argument")
for a in SERVICE_ACTIONS:
    one_usage_line(["service", a, "--dbb", "x"], "service " + a, "'--dbb'")
    one_usage_line(["service", a, "--at"], "service " + a, "'--at'", "needs an argument")
# an abbreviation that fits several options is named with them
line = one_usage_line(["scan", "--ph", "/"], "scan", "'--ph'", "ambiguous")
check("--phash" in line and "--phash-now" in line, "the candidates: " + line)
# the errors found after the options: one line too
one_usage_line(["scan", "--order", "sideways", "/"], "scan", "unknown order 'sideways'")
one_usage_line(["export", "extra"], "export", "unexpected argument 'extra'")
one_usage_line(["service"], "service", "install, uninstall or status")

# --- -h is --help, for the program and every command -----------------------
rc, out, err = run("-h")
rc2, out2, err2 = run("--help")
check(rc == 0 and out == out2 and out, "seekless -h is seekless --help")
for c in COMMANDS:
    rc, out, err = run(c, "-h")
    rc2, out2, err2 = run(c, "--help")
    check(rc == rc2 == 0 and out == out2 and out.startswith("usage: seekless %s" % c),
          "%s -h is %s --help: %d %d %r" % (c, c, rc, rc2, out[:60]))
    rc, out3, err = run(c, "x", "-h")
    check(rc == 0 and out3 == out2, "%s x -h: the help too (options anywhere)" % c)

# --- an unknown command: the one meant, else the list ----------------------
for typo, meant in (("scna", "scan"), ("plna", "plan"), ("exprt", "export"), ("ser", "service"),
                    ("dupe", "dupes"), ("stast", "stats")):
    rc, out, err = run(typo, "--db", "x")
    check(rc == 2 and err.splitlines() ==
          ["seekless: '%s' is not a command; did you mean '%s'? See 'seekless --help'"
           % (typo, meant)], "%s: did you mean %s: %d %r" % (typo, meant, rc, err))
rc, out, err = run("frobnicate")
check(rc == 2 and len(err.splitlines()) == 1 and "'frobnicate' is not a command" in err
      and all(" %s" % c in err for c in COMMANDS) and "did you mean" not in err
      and "'seekless --help'" in err, "no command near: the list: %r" % err)
rc, out, err = run("--dbb", "scan")
check(rc == 2 and len(err.splitlines()) == 1 and "'--dbb'" in err and "'seekless --help'" in err,
      "an option before the command: %r" % err)

rc, out, err = run("scan", "/no/such/root")
check(rc == 2 and "cannot access '/no/such/root': No such file or directory" in err,
      "missing root: %d %s" % (rc, err))

# --- help and version: 0 ---------------------------------------------------
for args in (["--help"], ["help"], ["scan", "--help"], ["plan", "--help"],
             ["export", "--help"], ["help", "scan"], ["--version"]):
    rc, out, err = run(*args)
    check(rc == 0 and out, "%s -> 0 with output" % (args,))
# --version names the commit the build is from, when built from a checkout
rc, out, err = run("--version")
top = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
head = subprocess.run(["git", "-C", top, "rev-parse", "--short=12", "HEAD"], capture_output=True,
                      text=True) if shutil.which("git") else None
if head is not None and head.returncode == 0:
    # the commit the build was configured at: this one, or an earlier one
    # of this history when the build was not configured again since
    m = re.fullmatch(r"seekless \S+ \(commit ([0-9a-f]{12})\)\n", out)
    anc = m and subprocess.run(["git", "-C", top, "merge-base", "--is-ancestor", m.group(1),
                                "HEAD"], capture_output=True).returncode == 0
    check(anc, "--version names a commit of this checkout (HEAD %s): %r"
          % (head.stdout.strip(), out))
else:
    check(re.fullmatch(r"seekless \S+\n", out), "--version: %r" % out)
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
    # while a scan runs, its -wal and -shm too, whatever the umask.  They
    # are gone when it ends, so the modes they were made with are read off
    # the calls that made them (strace), not off a race with the scan:
    # under umask 000 the mode passed is the mode the file gets
    moded = os.path.join(work, "modes.db")
    umask = os.umask(0)  # the scan inherits it
    try:
        rc, _, err, _, log = traced(["scan", "--db", moded, "--quiet", "--full", root], root,
                                    trace=("open", "openat", "creat", "fchmod", "fchmodat",
                                           "chmod"))
    finally:
        os.umask(umask)
    check(rc == 1, "the scan under strace: exit %d %s" % (rc, err[-300:]))
    made, chmods = {}, []
    for line in log.splitlines():
        m = re.search(r'open(?:at)?\((?:[^,]*, )?"([^"]*)", ([A-Z_|]+), (0[0-7]+)\) = \d+', line)
        if m and "O_CREAT" in m.group(2) and m.group(1).startswith(moded):
            made.setdefault(m.group(1)[len(moded):], set()).add(int(m.group(3), 8))
        m = re.search(r'chmod(?:at)?\((?:[^,]*, )?"?([^",)]*)"?, (0[0-7]+)', line)
        if m:
            chmods.append((m.group(1), m.group(2)))
    check(all(made.get(k) == {0o600} for k in ("", "-wal", "-shm", ".lock")),
          "index, -wal, -shm and .lock created 0600 under umask 000: %s" %
          {k: sorted(oct(v) for v in vs) for k, vs in made.items()})
    check(not [c for c in chmods if c[1] != "0600"], "no other mode set after: %s" % chmods)
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
    # XXH3-128 of the bytes, as xxhsum -H2 (xxh128sum) prints it (docs/schema.md)
    sums = xxh128(files)
    check(bad and bad[0]["content_hash"] == sums.get(bad[0]["path"]),
          "a corrupt file is still hashed, as xxhsum hashes it: %s vs %s"
          % (bad and bad[0]["content_hash"], bad and sums.get(bad[0]["path"])))
    wrong = [(r["path"], r["content_hash"], sums.get(r["path"])) for r in recs
             if r["content_hash"] != sums.get(r["path"])]
    check(not wrong, "every content hash is xxhsum's: %s" % wrong[:3])
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
    else:
        skip_part("unreadable file and directory: scanning as another user needs root and "
                  "the user nobody")

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


# --- options anywhere; --db and --config taken and used by every command ---
with tempdir("cli-args") as work:
    home = os.path.join(work, "home")
    os.mkdir(home)
    # no configuration or index of this machine's user may answer for ours
    env = dict(os.environ, HOME=home, XDG_CONFIG_HOME=os.path.join(home, "config"),
               XDG_DATA_HOME=os.path.join(home, "data"))
    env.pop("POSIXLY_CORRECT", None)
    default_index = os.path.join(home, "data", "seekless", "index.db")
    ra, rb = os.path.join(work, "a"), os.path.join(work, "b")
    mkcorpus(ra, "--files", 12, "--median", "20k", "--seed", 3, "--no-sync")
    mkcorpus(rb, "--files", 7, "--median", "20k", "--seed", 4, "--no-sync")
    # one identical pair in each tree, for dupes
    for r in (ra, rb):
        first = sorted(regular_files(r))[0]
        shutil.copy(first, first + ".copy.jpg")
    files_a, files_b = sorted(regular_files(ra)), sorted(regular_files(rb))
    ia, ib = os.path.join(work, "a.db"), os.path.join(work, "b.db")

    # the options after the root: the scan lands in the --db given
    rc, out, err = run("scan", ra, "--db", ia, "--quiet", "--phash-now", env=env)
    check(rc == 0 and out == "" and err == "", "scan ROOT --db X --quiet: %d %r" % (rc, err))
    check(sorted(json.loads(l)["path"] for l in run("export", "--db", ia)[1].splitlines())
          == files_a, "the index given after the root holds the tree")
    check(not os.path.exists(default_index), "and nothing went to the default index")
    rc, out, err = run("scan", "--quiet", rb, "--phash-now", "--db", ib, env=env)
    check(rc == 0 and os.path.exists(ib), "options between and after the roots: %d %r" % (rc, err))
    # "--" ends the options: what follows is a root, even "--db"
    rc, out, err = run("scan", "--db", ib, "--", rb, "--db", env=env)
    check(rc == 2 and len(err.splitlines()) == 1 and "cannot access '--db'" in err,
          "after --, --db is a root: %d %r" % (rc, err))
    rc, out, err = run("plan", ra, "--json", env=env)
    check(rc == 0 and sorted(f["path"] for f in json.loads(out)["files"]) == files_a,
          "plan ROOT --json: %d %s" % (rc, err))

    good = os.path.join(work, "good.conf")
    with open(good, "w") as f:
        f.write("# the tree and index a\nroot = %s\ndb = %s\n" % (ra, ia))
    bad = os.path.join(work, "bad.conf")
    with open(bad, "w") as f:
        f.write("root = %s\ncolour = red\ndb = %s\n" % (ra, ia))
    units = os.path.join(work, "units")

    # every command, every service action: a mistake in the --config file
    # is said, with --db given too (the file named is read as asked)
    shutil.copy(bad, bad + ".install")
    with_bad = {
        "scan": [ra], "plan": [ra], "export": [], "stats": [], "query": [], "dupes": [],
        "report": [], "purge": [], "bench": ["--runs", "1", "--orders", "fs", rb],
        "service": ["status", "--user", "--dest", units],
    }
    check(sorted(with_bad) == sorted(COMMANDS), "a case for every command: %s" % COMMANDS)
    cases = [[c] + args + ["--config", bad] for c, args in with_bad.items()]
    cases += [["service", "uninstall", "--user", "--dest", units, "--config", bad],
              ["service", "install", "--user", "--dest", units, "--config", bad + ".install"]]
    for args in cases:
        rc, out, err = run(*(args + ["--db", ib]), env=env)
        check(rc == 2 and re.search(r"bad\.conf(\.install)?:2: unknown setting 'colour'", err),
              "%s --config bad.conf --db: the bad key reported, exit 2: %d %r"
              % (" ".join(a for a in args[:2] if a[0] != "-"), rc, err))
    with open(bad + ".install") as f:
        check("db = %s" % ib in f.read(), "service install --db wrote the index there")

    # the index named is the one used: the configuration's, else --db's
    def paths_of(c, out):
        if c == "export":
            return sorted(json.loads(l)["path"] for l in out.splitlines())
        if c == "query":
            return sorted(out.splitlines())
        if c == "dupes":
            return sorted(p for g in out.splitlines() for p in json.loads(g)["paths"])
        m = re.match(r"files: (\d+) ", out)
        return int(m.group(1)) if m else out[:80]

    for c, args in (("export", []), ("query", []), ("dupes", ["--json"]), ("stats", [])):
        want_a = {"dupes": [p for p in files_a if p.endswith(".copy.jpg")]}.get(c, files_a)
        want_b = {"dupes": [p for p in files_b if p.endswith(".copy.jpg")]}.get(c, files_b)
        if c == "dupes":
            want_a = sorted(want_a + [p[:-len(".copy.jpg")] for p in want_a])
            want_b = sorted(want_b + [p[:-len(".copy.jpg")] for p in want_b])
        if c == "stats":
            want_a, want_b = len(files_a), len(files_b)
        rc, out, err = run(c, "--config", good, *args, env=env)
        check(rc == 0 and paths_of(c, out) == want_a,
              "%s --config good.conf reads its db (a): %d %r" % (c, rc, err))
        rc, out, err = run(c, *args, "--config", good, "--db", ib, env=env)
        check(rc == 0 and paths_of(c, out) == want_b,
              "%s --config good.conf --db b.db reads b: %d %r" % (c, rc, err))
        missing = os.path.join(work, "no", "such.db")
        rc, out, err = run(c, "--config", good, "--db", missing, env=env)
        check(rc == 3 and missing in err, "%s --db names the index opened: %d %r" % (c, rc, err))
    # purge: a deleted file's record in a, none in b
    os.unlink(files_a[-1])
    run("scan", "--config", good, "--quiet", env=env, check_rc=0)
    rc, out, err = run("purge", "--json", "--config", good, "--db", ib, env=env)
    check(rc == 0 and json.loads(out) == {"removed": 0}, "purge --db b.db: nothing: %r" % out)
    rc, out, err = run("purge", "--json", "--config", good, env=env)
    check(rc == 0 and json.loads(out) == {"removed": 1}, "purge --config: a's one: %r" % out)
    files_a = files_a[:-1]

    # scan and plan: the configuration's roots and index, else --db's
    rc, out, err = run("scan", "--config", good, env=env)
    check(rc == 0 and "index %s (scan #" % ia in out and "%d unchanged" % len(files_a) in out,
          "scan --config: its root into its db: %d %s" % (rc, out[-300:]))
    ic = os.path.join(work, "c.db")
    rc, out, err = run("scan", "--config", good, "--db", ic, "--quiet", env=env)
    check(rc == 0 and sorted(json.loads(l)["path"] for l in run("export", "--db", ic)[1]
                             .splitlines()) == files_a, "scan --config --db: a's root into c")
    inner = os.path.join(ra, "inner.db")
    shutil.copy(ib, inner)
    rc, out, err = run("plan", "--json", "--config", good, env=env)
    planned = sorted(f["path"] for f in json.loads(out)["files"]) if rc == 0 else None
    check(planned == sorted(files_a + [inner]), "plan --config: a's root, inner.db a file")
    rc, out, err = run("plan", "--json", "--config", good, "--db", inner, env=env)
    planned = sorted(f["path"] for f in json.loads(out)["files"]) if rc == 0 else None
    check(planned == files_a, "plan --db: the index's own files left out, as scan leaves "
          "them: %d %s" % (rc, err))
    os.unlink(inner)

    # bench records its runs in the configuration's index, else in --db's
    def bench_rows(db):
        return [json.loads(l)["command"] for l in run("export", "--scans", "--db", db)[1]
                .splitlines()].count("bench")
    before_a, before_b = bench_rows(ia), bench_rows(ib)
    run("bench", "--runs", "1", "--orders", "fs", rb, "--config", good, env=env, check_rc=0)
    check(bench_rows(ia) == before_a + 1 and bench_rows(ib) == before_b,
          "bench --config: the run is in a.db")
    run("bench", "--runs", "1", "--orders", "fs", "--config", good, rb, "--db", ib, env=env,
        check_rc=0)
    check(bench_rows(ia) == before_a + 1 and bench_rows(ib) == before_b + 1,
          "bench --db: the run is in b.db")

    # service: the configuration it reads, the index it shows
    rc, out, err = run("service", "status", "--user", "--dest", units, "--config", good, env=env)
    check(rc == 0 and "config: %s\n" % good in out and "index: %s\n" % ia in out
          and "#1 " in out, "service status --config: its index: %d %s" % (rc, out))
    rc, out, err = run("service", "status", "--user", "--dest", units, "--config", good,
                       "--db", ib, env=env)
    last = re.findall(r"^  #\d+ \S+ scan +ok +0 unchanged, 0 changed, (\d+) new", out, re.M)
    check(rc == 0 and "index: %s\n" % ib in out and last == [str(len(files_b))],
          "service status --db: b's scans: %d %s" % (rc, out))
    with open(good) as f:
        check("db = %s\n" % ia in f.read(), "status --db wrote nothing into the file")
    rc, out, err = run("service", "uninstall", "--user", "--dest", units, "--config", good,
                       "--db", ib, env=env)
    check(rc == 0 and "the index %s is kept" % ib in out, "uninstall --db: %d %s" % (rc, out))

    # --- a configured root that is not there ------------------------------
    gone = os.path.join(work, "unplugged")
    miss = os.path.join(work, "miss.conf")
    with open(miss, "w") as f:
        f.write("# a drive not plugged in\nroot = %s\ndb = %s\n" % (gone, ic))
    for c in ("scan", "plan"):
        rc, out, err = run(c, "--config", miss, env=env)
        lines = err.splitlines()
        check(rc == 2 and len(lines) == 1 and "%s:2: " % miss in lines[0] and gone in lines[0],
              "%s: the only configured root missing: exit 2, one line with file:line and "
              "root: %d %r" % (c, rc, err))
    # on the command line: the same status
    rc, out, err = run("scan", "--config", good, gone, env=env)
    check(rc == 2 and len(err.splitlines()) == 1 and gone in err,
          "a missing root named on the command line: %d %r" % (rc, err))
    # among others: skipped, named with its line, the rest scanned
    with open(miss, "w") as f:
        f.write("db = %s\nroot = %s\nroot = %s\n" % (ic, ra, gone))
    rc, out, err = run("scan", "--config", miss, "--quiet", env=env)
    check(rc == 0 and "%s:3: " % miss in err and gone in err and "skipped" in err,
          "one of two configured roots missing: skipped, named: %d %r" % (rc, err))
    gone2 = os.path.join(work, "unplugged2")
    with open(miss, "w") as f:
        f.write("db = %s\nroot = %s\nroot = %s\n" % (ic, gone, gone2))
    rc, out, err = run("scan", "--config", miss, env=env)
    check(rc == 2 and len(err.splitlines()) == 1 and "%s:2: " % miss in err
          and "%s:3: " % miss in err and gone in err and gone2 in err,
          "none of two: exit 2, both in one line: %d %r" % (rc, err))

# --- mkcorpus's help says what it means ------------------------------------
p = subprocess.run([MKCORPUS, "--help"], capture_output=True, text=True)
check(p.returncode == 0 and "write PCT% of the files" in p.stdout and "%%" not in p.stdout,
      "mkcorpus --help: percent signs as printed: %r" % p.stdout[:600])

done()
