#!/usr/bin/env bash
# Build the libFuzzer targets with clang (ASan + UBSan) and run each one.
#   bash tests/fuzz/run.sh [SECONDS=20] [TARGET...]
# Seeds: the shared corpora (../shared/corpus/real, media) when there, plus a
# few generated JPEGs.  New inputs found are kept in build-fuzz/corpus/NAME,
# so repeated runs go deeper.  A crash, leak or timeout fails the script and
# leaves its input in build-fuzz/crash-NAME-*.  docs/extraction.md says how to
# run long campaigns.
set -euo pipefail
secs=${1:-20}
shift || true
cd "$(dirname "$0")/../.."
# leaks inside Debian's uninstrumented decoders are theirs (lsan.supp)
export LSAN_OPTIONS="suppressions=$PWD/tests/fuzz/lsan.supp${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
CC=clang cmake -S . -B build-fuzz -DSEEKLESS_FUZZ=ON -DSEEKLESS_WERROR=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build-fuzz -j"$(nproc)" >/dev/null
bin=build-fuzz/tests/fuzz
seeds=build-fuzz/seeds
if [ ! -d "$seeds" ]; then
  mkdir -p "$seeds"
  for d in ../shared/corpus/real ../shared/corpus/media; do
    [ -d "$d" ] || continue
    find "$d" -type f -size -2M ! -name '*.json' ! -name '*.md' -exec cp {} "$seeds/" \;
  done
  build-fuzz/mkcorpus --files 6 --median 20k --no-sync "$seeds/gen" >/dev/null
  find "$seeds/gen" -type f -exec mv {} "$seeds/" \;
  # no real X3F or EIP file is at hand: small ones drawn as the tests draw them
  # (the tests want their seekless named: this build's, not run here)
  SEEKLESS_BIN=build-fuzz/seekless python3 tests/integration/test_x3f.py --files 12 --seeds "$seeds/gen"
  SEEKLESS_BIN=build-fuzz/seekless python3 tests/integration/test_eip.py --files 12 --seeds "$seeds/gen"
  for f in "$seeds"/gen/*.x3f "$seeds"/gen/*.eip "$seeds"/gen/*.zip; do
    if [ -e "$f" ]; then mv "$f" "$seeds/seed-$(basename "$f")"; fi
  done
  rm -rf "$seeds/gen"
fi
# btrfs chunk items look like no file: a seed of their own
[ -e "$seeds/seed-chunkmap" ] || python3 tests/fuzz/chunkmap_seed.py "$seeds/seed-chunkmap"
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(exif jpeg jpegdc extract heif raster png gif webp bmff jp2 tiff raf crw mrw qt avi xmp iptc x3f eip usn retrieval chunkmap)
status=0
for t in "${targets[@]}"; do
  mkdir -p "build-fuzz/corpus/$t"
  printf '%-8s ' "$t"
  if "$bin/fuzz_$t" -max_total_time="$secs" -max_len=262144 -timeout=10 -rss_limit_mb=2048 \
       -artifact_prefix="build-fuzz/crash-$t-" -print_final_stats=1 \
       "build-fuzz/corpus/$t" "$seeds" >"build-fuzz/fuzz-$t.log" 2>&1; then
    grep -E "stat::number_of_executed_units" "build-fuzz/fuzz-$t.log" | awk '{print $2 " runs, ok"}'
  else
    echo "FAILED (see build-fuzz/fuzz-$t.log)"
    grep -E "ERROR|SUMMARY|Test unit written" "build-fuzz/fuzz-$t.log" | head -5
    status=1
  fi
done
exit $status
