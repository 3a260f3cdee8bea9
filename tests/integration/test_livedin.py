"""The lived-in drive generator (tools/bench/livedin.py, issue 45) makes
what it says, on ext4, xfs, btrfs and NTFS (ntfs-3g), checked against what
our code did not compute:
  - the tree is the manifest (paths, sizes), every import folder written
    after the one before it, every file begins with the real file it was
    made from, and exiftool names the type its extension says (a sample);
  - the life happened: deletions, saves through a new file, exported edits,
    sidecars written later beside their images, renames, album moves;
  - the layout (filefrag's FIEMAP extents; on NTFS ntfsinfo's runlists off
    the raw volume): within a folder, the files the life left alone lie in
    name order on the disk, as a card import writes them; the order a
    folder lists in (readdir, as `ls -f`) follows the disk on NTFS, xfs and
    btrfs, and does not on ext4 (hash order): the difference between the
    published 1.42x and our 7x (issue 45).
"""
import json
import os
import re
import subprocess
import sys

from lib import check, done, loop_fs, need_root, ntfs_runs, skip, tempdir

need_root()
HERE = os.path.dirname(os.path.abspath(__file__))
GEN = os.path.join(HERE, "..", "..", "tools", "bench", "livedin.py")
CORPUS = os.path.join(HERE, "..", "..", "..", "shared", "corpus")
for d in ("real", "media"):
    if not os.path.isdir(os.path.join(CORPUS, d)):
        skip("no shared corpus at %s" % os.path.join(CORPUS, d))

FILES, IMPORTS, MEAN_KIB = 600, 12, 40


def filefrag_first(paths):
    """Each file's first physical block (4 KiB units), by filefrag -v."""
    out = {}
    for i in range(0, len(paths), 200):
        chunk = paths[i:i + 200]
        p = subprocess.run(["filefrag", "-v", "-b4096"] + chunk, capture_output=True,
                           text=True)
        cur = None
        for line in p.stdout.splitlines():
            m = re.match(r"^File size of (.*) is \d+", line)
            if m:
                cur = m.group(1)
                continue
            m = re.match(r"^\s*0:\s+\d+\.\.\s*\d+:\s+(\d+)\.\.", line)
            if m and cur is not None and cur not in out:
                out[cur] = int(m.group(1))
    return out


def check_tree(fstype, root, man):
    files = {f["path"]: f for f in man["files"]}
    walked = {}
    for top, _, names in os.walk(root):
        for n in names:
            p = os.path.join(top, n)
            walked[os.path.relpath(p, root)] = os.path.getsize(p)
    check(walked == {p: f["size"] for p, f in files.items()},
          "%s: the tree is the manifest (%d files, %d in the manifest)" %
          (fstype, len(walked), len(files)))
    # every file begins with the real file it was made from
    wrong = []
    for f in files.values():
        with open(f["source"], "rb") as s, open(os.path.join(root, f["path"]), "rb") as g:
            src = s.read()
            if g.read(len(src)) != src:
                wrong.append(f["path"])
    check(not wrong, "%s: every file begins with its source's bytes: %s" % (fstype, wrong[:5]))
    # imports in date order: each folder's files written after the last one's
    last = {}
    for f in files.values():
        if f["import"] is not None and not f["life"]:
            last.setdefault(f["import"], []).append(f["seq"])
    spans = [(min(v), max(v)) for _, v in sorted(last.items())]
    check(all(a[1] < b[0] for a, b in zip(spans, spans[1:])),
          "%s: imports written one after another: %s" % (fstype, spans[:6]))
    # what the life did
    kinds = {}
    for f in files.values():
        for what in f["life"]:
            kinds[what.split(" from")[0]] = kinds.get(what.split(" from")[0], 0) + 1
    check(man["deleted"] > 0 and all(kinds.get(k, 0) > 0 for k in
                                     ("saved again", "exported edit", "sidecar later", "renamed",
                                      "moved")),
          "%s: every kind of life happened: %s, %d deleted" % (fstype, kinds, man["deleted"]))
    orphans = [p for p, f in files.items() if f["kind"] == "xmp" and
               not any(q != p and os.path.splitext(q)[0] == os.path.splitext(p)[0]
                       for q in files)]
    check(not orphans, "%s: every sidecar beside its image: %s" % (fstype, orphans[:5]))
    photos = [f["size"] for f in files.values()
              if f["kind"] != "xmp" and "exported edit" not in f["life"]]
    mean = sum(photos) / len(photos) / 1024
    check(abs(mean - MEAN_KIB) < 0.15 * MEAN_KIB,
          "%s: pictures and movies %.1f KiB on average (asked %d)" % (fstype, mean, MEAN_KIB))


def check_types(root, man):
    """exiftool on a sample: the type each extension says."""
    want = {".jpg": "JPEG", ".nef": "NEF", ".cr2": "CR2", ".arw": "ARW", ".dng": "DNG",
            ".rw2": "RW2", ".mov": "MOV", ".mp4": "MP4", ".xmp": "XMP"}
    sample = sorted(man["files"], key=lambda f: f["path"])[::5]
    p = subprocess.run(["exiftool", "-fast2", "-j", "-FileType"] +
                       [os.path.join(root, f["path"]) for f in sample],
                       capture_output=True, text=True)
    got = {os.path.relpath(x["SourceFile"], root): x.get("FileType") for x in json.loads(p.stdout)}
    bad = {f["path"]: got.get(f["path"]) for f in sample
           if got.get(f["path"]) != want[os.path.splitext(f["path"])[1].lower()]}
    check(len(got) == len(sample) and not bad, "exiftool: each file the type its name says: %s"
          % list(bad.items())[:5])


def check_layout(fstype, root, man, firsts):
    files = {f["path"]: f for f in man["files"]}
    by_name, by_dir, listed = [], [], []
    for folder in man["folders"]:
        d = os.path.join(root, folder)
        if not os.path.isdir(d):
            continue
        names = os.listdir(d)  # readdir order, as ls -f
        alone = [n for n in names if not files[os.path.join(folder, n)]["life"]]
        by_name.append([firsts[os.path.join(folder, n)] for n in sorted(alone)])
        by_dir.append([firsts[os.path.join(folder, n)] for n in alone])
        listed.append([n.upper() for n in names])
    name_pairs = [(a, b) for offs in by_name for a, b in zip(offs, offs[1:])]
    dir_pairs = [(a, b) for offs in by_dir for a, b in zip(offs, offs[1:])]
    name_asc = sum(a < b for a, b in name_pairs) / len(name_pairs)
    dir_asc = sum(a < b for a, b in dir_pairs) / len(dir_pairs)
    list_pairs = [(a, b) for names in listed for a, b in zip(names, names[1:])]
    sorted_share = sum(a < b for a, b in list_pairs) / len(list_pairs)
    print("%s: files left alone, on the disk ascending in name order %.3f (%d pairs), in "
          "readdir order %.3f; readdir lists in name order %.3f" %
          (fstype, name_asc, len(name_pairs), dir_asc, sorted_share))
    check(len(name_pairs) > FILES // 2, "%s: enough files left alone: %d" % (fstype,
                                                                             len(name_pairs)))
    check(name_asc >= 0.8, "%s: a folder's files lie in name order, as imported: %.3f" %
          (fstype, name_asc))
    if fstype == "ext4":
        check(dir_asc <= 0.7, "ext4 lists in hash order, not the disk's: %.3f" % dir_asc)
    else:
        check(dir_asc >= 0.8, "%s lists near the disk's order: %.3f" % (fstype, dir_asc))
    if fstype == "ntfs":
        # ntfs-3g lists the index root's entries before the index blocks'
        check(sorted_share >= 0.9, "NTFS lists in name order: %.3f" % sorted_share)


with tempdir("livedin") as work:
    for fstype in ("ext4", "xfs", "btrfs", "ntfs"):
        with loop_fs(fstype, 512) as fs:
            root = os.path.join(fs.mnt, "drive")
            manifest = os.path.join(work, fstype + ".json")
            p = subprocess.run([sys.executable, GEN, root, "--files", str(FILES), "--imports",
                                str(IMPORTS), "--mean-kib", str(MEAN_KIB), "--seed", "5",
                                "--manifest", manifest, "--quiet"],
                               capture_output=True, text=True)
            check(p.returncode == 0, "%s: livedin.py: %s" % (fstype, p.stderr[-600:]))
            if p.returncode:
                continue
            with open(manifest) as f:
                man = json.load(f)
            check_tree(fstype, root, man)
            if fstype == "ext4":
                check_types(root, man)
            if fstype == "ntfs":
                # the runlists off the raw volume, unmounted (ntfsinfo)
                subprocess.run(["umount", fs.mnt], check=True)
                firsts = {}
                for f in man["files"]:
                    runs = ntfs_runs(fs.loop, "/drive/" + f["path"])
                    if runs and runs[0][1] is not None:
                        firsts[f["path"]] = runs[0][1]
                fs.mount()
            else:
                got = filefrag_first([os.path.join(root, f["path"]) for f in man["files"]])
                firsts = {os.path.relpath(p, root): o for p, o in got.items()}
            # a small sidecar may live inside its MFT record on NTFS: no place
            unplaced = [f["path"] for f in man["files"]
                        if f["path"] not in firsts and f["kind"] != "xmp"]
            check(not unplaced, "%s: every picture and movie placed: %s" % (fstype, unplaced[:5]))
            if not unplaced:
                check_layout(fstype, root, man, firsts)
done()
