#!/usr/bin/env bash
# Build the libFuzzer targets with clang (ASan + UBSan), run their CTest
# tests (every seed, then a fixed number of mutated inputs each: short.sh),
# then each target for SECONDS.
#   bash tests/fuzz/run.sh [SECONDS=20] [TARGET...]
# SECONDS 0: the CTest tests alone.  Seeds: the shared corpora
# (../shared/corpus/real, media), which must be there, plus generated
# files (seeds.sh).  New inputs found are kept in build-fuzz/corpus/NAME,
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
status=0
targets=("$@")
only=()
if [ ${#targets[@]} -gt 0 ]; then
  only=(-R "^fuzz_(seeds|$(IFS='|'; echo "${targets[*]}"))\$")
fi
ctest --test-dir build-fuzz --output-on-failure -j"$(nproc)" "${only[@]}" || status=1
[ "$secs" -gt 0 ] || exit $status
bash tests/fuzz/seeds.sh build-fuzz
[ ${#targets[@]} -gt 0 ] || targets=(exif jpeg jpegdc extract heif raster png gif webp bmff jp2 tiff raf crw mrw qt avi xmp iptc x3f eip usn retrieval chunkmap)
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
