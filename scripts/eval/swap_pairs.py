#!/usr/bin/env python3
"""Lease 39's reading (issue 16): each base group beside its swapped problem, from one side-by-side
round (`cks analyze sidebyside --registry <lease registry> --model models/default.json --methods
deployed --per-group F`).

D = A B (M x N, column-major) is also D^T = B^T A^T: the problem (N, M, K) in the swapped layout (tn
and nt stay, nn <-> tt) written row-major. Today's kernels on the swapped problem (base set `swap`)
run the mainloop a row-major-D kernel would run on the original; the FLOP counts are equal, so
TFLOP/s compare directly. Per pair: the original's best kernel over its cuBLAS, the swapped best
kernel over the original's cuBLAS and over the original's best, and the two cuBLAS figures.

    python3 scripts/eval/swap_pairs.py F > pairs.md
"""
from __future__ import annotations

import csv
import math
import sys

SWAP = {"tn": "tn", "nt": "nt", "nn": "tt", "tt": "nn"}


def main() -> None:
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    rows = list(csv.DictReader(open(sys.argv[1])))
    by_key = {r["base_key"]: r for r in rows if r["base_set"] != "swap"}
    pairs = []
    for s in (r for r in rows if r["base_set"] == "swap"):
        key = f"{s['n']}x{s['m']}x{s['k']}_{SWAP[s['layout']]}"
        if key in by_key:
            pairs.append((by_key[key], s))
    if not pairs:
        sys.exit(f"swap_pairs.py: no swapped group of {sys.argv[1]} has its original there")
    print("| original | set | best / cuBLAS | swapped best / cuBLAS | swapped best / best | cuBLAS swapped / cuBLAS |")
    print("| --- | --- | --- | --- | --- | --- |")
    gains, vs_cublas = [], []
    for o, s in sorted(pairs, key=lambda p: p[0]["base_key"]):
        ob, oc, sb, sc = (float(x) for x in (o["best_tflops"], o["cublas_tflops"], s["best_tflops"], s["cublas_tflops"]))
        gains.append(max(sb, ob) / ob)
        vs_cublas.append(max(sb, ob) / oc)
        print(f"| {o['base_key']} | {o['base_set']} | {ob / oc:.3f} | {sb / oc:.3f} | {sb / ob:.3f} | {sc / oc:.3f} |")
    geo = lambda v: math.exp(sum(map(math.log, v)) / len(v))
    print(f"\n{len(pairs)} pairs: the better orientation's best over the original's best, geomean {geo(gains):.3f}; "
          f"over the original's cuBLAS {geo(vs_cublas):.3f} (original alone {geo([float(o['best_tflops']) / float(o['cublas_tflops']) for o, _ in pairs]):.3f}); "
          f"the swapped orientation better by > 2 % in {sum(g > 1.02 for g in gains)}")


if __name__ == "__main__":
    main()
