#!/usr/bin/env python3
"""Time `seekless query` on an index of N synthetic records (default 1M),
with the schema's indexes and, side by side, with them dropped.

    python3 tools/bench/query.py [N] [RUNS] [SEEKLESS]

Records: 40 camera models, dates spread over 2005-2024, GPS on 60% of them
spread over Europe, 3% with errors, 2% deleted, a random perceptual hash
each (1% of them one bit from one of the first 100: near copies).  Each query runs RUNS times
(default 5) per index state; the median wall time is reported."""
import os
import random
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time

N = int(sys.argv[1]) if len(sys.argv) > 1 else 1000000
RUNS = int(sys.argv[2]) if len(sys.argv) > 2 else 5
BIN = sys.argv[3] if len(sys.argv) > 3 else "build/seekless"

QUERIES = [
    ("camera", ["--camera", "eos r5"]),
    ("date range (1 month)", ["--from", "2019-07", "--to", "2019-07"]),
    ("near (5 km)", ["--near", "48.8566,2.3522,5"]),
    ("format", ["--format", "dng"]),
    ("errors", ["--errors"]),
    ("camera + year", ["--camera", "iphone", "--from", "2021", "--to", "2021"]),
]

work = tempfile.mkdtemp(prefix="seekless-qbench-")
try:
    empty = os.path.join(work, "empty")
    os.makedirs(empty)
    db = os.path.join(work, "i.db")
    subprocess.run([BIN, "scan", "--quiet", "--db", db, empty], check=True)
    rng = random.Random(1)
    makes = [("Canon", "Canon EOS R5"), ("Canon", "Canon EOS 80D"), ("Apple", "iPhone 12"),
             ("NIKON CORPORATION", "NIKON D750"), ("SONY", "ILCE-7M3")] + \
            [("Maker%d" % i, "Model %d" % i) for i in range(35)]
    fmts = ["jpeg"] * 90 + ["heif"] * 5 + ["dng"] * 3 + ["png"] * 2
    con = sqlite3.connect(db)
    t0 = time.time()
    rows, prev = [], []
    for i in range(N):
        mk, md = makes[rng.randrange(len(makes))]
        y = rng.randrange(2005, 2025)
        dt = "%04d-%02d-%02dT%02d:%02d:00" % (y, rng.randrange(1, 13), rng.randrange(1, 29),
                                              rng.randrange(24), rng.randrange(60))
        gps = rng.random() < 0.6
        ph = rng.getrandbits(64)
        if i >= 100 and rng.random() < 0.01:  # a copy of an earlier picture
            ph = prev[rng.randrange(100)] ^ (1 << rng.randrange(64))
        if i < 100:
            prev.append(ph)
        rows.append(("/photos/%d/%02d/IMG_%07d.JPG" % (y, i % 12, i), 1000 + i, 1, i,
                     rng.choice(fmts), mk, md, dt,
                     rng.uniform(36, 60) if gps else None, rng.uniform(-10, 30) if gps else None,
                     "jpeg: truncated" if rng.random() < 0.03 else None,
                     "2026-01-01T00:00:00Z" if rng.random() < 0.02 else None,
                     ph - (1 << 64) if ph >= 1 << 63 else ph))
        if len(rows) == 50000:
            con.executemany("INSERT INTO files(path, size, first_scan, last_scan, indexed_at,"
                            " format, make, model, datetime_original, gps_lat, gps_lon, error,"
                            " deleted_at, phash) VALUES(?,?,?,?,'x',?,?,?,?,?,?,?,?,?)",
                            [r[:2] + (1, 1) + r[4:] for r in rows])
            rows = []
    if rows:
        con.executemany("INSERT INTO files(path, size, first_scan, last_scan, indexed_at,"
                        " format, make, model, datetime_original, gps_lat, gps_lon, error,"
                        " deleted_at, phash) VALUES(?,?,?,?,'x',?,?,?,?,?,?,?,?,?)",
                        [r[:2] + (1, 1) + r[4:] for r in rows])
    con.commit()
    con.execute("ANALYZE")
    con.close()
    bare = os.path.join(work, "bare.db")
    shutil.copy(db, bare)
    con = sqlite3.connect(bare)
    for ix in ("files_taken", "files_gps", "files_format", "files_errors", "files_camera"):
        con.execute("DROP INDEX " + ix)
    con.execute("ANALYZE")
    con.close()
    print("%d records written in %.1f s" % (N, time.time() - t0))

    def timed(path, args):
        ts, n = [], 0
        for _ in range(RUNS):
            t = time.perf_counter()
            p = subprocess.run([BIN, "query", "--db", path] + args, capture_output=True,
                               check=True)
            ts.append(time.perf_counter() - t)
            n = p.stdout.count(b"\n")
        return statistics.median(ts), n

    print("| query | matches | with indexes | without | ratio |")
    print("|---|---:|---:|---:|---:|")
    for name, args in QUERIES:
        a, n = timed(db, args)
        b, m = timed(bare, args)
        assert n == m, (name, n, m)
        print("| %s | %d | %.3f s | %.3f s | %.1fx |" % (name, n, a, b, b / a))

    # near duplicates over every perceptual hash (1% planted copies)
    print("\n| dupes | groups | wall (median) |")
    print("|---|---:|---:|")
    for bits in ("4", "6"):
        ts = []
        for _ in range(RUNS):
            t = time.perf_counter()
            p = subprocess.run([BIN, "dupes", "--db", db, "--near=" + bits, "--json"],
                               capture_output=True, check=True)
            ts.append(time.perf_counter() - t)
        print("| --near=%s | %d | %.2f s |" % (bits, p.stdout.count(b"\n"),
                                              statistics.median(ts)))
finally:
    shutil.rmtree(work, ignore_errors=True)
