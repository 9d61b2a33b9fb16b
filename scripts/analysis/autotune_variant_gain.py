#!/usr/bin/env python3
"""What the bundle's knob variants add to autotune, from one runtime check's own timings.

Autotune mode times every candidate of a problem (the bundle's ranked picks, their knob variants,
cuBLASLt) and writes each time into `autotune_reason` of runtime_bench.csv; the bundle's index
says which candidates are variants. This compares, per problem, the fastest of all candidates
with the fastest of the ranked picks alone (both from the same tuning pass), so clocks and noise
are shared. Usage:

  scripts/analysis/autotune_variant_gain.py data/device_checks/20261203_lease21_runtime_b
"""
import csv, json, lzma, re, sys, math, statistics as st
d = sys.argv[1] if len(sys.argv) > 1 else sys.exit(__doc__)
idx = json.load(lzma.open(f"{d}/index.json.xz"))
var = {}
for p in idx["problems"]:
    key = (p["layout"], p["m"], p["n"], p["k"])
    var[key] = {(q["kernel_id"], q["knobs"]): q.get("variant", False) for q in p["picks"]}
rows = list(csv.DictReader(lzma.open(f"{d}/runtime_bench.csv.xz", "rt")))
gain, n_var_win, n, per = [], 0, 0, []
for r in rows:
    key = (r["layout"], int(r["m"]), int(r["n"]), int(r["k"]))
    reason = r["autotune_reason"]
    m = re.search(r"cuBLASLt \(([\d.]+) us\)", reason)
    if not m or key not in var: continue
    cub = float(m.group(1))
    cands = re.findall(r"(k[0-9a-f]{16}) (r=\w,s=\d,d=\w,k=\d+) ([\d.]+) us", reason)
    base = [float(t) for kid, kn, t in cands if not var[key].get((kid, kn), False)]
    allc = [float(t) for kid, kn, t in cands]
    if not base: continue
    n += 1
    b0, b1 = min(base + [cub]), min(allc + [cub])
    k0, k1 = min(base), min(allc)
    gain.append(k0 / k1)
    if k1 < k0: n_var_win += 1
    per.append((key, len(base), len(allc) - len(base), cub / b0, cub / b1, k0 / k1))
g = lambda xs: math.exp(sum(map(math.log, xs)) / len(xs))
print(f"problems {n}; candidates base {st.mean(p[1] for p in per):.1f} + variants {st.mean(p[2] for p in per):.1f}")
print(f"tuning-time best-of (with cuBLASLt): cublas/best base {g([p[3] for p in per]):.4f}, with variants {g([p[4] for p in per]):.4f}")
print(f"kernels only: best base / best with variants geomean {g(gain):.4f}; a variant is fastest kernel in {n_var_win}/{n}")
for lo, hi in [(0, 64), (65, 2047), (2048, 10**9)]:
    s = [p for p in per if lo <= p[0][1] <= hi]
    if s: print(f"  M {lo}-{hi}: n={len(s)} base {g([p[3] for p in s]):.4f} var {g([p[4] for p in s]):.4f} kernel gain {g([p[5] for p in s]):.4f}")
