#!/usr/bin/env bash
# Cold-cache read time of one tree: seekless scan in each order against
# `tar cf - ROOT | cat >/dev/null` (GNU tar skips reading file data when it
# writes to /dev/null itself, hence the cat) and against plain `cat` of the
# same files in FIEMAP order (the list is computed before timing).  Before every command:
# sync + drop_caches (needs root).  Commands rotate their position between
# runs so none always goes first.  Prints every run and the medians.
#
#   tools/bench/scan-vs-tar.sh ROOT [RUNS=5] [ORDERS="physical fs"]
set -euo pipefail
root=${1:?usage: scan-vs-tar.sh ROOT [RUNS] [ORDERS]}
runs=${2:-5}
orders=${3:-physical fs}
here=$(cd "$(dirname "$0")/../.." && pwd)
bin=${SEEKLESS_BIN:-$here/build/seekless}
db=/dev/shm/seekless-bench-$$.db
[ "$(id -u)" -eq 0 ] || { echo "needs root to drop caches" >&2; exit 2; }

files=$(find "$root" -type f | wc -l)
bytes=$(find "$root" -type f -printf '%s\n' | awk '{s+=$1} END {printf "%.0f", s}')
echo "tree: $root, $files files, $bytes bytes; $runs runs; $(nproc) CPUs"

cold() { sync; echo 3 > /proc/sys/vm/drop_caches; }
timed() { local t0 t1; t0=$(date +%s.%N); "$@" >/dev/null 2>&1 || true; t1=$(date +%s.%N)
          echo "$t1 - $t0" | bc -l; }
scan() { rm -f "$db" "$db-wal" "$db-shm"; "$bin" scan --quiet --db "$db" --order "$@" "$root"; }
tarcat() { tar cf - "$root" | cat >/dev/null; }
# plain cat of the same files in FIEMAP order, the list made beforehand
list=/dev/shm/seekless-bench-$$.list
"$bin" plan --order physical --json "$root" |
  python3 -c 'import json,sys; sys.stdout.write("".join(f["path"]+"\0" for f in json.load(sys.stdin)["files"]))' >"$list"
catphys() { xargs -0 cat <"$list" >/dev/null; }

cmds=()
for o in $orders; do cmds+=("scan $o"); done
[ -n "${NOPHASH:-}" ] && for o in $orders; do cmds+=("scan $o --no-phash"); done
cmds+=("tarcat" "catphys")
declare -A results
for ((r = 0; r < runs; r++)); do
  n=${#cmds[@]}
  for ((i = 0; i < n; i++)); do
    c=${cmds[$(( (i + r) % n ))]}
    cold
    t=$(timed $c)
    results[$c]+="$t "
    printf 'run %d  %-14s %8.2f s\n' "$r" "$c" "$t"
  done
done
echo
printf '%-14s %10s %10s %10s\n' command "median s" "files/s" "MB/s"
for c in "${cmds[@]}"; do
  med=$(echo "${results[$c]}" | tr ' ' '\n' | grep -v '^$' | sort -g | awk '{a[NR]=$1} END {print (NR%2)?a[(NR+1)/2]:(a[NR/2]+a[NR/2+1])/2}')
  printf '%-14s %10.2f %10.0f %10.1f\n' "$c" "$med" "$(echo "$files / $med" | bc -l)" \
    "$(echo "$bytes / 1000000 / $med" | bc -l)"
done
rm -f "$db" "$db-wal" "$db-shm" "$list"
