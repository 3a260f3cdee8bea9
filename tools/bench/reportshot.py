#!/usr/bin/env python3
"""The report's pictures in docs/img (issue 47), made again from scratch.

One index holds: a scan of the shared corpus (real camera files, with their
errors and near duplicates), and a scan and a bench of 800 photos on the
emulated disk (hddsim: 7200 rpm, ext4, one command at a time; physical,
fs and random order, cold).  `seekless report` writes the page, and
Debian's Chromium, headless, takes two pictures: the top of the page and
the section comparing the orders.

    sudo tools/bench/reportshot.py OUTDIR

Writes OUTDIR/report.png and OUTDIR/report-bench.png.  Needs root, FUSE 3,
chromium, the shared corpus (../shared/corpus/real)."""
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.normpath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(TOP, "tests", "integration"))
from cdp import Browser  # noqa: E402  (the test suite's DevTools client)

SH = ["bash", os.path.join(TOP, "tools", "hddsim", "hddsim.sh")]
BIN = os.environ.get("SEEKLESS_BIN", os.path.join(TOP, "build", "seekless"))
MKCORPUS = os.environ.get("MKCORPUS_BIN", os.path.join(TOP, "build", "mkcorpus"))
CORPUS = os.environ.get("SEEKLESS_CORPUS",
                        os.path.normpath(os.path.join(TOP, "..", "shared", "corpus", "real")))


def sh(*args):
    return subprocess.run(SH + list(args), check=True, capture_output=True, text=True).stdout


def seekless(*args):
    p = subprocess.run([BIN] + list(args), capture_output=True, text=True)
    if p.returncode not in (0, 1):  # 1: some files unreadable, as the corpus has
        sys.exit("seekless %s: exit %d: %s" % (args[0], p.returncode, p.stderr[-500:]))


def main():
    out = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else sys.exit(__doc__))
    name = "shot%d" % os.getpid()
    work = tempfile.mkdtemp(prefix="seekless-shot-", dir="/dev/shm")
    try:
        mnt = sh("up", name, "ext4", "1G", "--depth", "1").strip().splitlines()[-1]
        sh("latency", name, "off")
        photos = os.path.join(mnt, "photos")
        subprocess.run([MKCORPUS, "--files", "800", "--median", "150k", "--seed", "7", photos],
                       check=True, capture_output=True)
        sh("remount", name)
        sh("latency", name, "on")
        db = os.path.join(work, "index.db")
        seekless("scan", "--quiet", "--db", db, CORPUS)
        seekless("scan", "--quiet", "--db", db, photos)
        seekless("bench", "--db", db, "--runs", "1", "--orders", "physical,fs,random",
                 "--cold-cmd", " ".join(SH + ["remount", name]), photos)
        page = os.path.join(work, "report.html")
        seekless("report", "--db", db, "-o", page)
        with Browser(width=1100, height=1360) as b:
            b.open("file://" + page)
            b.screenshot(os.path.join(out, "report.png"), full=False)
            b.eval("document.getElementById('bench').scrollIntoView()")
            b.screenshot(os.path.join(out, "report-bench.png"), full=False)
    finally:
        for _ in range(5):
            if subprocess.run(SH + ["down", name], capture_output=True).returncode == 0:
                break
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
