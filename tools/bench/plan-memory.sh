#!/usr/bin/env bash
# Memory of the walk + locate + plan stages per file: peak RSS of
# `seekless plan` over a tree of N empty files laid out like a photo library
# (40 files per event folder), for a small and a large N, in /dev/shm.
#
#   tools/bench/plan-memory.sh [N=1000000]
set -euo pipefail
n=${1:-1000000}
here=$(cd "$(dirname "$0")/../.." && pwd)
bin=${SEEKLESS_BIN:-$here/build/seekless}
base=/dev/shm/seekless-planmem-$$
trap 'rm -rf "$base"' EXIT

make_tree() { # dir count
  python3 - "$1" "$2" <<'PY'
import os, sys
root, n = sys.argv[1], int(sys.argv[2])
for i in range(n):
    ev = i // 40
    d = os.path.join(root, "%04d" % (2000 + ev % 25), "%04d-%02d" % (2000 + ev % 25, ev % 12 + 1),
                     "%04d-%02d-%02d Event %d" % (2000 + ev % 25, ev % 12 + 1, ev % 28 + 1, ev))
    if i % 40 == 0:
        os.makedirs(d, exist_ok=True)
    open(os.path.join(d, "IMG_%04d.JPG" % (i % 10000)), "w").close()
PY
}
peak() { /usr/bin/time -f %M "$bin" plan --order physical "$1" 2>&1 >/dev/null | tail -1; }

make_tree "$base/small" 1000
make_tree "$base/large" "$n"
small=$(peak "$base/small")
large=$(peak "$base/large")
echo "peak RSS: 1000 files ${small} KiB, $n files ${large} KiB"
echo "per file: $(echo "($large - $small) * 1024 / ($n - 1000)" | bc) bytes"
