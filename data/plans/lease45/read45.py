#!/usr/bin/env python3
"""Lease 45 read: the nondeterministic stream-K reduction (knobs ending ",x=n") against the best
deterministic candidate and cuBLAS, per base group of round ROUND (side by side). Each candidate's
median TFLOP/s over its repetitions (rows whose SM clock is more than 30 MHz from the group's
median left out).

    read45.py REGISTRY [ROUND] [PER_GROUP.csv]
"""
import csv, math, os, statistics, sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import fewtile  # noqa: E402  (data/plans/fewtile.py: what the few-tile plans share)

reg = sys.argv[1]
rnd = int(sys.argv[2]) if len(sys.argv) > 2 else 108
per_group = sys.argv[3] if len(sys.argv) > 3 else None

out = []
for base, ((m, n, k, layout), med) in fewtile.medians(reg, rnd).items():
    cub = max((t for c, t in med.items() if c[0] == "cublas"), default=0)
    nd = {c: t for c, t in med.items() if c[0] != "cublas" and c[1].endswith(",x=n")}
    det = {c: t for c, t in med.items() if c[0] != "cublas" and c not in nd}
    if not nd or not det:
        continue
    bn, bd = max(nd, key=nd.get), max(det, key=det.get)
    # The same kernel and setting, deterministic: the reduction's own effect.
    paired = [nd[c] / det[(c[0], c[1][:-4])] for c in nd if (c[0], c[1][:-4]) in det]
    out.append(dict(base=base, layout=layout, m=m, n=n, k=k, tiles=fewtile.tiles(m, n),
                    best_nd=nd[bn], best_nd_cand=f"{bn[0]} {bn[1]}", best_det=det[bd], best_det_cand=f"{bd[0]} {bd[1]}",
                    cublas=cub, gain=nd[bn] / det[bd], paired_median=statistics.median(paired) if paired else float("nan"),
                    det_vs_cublas=det[bd] / cub if cub else float("nan"),
                    best_vs_cublas=max(nd[bn], det[bd]) / cub if cub else float("nan")))

print(f"{len(out)} base groups of round {rnd}")
print("| slice | groups | nondeterministic best in | best nd / best det (geomean) | same setting nd / det (median of medians) | best / cuBLAS before | after |")
print("| --- | --- | --- | --- | --- | --- | --- |")
for name, f in fewtile.SLICES:
    s = [r for r in out if f(r)]
    if not s:
        continue
    wins = sum(r["gain"] > 1 for r in s)
    pm = statistics.median(r["paired_median"] for r in s if not math.isnan(r["paired_median"]))
    print(f"| {name} | {len(s)} | {wins} | {fewtile.gm([r['gain'] for r in s]):.3f} | {pm:.3f} | "
          f"{statistics.median(r['det_vs_cublas'] for r in s):.3f} | {statistics.median(r['best_vs_cublas'] for r in s):.3f} |")
if per_group:
    with open(per_group, "w", newline="") as f:
        w = csv.DictWriter(f, list(out[0]))
        w.writeheader()
        w.writerows(out)
