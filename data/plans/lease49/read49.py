#!/usr/bin/env python3
"""Lease 49 read: the swapped cooperative stream-K kernels at deterministic split-K 2, 4 and 8
against the group's 3 fastest measured kernels and cuBLAS, per base group of round ROUND (side by
side; each candidate's median over its repetitions, rows whose SM clock is more than 30 MHz from
the group's median left out).

    read49.py REGISTRY [ROUND] [PER_GROUP.csv]
"""
import csv, os, sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import fewtile  # noqa: E402

reg = sys.argv[1]
rnd = int(sys.argv[2]) if len(sys.argv) > 2 else 111
per_group = sys.argv[3] if len(sys.argv) > 3 else None

_swapped = {}


def is_swapped(kid):
    """Whether the kernel is a swapped one (its canonical descriptor ends in +swap): `cks catalogue show`."""
    if kid not in _swapped:
        _swapped[kid] = fewtile.catalogue_show(kid)["canonical"].endswith("+swap")
    return _swapped[kid]


out = []
for base, ((m, n, k, layout), med) in fewtile.medians(reg, rnd).items():
    cub = max((t for c, t in med.items() if c[0] == "cublas"), default=0)
    swapped = {c: t for c, t in med.items() if c[0] != "cublas" and is_swapped(c[0])}
    others = {c: t for c, t in med.items() if c[0] != "cublas" and c not in swapped}
    if not swapped or not others:
        continue
    bs, bo = max(swapped, key=swapped.get), max(others, key=others.get)
    by_split = {s: max((t for c, t in swapped.items() if c[1].endswith(f"k={s}")), default=float("nan")) for s in (2, 4, 8)}
    out.append(dict(base=base, layout=layout, m=m, n=n, k=k, tiles=fewtile.tiles(m, n),
                    best_swapped=swapped[bs], best_swapped_cand=f"{bs[0]} {bs[1]}", best_other=others[bo],
                    best_other_cand=f"{bo[0]} {bo[1]}", cublas=cub, gain=swapped[bs] / others[bo],
                    **{f"k{s}_vs_other": by_split[s] / others[bo] for s in by_split},
                    before_vs_cublas=others[bo] / cub if cub else float("nan"),
                    after_vs_cublas=max(swapped[bs], others[bo]) / cub if cub else float("nan")))

slices = fewtile.SMALL_M_SLICES
print(f"{len(out)} base groups of round {rnd}")
print("| slice | groups | swapped split-K best in | its best / the others' best (geomean) | k=2 | k=4 | k=8 | best / cuBLAS before | after |")
print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
for name, f in slices:
    s = [r for r in out if f(r)]
    if not s:
        continue
    med = lambda key: sorted(r[key] for r in s)[len(s) // 2]
    print(f"| {name} | {len(s)} | {sum(r['gain'] > 1 for r in s)} | {fewtile.gm([r['gain'] for r in s]):.3f} | "
          + " | ".join(f"{fewtile.gm([r[f'k{x}_vs_other'] for r in s]):.3f}" for x in (2, 4, 8))
          + f" | {med('before_vs_cublas'):.3f} | {med('after_vs_cublas'):.3f} |")
if per_group and out:
    with open(per_group, "w", newline="") as f:
        w = csv.DictWriter(f, list(out[0]))
        w.writeheader()
        w.writerows(out)
