#!/usr/bin/env python3
"""Throughput of a collection lease from its progress log (issue 20): rows per GPU-minute, the
GPU-busy share, when the compile queue emptied, and kernels compiled per minute.

    python3 scripts/analysis/lease_throughput.py COLLECT_LOG [--new-kernels N] [--busy-fraction F]

COLLECT_LOG: `out/collect.log` as `scripts/device/lease.sh wait` ships it (`cks collect
--progress-every 20` lines: "cks collect: T min | groups ... | rows ok N, other O | ... | compile
queue Q | ..."); only the first collect in the log (up to the next "== plan" line) is read.
Busy: a progress interval whose rows per minute (ok + other) reach F (default 0.1) of the run's
busiest interval; the GPU-busy share is the busy intervals' time over the run's. Kernels per minute:
--new-kernels (kernels the run compiled, not served from a cache) over the minutes until the
compile queue was first empty.

    python3 scripts/analysis/lease_throughput.py --registry LEASE_DB

The GPU's launch share per run of a lease registry (the home copy of `out/registry.db`): the sum
over its rows of 21 launches x the measured mean (the protocol: 5 warm-up, 5 timed rounds of 3,
1 correctness launch; a cut row counts as if whole) over the run's wall time, from the rows'
start and end times, and its rows per minute.
"""
import argparse, re

ap = argparse.ArgumentParser()
ap.add_argument('log', nargs='?')
ap.add_argument('--registry')
ap.add_argument('--new-kernels', type=int, default=0)
ap.add_argument('--busy-fraction', type=float, default=0.1)
a = ap.parse_args()
if a.registry:
    import datetime, sqlite3
    db = sqlite3.connect(f"file:{a.registry}?mode=ro", uri=True)
    t = lambda s: datetime.datetime.fromisoformat(s.replace("Z", "+00:00")).timestamp()
    for run, busy_us, n, start, end in db.execute(
            "SELECT run_uuid, sum(mean_us), count(*), min(started_at), max(finished_at) FROM measurements "
            "WHERE started_at != '' GROUP BY run_uuid ORDER BY min(started_at)"):
        wall = max(t(end) - t(start), 1e-9)
        print(f"run {run[:8]}: {n:,} rows in {wall:,.0f} s ({60 * n / wall:,.0f} per minute); "
              f"kernel launches {100 * busy_us * 21 / 1e6 / wall:.0f} % of the wall time")
    raise SystemExit(0)
if not a.log:
    ap.error("COLLECT_LOG or --registry LEASE_DB")
pat = re.compile(r'cks collect: ([\d.]+) min \| .*?rows ok (\d+), other (\d+) \|.*?compile queue (\d+)')
points, seen_plan = [(0.0, 0, None)], 0
for line in open(a.log, errors='replace'):
    if line.startswith('== '):
        seen_plan += 1
        if seen_plan > 1:
            break
        continue
    m = pat.search(line)
    if m:
        points.append((float(m.group(1)), int(m.group(2)) + int(m.group(3)), int(m.group(4))))
if len(points) < 3:
    raise SystemExit(f"{a.log}: fewer than two progress lines")
rates = [((t1 - t0), (r1 - r0) / (t1 - t0)) for (t0, r0, _), (t1, r1, _) in zip(points, points[1:]) if t1 > t0]
peak = max(r for _, r in rates)
busy = sum(dt for dt, r in rates if r >= a.busy_fraction * peak)
total = points[-1][0]
empty = next((t for t, _, q in points[1:] if q == 0), None)
print(f"run: {total:.1f} min, {points[-1][1]:,} rows: {points[-1][1] / total:,.0f} rows per minute")
print(f"GPU busy: {busy:.1f} of {total:.1f} min ({100 * busy / total:.0f} %; an interval is busy at >= "
      f"{a.busy_fraction:.0%} of the peak {peak:,.0f} rows/min); {points[-1][1] / max(busy, 1e-9):,.0f} rows per busy minute")
if empty is not None:
    line = f"compile queue empty at {empty:.1f} min"
    if a.new_kernels:
        line += f": {a.new_kernels} new kernels, {a.new_kernels / empty:.0f} per minute"
    print(line)
else:
    print("the compile queue never emptied in the log")
