#!/usr/bin/env python3
"""Single-pass real-pick regret, split by clock state: the rows of `cks eval --per-group` for one
method, joined to each candidate's SM clock in the registry they were measured in.

A single pass measures a group's candidates one after the other (the picks first, their knob
variants as their kernels compile), and the H200 moves between 1,980 MHz and 1,230-1,500 MHz when
it is power-limited (issue 16): a pick measured at 1,485 MHz against a best measured at 1,950 MHz
shows a regret that is the clock's. This prints the regret over every covered group and over the
groups whose pick and best ran within TOL MHz of each other, and pick / cuBLAS where the pick and
cuBLAS are clock-matched. Side-by-side rounds (cks plan sidebyside) avoid the problem by design.

    scripts/eval/clock_matched.py REGISTRY PER_GROUP.csv[.xz] METHOD [TOL_MHZ=30]
"""
import csv
import io
import lzma
import math
import sqlite3
import statistics as st
import sys


def summary(regrets):
    r = sorted(regrets)
    if not r:
        return "no group"
    p95 = r[min(len(r) - 1, int(0.95 * len(r)))]
    return (f"{len(r)} groups: mean {100 * st.mean(r):.2f} %, median {100 * st.median(r):.2f} %, "
            f"p95 {100 * p95:.1f} %, max {100 * r[-1]:.1f} %, > 5 % in {sum(v > 0.05 for v in r)}")


def geomean(v):
    return math.exp(sum(map(math.log, v)) / len(v)) if v else float("nan")


def main():
    if len(sys.argv) not in (4, 5):
        sys.exit(__doc__)
    reg, per_group, method = sys.argv[1:4]
    tol = float(sys.argv[4]) if len(sys.argv) == 5 else 30.0
    clock = {(g, k, kn): c for g, k, kn, c in sqlite3.connect(reg).execute(
        "SELECT group_key, kernel_id, knobs, sm_clock_mhz FROM measurements WHERE status = 'ok'")}
    text = lzma.open(per_group, "rt") if per_group.endswith(".xz") else open(per_group)
    rows = [r for r in csv.DictReader(text) if r["method"] == method and r["covered"] == "1"]
    if not rows:
        sys.exit(f"clock_matched.py: no covered rows of method '{method}' in {per_group}")
    matched, vs_cublas = [], []
    for r in rows:
        g = r["group"]
        cp = clock.get((g, r["pick_kernel"], r["pick_knobs"]))
        cb = clock.get((g, r["best_kernel"], r["best_knobs"]))
        cc = clock.get((g, "cublas", ""))
        if cp and cb and abs(cp - cb) <= tol:
            matched.append(float(r["regret"]))
        if cp and cc and abs(cp - cc) <= tol and r["vs_cublas"]:
            vs_cublas.append((int(r["m"]), float(r["vs_cublas"])))
    print(f"method: {method}")
    print(f"every covered group (single pass):  {summary(float(r['regret']) for r in rows)}")
    print(f"pick and best within {tol:g} MHz:      {summary(matched)}")
    by_m = " ".join(f"M {lo}-{hi}: {geomean([v for m, v in vs_cublas if lo <= m <= hi]):.3f} "
                    f"({sum(lo <= m <= hi for m, _ in vs_cublas)})"
                    for lo, hi in ((1, 64), (65, 2047), (2048, 10**9)))
    print(f"pick / cuBLAS, clock-matched:       {len(vs_cublas)} groups: {geomean([v for _, v in vs_cublas]):.3f}; {by_m}")


if __name__ == "__main__":
    main()
