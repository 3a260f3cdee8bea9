#!/usr/bin/env bash
# One fuzz target's short run, as CTest runs it (tests/fuzz/CMakeLists.txt):
#   bash tests/fuzz/short.sh TARGET_BINARY BUILD NAME RUNS
# Every seed once, then RUNS inputs mutated from them with a fixed seed:
# the same inputs on every machine and every run, however fast it is.  New
# inputs go to a folder of this run's, removed after: the seeds stay as
# seeds.sh made them.  Fails without seeds.  A crash or leak leaves its
# input in BUILD/crash-NAME-*.
set -euo pipefail
bin=$1 build=$2 name=$3 runs=$4
seeds=$build/seeds
if [ ! -f "$seeds/.complete" ]; then
  echo "short.sh: no seeds at $seeds (tests/fuzz/seeds.sh makes them: CTest's fuzz_seeds)" >&2
  exit 1
fi
nseeds=$(find "$seeds" -type f ! -name .complete | wc -l)
if [ "$nseeds" -eq 0 ]; then
  echo "short.sh: $seeds is empty" >&2
  exit 1
fi
new=$(mktemp -d "${TMPDIR:-/tmp}/seekless-fuzz-$name-XXXXXX")
trap 'rm -rf "$new"' EXIT
# -runs counts the seeds' runs too; -timeout is a hang, not a speed: no
# input takes a second on an idle machine
"$bin" -runs=$((nseeds + runs)) -seed=1 -max_len=262144 -timeout=60 -rss_limit_mb=2048 \
  -artifact_prefix="$build/crash-$name-" -print_final_stats=1 "$new" "$seeds"
