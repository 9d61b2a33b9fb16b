#!/usr/bin/env python3
"""Lease 43, part B read: split-K 16 / 32 against the catalogue's best in few-tile, large-K
training groups (round 107, side by side). Per base group, each candidate's median TFLOP/s over its
repetitions (rows whose SM clock is more than 30 MHz from the group's median left out); then the
best split-K 16/32 row against the best other row (the catalogue's knobs) and cuBLAS.

    read43b.py REGISTRY [ROUND] [PER_GROUP.csv]
"""
import collections, csv, math, sqlite3, statistics, sys

reg = sys.argv[1]
rnd = int(sys.argv[2]) if len(sys.argv) > 2 else 107
per_group = sys.argv[3] if len(sys.argv) > 3 else None
db = sqlite3.connect(f"file:{reg}?mode=ro", uri=True)
rows = collections.defaultdict(list)  # base -> [(kernel, knobs, tflops, clock)]
dims = {}
for key, m, n, k, layout in db.execute("SELECT key, m, n, k, layout FROM groups WHERE set_name = 'sbs' AND key LIKE ?",
                                       (f"%~s{rnd}r%",)):
    dims[key.split("~")[0]] = (m, n, k, layout)
for gk, kid, knobs, tf, clk in db.execute(
        "SELECT group_key, kernel_id, knobs, tflops, sm_clock_mhz FROM measurements WHERE status = 'ok' AND group_key LIKE ?",
        (f"%~s{rnd}r%",)):
    rows[gk.split("~")[0]].append((kid, knobs, tf, clk))

out = []
for base, rs in sorted(rows.items()):
    med_clk = statistics.median(r[3] for r in rs)
    by = collections.defaultdict(list)
    for kid, knobs, tf, clk in rs:
        if abs(clk - med_clk) <= 30:
            by[(kid, knobs)].append(tf)
    med = {c: statistics.median(v) for c, v in by.items()}
    cub = med.get(("cublas", next((c[1] for c in med if c[0] == "cublas"), "")), 0)
    big = {c: t for c, t in med.items() if c[0] != "cublas" and (c[1].endswith(",k=16") or c[1].endswith(",k=32"))}
    other = {c: t for c, t in med.items() if c[0] != "cublas" and c not in big}
    if not big or not other:
        continue
    m, n, k, layout = dims[base]
    bb, bo = max(big, key=big.get), max(other, key=other.get)
    out.append(dict(base=base, layout=layout, m=m, n=n, k=k, tiles=math.ceil(m / 128) * math.ceil(n / 128),
                    best_split16_32=big[bb], best_split16_32_cand=f"{bb[0]} {bb[1]}", best_other=other[bo],
                    best_other_cand=f"{bo[0]} {bo[1]}", cublas=cub, gain=big[bb] / other[bo] - 1,
                    before_vs_cublas=other[bo] / cub if cub else float("nan"),
                    after_vs_cublas=max(big[bb], other[bo]) / cub if cub else float("nan")))


def gm(v):
    v = [x for x in v if x > 0 and not math.isnan(x)]
    return math.exp(sum(map(math.log, v)) / len(v)) if v else float("nan")


print(f"{len(out)} groups of round {rnd}")
print("| slice | groups | split-K 16/32 best in | mean gain of the best 16/32 over the best other | best / cuBLAS before | after |")
print("| --- | --- | --- | --- | --- | --- |")
slices = [("all", lambda r: True), ("tiles <= 4", lambda r: r["tiles"] <= 4), ("tiles 5-16", lambda r: r["tiles"] > 4),
          ("K >= 8192", lambda r: r["k"] >= 8192), ("K < 8192", lambda r: r["k"] < 8192)]
slices += [(f"layout {l}", (lambda l: lambda r: r["layout"] == l)(l)) for l in ("tn", "nt", "nn", "tt")]
for name, f in slices:
    s = [r for r in out if f(r)]
    if not s:
        continue
    wins = sum(1 for r in s if r["gain"] > 0.01)
    print(f"| {name} | {len(s)} | {wins} | {100 * statistics.mean(r['gain'] for r in s):+.1f} % | "
          f"{gm(r['before_vs_cublas'] for r in s):.3f} | {gm(r['after_vs_cublas'] for r in s):.3f} |")
if per_group:
    with open(per_group, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(out[0]))
        w.writeheader()
        w.writerows(out)
