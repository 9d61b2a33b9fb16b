#!/usr/bin/env python3
"""Split a single-pass evaluation's regret by how the pick and the group's best were measured:
in one run or two, their SM clocks within TOL MHz or not (issue 16, item 0: picks measured apart
from their group's best are not comparable).

    cks eval --registry R --model M --eval-set llm --per-group F --no-nvmmh
    python3 scripts/eval/clock_split.py R F ["real pick (deployed)"] [TOL=30] > table.md

For each group of the method's rows in F (columns group, pick_kernel, pick_knobs, best_kernel,
best_knobs, regret, covered) the pick's and the best's fastest ok row in R give the run and the
SM clock. Session 29, the llm set, r10w4: NOTES.md ("Session 29 at home").
"""
from __future__ import annotations

import csv
import sqlite3
import statistics
import sys
from collections import defaultdict


def main() -> None:
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    reg, per_group = sys.argv[1], sys.argv[2]
    method = sys.argv[3] if len(sys.argv) > 3 else "real pick (deployed)"
    tol = float(sys.argv[4]) if len(sys.argv) > 4 else 30.0
    db = sqlite3.connect(reg)

    def row(group: str, kernel: str, knobs: str) -> tuple[float, str] | None:
        return db.execute("select sm_clock_mhz, run_uuid from measurements where group_key = ? and kernel_id = ? and "
                          "knobs = ? and status = 'ok' order by tflops desc limit 1", (group, kernel, knobs)).fetchone()

    split: dict[str, list[float]] = defaultdict(list)
    rows = [r for r in csv.DictReader(open(per_group)) if r["method"].endswith(method) and r["covered"] == "1"]
    if not rows:
        sys.exit(f"clock_split.py: no covered rows of method '{method}' in {per_group}")
    for r in rows:
        p, b = row(r["group"], r["pick_kernel"], r["pick_knobs"]), row(r["group"], r["best_kernel"], r["best_knobs"])
        if not p or not b:
            continue
        runs = "one run" if p[1] == b[1] else "two runs"
        clocks = f"clocks within {tol:g} MHz" if abs(p[0] - b[0]) <= tol else f"clocks > {tol:g} MHz apart"
        split[f"{runs}, {clocks}"].append(float(r["regret"]))
        split["all"].append(float(r["regret"]))
    print(f"| pick and best ({method}) | groups | mean | median | p95 |")
    print("| --- | --- | --- | --- | --- |")
    for name, v in sorted(split.items(), key=lambda kv: (kv[0] != "all", kv[0])):
        v.sort()
        print(f"| {name} | {len(v)} | {100 * statistics.mean(v):.2f} % | {100 * statistics.median(v):.2f} % | "
              f"{100 * v[int(0.95 * (len(v) - 1))]:.1f} % |")


if __name__ == "__main__":
    main()
