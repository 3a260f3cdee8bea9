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

make_tree() { python3 "$here/tools/bench/phototree.py" "$1" "$2"; }
peak() { /usr/bin/time -f %M "$bin" plan --order physical "$1" 2>&1 >/dev/null | tail -1; }

make_tree "$base/small" 1000
make_tree "$base/large" "$n"
small=$(peak "$base/small")
large=$(peak "$base/large")
echo "peak RSS: 1000 files ${small} KiB, $n files ${large} KiB"
echo "per file: $(echo "($large - $small) * 1024 / ($n - 1000)" | bc) bytes"
