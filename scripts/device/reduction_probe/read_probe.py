#!/usr/bin/env python3
"""Reads run_probe.sh's probe.csv (or .csv.xz): per group, each setting's median TFLOP/s over the
rounds, the best Deterministic and Nondeterministic setting, and cuBLAS; a markdown table on stdout.
    read_probe.py probe.csv[.xz]
Settings: decomposition/splits, 0/1 heuristic, 3/1 stream-K, 2/s split-K s."""
import collections, csv, io, lzma, math, statistics, sys

path = sys.argv[1]
text = lzma.open(path, "rt").read() if path.endswith(".xz") else open(path).read()
rows = list(csv.DictReader(io.StringIO(text)))
tf = collections.defaultdict(list)
err = collections.defaultdict(float)
for r in rows:
    if r["rc"] != "0":
        continue
    key = (r["group"], r["mode"], r["decomposition"], r["splits"])
    tf[key].append(float(r["tflops"]))
    err[r["mode"]] = max(err[r["mode"]], float(r["max_rel_err"]))
med = {k: statistics.median(v) for k, v in tf.items()}
name = lambda d, s: {"0": "heuristic", "3": "stream-K"}.get(d, f"split-K {s}")
print("| group | cuBLAS | best deterministic | best nondeterministic | gain | nondeterministic / cuBLAS |")
print("| --- | --- | --- | --- | --- | --- |")
gains, vs = [], []
for g in sorted({k[0] for k in med}, key=lambda g: (g.split("_")[1], g)):
    cub = med[(g, "cublas", "0", "0")]
    best = {}
    for mode in ("d", "nd"):
        cands = {(k[2], k[3]): v for k, v in med.items() if k[0] == g and k[1] == mode}
        best[mode] = max(cands.items(), key=lambda kv: kv[1])
    (dd, dv), (nd, nv) = best["d"], best["nd"]
    gains.append(nv / dv)
    vs.append(nv / cub)
    print(f"| {g} | {cub:.1f} | {dv:.1f} ({name(*dd)}) | {nv:.1f} ({name(*nd)}) | {nv / dv - 1:+.1%} | {nv / cub:.2f} |")
gm = lambda v: math.exp(sum(map(math.log, v)) / len(v))
print(f"\n{len(gains)} groups: nondeterministic over deterministic (best of each) geomean {gm(gains):.3f}; "
      f"best nondeterministic / cuBLAS {gm(vs):.3f}; max relative error against cuBLAS's D: "
      f"deterministic {err['d']:.4f}, nondeterministic {err['nd']:.4f}")
