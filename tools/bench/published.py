#!/usr/bin/env python3
"""The published experiment, reproduced on a lived-in drive (issue 45).

The test this project starts from: 87,418 files, 12.46 GiB (149 KiB on
average), a 7200 rpm disk with 17 ms average access, Windows XP, NTFS; read
in file-system order in 506 s, sorted by (fragment count, first cluster) in
347 s (1.42x), plus 12 s to read the positions and 54 ms to sort.

Here: hddsim set to a disk of that kind (7200 rpm; 12.8 ms average seek, so
that seek plus half a turn is 17 ms; 72 to 40 MB/s; 250 GB; one command at
a time unless DEPTH says otherwise), the file system made on it, a lived-in
drive written by tools/bench/livedin.py with the latency off, then, latency
on, a remount before each (cold), RUNS times:
  fs         cat of every file in the order the file system lists them
             (find: readdir order, depth first), as the published unsorted run
  published  the published method: the position pass on its own (seekless
             plan: walk, FIEMAP or FIBMAP), the sort by (fragments, first
             offset) on its own, then cat of each file whole in that order
  seekless   seekless scan with its defaults (read, hash, extract, store)
  cat        cat in physical order (first offset; list made beforehand)
and prints the medians beside the published figures, with the ratios.

    sudo tools/bench/published.py FSTYPE [FILES=22000] [RUNS=3] [OUTDIR=.]

Environment: MEAN_KIB (default 166: with sidecars and edits the drive's
mean comes to about 149 KiB), SEED (1), LIFE (1.0), AGED=1 (first fill the
disk with AGE_KIB files, default 32, and delete a random half, so the
photos land fragmented in the holes: with 32 KiB holes about four in five
do, with 64 KiB ones only a third on ext4 and a quarter on NTFS, as half
the free space then lies in runs long enough for a whole photo), DEPTH (1), HDDSIM_OPTS (more emulator options),
SVG=1 (also `seekless bench --orders physical,fs --svg` of the drive),
SEEKLESS_BIN.  Needs root, FUSE 3, the shared corpus.
"""
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.normpath(os.path.join(HERE, "..", ".."))
SH = ["bash", os.path.join(TOP, "tools", "hddsim", "hddsim.sh")]
BIN = os.environ.get("SEEKLESS_BIN", os.path.join(TOP, "build", "seekless"))
PUBLISHED = {"fs": 506.0, "published": 347.0, "positions": 12.0, "sort": 0.054,
             "files": 87418, "gib": 12.46}


def sh(*args, capture=True):
    p = subprocess.run(SH + [str(a) for a in args], capture_output=capture, text=True)
    if p.returncode:
        sys.exit("hddsim.sh %s: %s" % (" ".join(map(str, args)), p.stderr))
    return p.stdout


def timed(cmd, **kw):
    t = time.monotonic()
    p = subprocess.run(cmd, **kw)
    took = time.monotonic() - t
    if p.returncode not in (0, 1):
        sys.exit("%s: exit %d" % (cmd[0], p.returncode))
    return took


def cat_list(paths):
    """cat of the files in this order; the wall time."""
    data = b"\0".join(p.encode() for p in paths)
    t = time.monotonic()
    subprocess.run(["xargs", "-0", "cat"], input=data, stdout=subprocess.DEVNULL, check=True)
    return time.monotonic() - t


def age(mnt, kib):
    """Fill the disk with files of kib KiB, then delete a random half: the
    photos written next go into the holes, fragmented."""
    filler = os.path.join(mnt, "filler")
    os.makedirs(filler)
    block = os.urandom(kib * 1024)
    n = 0
    try:
        while True:
            with open(os.path.join(filler, "f%07d" % n), "wb") as f:
                f.write(block)
            n += 1
    except OSError:
        pass
    rng = random.Random(7)
    for i in rng.sample(range(n), n // 2):
        os.unlink(os.path.join(filler, "f%07d" % i))
    subprocess.run(["sync", "-f", mnt], check=True)
    return n


def main():
    fstype = sys.argv[1] if len(sys.argv) > 1 else sys.exit(__doc__)
    nfiles = int(sys.argv[2]) if len(sys.argv) > 2 else 22000
    runs = int(sys.argv[3]) if len(sys.argv) > 3 else 3
    outdir = os.path.abspath(sys.argv[4] if len(sys.argv) > 4 else ".")
    mean = float(os.environ.get("MEAN_KIB", "166"))
    aged = os.environ.get("AGED") == "1"
    age_kib = int(os.environ.get("AGE_KIB", "32"))
    name = "pub-" + fstype
    work = tempfile.mkdtemp(prefix="seekless-pub-", dir="/dev/shm")
    opts = ["--rpm", "7200", "--avg", "12.8", "--full", "25", "--t2t", "1.5",
            "--outer", "72", "--inner", "40", "--capacity", "250G",
            "--depth", os.environ.get("DEPTH", "1")] + os.environ.get("HDDSIM_OPTS", "").split()
    # room for the photos, and for the filler when aged
    size_mb = int(nfiles * mean / 1024 * (2.6 if aged else 1.4)) + 512
    try:
        mnt = sh("up", name, fstype, "%dM" % size_mb, *opts).strip().splitlines()[-1]
        sh("latency", name, "off")
        filler = age(mnt, age_kib) if aged else 0
        root = os.path.join(mnt, "drive")
        gen = [sys.executable, os.path.join(HERE, "livedin.py"), root, "--files", str(nfiles),
               "--mean-kib", str(mean), "--seed", os.environ.get("SEED", "1"),
               "--life", os.environ.get("LIFE", "1.0"), "--quiet"]
        made = subprocess.run(gen, capture_output=True, text=True, check=True).stdout.strip()
        print(made + (" (aged: %d filler files of %d KiB, half deleted)" % (filler, age_kib)
                      if aged else ""), flush=True)
        sh("remount", name)
        sh("latency", name, "on")
        # the physical order, made beforehand (not timed) for `cat`
        plan = json.loads(subprocess.run([BIN, "plan", "--json", "--order", "physical", root],
                                         capture_output=True, text=True, check=True).stdout)
        files = [f for f in plan["files"] if f["phys_offset"] is not None]
        by_first = [f["path"] for f in sorted(files, key=lambda f: f["phys_offset"])]
        frag = sum(1 for f in files if (f["fragments"] or 1) > 1)
        total = sum(f["size"] for f in plan["files"])
        print("%d files (%d placed, %d fragmented), %.2f GiB, %.0f KiB mean; %s, depth %s" %
              (len(plan["files"]), len(files), frag, total / 2**30,
               total / 1024 / len(plan["files"]), fstype, os.environ.get("DEPTH", "1")),
              flush=True)
        res = {k: [] for k in ("fs", "positions", "sort", "published", "seekless", "cat")}
        for run in range(runs):
            # find's own walk is part of the unsorted run, as a program
            # enumerating folders and reading as it goes: timed together
            sh("remount", name)
            t = time.monotonic()
            find = subprocess.Popen(["find", root, "-type", "f", "-print0"],
                                    stdout=subprocess.PIPE)
            subprocess.run(["xargs", "-0", "cat"], stdin=find.stdout, stdout=subprocess.DEVNULL,
                           check=True)
            find.wait()
            res["fs"].append(time.monotonic() - t)

            sh("remount", name)
            t = time.monotonic()
            out = subprocess.run([BIN, "plan", "--json", "--order", "physical", root],
                                 capture_output=True, text=True, check=True).stdout
            res["positions"].append(time.monotonic() - t)
            t = time.monotonic()
            pl = json.loads(out)["files"]
            order = [f["path"] for f in sorted(pl, key=lambda f: (f["fragments"] or 1,
                                                                    f["phys_offset"] or 0))]
            res["sort"].append(time.monotonic() - t)
            res["published"].append(cat_list(order))

            sh("remount", name)
            db = os.path.join(work, "index.db")
            for suffix in ("", "-wal", "-shm", ".lock"):
                if os.path.exists(db + suffix):
                    os.unlink(db + suffix)
            res["seekless"].append(timed([BIN, "scan", "--quiet", "--db", db, root]))

            sh("remount", name)
            res["cat"].append(cat_list(by_first))
            print("run %d: %s" % (run + 1, ", ".join("%s %.2f s" % (k, v[-1])
                                                     for k, v in res.items())), flush=True)
        med = {k: statistics.median(v) for k, v in res.items()}
        pub_total = med["positions"] + med["sort"] + med["published"]
        print("\nmedians of %d runs (%s, %s):" % (runs, fstype, "aged" if aged else "lived-in"))
        print("| | file-system order | published method: positions | sort | read | "
              "total | fs / read | seekless scan | cat, physical order |")
        print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
        print("| published (87,418 files, 12.46 GiB, XP, NTFS) | 506 s | 12 s | 54 ms | 347 s |"
              " 359 s | 1.46x | | |")
        print("| here | %.1f s | %.2f s | %.0f ms | %.1f s | %.1f s | %.2fx | %.1f s (%.2fx fs) |"
              " %.1f s (%.2fx fs) |" %
              (med["fs"], med["positions"], med["sort"] * 1000, med["published"], pub_total,
               med["fs"] / med["published"], med["seekless"], med["fs"] / med["seekless"],
               med["cat"], med["fs"] / med["cat"]))
        print("json: " + json.dumps({"fstype": fstype, "aged": aged, "files": len(plan["files"]),
                                     "bytes": total, "fragmented": frag, "runs": res,
                                     "medians": med}))
        if os.environ.get("SVG") == "1":
            svg = os.path.join(outdir, "livedin-%s%s.svg" % (fstype, "-aged" if aged else ""))
            subprocess.run([BIN, "bench", "--orders", "physical,fs", "--runs", "1", "--svg", svg,
                            "--db", os.path.join(work, "bench.db"), "--cold-cmd",
                            " ".join(SH + ["remount", name]), root], check=True)
    finally:
        # the loop device may let go of the emulator's file a while after
        # it is detached: down says so, and is run again
        for _ in range(5):
            p = subprocess.run(SH + ["down", name], capture_output=True, text=True)
            if p.returncode == 0:
                break
        else:
            print("published.py: could not take %s down: %s" % (name, p.stderr.strip()),
                  file=sys.stderr)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
