#!/usr/bin/env bash
# What an upgrade costs: an index made by an older seekless (OLD_BIN, for
# example one built from the commit before schema 7) over N empty files,
# then opened by this one (NEW_BIN; `stats` migrates on open), timed.
#   OLD_BIN=/path/to/old/seekless tools/bench/migrate.sh [N=1000000] [RUNS=3]
# The tree is on tmpfs (/dev/shm); each run copies the old index afresh.
set -euo pipefail
n=${1:-1000000}
runs=${2:-3}
here=$(cd "$(dirname "$0")/../.." && pwd)
old=${OLD_BIN:?set OLD_BIN to an older seekless}
new=${NEW_BIN:-$here/build/seekless}
work=$(mktemp -d /dev/shm/seekless-migrate-XXXXXX)
trap 'rm -rf "$work"' EXIT
python3 "$here/tools/bench/phototree.py" "$work/photos" "$n" 0
"$old" scan --quiet --no-phash --db "$work/old.db" "$work/photos" || true
echo "== $n records, index $(du -m "$work/old.db" | cut -f1) MiB, schema $(python3 -c "
import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute('PRAGMA user_version').fetchone()[0])" "$work/old.db")"
for ((r = 0; r < runs; r++)); do
  cp "$work/old.db" "$work/run.db"
  t=$( { /usr/bin/time -f "%e" "$new" stats --db "$work/run.db" >/dev/null; } 2>&1 | tail -1)
  echo "run $r: open + migrate + stats: $t s"
done
t=$( { /usr/bin/time -f "%e" "$new" stats --db "$work/run.db" >/dev/null; } 2>&1 | tail -1)
echo "stats on the migrated index (no migration): $t s"
python3 -c "
import sqlite3,sys; c=sqlite3.connect(sys.argv[1])
print('schema', c.execute('PRAGMA user_version').fetchone()[0], 'integrity', c.execute('PRAGMA integrity_check').fetchone()[0])" "$work/run.db"
