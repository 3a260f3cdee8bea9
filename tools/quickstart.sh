#!/usr/bin/env bash
# Install dependencies, build, generate a small sample photo tree and scan
# it in physical order, printing the summary.  Everything lands in build/.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j"$(nproc)" >/dev/null
rm -rf build/sample build/sample.db build/sample.db-wal build/sample.db-shm
build/mkcorpus --files 200 --median 150k --seed 1 build/sample
build/seekless scan --db build/sample.db build/sample
echo
echo "Records: build/seekless export --db build/sample.db | head"
