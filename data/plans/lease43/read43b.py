#!/usr/bin/env python3
"""Lease 43, part B read: split-K 16 / 32 against the catalogue's best in few-tile, large-K
training groups (round 107, side by side). Per base group, each candidate's median TFLOP/s over its
repetitions (rows whose SM clock is more than 30 MHz from the group's median left out); then the
best split-K 16/32 row against the best other row (the catalogue's knobs) and cuBLAS.

    read43b.py REGISTRY [ROUND] [PER_GROUP.csv]
"""
import csv, os, statistics, sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import fewtile  # noqa: E402  (data/plans/fewtile.py: what the few-tile plans share)

reg = sys.argv[1]
rnd = int(sys.argv[2]) if len(sys.argv) > 2 else 107
per_group = sys.argv[3] if len(sys.argv) > 3 else None

out = []
for base, ((m, n, k, layout), med) in fewtile.medians(reg, rnd).items():
    cub = med.get(("cublas", next((c[1] for c in med if c[0] == "cublas"), "")), 0)
    big = {c: t for c, t in med.items() if c[0] != "cublas" and (c[1].endswith(",k=16") or c[1].endswith(",k=32"))}
    other = {c: t for c, t in med.items() if c[0] != "cublas" and c not in big}
    if not big or not other:
        continue
    bb, bo = max(big, key=big.get), max(other, key=other.get)
    out.append(dict(base=base, layout=layout, m=m, n=n, k=k, tiles=fewtile.tiles(m, n),
                    best_split16_32=big[bb], best_split16_32_cand=f"{bb[0]} {bb[1]}", best_other=other[bo],
                    best_other_cand=f"{bo[0]} {bo[1]}", cublas=cub, gain=big[bb] / other[bo] - 1,
                    before_vs_cublas=other[bo] / cub if cub else float("nan"),
                    after_vs_cublas=max(big[bb], other[bo]) / cub if cub else float("nan")))

print(f"{len(out)} groups of round {rnd}")
print("| slice | groups | split-K 16/32 best in | mean gain of the best 16/32 over the best other | best / cuBLAS before | after |")
print("| --- | --- | --- | --- | --- | --- |")
for name, f in fewtile.SLICES:
    s = [r for r in out if f(r)]
    if not s:
        continue
    wins = sum(1 for r in s if r["gain"] > 0.01)
    print(f"| {name} | {len(s)} | {wins} | {100 * statistics.mean(r['gain'] for r in s):+.1f} % | "
          f"{fewtile.gm(r['before_vs_cublas'] for r in s):.3f} | {fewtile.gm(r['after_vs_cublas'] for r in s):.3f} |")
if per_group:
    with open(per_group, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(out[0]))
        w.writeheader()
        w.writerows(out)
