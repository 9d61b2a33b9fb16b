#!/usr/bin/env python3
"""Groups whose ok rows mix SM clock states (issue 16, item 0): per group of the sets given, the
5-95 % spread of the rows' SM clocks (NVML at the end of each measurement) over every run, and the
groups above a threshold, the candidates for a side-by-side or re-measure round.

  scripts/analysis/clock_spread.py REGISTRY [--sets train,eval,family] [--min-rows 20]
                                   [--threshold 150] [--csv OUT]

Prints one summary row per set (groups, median spread, groups above 60 MHz and above the
threshold); --csv writes every group above the threshold (set, key, rows, p5, p95, spread, runs).
"""
import argparse
import collections
import csv
import sqlite3
import statistics
import sys


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("registry")
    ap.add_argument("--sets", default="train,eval,family")
    ap.add_argument("--min-rows", type=int, default=20)
    ap.add_argument("--threshold", type=float, default=150)
    ap.add_argument("--csv")
    a = ap.parse_args()
    sets = a.sets.split(",")
    db = sqlite3.connect(f"file:{a.registry}?mode=ro", uri=True)
    clocks = collections.defaultdict(list)
    runs = collections.defaultdict(set)
    q = ("SELECT m.group_key, g.set_name, m.sm_clock_mhz, m.run_uuid FROM measurements m JOIN groups g ON g.key = "
         "m.group_key WHERE m.status = 'ok' AND m.sm_clock_mhz > 0 AND g.set_name IN (%s)" % ",".join("?" * len(sets)))
    for key, s, mhz, run in db.execute(q, sets):
        clocks[(s, key)].append(mhz)
        runs[(s, key)].add(run)
    rows = []
    for (s, key), v in clocks.items():
        if len(v) < a.min_rows:
            continue
        v.sort()
        p5, p95 = v[int(0.05 * (len(v) - 1))], v[int(0.95 * (len(v) - 1))]
        rows.append({"set": s, "group": key, "rows": len(v), "p5_mhz": p5, "p95_mhz": p95, "spread_mhz": p95 - p5,
                     "runs": len(runs[(s, key)])})
    w = csv.writer(sys.stdout)
    w.writerow(["set", "groups", "median_spread_mhz", "over_60_mhz", f"over_{a.threshold:g}_mhz"])
    for s in sets:
        x = [r["spread_mhz"] for r in rows if r["set"] == s]
        if x:
            w.writerow([s, len(x), statistics.median(x), sum(v > 60 for v in x), sum(v > a.threshold for v in x)])
    if a.csv:
        over = sorted((r for r in rows if r["spread_mhz"] > a.threshold), key=lambda r: (r["set"], -r["spread_mhz"]))
        with open(a.csv, "w", newline="") as f:
            cw = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
            cw.writeheader()
            cw.writerows(over)


if __name__ == "__main__":
    main()
