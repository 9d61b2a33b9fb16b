#!/usr/bin/env python3
"""One card as a proxy for another's ranking (session 40: the H100 for the H200): the same
side-by-side round's candidates measured on both cards (e.g. a subset of a committed plan run
again on the other card). Per base group: whether both cards find the same best candidate, the
second card's regret of the first card's best (what choosing on the proxy costs) and the reverse,
the Spearman correlation of the candidates' medians, the throughput ratio; then, as the yardstick,
the second card against itself (the best of its repetitions 1-2 scored on 3-4).
Medians as data/plans/fewtile.py's (rows more than 30 MHz off the group's median clock left out).

    scripts/analysis/card_proxy.py PROXY_REGISTRY REFERENCE_REGISTRY [ROUND]
"""
import math, os, statistics, sys
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "data", "plans"))
import fewtile
a = fewtile.medians(sys.argv[1], int(sys.argv[3]) if len(sys.argv) > 3 else 105)
b = fewtile.medians(sys.argv[2], int(sys.argv[3]) if len(sys.argv) > 3 else 105)
def spearman(x, y):
    rx = {k: i for i, k in enumerate(sorted(x, key=x.get))}; ry = {k: i for i, k in enumerate(sorted(y, key=y.get))}
    n = len(x); d = sum((rx[k] - ry[k]) ** 2 for k in x)
    return 1 - 6 * d / (n * (n * n - 1)) if n > 2 else float("nan")
rows = []
for base in sorted(a):
    if base not in b: continue
    (m, n, k, layout), ha = a[base]; _, hb = b[base]
    common = [c for c in ha if c in hb and c[0] != "cublas"]
    if len(common) < 3: continue
    xa = {c: ha[c] for c in common}; xb = {c: hb[c] for c in common}
    best_a = max(xa, key=xa.get); best_b = max(xb, key=xb.get)
    reg_b_of_a = 1 - xb[best_a] / xb[best_b]      # the reference's regret of the proxy's best
    reg_a_of_b = 1 - xa[best_b] / xa[best_a]      # H100 regret of the H200's best
    ratio = statistics.median(xa[c] / xb[c] for c in common)
    cub = (ha.get(("cublas", "")) or 0) / (hb.get(("cublas", "")) or float("nan"))
    rows.append((base, len(common), best_a == best_b, reg_b_of_a, reg_a_of_b, spearman(xa, xb), ratio, cub))
    print(f"{base:24s} n={len(common):2d} same_best={best_a == best_b!s:5s} ref_regret_of_proxy_best={100*reg_b_of_a:5.2f}% "
          f"proxy_regret_of_ref_best={100*reg_a_of_b:5.2f}% spearman={spearman(xa, xb):.2f} proxy/ref={ratio:.3f} cublas proxy/ref={cub:.3f}")
r = [x[3] for x in rows]
print(f"\n{len(rows)} groups: same best in {sum(x[2] for x in rows)}; the reference's regret of the proxy's best: mean {100*statistics.mean(r):.2f} %, "
      f"median {100*statistics.median(r):.2f} %, max {100*max(r):.2f} %; Spearman median {statistics.median(x[5] for x in rows):.2f}; "
      f"throughput proxy/reference median {statistics.median(x[6] for x in rows):.3f}, cuBLAS {statistics.median(x[7] for x in rows if not math.isnan(x[7])):.3f}")

# The H200 against itself: the best of repetitions 1-2 scored on repetitions 3-4 (the noise floor
# of choosing by two repetitions).
import sqlite3, collections
def med_reps(reg, rnd, reps):
    db = sqlite3.connect(f"file:{reg}?mode=ro", uri=True)
    rs = collections.defaultdict(list)
    for gk, kid, knobs, tf, clk in db.execute("SELECT group_key, kernel_id, knobs, tflops, sm_clock_mhz FROM measurements "
                                              "WHERE status = 'ok' AND group_key LIKE ?", (f"%~s{rnd}r%",)):
        if int(gk.rsplit("r", 1)[1]) in reps:
            rs[gk.split("~")[0]].append((kid, knobs, tf, clk))
    out = {}
    for base, v in rs.items():
        mc = statistics.median(x[3] for x in v); by = collections.defaultdict(list)
        for kid, knobs, tf, clk in v:
            if abs(clk - mc) <= 30: by[(kid, knobs)].append(tf)
        out[base] = {c: statistics.median(t) for c, t in by.items()}
    return out
rnd = int(sys.argv[3]) if len(sys.argv) > 3 else 105
h12, h34 = med_reps(sys.argv[2], rnd, (1, 2)), med_reps(sys.argv[2], rnd, (3, 4))
self_reg = []
for base, *_ in rows:
    x, y = h12.get(base, {}), h34.get(base, {})
    common = [c for c in x if c in y and c[0] != "cublas"]
    if len(common) < 3: continue
    bx = max(common, key=lambda c: x[c]); by_ = max(common, key=lambda c: y[c])
    self_reg.append(1 - y[bx] / y[by_])
print(f"Reference self-check ({len(self_reg)} groups): regret on reps 3-4 of reps 1-2's best: mean {100*statistics.mean(self_reg):.2f} %, "
      f"median {100*statistics.median(self_reg):.2f} %, max {100*max(self_reg):.2f} %")
