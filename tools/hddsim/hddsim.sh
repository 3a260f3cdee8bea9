#!/usr/bin/env bash
# Set up and tear down an emulated 7200 rpm disk with a file system on it.
#
#   hddsim.sh up NAME FSTYPE SIZE [hddsim options]   ext4 | xfs | btrfs | ntfs; prints the mount point
#   hddsim.sh remount NAME       unmount and mount again: a cold cache
#   hddsim.sh latency NAME on|off
#   hddsim.sh stats NAME         the emulator's counters
#   hddsim.sh reset NAME         zero them
#   hddsim.sh trace NAME FILE|off
#   hddsim.sh bad NAME OFFSET LENGTH   those bytes of the disk now fail to read (EIO)
#   hddsim.sh bad NAME clear           all readable again
#   hddsim.sh stall NAME OFFSET LENGTH reads of those bytes wait (a disk that stopped answering)
#   hddsim.sh stall NAME clear         they are answered
#   hddsim.sh down NAME          unmount, detach, stop, delete (idempotent)
#
# The stack: sparse image in /dev/shm -> hddsim (FUSE, direct_io) ->
# loop device (direct I/O, marked rotational, mq-deadline) -> mkfs -> mount
# -o noatime (ntfs: mkntfs and ntfs-3g, a fuseblk mount: no extent map, so
# seekless places its files with FIBMAP).  Latency is off while the file system is made; `up` leaves it
# on.  State lives in $HDDSIM_DIR (default /tmp/hddsim/NAME).  Needs root.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bin=${HDDSIM_BIN:-$here/../../build/hddsim}
base=${HDDSIM_DIR:-/tmp/hddsim}

cmd=${1:?usage: hddsim.sh up|down|remount|latency|stats|reset|trace NAME ...}
name=${2:?NAME}
dir=$base/$name
state() { cat "$dir/$1" 2>/dev/null || true; }
ctl() { printf '%s\n' "$1" > "$dir/fuse/control"; }
# ntfs-3g's own mount; its unmount closes the device, which drops its cache
mountfs() {
  if [ "$(state fstype)" = ntfs ]; then ntfs-3g -o noatime "$1" "$2"
  else mount -o noatime "$1" "$2"; fi
}

case "$cmd" in
up)
  fstype=${3:?FSTYPE}; size=${4:?SIZE}; shift 4
  [ "$(id -u)" -eq 0 ] || { echo "hddsim.sh: needs root" >&2; exit 2; }
  [ -x "$bin" ] || { echo "hddsim.sh: no $bin (build first)" >&2; exit 2; }
  "$0" down "$name" >/dev/null 2>&1 || true
  mkdir -p "$dir/fuse" "$dir/fs"
  img=/dev/shm/hddsim-$name.img
  echo "$img" > "$dir/image"
  # The emulator runs at real-time priority (SCHED_FIFO; its FUSE threads
  # inherit it): a scan's CPU use must not slow the "disk" it is measured
  # on.  HDDSIM_RT=0 leaves it at normal priority.
  rt=()
  if [ "${HDDSIM_RT:-1}" != 0 ] && command -v chrt >/dev/null; then rt=(chrt -f 50); fi
  "${rt[@]}" "$bin" --image "$img" --size "$size" --latency off "$@" "$dir/fuse"
  for _ in $(seq 50); do [ -e "$dir/fuse/disk" ] && break; sleep 0.1; done
  loop=$(losetup --find --show --direct-io=on "$dir/fuse/disk")
  echo "$loop" > "$dir/loop"
  dev=$(basename "$loop")
  # the loop driver resets these when attaching: set them after
  echo 1 > "/sys/block/$dev/queue/rotational"
  echo mq-deadline > "/sys/block/$dev/queue/scheduler" 2>/dev/null || true
  case "$fstype" in
    ext4) mkfs.ext4 -q -F -E lazy_itable_init=0,lazy_journal_init=0 "$loop" ;;
    xfs) mkfs.xfs -q -f "$loop" ;;
    btrfs) mkfs.btrfs -q -f "$loop" >/dev/null ;;
    ntfs) mkntfs -Q -F "$loop" >/dev/null 2>&1 ;;
    *) echo "hddsim.sh: unknown file system $fstype" >&2; exit 2 ;;
  esac
  echo "$fstype" > "$dir/fstype"
  mountfs "$loop" "$dir/fs"
  ctl "latency on"
  echo "$dir/fs"
  ;;
remount)
  loop=$(state loop)
  sync -f "$dir/fs"  # this file system only: others may be under test
  umount "$dir/fs"
  # The loop device's own page cache is emptied at its last close, and
  # something else may hold the device at that moment (udev probing it after
  # the unmount's event): then only the file system's own unmount would
  # empty it (ext4's does).  Emptied here, whatever the file system, so the
  # next mount reads directories and inodes from the disk.
  blockdev --flushbufs "$loop"
  mountfs "$loop" "$dir/fs"
  ;;
latency) ctl "latency ${3:?on|off}" ;;
bad|stall)
  if [ "${3:?OFFSET|clear}" = clear ]; then ctl "$cmd clear"; else ctl "$cmd $3 ${4:?LENGTH}"; fi
  ;;
reset) ctl reset ;;
stats) cat "$dir/fuse/control" ;;
trace)
  t=${3:?FILE|off}
  if [ "$t" = off ]; then ctl "trace off"; else ctl "trace $(realpath -m "$t")"; fi
  ;;
down)
  loop=$(state loop)
  img=$(state image)
  mountpoint -q "$dir/fs" 2>/dev/null && umount "$dir/fs"
  [ -n "$loop" ] && losetup -d "$loop" 2>/dev/null || true
  # losetup -d only marks the device: the kernel lets go of its backing
  # file on the FUSE mount a moment later, and until then the mount is busy
  for _ in $(seq 50); do
    mountpoint -q "$dir/fuse" 2>/dev/null || break
    fusermount3 -u "$dir/fuse" 2>/dev/null || umount "$dir/fuse" 2>/dev/null || sleep 0.1
  done
  if mountpoint -q "$dir/fuse" 2>/dev/null; then
    echo "hddsim.sh: $dir/fuse is still busy after 5 s; run down again" >&2
    exit 1
  fi
  [ -n "$img" ] && rm -f "$img"
  rm -rf "$dir"
  ;;
*) echo "hddsim.sh: unknown command $cmd" >&2; exit 2 ;;
esac
