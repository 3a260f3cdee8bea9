"""seekless as a physical-order helper: `plan --print0` writes the paths in
reading order, NUL-terminated (names with newlines survive), and `scan
--files-from` indexes exactly the listed files (NUL- or line-separated,
from a file or standard input), in the plan's order, without touching the
other records."""
import os
import subprocess

from lib import BIN, check, db_rows, done, export, mkcorpus, regular_files, tempdir

with tempdir("lists", base="/dev/shm") as work:
    root = os.path.join(work, "photos")
    mkcorpus(root, "--files", 40, "--median", "10k", "--seed", 11, "--no-sync")
    odd = os.path.join(root, "new\nline.jpg")
    with open(regular_files(root)[0], "rb") as f, open(odd, "wb") as g:
        g.write(f.read())
    files = sorted(regular_files(root))

    p = subprocess.run([BIN, "plan", "-0", root], capture_output=True)
    check(p.returncode == 0 and p.stdout.endswith(b"\0"), "plan -0 runs, NUL-terminated")
    listed = p.stdout.split(b"\0")[:-1]
    check(sorted(x.decode() for x in listed) == files, "every file once, the odd name intact")
    p = subprocess.run([BIN, "plan", "--print0", "--order", "path", root], capture_output=True)
    by_path = [x.decode() for x in p.stdout.split(b"\0")[:-1]]
    check(by_path == sorted(by_path) and len(by_path) == len(files), "--order path is sorted")
    p = subprocess.run([BIN, "plan", "-0", "--json", root], capture_output=True)
    check(p.returncode == 2, "--json with --print0 is a usage error")

    # the whole tree indexed, then a list of some: only those read again,
    # nothing else touched
    db = os.path.join(work, "i.db")
    subprocess.run([BIN, "scan", "--db", db, root], check=True, capture_output=True)
    some = listed[:10]
    with open(some[0], "ab") as f:  # one of them changed since
        f.write(b"\0" * 10)
    p = subprocess.run([BIN, "scan", "--db", db, "--files-from", "-"],
                       input=b"\0".join(some) + b"\0", capture_output=True)
    out = p.stdout.decode()
    check(p.returncode == 0, "scan --files-from -: %s" % p.stderr[-300:])
    check("9 unchanged" in out and "1 changed" in out, "only the listed files: " + out[:400])
    check(db_rows(db, "SELECT count(*) FROM files WHERE deleted_at IS NULL")[0][0] == len(files),
          "the others are not marked deleted")

    # one per line, relative to the current folder, with a missing file
    lst = os.path.join(work, "list.txt")
    rel = [os.path.relpath(f, work) for f in files if "\n" not in f][:3]
    with open(lst, "w") as f:
        f.write("\n".join(rel + ["photos/not-there.jpg"]) + "\n")
    db2 = os.path.join(work, "j.db")
    p = subprocess.run([BIN, "scan", "--db", db2, "--files-from", lst], capture_output=True,
                       text=True, cwd=work)
    check(p.returncode == 1, "a missing listed file is an error: %d" % p.returncode)
    recs = {r["path"]: r for r in export(db2)}
    check(sorted(recs) == sorted([os.path.join(work, r) for r in rel] +
                                 [os.path.join(work, "photos/not-there.jpg")]),
          "exactly the listed files: %s" % sorted(recs))
    check(recs.get(os.path.join(work, "photos/not-there.jpg"), {}).get("error") is not None,
          "the missing one is recorded with its error")

    p = subprocess.run([BIN, "scan", "--db", db2, "--files-from", lst, root],
                       capture_output=True, text=True)
    check(p.returncode == 2, "--files-from with a ROOT is a usage error")
    p = subprocess.run([BIN, "scan", "--db", db2, "--files-from", "-"], input="",
                       capture_output=True, text=True)
    check(p.returncode == 2 and "lists no file" in p.stderr, "an empty list: " + p.stderr)
done()
