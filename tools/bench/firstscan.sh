#!/usr/bin/env bash
# The first scan after copying photos onto a drive (issue 42):
#   tools/bench/firstscan.sh SRC [RUNS=3] [OLD_SEEKLESS]
# An emulated 7200 rpm disk with ext4 (tools/hddsim at real-time priority;
# HDDSIM_OPTS passes options, e.g. "--depth 1").  Each run, for each way in
# turn, SRC is copied onto the disk (cp -r: into the page cache, no blocks
# given yet), and at once:
#   scan        seekless scan: files whose data has no blocks yet are written
#               back one by one to be placed (written_back, writeback_s)
#   sync-scan   sync, then seekless scan
#   old         OLD_SEEKLESS scan, which placed none of them (inode order)
# and then, for every way, sync: the writes the kernel still owed.  Prints
# the medians of: seconds from the end of the copy until the disk is idle
# (scan and sync done), the scan's own seconds, and the files written back
# and what that took.  Needs root and a build with hddsim.
set -euo pipefail
src=$(realpath "${1:?usage: firstscan.sh SRC [RUNS] [OLD_SEEKLESS]}")
runs=${2:-3}
old=${3:-}
here=$(cd "$(dirname "$0")/../.." && pwd)
bin=${SEEKLESS_BIN:-$here/build/seekless}
sh="bash $here/tools/hddsim/hddsim.sh"
name=bench-firstscan
work=$(mktemp -d /dev/shm/seekless-firstscan-XXXXXX)
trap '$sh down $name >/dev/null 2>&1 || true; rm -rf "$work"' EXIT

# shellcheck disable=SC2086
mnt=$($sh up "$name" ext4 3G ${HDDSIM_OPTS:-} | tail -1)
nfiles=$(find "$src" -type f | wc -l)
bytes=$(find "$src" -type f -printf '%s\n' | awk '{s+=$1} END {printf "%.0f", s}')
ways=(scan sync-scan)
[ -n "$old" ] && ways+=(old)
echo "== $nfiles files, $bytes bytes from $src; $runs runs; hddsim ${HDDSIM_OPTS:-(defaults)}"

med() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{a[NR]=$1} END {print (NR%2)?a[(NR+1)/2]:(a[NR/2]+a[NR/2+1])/2}'; }
now() { date +%s.%N; }
declare -A idle scan wb wbs
for ((r = 0; r < runs; r++)); do
  for w in "${ways[@]}"; do
    rm -rf "$mnt/photos" "$work/s.db"*
    sync
    cp -r "$src" "$mnt/photos"
    t0=$(now)
    b=$bin
    [ "$w" = old ] && b=$old
    [ "$w" = sync-scan ] && sync
    t1=$(now)
    "$b" scan --json --db "$work/s.db" "$mnt/photos" >"$work/s.json" 2>/dev/null || true
    t2=$(now)
    sync
    t3=$(now)
    idle[$w]+="$(echo "$t3 - $t0" | bc -l) "
    scan[$w]+="$(echo "$t2 - $t1" | bc -l) "
    read -r n s < <(python3 -c '
import json, sys
g = json.load(open(sys.argv[1])).get("devices", [])
print(sum(x.get("written_back", 0) for x in g), sum(x.get("writeback_s", 0) for x in g))' \
      "$work/s.json")
    wb[$w]+="$n "
    wbs[$w]+="$s "
  done
done
printf '%-10s %10s %10s %12s %12s\n' way idle_s scan_s written_back writeback_s
for w in "${ways[@]}"; do
  printf '%-10s %10.2f %10.2f %12s %12.2f\n' "$w" "$(echo "${idle[$w]}" | med)" \
    "$(echo "${scan[$w]}" | med)" "$(echo "${wb[$w]}" | med)" "$(echo "${wbs[$w]}" | med)"
done
