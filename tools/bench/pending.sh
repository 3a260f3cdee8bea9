#!/usr/bin/env bash
# The default scan against the disk, on real files (issue 41, goals 1 and 2):
#   tools/bench/pending.sh SET [RUNS=3] [CORES=2]
# SET is what tools/bench/realset.sh made.  An emulated 7200 rpm disk
# (tools/hddsim, at real-time priority, so the scan's CPU cannot slow it)
# is filled the way people fill one: SET's exports (JPEG, progressive JPEG,
# PNG, WebP), its camera2000 folders, and the shared corpus's HEIC, AVIF and
# RAW files, copied in that order.  Then, cold (a remount before every
# run), RUNS times alternating:
#   default      seekless scan into a fresh index (hashes the disk outruns
#                are left for the next scan: phash_deferred)
#   next         the scan after it: the pending hashes made
#   no-phash     seekless scan --no-phash
#   phash-now    seekless scan --phash-now (every hash in the scan)
#   cat          cat of the same files in FIEMAP order (the list made
#                beforehand)
# and prints the medians and ratios.  CORES=1 runs seekless on one core
# (taskset), the emulator keeping the other: the NAS case.  HDDSIM_OPTS
# passes options to the emulator ("--depth 1": a drive that serves one
# command at a time in arrival order, the harshest honest setting).
# Needs root and a build with hddsim.
set -euo pipefail
set_dir=$(realpath "${1:?usage: pending.sh SET [RUNS] [CORES]}")
runs=${2:-3}
cores=${3:-2}
here=$(cd "$(dirname "$0")/../.." && pwd)
bin=${SEEKLESS_BIN:-$here/build/seekless}
corpus=${SEEKLESS_CORPUS:-$here/../shared/corpus/real}
sh="bash $here/tools/hddsim/hddsim.sh"
name=bench-pending
work=$(mktemp -d /dev/shm/seekless-pending-XXXXXX)
trap '$sh down $name >/dev/null 2>&1 || true; rm -rf "$work"' EXIT

# shellcheck disable=SC2086
mnt=$($sh up "$name" ext4 3G ${HDDSIM_OPTS:-} | tail -1)
$sh latency "$name" off
mkdir -p "$mnt/photos"
for d in exports/jpeg exports/prog exports/png exports/webp camera2000; do
  mkdir -p "$mnt/photos/$d"
  cp -r "$set_dir/$d/." "$mnt/photos/$d/"
done
mkdir -p "$mnt/photos/other"
find "$corpus" -maxdepth 1 -type f \( -iname '*.heic' -o -iname '*.hif' -o -iname '*.avif' \
  -o -iname '*.cr2' -o -iname '*.cr3' -o -iname '*.nef' -o -iname '*.arw' -o -iname '*.dng' \
  -o -iname '*.rw2' -o -iname '*.raf' -o -iname '*.orf' \) -exec cp {} "$mnt/photos/other/" \;
sync
$sh remount "$name"
"$bin" plan --order physical --json "$mnt/photos" |
  python3 -c 'import json,sys; sys.stdout.write("".join(f["path"]+"\0" for f in json.load(sys.stdin)["files"]))' \
  >"$work/phys.list"
nfiles=$(find "$mnt/photos" -type f | wc -l)
bytes=$(find "$mnt/photos" -type f -printf '%s\n' | awk '{s+=$1} END {printf "%.0f", s}')
$sh latency "$name" on
pin=()
[ "$cores" = 1 ] && pin=(taskset -c 1)
echo "== $nfiles files, $bytes bytes; $runs runs; seekless on $cores core(s); hddsim ${HDDSIM_OPTS:-(defaults)}"

med() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{a[NR]=$1} END {print (NR%2)?a[(NR+1)/2]:(a[NR/2]+a[NR/2+1])/2}'; }
now() { date +%s.%N; }
declare -A t
deferred=""
for ((r = 0; r < runs; r++)); do
  for c in default no-phash phash-now cat; do
    $sh remount "$name"
    t0=$(now)
    case $c in
      default)
        rm -f "$work/s.db"*
        "${pin[@]}" "$bin" scan --json --db "$work/s.db" "$mnt/photos" >"$work/s.json" 2>/dev/null || true
        t1=$(now)
        deferred+="$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["phash_deferred"])' "$work/s.json") "
        t[$c]+="$(echo "$t1 - $t0" | bc -l) "
        $sh remount "$name"
        t0=$(now)
        "${pin[@]}" "$bin" scan --quiet --db "$work/s.db" "$mnt/photos" || true
        t[next]+="$(echo "$(now) - $t0" | bc -l) "
        continue ;;
      no-phash|phash-now)
        rm -f "$work/s.db"*
        "${pin[@]}" "$bin" scan --quiet --$c --db "$work/s.db" "$mnt/photos" || true ;;
      cat) xargs -0 cat <"$work/phys.list" >/dev/null ;;
    esac
    t[$c]+="$(echo "$(now) - $t0" | bc -l) "
  done
  printf 'run %d:' "$r"
  for c in default next no-phash phash-now cat; do printf ' %s %.2f' "$c" "$(echo "${t[$c]}" | awk '{print $NF}')"; done
  printf ' (deferred %s)\n' "$(echo "$deferred" | awk '{print $NF}')"
done
d=$(echo "${t[default]}" | med); n=$(echo "${t[no-phash]}" | med)
w=$(echo "${t[phash-now]}" | med); c=$(echo "${t[cat]}" | med); x=$(echo "${t[next]}" | med)
printf 'medians of %d, cold: default %.2f s, --no-phash %.2f s, --phash-now %.2f s, cat %.2f s; next scan %.2f s\n' \
  "$runs" "$d" "$n" "$w" "$c" "$x"
printf 'default / --no-phash %.3f; default / cat %.3f; --no-phash / cat %.3f; --phash-now / cat %.3f\n' \
  "$(echo "$d / $n" | bc -l)" "$(echo "$d / $c" | bc -l)" "$(echo "$n / $c" | bc -l)" "$(echo "$w / $c" | bc -l)"
printf 'hashes left by the default scan (median): %s of the pictures; made by the next scan in %.2f s\n' \
  "$(echo "$deferred" | med)" "$x"
