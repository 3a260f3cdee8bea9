#!/usr/bin/env bash
# Warm-cache speed of the default scan on real pictures, per kind (issue 41):
#   tools/bench/realspeed.sh SET [RUNS=5] [SEEKLESS...]
# SET is what tools/bench/realset.sh made.  For each of its folders
# (exports/jpeg, exports/prog, exports/png, exports/webp, camera, camera2000)
# and each
# seekless binary given (default: build/seekless), side by side, RUNS times
# alternating: `scan --jobs 1` into a fresh index, with the perceptual hash
# (the default) and without (--no-phash), and exiftool -fast2 over the same
# files.  Prints the medians: seconds, MB/s of files per core, minor page
# faults per file (GNU time), and the ratio to exiftool.
set -euo pipefail
set_dir=${1:?usage: realspeed.sh SET [RUNS] [SEEKLESS...]}
runs=${2:-5}
shift $(( $# >= 2 ? 2 : 1 ))
here=$(cd "$(dirname "$0")/../.." && pwd)
bins=("$@")
[ ${#bins[@]} -gt 0 ] || bins=("$here/build/seekless")
db=/dev/shm/seekless-realspeed-$$.db
out=$(mktemp /dev/shm/seekless-realspeed-XXXXXX)
trap 'rm -f "$db" "$db"-wal "$db"-shm "$db".lock "$out"' EXIT
for d in exports/jpeg exports/prog exports/png exports/webp camera camera2000; do
  root="$set_dir/$d"
  [ -d "$root" ] || continue
  find "$root" -type f -print0 | xargs -0 cat >/dev/null
  for r in $(seq "$runs"); do
    for b in "${!bins[@]}"; do
      for mode in phash no-phash; do
        rm -f "$db" "$db"-wal "$db"-shm
        extra=(); [ $mode = no-phash ] && extra=(--no-phash)
        /usr/bin/time -f "%e %R" -o "$out.t" "${bins[$b]}" scan --quiet --keep-cache --jobs 1 \
          "${extra[@]}" --db "$db" "$root" 2>/dev/null || true
        echo "$d bin$b $mode $(tail -1 "$out.t")" >>"$out"
      done
    done
    /usr/bin/time -f "%e %R" -o "$out.t" exiftool -fast2 -q -q -r "$root" >/dev/null || true
    echo "$d exiftool - $(tail -1 "$out.t")" >>"$out"
  done
done
python3 - "$out" "$set_dir" "${bins[@]}" <<'EOF'
import os, statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
set_dir, bins = sys.argv[2], sys.argv[3:]
dirs = []
for r in rows:
    if r[0] not in dirs:
        dirs.append(r[0])
for i, b in enumerate(bins):
    print("bin%d = %s" % (i, b))
print("%-14s %-10s %-9s %8s %8s %10s %8s" % ("files", "binary", "mode", "median s", "MB/s",
                                              "faults/f", "x exif"))
for d in dirs:
    files = [os.path.join(dp, f) for dp, _, fs in os.walk(os.path.join(set_dir, d)) for f in fs]
    mb = sum(os.path.getsize(f) for f in files) / 1e6
    ex = statistics.median(float(r[3]) for r in rows if r[0] == d and r[1] == "exiftool")
    keys = []
    for r in rows:
        if r[0] == d and (r[1], r[2]) not in keys:
            keys.append((r[1], r[2]))
    for b, mode in keys:
        sel = [r for r in rows if r[0] == d and r[1] == b and r[2] == mode]
        s = statistics.median(float(r[3]) for r in sel)
        faults = statistics.median(float(r[4]) for r in sel) / len(files)
        name = b
        print("%-14s %-10s %-9s %8.3f %8.1f %10.1f %8.1f" % (
            "%s (%d)" % (d.split("/")[-1], len(files)), name[-10:], mode, s, mb / s, faults,
            ex / s))
EOF
