#!/usr/bin/env bash
# The nightly case: a rescan when nothing changed, warm cache.
#   tools/bench/rescan.sh [N=100000] [RUNS=5]
# Builds ext4 on a loop device in /dev/shm holding N files of 2 KiB laid out
# like a photo library (40 per event folder), scans it once (timed), then
# RUNS times again with nothing changed: wall time and peak RSS of each
# (/usr/bin/time), medians, and the phases of the last run.  Needs root.
set -euo pipefail
n=${1:-100000}
runs=${2:-5}
here=$(cd "$(dirname "$0")/../.." && pwd)
bin=${SEEKLESS_BIN:-$here/build/seekless}
work=$(mktemp -d /dev/shm/seekless-rescan-XXXXXX)
mnt=$work/mnt
loop=""
cleanup() {
  mountpoint -q "$mnt" && umount "$mnt"
  [ -n "$loop" ] && losetup -d "$loop"
  rm -rf "$work"
}
trap cleanup EXIT

mkdir -p "$mnt"
truncate -s $(( n * 12 / 1000 + 512 ))M "$work/fs.img"
loop=$(losetup --find --show "$work/fs.img")
mkfs.ext4 -q -F -N $(( n + n / 10 + 10000 )) "$loop"
mount -o noatime "$loop" "$mnt"
python3 "$here/tools/bench/phototree.py" "$mnt/photos" "$n" 2048
sync
db=$work/index.db
med() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{a[NR]=$1} END {print (NR%2)?a[(NR+1)/2]:(a[NR/2]+a[NR/2+1])/2}'; }
first=$( { /usr/bin/time -f "%e %M" "$bin" scan --quiet --no-phash --db "$db" "$mnt/photos" >/dev/null; } 2>&1 | tail -1)
echo "== $n files on ext4 (loop, /dev/shm); first scan: ${first% *} s, peak RSS $(( ${first#* } / 1024 )) MiB"
walls="" rss=""
for ((r = 0; r < runs; r++)); do
  out=$( { /usr/bin/time -f "%e %M" "$bin" scan --db "$db" "$mnt/photos" >"$work/summary"; } 2>&1 | tail -1)
  walls+="${out% *} " rss+="${out#* } "
  echo "run $r: ${out% *} s, peak RSS $(( ${out#* } / 1024 )) MiB"
done
echo "no-change rescan, median of $runs: $(echo "$walls" | med) s, peak RSS $(( $(echo "$rss" | med) / 1024 )) MiB"
grep -E "^  (walk|locate|index|store) " "$work/summary"
echo "index: $(du -m "$db" | cut -f1) MiB"
