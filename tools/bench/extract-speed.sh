#!/usr/bin/env bash
# Warm-cache metadata speed on one tree: seekless scan with one extractor
# (with and without the perceptual hash) against exiftool -fast2 and
# exiv2 -pv over the same files.  hyperfine runs each command several
# times after a warm-up and reports mean and median.
#
#   tools/bench/extract-speed.sh ROOT [RUNS=10]
set -euo pipefail
root=${1:?usage: extract-speed.sh ROOT [RUNS]}
runs=${2:-10}
here=$(cd "$(dirname "$0")/../.." && pwd)
bin=${SEEKLESS_BIN:-$here/build/seekless}
db=/dev/shm/seekless-speed-$$.db
out=/dev/shm/seekless-speed-$$.json
files=$(find "$root" -type f | wc -l)
for t in hyperfine exiftool exiv2; do
  command -v $t >/dev/null || { echo "needs $t (apt-get install hyperfine libimage-exiftool-perl exiv2)" >&2; exit 2; }
done
find "$root" -type f -print0 | xargs -0 cat >/dev/null   # warm the cache
echo "tree: $root, $files files; $(nproc) CPUs; $(exiftool -ver) exiftool, $(exiv2 --version | head -1)"
hyperfine -N --warmup 1 --runs "$runs" --export-json "$out" \
  --prepare "rm -f $db $db-wal $db-shm" \
  -n "seekless --jobs 1 --no-phash" "$bin scan --quiet --keep-cache --jobs 1 --no-phash --db $db $root" \
  -n "seekless --jobs 1" "$bin scan --quiet --keep-cache --jobs 1 --db $db $root" \
  -n "seekless (2 workers)" "$bin scan --quiet --keep-cache --db $db $root" \
  -n "exiftool -fast2" "exiftool -fast2 -q -q -r $root" \
  -n "exiv2 -pv" "bash -c 'find $root -type f -print0 | xargs -0 exiv2 -pv >/dev/null 2>&1'" \
  >/dev/null || true
python3 - "$out" "$files" <<'PY'
import json, sys
res = json.load(open(sys.argv[1]))["results"]
files = int(sys.argv[2])
base = {r["command"]: r["median"] for r in res}
print("%-30s %10s %10s %12s %12s" % ("command", "median s", "files/s", "x exiftool", "x exiv2"))
for r in res:
    m = r["median"]
    print("%-30s %10.3f %10.0f %12.1f %12.2f" % (r["command"], m, files / m,
          base["exiftool -fast2"] / m, base["exiv2 -pv"] / m))
PY
rm -f "$db" "$db-wal" "$db-shm" "$out"
