#!/usr/bin/env python3
"""The reference an extent schedule is measured against (issue 19).

    sweep.py PLAN.json

reads every extent of every file in `seekless plan --json` through the file
system, in one ascending sweep of physical offsets: each file opened once
with POSIX_FADV_RANDOM (so that the kernel does not read on into the
file's next extent, which lies elsewhere), each extent one pread.  No
hashing, no parsing, no memory bound: the time the disk needs to deliver
the bytes in the best order there is.  Prints the wall time in seconds.
"""
import json
import os
import sys
import time


def pieces(plan):
    out = []
    for f in plan["files"]:
        if f.get("phys_offset") is None:
            continue
        if f.get("runs"):
            for logical, phys, length in f["runs"]:
                out.append((phys, f["path"], logical, length))
        else:
            out.append((f["phys_offset"], f["path"], 0, f["size"]))
    out.sort()
    return out


def main():
    with open(sys.argv[1]) as fh:
        todo = pieces(json.load(fh))
    t0 = time.monotonic()
    fds = {}
    total = 0
    for _, path, logical, length in todo:
        fd = fds.get(path)
        if fd is None:
            fd = fds[path] = os.open(path, os.O_RDONLY)
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_RANDOM)
        while length > 0:
            b = os.pread(fd, min(length, 8 << 20), logical)
            if not b:
                break
            total += len(b)
            logical += len(b)
            length -= len(b)
    for fd in fds.values():
        os.close(fd)
    print(f"{time.monotonic() - t0:.3f} s, {total} bytes in {len(todo)} extents")


if __name__ == "__main__":
    main()
