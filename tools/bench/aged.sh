#!/usr/bin/env bash
# Issue 19's ratios: an aged, fragmented disk on the emulated 7200 rpm drive.
#   tools/bench/aged.sh FSTYPE [FILES=500] [RUNS=3] [OUTDIR=.]
# Sets up hddsim with FSTYPE on 2 GiB, ages it with mkcorpus --age (filler
# files of AGE bytes, default 64k, fill the disk and a random half is
# deleted) and writes FILES photos (median MEDIAN, default 600k) into the
# holes, latency off.  Then, latency on, a remount before each, RUNS times:
#   scan --order physical        the default: the extent schedule
#   scan --order first-extent    physical order without it (each file whole)
#   scan --order fs              directory order
#   sweep                        tools/bench/sweep.py: every extent in one
#                                ascending sweep, no hash, no memory bound
#   cat                          cat of the files by first extent
# (whole cold scans: walk, locate, read, extract, store) and prints medians
# and ratios, then `seekless bench` of the three orders (OUTDIR/aged-FSTYPE.svg).
# SCAN_OPTS adds options to every scan (e.g. "--mem 256M"); HDDSIM_OPTS
# to the emulator ("--depth 1": a drive that serves one command at a time
# in arrival order, as USB bridges without UAS do).  Needs root.
set -euo pipefail
fstype=${1:?usage: aged.sh FSTYPE [FILES] [RUNS] [OUTDIR]}
nfiles=${2:-500}
runs=${3:-3}
outdir=$(realpath "${4:-.}")
here=$(cd "$(dirname "$0")/../.." && pwd)
bin=${SEEKLESS_BIN:-$here/build/seekless}
sh="bash $here/tools/hddsim/hddsim.sh"
name=aged-$fstype
work=$(mktemp -d /dev/shm/seekless-aged-XXXXXX)
trap '$sh down $name >/dev/null 2>&1 || true; rm -rf "$work"' EXIT

# shellcheck disable=SC2086
mnt=$($sh up "$name" "$fstype" 2G ${HDDSIM_OPTS:-} | tail -1)
$sh latency "$name" off
"$here/build/mkcorpus" --files "$nfiles" --median "${MEDIAN:-600k}" --seed 7 --age "${AGE:-64k}" \
  "$mnt/photos"
$sh remount "$name"
# shellcheck disable=SC2086
"$bin" plan --order physical --json ${SCAN_OPTS:-} "$mnt/photos" >"$work/plan.json"
python3 - "$work/plan.json" "$work/first.list" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
files = sorted(d["files"], key=lambda f: f["phys_offset"] if f["phys_offset"] is not None else 1 << 62)
open(sys.argv[2], "w").write("".join(f["path"] + "\0" for f in files))
g = d["devices"][0]
s = g["schedule"] or {}
print("plan: %s" % g["reason"])
print("schedule: window %s, %s sweeps, %s pieces, %s files read across a sweep, %s whole, peak held %s" % (
    s.get("window"), s.get("passes"), s.get("pieces"), s.get("read_across"), s.get("read_whole"),
    s.get("peak_held")))
PY
$sh latency "$name" on
echo "== $fstype aged: $nfiles files, hddsim ${HDDSIM_OPTS:-(defaults)}, scan ${SCAN_OPTS:-(defaults)}, $runs runs"

timed() { local t0 t1; t0=$(date +%s.%N); "$@" >/dev/null 2>&1; t1=$(date +%s.%N); echo "$t1 - $t0" | bc -l; }
med() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{a[NR]=$1} END {print (NR%2)?a[(NR+1)/2]:(a[NR/2]+a[NR/2+1])/2}'; }
# shellcheck disable=SC2086
scan() { rm -f "$work/s.db"*; "$bin" scan --quiet --db "$work/s.db" ${SCAN_OPTS:-} --order "$@" "$mnt/photos"; }
sweep() { python3 "$here/tools/bench/sweep.py" "$work/plan.json"; }
catfirst() { xargs -0 cat <"$work/first.list" >/dev/null; }
declare -A t
orders=("scan physical" "scan first-extent" "scan fs" "sweep" "catfirst")
for ((r = 0; r < runs; r++)); do
  for c in "${orders[@]}"; do
    $sh remount "$name"
    $sh reset "$name"
    t[$c]+="$(timed $c) "
    st=$($sh stats "$name")
    printf 'run %d  %-18s %7.2f s  (disk busy %.2f s, %s seeks)\n' "$r" "$c" \
      "$(echo "${t[$c]}" | awk '{print $NF}')" \
      "$(echo "$st" | awk '/busy_ms/ {print $2 / 1000}')" "$(echo "$st" | awk '/^seeks/ {print $2}')"
  done
done
sp=$(echo "${t[scan physical]}" | med)
se=$(echo "${t[scan first-extent]}" | med)
sf=$(echo "${t[scan fs]}" | med)
sw=$(echo "${t[sweep]}" | med)
cf=$(echo "${t[catfirst]}" | med)
printf 'medians of %d: physical %.2f s, first-extent %.2f s, fs %.2f s, sweep %.2f s, cat %.2f s\n' \
  "$runs" "$sp" "$se" "$sf" "$sw" "$cf"
printf 'physical vs fs %.2fx; vs first-extent %.2fx; physical / sweep %.2f\n' \
  "$(echo "$sf / $sp" | bc -l)" "$(echo "$se / $sp" | bc -l)" "$(echo "$sp / $sw" | bc -l)"
[ -n "${NO_BENCH:-}" ] && exit 0
"$bin" bench --runs "$runs" --orders physical,first-extent,fs --db "$work/bench.db" \
  --svg "$outdir/aged-$fstype.svg" --cold-cmd "$sh remount $name" "$mnt/photos" 2>/dev/null
