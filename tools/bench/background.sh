#!/usr/bin/env bash
# What a scan costs someone else using the disk, on the emulated 7200 rpm
# disk (tools/hddsim), under each I/O scheduler:
#   tools/bench/background.sh [FILES=2000] [RUNS=3] [SCHEDULERS="none mq-deadline bfq"]
# The "user" reads a 160 MB file with O_DIRECT (dd) one second into a cold
# scan (--full --order fs: seeking all the time, the worst neighbour), and
# again with no scan at all.  Scans: plain; idle I/O class and nice 19 set
# from outside (ionice -c3, what the kernel alone gives); --background (that
# plus waiting while others use the disk).  Prints medians of RUNS: the
# user's read time and the scan's own wall time.  Needs root and hddsim.
set -euo pipefail
nfiles=${1:-2000}
runs=${2:-3}
scheds=${3:-none mq-deadline bfq}
here=$(cd "$(dirname "$0")/../.." && pwd)
bin=$here/build/seekless
sh="bash $here/tools/hddsim/hddsim.sh"
name=bench-bg
work=$(mktemp -d /dev/shm/seekless-bg-XXXXXX)
trap '$sh down $name >/dev/null 2>&1 || true; rm -rf "$work"' EXIT

mnt=$($sh up "$name" ext4 2G | tail -1)
dev=$(basename "$(cat /tmp/hddsim/$name/loop)")
$sh latency "$name" off
"$here/build/mkcorpus" --files "$nfiles" --median 150k --seed 7 "$mnt/photos" >/dev/null
dd if=/dev/urandom of="$mnt/user-file" bs=1M count=160 status=none
$sh remount "$name"
$sh latency "$name" on
"$bin" scan --quiet --no-phash --db "$work/s.db" "$mnt/photos"   # the index exists; --full rereads

now() { date +%s.%N; }
med() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{a[NR]=$1} END {print (NR%2)?a[(NR+1)/2]:(a[NR/2]+a[NR/2+1])/2}'; }
user_read() { local t0; t0=$(now); dd if="$mnt/user-file" of=/dev/null bs=1M iflag=direct status=none; echo "$(now) - $t0" | bc -l; }

# one measurement: $1 = how to run the scan ("" = no scan); prints "user_s scan_s"
measure() {
  local t0 u s pid
  $sh remount "$name"
  if [ -z "$1" ]; then
    echo "$(user_read) 0"
    return
  fi
  t0=$(now)
  $1 "$bin" scan --quiet --full --no-phash --order fs --db "$work/s.db" $2 "$mnt/photos" &
  pid=$!
  sleep 1
  u=$(user_read)
  wait $pid || true
  s=$(echo "$(now) - $t0" | bc -l)
  echo "$u $s"
}

echo "== $nfiles files of ~150 KiB on ext4, hddsim; user reads 160 MB (alone: ~0.8 s); median of $runs"
printf '%-12s %-26s %10s %10s\n' scheduler scan "user read" "scan wall"
for sched in $scheds; do
  echo "$sched" > /sys/block/$dev/queue/scheduler
  for mode in "none" "plain" "ionice" "background"; do
    us="" ss=""
    for ((r = 0; r < runs; r++)); do
      case $mode in
        none) m=$(measure "") ;;
        plain) m=$(measure env "--foreground") ;;
        ionice) m=$(measure "ionice -c3 nice -n19" "--foreground") ;;
        background) m=$(measure env "--background") ;;
      esac
      us+="${m% *} " ss+="${m#* } "
    done
    printf '%-12s %-26s %8.2f s %8.2f s\n' "$sched" "$mode" "$(echo "$us" | med)" "$(echo "$ss" | med)"
  done
done
