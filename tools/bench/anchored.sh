#!/usr/bin/env bash
# What opening every file below its root, checked, and the two confinements
# (issue 40; docs/security.md) cost a warm scan, against a build without
# them, side by side in one run:
#   tools/bench/anchored.sh OLD_SEEKLESS [NEW_SEEKLESS] [FILES=3000] [RUNS=5]
# Makes a 1 GiB ext4 image in /dev/shm (so the disk is never the limit),
# writes FILES generated photos, then alternates OLD and NEW RUNS times:
# a full scan into a fresh index (--keep-cache: warm), then a rescan of the
# unchanged tree (walk and stat only).  Prints every run and the medians.
# Needs root (loop devices).
set -euo pipefail
old=${1:?usage: anchored.sh OLD_SEEKLESS [NEW_SEEKLESS] [FILES] [RUNS]}
here=$(cd "$(dirname "$0")/../.." && pwd)
new=${2:-$here/build/seekless}
nfiles=${3:-3000}
runs=${4:-5}
work=$(mktemp -d /dev/shm/seekless-anchored-XXXXXX)
trap 'umount "$work/m" 2>/dev/null || true; rm -rf "$work"' EXIT
truncate -s 1G "$work/img"
mkfs.ext4 -q -F "$work/img"
mkdir "$work/m"
mount -o loop "$work/img" "$work/m"
"$here/build/mkcorpus" --files "$nfiles" --median 60k --seed 5 "$work/m/photos" >/dev/null
sync
now() { date +%s.%N; }
for i in $(seq "$runs"); do
  for b in old new; do
    bin=$new; [ $b = old ] && bin=$old
    rm -f "$work/$b.db"*
    t0=$(now); "$bin" scan --db "$work/$b.db" --quiet --keep-cache "$work/m/photos"; t1=$(now)
    "$bin" scan --db "$work/$b.db" --quiet "$work/m/photos"; t2=$(now)
    echo "$b $(echo "$t1 - $t0" | bc) $(echo "$t2 - $t1" | bc)"
  done
done | tee "$work/runs"
python3 - "$work/runs" <<'EOF'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
for b in ("old", "new"):
    full = statistics.median(float(r[1]) for r in rows if r[0] == b)
    re = statistics.median(float(r[2]) for r in rows if r[0] == b)
    print("%s: full scan %.3f s, rescan %.1f ms (median of %d)" %
          (b, full, re * 1000, sum(r[0] == b for r in rows)))
EOF
