#!/usr/bin/env python3
"""Interleaved A/B timing: on a machine whose speed drifts (this VM's by a
third within minutes), consecutive runs of one build then of another
compare the drift, not the builds.  Here the commands alternate, one run
each per round (the order flips every round), and the verdict is the
median of the per-round ratios to the first command.

    tools/bench/abab.py ROUNDS name='command' name='command' ...

Before every run the database files named by ABAB_DB (default
/dev/shm/x.db, with -wal and -shm) are removed, so that each command is a
first scan, and ABAB_PRE, when set, is run (not timed): a remount of the
emulated disk makes every run a cold one.  One warm-up round is not
counted."""
import os
import statistics
import subprocess
import sys
import time


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    rounds = int(sys.argv[1])
    cmds = [a.split("=", 1) for a in sys.argv[2:]]
    db = os.environ.get("ABAB_DB", "/dev/shm/x.db")
    pre = os.environ.get("ABAB_PRE")
    times = {name: [] for name, _ in cmds}
    for i in range(rounds + 1):
        for name, cmd in (cmds if i % 2 == 0 else cmds[::-1]):
            for f in (db, db + "-wal", db + "-shm"):
                try:
                    os.unlink(f)
                except FileNotFoundError:
                    pass
            if pre:
                subprocess.run(pre, shell=True, check=True)
            t = time.perf_counter()
            subprocess.run(cmd, shell=True, check=True)
            if i:
                times[name].append(time.perf_counter() - t)
    base = cmds[0][0]
    for name, _ in cmds:
        ratios = [a / b for a, b in zip(times[name], times[base])]
        print("%-14s median %.3f s  min %.3f s  median ratio to %s %.3f" %
              (name, statistics.median(times[name]), min(times[name]), base,
               statistics.median(ratios)))


if __name__ == "__main__":
    main()
