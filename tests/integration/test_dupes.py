"""seekless dupes: identical files grouped by content hash (empty files
left out), near-identical images by perceptual hash; text and JSON agree
with the records (the grouping itself is checked against brute force in
unit_db)."""
import json
import os
import shutil

from lib import check, done, export, mkcorpus, regular_files, run, tempdir

with tempdir("dupes", base="/dev/shm") as work:
    root = os.path.join(work, "photos")
    mkcorpus(root, "--files", 60, "--median", "20k", "--seed", 41, "--no-sync")
    files = sorted(regular_files(root))
    copies = os.path.join(root, "copies")
    os.makedirs(copies)
    shutil.copy(files[0], os.path.join(copies, "a.jpg"))
    shutil.copy(files[0], os.path.join(copies, "a2.jpg"))
    shutil.copy(files[1], os.path.join(copies, "b.jpg"))
    for n in ("e1.jpg", "e2.jpg"):
        open(os.path.join(copies, n), "wb").close()
    db = os.path.join(work, "i.db")
    # --phash-now: every hash in this scan, whatever the page cache holds
    # (by default one the disk outruns is left for the next scan: test_pending)
    run("scan", "--phash-now", "--db", db, root, check_rc=0)  # empty files are no errors
    recs = export(db)

    rc, out, err = run("dupes", "--db", db, "--json", check_rc=0)
    groups = [json.loads(l) for l in out.splitlines()]
    want = sorted([sorted([files[0], os.path.join(copies, "a.jpg"),
                           os.path.join(copies, "a2.jpg")]),
                   sorted([files[1], os.path.join(copies, "b.jpg")])])
    check(sorted(sorted(g["paths"]) for g in groups) == want,
          "identical groups, empty files left out: %r" % groups)
    check(all(g["kind"] == "identical" and g["size"] > 0 for g in groups), "kind and size")

    rc, out, err = run("dupes", "--db", db, "--near", "--json", check_rc=0)
    near = [json.loads(l) for l in out.splitlines()]
    check(all(g["kind"] == "near" and g["max_bits"] == 4 for g in near), "near groups")
    for w in want:
        check(any(set(w) <= set(g["paths"]) for g in near), "copies are near: %r" % w)
    hashed = sum(1 for r in recs if r["format"] == "jpeg")
    check(sum(len(g["paths"]) for g in near) <= hashed, "only hashed images in near groups")

    rc, out, err = run("dupes", "--db", db, "--near=0", check_rc=0)
    check(out.count("near (") >= 2 and "groups" in err, "text output: " + out[:300])
    rc, out, err = run("dupes", "--db", db, "--near=17")
    check(rc == 2, "--near=17 is a usage error")
done()
