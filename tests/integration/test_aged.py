"""An aged disk (issue 19): mkcorpus --age fills a real file system with
filler files, deletes a random half and writes photos into the holes.
Its report of extents per photo must be filefrag's; the photos must be
fragmented; a schedule whose window holds few of them must take several
ascending sweeps, read none of the fragmented photos whole, and the scan
that follows it must store every file's bytes as xxh128sum reads them.

    test_aged.py FSTYPE

ext4 and btrfs: xfs keeps these photos whole in an image this small (its
allocator found room for each in one piece every time), so it has nothing
to sweep here; test_fs's reversed files fragment it instead."""
import json
import resource
import os
import re
import subprocess
import sys

from lib import (BIN, MKCORPUS, check, done, export, filefrag_runs, loop_fs, regular_files,
                 run, tempdir, xxh128)

fstype = sys.argv[1] if len(sys.argv) > 1 else "ext4"
# mke2fs makes a file system this small with 1 KiB blocks, whose
# allocator keeps 300 KiB files whole; a photo drive has 4 KiB blocks
MKFS_ARGS = {"ext4": ("-b", "4096")}

with loop_fs(fstype, 300, mkfs_args=MKFS_ARGS.get(fstype, ())) as fs, tempdir("aged") as work:
    root = os.path.join(fs.mnt, "photos")
    p = subprocess.run([MKCORPUS, "--files", "60", "--median", "400k", "--seed", "5",
                        "--age", "32k", "--age-keep", "70", root], capture_output=True, text=True)
    check(p.returncode == 0, "mkcorpus --age: %s" % p.stderr)
    print(p.stdout)
    m = re.search(r"extents per photo: mean ([0-9.]+), median (\d+), max (\d+); (\d+) of (\d+)",
                  p.stdout)
    check(m is not None, "mkcorpus reports extents per photo: %s" % p.stdout)
    check(os.path.isdir(root + ".filler"), "the filler beside the photos")
    files = regular_files(root)
    check(len(files) == 60, "60 photos: %d" % len(files))
    # filefrag's count, its runs merged where the disk is contiguous
    counts = sorted(len(filefrag_runs(f)) for f in files)
    mean = sum(counts) / len(counts)
    if m:
        check(abs(float(m.group(1)) - mean) < 0.005 and int(m.group(3)) == counts[-1]
              and int(m.group(4)) == sum(c > 1 for c in counts),
              "mkcorpus's report is filefrag's: %s against mean %.2f, max %d, %d split"
              % (m.group(0), mean, counts[-1], sum(c > 1 for c in counts)))
    check(mean >= 2.0, "%s aged: %.2f extents per photo" % (fstype, mean))

    # a window of 1 MiB (--mem 4M) holds three photos at most: many sweeps
    rc, out, err = run("plan", "--json", "--mem", "4M", root, check_rc=0)
    plan = json.loads(out)
    sch = plan["devices"][0]["schedule"]
    check(sch is not None, "a schedule: %s" % plan["devices"][0]["reason"])
    if sch:
        frag = sum(1 for f in plan["files"] if f["runs"])
        print({k: v for k, v in sch.items() if k != "ops"})
        check(sch["passes"] >= 3, "several sweeps: %d" % sch["passes"])
        check(sch["peak_held"] <= sch["window"], "held within the window: %s" % sch)
        check(sch["read_across"] >= frag - 2, "fragmented photos swept, not read whole: "
              "%d of %d" % (sch["read_across"], frag))
        # each sweep ascending: as many descents as sweeps after the first
        pos = [op[4] for op in sch["ops"] if op[1] != "whole"]
        descents = sum(b < a for a, b in zip(pos, pos[1:]))
        check(descents <= sch["passes"] - 1, "%d sweeps, %d descents" % (sch["passes"], descents))
        rc, out, err = run("plan", "--json", root, check_rc=0)
        roomy = json.loads(out)["devices"][0]["schedule"]
        check(roomy["passes"] < sch["passes"], "a larger window, fewer sweeps: %d, %d"
              % (roomy["passes"], sch["passes"]))

        # few descriptors: the sweeps hold fewer files open (half of what
        # is left after 128 kept for the rest), so they are more
        tight = subprocess.run(["prlimit", "--nofile=150", "--", BIN, "plan", "--json", root],
                               capture_output=True, text=True)
        check(tight.returncode == 0, "plan under 150 descriptors: " + tight.stderr[-300:])
        if tight.returncode == 0:
            few = json.loads(tight.stdout)["devices"][0]["schedule"]
            print("descriptors: roomy", {k: roomy[k] for k in ("peak_open", "passes")},
                  "tight", {k: few[k] for k in ("peak_open", "passes")})
            # more sweeps where the roomy plan held more open than that
            check(few["peak_open"] <= 11 and
                  (few["passes"] > roomy["passes"] if roomy["peak_open"] > 11
                   else few["passes"] == roomy["passes"]),
                  "150 descriptors: at most 11 open (%d; %d without the limit), sweeps %d "
                  "(%d without)" % (few["peak_open"], roomy["peak_open"], few["passes"],
                                    roomy["passes"]))
        # a low soft limit under a high hard one: plan raises it as scan
        # does, so its schedule is the one scan follows
        hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
        soft = subprocess.run(["prlimit", "--nofile=150:%d" % hard, "--", BIN, "plan", "--json",
                               root], capture_output=True, text=True)
        check(soft.returncode == 0 and
              json.loads(soft.stdout)["devices"][0]["schedule"] == roomy,
              "soft limit 150, hard %d: the schedule without the limit (%s)"
              % (hard, soft.stderr[-300:]))

    db = os.path.join(work, "a.db")
    hashes = xxh128(files)
    rc, out, err = run("scan", "--json", "--mem", "4M", "--db", db, root, check_rc=0)
    dev = json.loads(out)["devices"][0]
    check(dev["swept"] and dev["unswept"] == 0, "swept: %s" % dev)
    recs = {r["path"]: r for r in export(db)}
    wrong = [f for f in files if recs.get(f, {}).get("content_hash") != hashes[f]
             or recs[f]["error"] is not None]
    check(not wrong, "every photo's bytes as xxh128sum's: %s" % wrong[:5])
    check(all(recs[f]["width"] for f in files if f in recs), "every photo parsed")
done()
