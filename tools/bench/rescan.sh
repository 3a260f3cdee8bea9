#!/usr/bin/env bash
# The nightly case: a rescan when nothing changed, warm cache; then what a
# `chmod -R` (ctime moves, content does not) costs the next rescan, by
# default (every file read again) and with --trust-mtime.
#   tools/bench/rescan.sh [N=100000] [RUNS=5] [SIZE=2048]
# Builds ext4 on a loop device in /dev/shm holding N files of SIZE bytes
# laid out like a photo library (40 per event folder), scans it once
# (timed), then RUNS times again with nothing changed: wall time and peak
# RSS of each (/usr/bin/time), medians, and the phases of the last run;
# then RUNS times: chmod -R, rescan (default), chmod -R back, rescan
# --trust-mtime, both timed.  Needs root.
set -euo pipefail
n=${1:-100000}
runs=${2:-5}
size=${3:-2048}
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
truncate -s $(( n * (size + 10240) / 1000000 + 512 ))M "$work/fs.img"
loop=$(losetup --find --show "$work/fs.img")
mkfs.ext4 -q -F -N $(( n + n / 10 + 10000 )) "$loop"
mount -o noatime "$loop" "$mnt"
python3 "$here/tools/bench/phototree.py" "$mnt/photos" "$n" "$size"
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

# chmod -R: every ctime moves, no content changes
dflt="" trust=""
for ((r = 0; r < runs; r++)); do
  chmod -R go-w "$mnt/photos" && chmod -R o-r "$mnt/photos"
  a=$( { /usr/bin/time -f "%e" "$bin" scan --db "$db" "$mnt/photos" >"$work/summary"; } 2>&1 | tail -1)
  chmod -R o+r "$mnt/photos"
  b=$( { /usr/bin/time -f "%e" "$bin" scan --trust-mtime --db "$db" "$mnt/photos" >"$work/summary-t"; } 2>&1 | tail -1)
  # the trusting scan recorded the new ctimes: put the default back in step
  "$bin" scan --quiet --db "$db" "$mnt/photos" >/dev/null
  dflt+="$a " trust+="$b "
  echo "chmod run $r: default $a s, --trust-mtime $b s"
done
echo "after chmod -R, median of $runs: default $(echo "$dflt" | med) s (every file read again), --trust-mtime $(echo "$trust" | med) s"
grep -E "^  index |read again" "$work/summary"
