#!/usr/bin/env bash
# The physical-order claim on the emulated 7200 rpm disk (tools/hddsim):
#   tools/bench/hdd.sh FSTYPE [FILES=2000] [RUNS=3] [OUTDIR=.]
# Sets up hddsim with FSTYPE, writes FILES generated photos (~150 KiB,
# shuffled over their folders) with the latency off, then with it on and a
# remount before every measurement:
#   1. seekless bench, all orders, RUNS runs (picture: OUTDIR/hdd-FSTYPE.svg)
#   2. whole cold scans (walk, locate, read, extract, store), physical (by
#      default and with --no-phash) and fs
#   3. cat of the same files in FIEMAP order, the list made beforehand
#   (ntfs: also a whole scan in inode order, which is what a scan without
#   root gets there, FIBMAP being root's)
# and prints medians.  Needs root and a build with hddsim.
# HDDSIM_OPTS passes options to the emulator: "--depth 1" is a drive that
# serves one command at a time in arrival order (a USB bridge without UAS),
# the harshest honest setting; the default queues 32 and serves them in
# elevator order, as NCQ does.
set -euo pipefail
fstype=${1:?usage: hdd.sh FSTYPE [FILES] [RUNS] [OUTDIR]}
nfiles=${2:-2000}
runs=${3:-3}
outdir=$(realpath "${4:-.}")
here=$(cd "$(dirname "$0")/../.." && pwd)
bin=${SEEKLESS_BIN:-$here/build/seekless}
sh="bash $here/tools/hddsim/hddsim.sh"
name=bench-$fstype
work=$(mktemp -d /dev/shm/seekless-hdd-XXXXXX)
trap '$sh down $name >/dev/null 2>&1 || true; rm -rf "$work"' EXIT

# shellcheck disable=SC2086
mnt=$($sh up "$name" "$fstype" 2G ${HDDSIM_OPTS:-} | tail -1)
$sh latency "$name" off
"$here/build/mkcorpus" --files "$nfiles" --median 150k --seed 7 "$mnt/photos" >/dev/null
$sh remount "$name"
"$bin" plan --order physical --json "$mnt/photos" |
  python3 -c 'import json,sys; sys.stdout.write("".join(f["path"]+"\0" for f in json.load(sys.stdin)["files"]))' \
  >"$work/phys.list"
bytes=$(find "$mnt/photos" -type f -printf '%s\n' | awk '{s+=$1} END {printf "%.0f", s}')
dirs=$(find "$mnt/photos" -type d | wc -l)
$sh latency "$name" on
echo "== $fstype: $nfiles files, $bytes bytes in $dirs directories, $runs runs, hddsim ${HDDSIM_OPTS:-(defaults)}"

"$bin" bench --runs "$runs" --db "$work/bench.db" --svg "$outdir/hdd-$fstype.svg" \
  --cold-cmd "$sh remount $name" "$mnt/photos" 2>/dev/null

timed() { local t0 t1; t0=$(date +%s.%N); "$@" >/dev/null 2>&1; t1=$(date +%s.%N); echo "$t1 - $t0" | bc -l; }
med() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{a[NR]=$1} END {print (NR%2)?a[(NR+1)/2]:(a[NR/2]+a[NR/2+1])/2}'; }
scan() { rm -f "$work/s.db"*; "$bin" scan --quiet --db "$work/s.db" --order "$@" "$mnt/photos"; }
catphys() { xargs -0 cat <"$work/phys.list" >/dev/null; }
declare -A t
for ((r = 0; r < runs; r++)); do
  orders=("scan physical" "scan physical --no-phash" "scan fs" "catphys")
  [ "$fstype" = ntfs ] && orders+=("scan inode")
  for c in "${orders[@]}"; do
    $sh remount "$name"
    $sh reset "$name"
    t[$c]+="$(timed $c) "
    busy=$($sh stats "$name" | awk '/busy_ms/ {print $2}')
    seeks=$($sh stats "$name" | awk '/^seeks/ {print $2}')
    printf 'run %d  %-14s %7.2f s  (disk busy %.2f s, %s seeks)\n' "$r" "$c" \
      "$(echo "${t[$c]}" | awk '{print $NF}')" "$(echo "$busy / 1000" | bc -l)" "$seeks"
  done
done
sp=$(echo "${t[scan physical]}" | med)
sn=$(echo "${t[scan physical --no-phash]}" | med)
sf=$(echo "${t[scan fs]}" | med)
cp=$(echo "${t[catphys]}" | med)
if [ "$fstype" = ntfs ]; then
  si=$(echo "${t[scan inode]}" | med)
  printf 'ntfs by FIBMAP, whole cold scan, median of %d: physical %.2f s, inode %.2f s (%.2fx), fs %.2f s (%.2fx)\n' \
    "$runs" "$sp" "$si" "$(echo "$si / $sp" | bc -l)" "$sf" "$(echo "$sf / $sp" | bc -l)"
fi
printf 'the perceptual hash on a cold disk: default %.2f s, --no-phash %.2f s: %.3fx\n' "$sp" "$sn" \
  "$(echo "$sp / $sn" | bc -l)"
printf 'whole cold scan, median of %d: physical %.2f s, fs %.2f s: %.2fx\n' "$runs" "$sp" "$sf" \
  "$(echo "$sf / $sp" | bc -l)"
printf 'cat in FIEMAP order: %.2f s; scan physical / cat: %.2f\n' "$cp" "$(echo "$sp / $cp" | bc -l)"
printf 'share of the emulated sequential bandwidth (210 MB/s) in the whole physical scan: %.0f%%\n' \
  "$(echo "100 * $bytes / 210000000 / $sp" | bc -l)"
