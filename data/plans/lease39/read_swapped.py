#!/usr/bin/env python3
"""Lease 39's reading of the real swapped kernels (issue 16): per original group (base set eval or
family), the best unswapped kernel, the best swapped kernel and cuBLAS, all measured side by side
in the same repetitions (interleaved, one stretch), and the proxy's best on the transposed problem.

usage: read_swapped.py REGISTRY TWINS_CSV > table.md

A candidate's figure is its median TFLOP/s over the repetitions of the round (rows with status ok);
"best" is the candidate with the highest median. TWINS_CSV is add_swapped.py's list of swapped
kernels. The swapped kernels compute the same FLOPs, so TFLOP/s compare directly.
"""
import csv
import math
import sqlite3
import statistics
import sys
from collections import defaultdict

SWAP = {"tn": "tn", "nt": "nt", "nn": "tt", "tt": "nn"}


def geomean(xs):
    xs = [x for x in xs if x > 0]
    return math.exp(sum(map(math.log, xs)) / len(xs)) if xs else float("nan")


def main() -> None:
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    twins = {r["id"] for r in csv.DictReader(open(sys.argv[2]))}
    db = sqlite3.connect(f"file:{sys.argv[1]}?mode=ro", uri=True)
    rows = db.execute(
        "SELECT g.m, g.n, g.k, g.layout, json_extract(g.tags_json, '$.base_set'), m.kernel_id, m.knobs, m.tflops "
        "FROM measurements m JOIN groups g ON g.key = m.group_key "
        "WHERE m.status = 'ok' AND json_extract(g.tags_json, '$.round') IS NOT NULL").fetchall()
    per = defaultdict(lambda: defaultdict(list))  # (m, n, k, layout, set) -> candidate -> tflops
    for m, n, k, layout, base_set, kernel, knobs, tflops in rows:
        per[(m, n, k, layout, base_set)][(kernel, knobs)].append(tflops)
    out, ratios = [], defaultdict(list)
    for (m, n, k, layout, base_set), cands in sorted(per.items()):
        if base_set == "swap":
            continue
        med = {c: statistics.median(v) for c, v in cands.items()}
        cublas = max((v for (kid, _), v in med.items() if kid == "cublas"), default=0.0)
        orig = max(((v, c) for c, v in med.items() if c[0] != "cublas" and c[0] not in twins), default=(0.0, None))
        swapped = max(((v, c) for c, v in med.items() if c[0] in twins), default=(0.0, None))
        if swapped[1] is None:
            continue
        proxy_cands = per.get((n, m, k, SWAP[layout], "swap"), {})
        proxy = max((statistics.median(v) for c, v in proxy_cands.items() if c[0] != "cublas"), default=0.0)
        r_orig, r_swap = orig[0] / cublas if cublas else 0, swapped[0] / cublas if cublas else 0
        ratios["orig/cublas"].append(r_orig)
        ratios["swapped/cublas"].append(r_swap)
        ratios["best/cublas"].append(max(r_orig, r_swap))
        ratios["swapped/orig"].append(swapped[0] / orig[0] if orig[0] else 0)
        if proxy:
            ratios["swapped/proxy"].append(swapped[0] / proxy)
        out.append(f"| {m}x{n}x{k}_{layout} | {base_set} | {orig[0]:.1f} | {swapped[0]:.1f} | {proxy:.1f} | "
                   f"{cublas:.1f} | {r_orig:.3f} | {r_swap:.3f} | {swapped[1][0]} {swapped[1][1]} |")
    print("| problem | set | best unswapped TFLOP/s | best swapped | proxy best | cuBLAS | unswapped / cuBLAS | "
          "swapped / cuBLAS | best swapped candidate |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    print("\n".join(out))
    print()
    print("| ratio | groups | geomean | min | max |")
    print("| --- | --- | --- | --- | --- |")
    for name, xs in ratios.items():
        print(f"| {name} | {len(xs)} | {geomean(xs):.3f} | {min(xs):.3f} | {max(xs):.3f} |")


if __name__ == "__main__":
    main()
