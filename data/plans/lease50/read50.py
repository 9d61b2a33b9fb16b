#!/usr/bin/env python3
"""Lease 50 read: sliced-K kernels (deterministic parallel split-K) against lease 49's candidates
(the group's 3 fastest measured kernels and the swapped stream-K split-K 2-8 kernels) and cuBLAS,
per base group of round ROUND (side by side; each candidate's median over its repetitions, rows
whose SM clock is more than 30 MHz from the group's median left out).

    read50.py REGISTRY [ROUND] [PER_GROUP.csv]
"""
import csv, os, sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import fewtile  # noqa: E402

reg = sys.argv[1]
rnd = int(sys.argv[2]) if len(sys.argv) > 2 else 112
per_group = sys.argv[3] if len(sys.argv) > 3 else None
SLICES = (2, 3, 4, 6, 8, 12, 16)

_canon = {}


def canonical(kid):
    if kid not in _canon:
        _canon[kid] = fewtile.catalogue_show(kid)["canonical"]
    return _canon[kid]


def family(kid):
    c = canonical(kid)
    if not c.endswith("+slicek"):
        return "other"
    return ("swap " if "+swap" in c else "") + c.split("_")[3] + " " + c.split("_")[6].split("+")[0]


out = []
for base, ((m, n, k, layout), med) in fewtile.medians(reg, rnd).items():
    cub = max((t for c, t in med.items() if c[0] == "cublas"), default=0)
    sliced = {c: t for c, t in med.items() if c[0] != "cublas" and canonical(c[0]).endswith("+slicek")}
    others = {c: t for c, t in med.items() if c[0] != "cublas" and c not in sliced}
    if not sliced or not others:
        continue
    bs, bo = max(sliced, key=sliced.get), max(others, key=others.get)
    by_s = {s: max((t for c, t in sliced.items() if c[1].endswith(f"k={s}")), default=float("nan")) for s in SLICES}
    out.append(dict(base=base, layout=layout, m=m, n=n, k=k, best_sliced=sliced[bs],
                    best_sliced_cand=f"{bs[0]} {bs[1]}", best_sliced_family=family(bs[0]), best_sliced_slices=bs[1].split("k=")[1],
                    best_other=others[bo], best_other_cand=f"{bo[0]} {bo[1]}", cublas=cub, gain=sliced[bs] / others[bo],
                    **{f"s{s}_vs_other": by_s[s] / others[bo] for s in SLICES},
                    before_vs_cublas=others[bo] / cub if cub else float("nan"),
                    after_vs_cublas=max(sliced[bs], others[bo]) / cub if cub else float("nan")))

slices = fewtile.SMALL_M_SLICES
print(f"{len(out)} base groups of round {rnd}")
print("| slice | groups | sliced-K best in | its best / the others' best (geomean) | "
      + " | ".join(f"S={s}" for s in SLICES) + " | best / cuBLAS before | after (median) |")
print("| --- | --- | --- | --- | " + " | ".join("---" for _ in SLICES) + " | --- | --- |")
for name, f in slices:
    s = [r for r in out if f(r)]
    if not s:
        continue
    med = lambda key: sorted(r[key] for r in s)[len(s) // 2]
    print(f"| {name} | {len(s)} | {sum(r['gain'] > 1 for r in s)} | {fewtile.gm([r['gain'] for r in s]):.3f} | "
          + " | ".join(f"{fewtile.gm([r[f's{x}_vs_other'] for r in s]):.3f}" for x in SLICES)
          + f" | {med('before_vs_cublas'):.3f} | {med('after_vs_cublas'):.3f} |")
fams = {}
for r in out:
    fams[r["best_sliced_family"]] = fams.get(r["best_sliced_family"], 0) + 1
print("\nbest sliced-K family per group: " + ", ".join(f"{k} {v}" for k, v in sorted(fams.items(), key=lambda x: -x[1])))
if per_group and out:
    with open(per_group, "w", newline="") as f:
        w = csv.DictWriter(f, list(out[0]))
        w.writeheader()
        w.writerows(out)
