"""seekless as a physical-order helper: `plan --print0` writes the paths in
reading order, NUL-terminated (names with newlines survive), and `scan
--files-from` indexes exactly the listed files (NUL- or line-separated,
from a file or standard input), in the plan's order, without touching the
other records."""
import json
import os
import subprocess
import tarfile

from lib import BIN, check, db_rows, done, export, mkcorpus, regular_files, tempdir

with tempdir("lists", base="/dev/shm") as work:
    root = os.path.join(work, "photos")
    mkcorpus(root, "--files", 40, "--median", "10k", "--seed", 11, "--no-sync")
    odd = os.path.join(root, "new\nline.jpg")
    with open(regular_files(root)[0], "rb") as f, open(odd, "wb") as g:
        g.write(f.read())
    # hard links: the scan reads the file once, but a list for other tools
    # names every name (the documented `plan -0 | xargs -0 tar cf` backup
    # lost the first name of each linked file)
    linked = regular_files(root)[1]
    os.link(linked, os.path.join(root, "a-hard-link.jpg"))
    os.makedirs(os.path.join(root, "sub"))
    os.link(linked, os.path.join(root, "sub", "another.jpg"))
    files = sorted(regular_files(root))

    p = subprocess.run([BIN, "plan", "-0", root], capture_output=True)
    check(p.returncode == 0 and p.stdout.endswith(b"\0"), "plan -0 runs, NUL-terminated")
    listed = p.stdout.split(b"\0")[:-1]
    check(sorted(x.decode() for x in listed) == files,
          "every name once, the odd name and every hard link's intact")
    # what the docs show: the archive holds every file find finds
    tar = os.path.join(work, "photos.tar")
    p = subprocess.run("'%s' plan -0 '%s' | xargs -0 tar cf '%s'" % (BIN, root, tar), shell=True,
                       capture_output=True)
    check(p.returncode == 0, "plan -0 | xargs -0 tar cf: %s" % p.stderr[-300:])
    with tarfile.open(tar) as t:  # Python's reader: names with a newline intact
        in_tar = sorted("/" + m.name for m in t.getmembers() if not m.isdir())
    p = subprocess.run(["find", root, "-type", "f", "-print0"], capture_output=True)
    found = sorted(x.decode() for x in p.stdout.split(b"\0") if x)
    check(found == files, "find agrees with the walk of this test")
    check(in_tar == found, "tar's listing is find's: %d against %d, missing %s"
          % (len(in_tar), len(found), sorted(set(found) - set(in_tar))[:3]))
    p = subprocess.run([BIN, "plan", "--json", root], capture_output=True, text=True)
    entries = json.loads(p.stdout)["files"]
    named = sorted([e["path"] for e in entries] + [n for e in entries for n in e["other_names"]])
    check(named == files, "plan --json: each file's path and other_names name every file")
    p = subprocess.run([BIN, "plan", "--print0", "--order", "path", root], capture_output=True)
    by_path = [x.decode() for x in p.stdout.split(b"\0")[:-1]]
    # a file's other names follow it where it is read
    firsts = [x for x in by_path if x not in (os.path.join(root, "a-hard-link.jpg"),
                                              os.path.join(root, "sub", "another.jpg"), linked)]
    check(firsts == sorted(firsts) and len(by_path) == len(files), "--order path is sorted")
    at = min(by_path.index(n) for n in (linked, os.path.join(root, "a-hard-link.jpg"),
                                        os.path.join(root, "sub", "another.jpg")))
    check(sorted(by_path[at:at + 3]) == sorted([linked, os.path.join(root, "a-hard-link.jpg"),
                                                os.path.join(root, "sub", "another.jpg")]),
          "a hard-linked file's names together, where the first is read: %s" % by_path[at:at + 3])
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

    # the whole list back into a fresh index: a record for every name,
    # the linked names with the same bytes
    db3 = os.path.join(work, "k.db")
    p = subprocess.run([BIN, "scan", "--db", db3, "--files-from", "-"],
                       input=b"\0".join(listed) + b"\0", capture_output=True)
    check(p.returncode == 0, "scan --files-from the whole plan -0: %s" % p.stderr[-300:])
    recs = {r["path"]: r for r in export(db3)}
    check(sorted(recs) == files, "a record for every listed name: %d of %d"
          % (len(recs), len(files)))
    names = [linked, os.path.join(root, "a-hard-link.jpg"), os.path.join(root, "sub", "another.jpg")]
    check(len({recs.get(n, {}).get("content_hash") for n in names}) == 1 and
          recs.get(linked, {}).get("content_hash"), "the three names, one hash")

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
