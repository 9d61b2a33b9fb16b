#!/usr/bin/env python3
"""Summarises nvcc's phase timings (`nvcc --time`, one CSV per compiled library; a lease writes
them with CKS_NVCC_TIME_DIR and ships them as nvcc_time.tar.xz): time per phase per library and
per kernel, as a CSV on stdout.

    python3 scripts/analysis/nvcc_phases.py DIR [KERNELS_PER_TU] > phases.csv
"""
import csv
import glob
import os
import statistics
import sys

d = sys.argv[1]
per_tu = int(sys.argv[2]) if len(sys.argv) > 2 else 10
phases = {}
totals = []
for path in sorted(glob.glob(os.path.join(d, "*.csv"))):
    total = 0.0
    mine = {}
    with open(path) as f:
        rows = list(csv.reader(f))
    for r in rows[1:]:
        if len(r) < 8:
            continue
        name = r[1].strip()
        if name.startswith("nvcc (driver)"):
            continue
        ms = float(r[6])
        key = name if not name.startswith("gcc (preprocessing") else "gcc (preprocessing)"
        mine[key] = mine.get(key, 0.0) + ms
        total += ms
    for key, ms in mine.items():
        phases.setdefault(key, []).append(ms)
    totals.append(total)
w = csv.writer(sys.stdout)
w.writerow(["phase", "libraries", "median_s_per_library", "mean_s_per_library", "share", "mean_s_per_kernel"])
grand = sum(totals)
for name, v in sorted(phases.items(), key=lambda kv: -sum(kv[1])):
    w.writerow([name, len(v), round(statistics.median(v) / 1e3, 2), round(statistics.mean(v) / 1e3, 2),
                round(sum(v) / grand, 4), round(statistics.mean(v) / 1e3 / per_tu, 3)])
w.writerow(["all", len(totals), round(statistics.median(totals) / 1e3, 2), round(statistics.mean(totals) / 1e3, 2), 1.0,
            round(statistics.mean(totals) / 1e3 / per_tu, 3)])
