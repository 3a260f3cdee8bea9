#!/usr/bin/env bash
# Install dependencies, build and run the whole test suite.
#   bash tests/run.sh              release build (build/)
#   bash tests/run.sh --sanitize   ASan + UBSan build (build-asan/)
# As root, tests that need root (loop devices, file systems) must run:
# a skip is then a failure.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/deps.sh
build=build
opts=(-DCMAKE_BUILD_TYPE=RelWithDebInfo -DSEEKLESS_WERROR=ON)
if [ "${1:-}" = "--sanitize" ]; then
  build=build-asan
  opts=(-DCMAKE_BUILD_TYPE=Debug -DSEEKLESS_SANITIZE=ON -DSEEKLESS_WERROR=ON)
  export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
  export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
fi
[ "$(id -u)" -eq 0 ] && export SEEKLESS_REQUIRE_ALL=1
cmake -S . -B "$build" "${opts[@]}" >/dev/null
cmake --build "$build" -j"$(nproc)"
ctest --test-dir "$build" --output-on-failure -j"$(nproc)"
