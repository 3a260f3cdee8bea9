#!/usr/bin/env bash
# What FIBMAP costs where it stands in for FIEMAP (NTFS through ntfs-3g):
#   tools/bench/fibmap.sh [FILES=10000] [ROUNDS=3]
# An NTFS volume on a loop device over /dev/shm (no disk latency: the cost
# measured is the ioctls and ntfs-3g's round trips), FILES photos written
# by mkcorpus (median 60 KiB, a quarter of them in interleaved pairs so that
# some are fragmented).  `seekless plan` as root (FIBMAP asked for every
# file) against the same command without CAP_SYS_RAWIO (FIBMAP refused at
# the first file, the rest not opened: the plan then costs the walk and the
# stat pass alone), interleaved rounds (abab.py), warm.  Needs root.
set -euo pipefail
nfiles=${1:-10000}
rounds=${2:-3}
here=$(cd "$(dirname "$0")/../.." && pwd)
bin=${SEEKLESS_BIN:-$here/build/seekless}
work=$(mktemp -d /dev/shm/seekless-fibmap-XXXXXX)
loop=""
cleanup() {
  mountpoint -q "$work/mnt" && umount "$work/mnt"
  [ -n "$loop" ] && losetup -d "$loop"
  rm -rf "$work"
}
trap cleanup EXIT
size=$(( nfiles * 120 / 1024 + 256 ))
truncate -s "${size}M" "$work/ntfs.img"
loop=$(losetup --find --show "$work/ntfs.img")
echo 1 > "/sys/block/$(basename "$loop")/queue/rotational"
mkntfs -Q -F "$loop" >/dev/null 2>&1
mkdir "$work/mnt"
ntfs-3g -o noatime "$loop" "$work/mnt"
"$here/build/mkcorpus" --files "$nfiles" --median 60k --fragment 25 --seed 9 "$work/mnt/photos" >/dev/null
"$bin" plan --json "$work/mnt/photos" | python3 -c '
import json, sys
d = json.load(sys.stdin)
fs = d["files"]
loc = [f for f in fs if f["phys_offset"] is not None]
frag = [f for f in loc if f["fragments"] > 1]
print("== %d files, %d placed by %s, %d fragmented (max %d fragments), %d counts cut short"
      % (len(fs), len(loc), d["devices"][0]["file_systems"][0]["located_by"], len(frag),
         max([f["fragments"] for f in loc] or [0]),
         sum(1 for f in loc if not f["fragments_exact"])))'
nocap="setpriv --inh-caps=-sys_rawio --bounding-set=-sys_rawio"
python3 "$here/tools/bench/abab.py" "$rounds" \
  "fibmap=$bin plan --json $work/mnt/photos >/dev/null" \
  "no-fibmap=$nocap $bin plan --json $work/mnt/photos >/dev/null"
