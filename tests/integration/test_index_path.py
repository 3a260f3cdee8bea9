"""The index path as it is (issue 42): a directory, a file that is no index,
an index that cannot be written.  Every command that takes an index says
what is wrong with the path, never SQL, and exits 3 (the man page's table);
the commands that only read work on an index they cannot write (a
read-only bind mount, an immutable file, a folder that cannot take SQLite's
journal), reading it as it is, with the output they give on a writable copy;
the ones that write refuse it and leave it as it was."""
import contextlib
import hashlib
import os
import re
import shutil
import sqlite3
import subprocess
import tempfile

from lib import check, done, mkcorpus, need_root, run, skip, tempdir

SQL = re.compile(r"\b(UPDATE|INSERT|SELECT|PRAGMA|DELETE|CREATE)\b")

# the commands that only read, each with what it can show
READERS = [
    ["export"], ["export", "--format", "csv"], ["export", "--extended"], ["export", "--scans"],
    ["stats"], ["stats", "--json"], ["query", "--format", "jpeg"], ["query", "--pairs"],
    ["dupes"], ["dupes", "--json"], ["dupes", "--near"],
]


def index_commands(root):
    """Every command that opens an index (scan with a root to read)."""
    return [["scan", root], ["purge"], ["export"], ["stats"], ["query", "--format", "jpeg"],
            ["dupes"]]


def no_sql(text, what):
    m = SQL.search(text)
    check(m is None, "%s: no SQL in what it says: %r" % (what, text.strip()[-300:]))


def files_of(d):
    """Each file in d (not below) by name, as its bytes' SHA-256."""
    out = {}
    for name in sorted(os.listdir(d)):
        p = os.path.join(d, name)
        if os.path.isfile(p):
            with open(p, "rb") as f:
                out[name] = hashlib.sha256(f.read()).hexdigest()
    return out


def dump(db):
    """The index's SQL dump, read without writing anything (immutable)."""
    con = sqlite3.connect("file:%s?immutable=1" % db, uri=True)
    try:
        return "\n".join(con.iterdump())
    finally:
        con.close()


@contextlib.contextmanager
def read_only_view(src):
    """src through a read-only bind mount, removed afterwards."""
    mnt = tempfile.mkdtemp(prefix="seekless-ro-")
    p = subprocess.run(["mount", "--bind", src, mnt], capture_output=True, text=True)
    if p.returncode != 0:
        os.rmdir(mnt)
        skip("cannot bind-mount here: " + p.stderr.strip())
    try:
        subprocess.run(["mount", "-o", "remount,ro,bind", mnt], check=True)
        try:
            open(os.path.join(mnt, "probe"), "w").close()
            check(False, "the bind mount is read-only")
        except OSError:
            pass
        yield mnt
    finally:
        subprocess.run(["umount", mnt], check=True)
        os.rmdir(mnt)


def same_output(args, db, ref, user=None, what=""):
    """args on the index db and on the writable copy ref: both exit 0 and
    print the same (the index's own path aside)."""
    rc, out, err = run(*args, "--db", db, user=user)
    rc2, out2, err2 = run(*args, "--db", ref, user=user)
    label = "%s %s" % (" ".join(args), what)
    check(rc == 0 and rc2 == 0, "%s: exit %d (writable copy: %d): %s" % (label, rc, rc2, err))
    check(out.replace(db, "DB") == out2.replace(ref, "DB"),
          "%s: the same output as on a writable copy (%d and %d bytes)" % (label, len(out),
                                                                          len(out2)))
    check(err.replace(db, "DB") == err2.replace(ref, "DB"), "%s: the same notes: %r %r" %
          (label, err, err2))
    no_sql(err, label)
    return out


def service_status(db, work, tag):
    conf = os.path.join(work, "%s.conf" % tag)
    with open(conf, "w") as f:
        f.write("db = %s\n" % db)
    rc, out, err = run("service", "status", "--user", "--config", conf)
    return rc, out.replace(db, "DB").replace(conf, "CONF"), err


need_root()
with tempdir("index-path") as work:
    os.chmod(work, 0o755)  # the read-only folder case runs as nobody
    root = os.path.join(work, "photos")
    mkcorpus(root)
    jpgs = sorted(os.path.join(d, f) for d, _, fs in os.walk(root) for f in fs
                  if f.lower().endswith(".jpg"))
    shutil.copy(jpgs[0], os.path.join(root, "copy-of-first.jpg"))  # dupes has a group
    idx_dir = os.path.join(work, "made")
    idx = os.path.join(idx_dir, "i.db")
    rc, out, err = run("scan", "--phash-now", "--db", idx, root)
    check(rc in (0, 1), "the first scan: %d %s" % (rc, err))
    rc, out, err = run("dupes", "--db", idx, check_rc=0)
    check(out.strip() != "", "dupes finds the copy")

    # --- a directory -------------------------------------------------------
    adir = os.path.join(work, "a-folder")
    os.mkdir(adir)
    for args in index_commands(root):
        rc, out, err = run(args[0], "--db", adir, *args[1:])
        check(rc == 3, "%s on a directory: exit %d" % (args[0], rc))
        check("is a directory" in err and "index.db" in err,
              "%s on a directory says so: %s" % (args[0], err))
        check("no index at" not in err and "cannot create" not in err,
              "%s: not 'no index', not 'cannot create': %s" % (args[0], err))
        no_sql(err, args[0] + " on a directory")
    check(os.listdir(adir) == [], "nothing made in the directory")
    rc, out, err = service_status(adir, work, "dir")
    check("is a directory" in out, "service status says it is a directory: " + out)
    no_sql(out + err, "service status on a directory")

    # --- files that are no index ------------------------------------------
    text = os.path.join(work, "notes.txt")
    with open(text, "w") as f:
        f.write("shopping list\n")
    other = os.path.join(work, "other.db")
    con = sqlite3.connect(other)
    con.execute("CREATE TABLE recipes(name)")
    con.execute("INSERT INTO recipes VALUES('bread')")
    con.commit()
    con.close()
    for path, want in ((text, "not a SQLite database"), (other, "of something else")):
        before = files_of(work)
        for args in index_commands(root):
            rc, out, err = run(args[0], "--db", path, *args[1:])
            check(rc == 3, "%s on %s: exit %d" % (args[0], os.path.basename(path), rc))
            check("not a seekless index" in err and want in err,
                  "%s on %s says what it is: %s" % (args[0], os.path.basename(path), err))
            no_sql(err, "%s on %s" % (args[0], os.path.basename(path)))
        check(files_of(work) == before, "%s left as it was, nothing beside it" % path)
    rc, out, err = run("export", "--db", os.path.join(work, "none.db"))
    check(rc == 3 and "no index at" in err, "a missing index: %d %s" % (rc, err))

    # --- an index on a read-only file system -------------------------------
    src = os.path.join(work, "ro-src")
    ref_dir = os.path.join(work, "ref")
    os.mkdir(src)
    os.mkdir(ref_dir)
    shutil.copy2(idx, src)
    shutil.copy2(idx, ref_dir)
    ref = os.path.join(ref_dir, "i.db")
    # others may read it: an open makes it 0600, except where it cannot
    os.chmod(os.path.join(src, "i.db"), 0o644)
    before, before_dump = files_of(src), dump(os.path.join(src, "i.db"))
    with read_only_view(src) as mnt:
        db = os.path.join(mnt, "i.db")
        for args in (["scan", root], ["scan", "--full", root], ["purge"]):
            rc, out, err = run(args[0], "--db", db, *args[1:])
            check(rc == 3, "%s on a read-only file system: exit %d" % (" ".join(args), rc))
            check("index '%s' is read-only (its file system is read-only)" % db in err,
                  "%s says it is read-only, and why: %s" % (args[0], err))
            check("cannot create" not in err, "not 'cannot create': " + err)
            no_sql(err, args[0] + " read-only")
        for args in READERS:
            same_output(args, db, ref, what="on a read-only file system")
        rc, out, err = service_status(db, work, "ro")
        rc2, out2, err2 = service_status(ref, work, "ref")
        check("last scans:" in out and out == out2,
              "service status reads it: %r against %r" % (out, out2))
        no_sql(out + err, "service status read-only")
    check(files_of(src) == before, "the read-only index's folder as it was")
    check(os.stat(os.path.join(src, "i.db")).st_mode & 0o777 == 0o644, "its mode as it was")
    check(dump(os.path.join(src, "i.db")) == before_dump, "its dump as it was")

    # a writer killed with changes in the -wal: read with them, as SQLite
    # reads them on a writable copy; without the -shm it cannot be read
    crash = os.path.join(work, "crash-src")
    crash_ref = os.path.join(work, "crash-ref")
    os.mkdir(crash)
    shutil.copy2(idx, crash)
    con = sqlite3.connect(os.path.join(crash, "i.db"))
    con.execute("PRAGMA wal_autocheckpoint=0")
    con.execute("DELETE FROM files WHERE id % 2 = 0")
    con.commit()
    shutil.copytree(crash, crash_ref)  # i.db, -wal, -shm as a killed writer leaves them
    con.close()
    shutil.rmtree(crash)
    shutil.copytree(crash_ref, crash)
    check(os.path.getsize(os.path.join(crash, "i.db-wal")) > 0, "the -wal holds the changes")
    with read_only_view(crash) as mnt:
        out = same_output(["export"], os.path.join(mnt, "i.db"),
                          os.path.join(crash_ref, "i.db"), what="with a killed writer's -wal")
        full = run("export", "--db", idx, check_rc=0)[1]
        check(0 < out.count("\n") < full.count("\n"), "the -wal's deletions seen: %d of %d" %
              (out.count("\n"), full.count("\n")))
    os.unlink(os.path.join(crash, "i.db-shm"))
    with read_only_view(crash) as mnt:
        rc, out, err = run("export", "--db", os.path.join(mnt, "i.db"))
        check(rc == 3 and "-wal" in err and "read-only" in err,
              "a -wal without its -shm, read-only: %d %s" % (rc, err))
        no_sql(err, "a -wal without its -shm")

    # an older schema cannot be upgraded read-only: said in one line
    old = os.path.join(work, "old-src")
    os.mkdir(old)
    shutil.copy2(idx, old)
    con = sqlite3.connect(os.path.join(old, "i.db"))
    con.execute("PRAGMA user_version=11")
    con.close()
    before = files_of(old)
    with read_only_view(old) as mnt:
        for args in READERS[:1] + READERS[4:5]:
            rc, out, err = run(*args, "--db", os.path.join(mnt, "i.db"))
            check(rc == 3 and "older seekless" in err and "read-only" in err,
                  "%s on an older read-only index: %d %s" % (args[0], rc, err))
            check(err.strip().count("\n") == 0, "in one line: " + err)
            no_sql(err, "older schema")
    check(files_of(old) == before, "the older index as it was")

    # --- an immutable index file in a writable folder ----------------------
    imm_dir = os.path.join(work, "imm")
    os.mkdir(imm_dir)
    shutil.copy2(idx, imm_dir)
    imm = os.path.join(imm_dir, "i.db")
    p = subprocess.run(["chattr", "+i", imm], capture_output=True, text=True)
    if p.returncode != 0:
        print("note: no immutable files here (%s); that case is left out" % p.stderr.strip())
    else:
        try:
            before = files_of(imm_dir)
            rc, out, err = run("scan", "--db", imm, root)
            check(rc == 3 and "is read-only (the file is immutable)" in err,
                  "scan on an immutable index: %d %s" % (rc, err))
            no_sql(err, "scan immutable")
            for args in READERS:
                same_output(args, imm, ref, what="immutable")
            check(files_of(imm_dir) == before, "nothing made beside the immutable index: %s" %
                  sorted(files_of(imm_dir)))
        finally:
            subprocess.run(["chattr", "-i", imm], check=True)

    # --- a folder that cannot take SQLite's journal (as a user) ------------
    nb_dir = os.path.join(work, "nobody")
    os.mkdir(nb_dir)
    shutil.copy2(idx, nb_dir)
    nb_ref = os.path.join(work, "nobody-ref")
    os.mkdir(nb_ref)
    shutil.copy2(idx, nb_ref)
    for d in (nb_dir, nb_ref):
        shutil.chown(d, "nobody")
        shutil.chown(os.path.join(d, "i.db"), "nobody")
    os.chmod(nb_dir, 0o500)
    before = files_of(nb_dir)
    nb = os.path.join(nb_dir, "i.db")
    rc, out, err = run("scan", "--db", nb, root, user="nobody")
    check(rc == 3 and "is read-only" in err and "folder" in err,
          "scan in a folder it cannot write: %d %s" % (rc, err))
    no_sql(err, "scan read-only folder")
    for args in READERS:
        same_output(args, nb, os.path.join(nb_ref, "i.db"), user="nobody",
                    what="in a read-only folder")
    check(files_of(nb_dir) == before, "the read-only folder as it was")
    os.chmod(nb_dir, 0o700)
done()
