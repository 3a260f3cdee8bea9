#!/usr/bin/env bash
# The fuzz targets' seeds, in BUILD/seeds (made once, then kept):
#   bash tests/fuzz/seeds.sh [BUILD=build-fuzz]
# The shared corpora (../shared/corpus/real and media), a few generated
# JPEGs, X3F and EIP files drawn as their tests draw them, a btrfs chunk
# tree answer.  Without the shared corpora it fails: a target fuzzed from
# generated JPEGs alone never sees most of the formats it parses.
# CTest runs it first (the fixture fuzz_seeds); tests/fuzz/run.sh through
# CTest.
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build-fuzz}
seeds=$build/seeds
[ -f "$seeds/.complete" ] && exit 0
for d in ../shared/corpus/real ../shared/corpus/media; do
  if [ ! -d "$d" ] || [ -z "$(ls -A "$d")" ]; then
    echo "seeds.sh: no shared corpus at $d: the fuzz targets have nothing to start from" >&2
    exit 1
  fi
done
rm -rf "$seeds"
mkdir -p "$seeds"
for d in ../shared/corpus/real ../shared/corpus/media; do
  find "$d" -type f -size -2M ! -name '*.json' ! -name '*.md' -exec cp {} "$seeds/" \;
done
"$build/mkcorpus" --files 6 --median 20k --no-sync "$seeds/gen" >/dev/null
find "$seeds/gen" -type f -exec mv {} "$seeds/" \;
# no real X3F or EIP file is at hand: small ones drawn as the tests draw them
# (the tests want their seekless named: this build's, not run here)
SEEKLESS_BIN=$build/seekless python3 tests/integration/test_x3f.py --files 12 --seeds "$seeds/gen"
SEEKLESS_BIN=$build/seekless python3 tests/integration/test_eip.py --files 12 --seeds "$seeds/gen"
for f in "$seeds"/gen/*.x3f "$seeds"/gen/*.eip "$seeds"/gen/*.zip; do
  if [ -e "$f" ]; then mv "$f" "$seeds/seed-$(basename "$f")"; fi
done
rm -rf "$seeds/gen"
# btrfs chunk items look like no file: a seed of their own
python3 tests/fuzz/chunkmap_seed.py "$seeds/seed-chunkmap"
touch "$seeds/.complete"
