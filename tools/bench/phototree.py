#!/usr/bin/env python3
"""Write N small files laid out like a photo library, fast: 40 per event
folder under YEAR/YEAR-MONTH/, named IMG_0000.JPG...  For benchmarks where
the number of files matters and their content does not (walk, stat, plan,
rescans); tools/mkcorpus makes real photos.

    phototree.py DIR N [BYTES=0]     BYTES of distinct content per file
"""
import os
import sys

root, n = sys.argv[1], int(sys.argv[2])
size = int(sys.argv[3]) if len(sys.argv) > 3 else 0
blob = os.urandom(size + 64) if size else b""
for i in range(n):
    ev = i // 40
    year = 2000 + ev % 25
    d = os.path.join(root, "%04d" % year, "%04d-%02d" % (year, ev % 12 + 1),
                     "%04d-%02d-%02d Event %d" % (year, ev % 12 + 1, ev % 28 + 1, ev))
    if i % 40 == 0:
        os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "IMG_%04d.JPG" % (i % 10000)), "wb") as f:
        if size:
            f.write(blob[i % 64:i % 64 + size - 8] + i.to_bytes(8, "little"))
