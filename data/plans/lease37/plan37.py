#!/usr/bin/env python3
"""Lease 37 plan (issues 16 and 17): new training groups of the runtime's decode products.

cks.torch runs a linear layer's product x @ w.t() (x: T tokens x K, w: N x K) as the runtime's
column-major problem (N, T, K) "tn" (python/cks/torch.py), so decoding (T = 1-64) asks the selector
for problems with a large M and an N of 1-64. The corpus holds 42 such TN training groups (N <= 64,
M >= 512) of its 3,741; the Python checks' repeatable losses against torch.matmul are all of this form
(16x16384x8192 -> 16384x16x8192, 106496x1x16384, 18432x1x16384; NOTES.md, lease 29).

Groups: every (N, K) weight shape of the llm and llm-train TN sets with N >= 512, less the held-out
family set's (N, K) pairs, each with two token counts drawn (seed 37) from 1, 2, 4, 8, 12, 16, 24,
32, 40, 48, 56, 64; shapes the corpus already holds are left out (`shapes.csv`, 301 groups).
Candidates per group, all of set train:
  - the shipped selector's top 4 (`cks select`, with their knobs) and the static score's top 2;
  - an exploration set shared by all groups: NC catalogue kernels with tile N <= 64 and cluster N 1,
    drawn (seed 37) round-robin over (tile M, tile N, tile K, cluster M, mainloop, scheduler) strata,
    at default knobs, and the stream-K scheduler's ones also with stream-K and split-K 2, 4 and 8 (raster along M):
    small-N products leave most SMs idle without a K split.
Kernels are capped at MAX_KERNELS (the selector's picks first, by how many groups want them, then
the static picks, then the exploration set): a lease compiles every kernel it measures (~50-65 a
minute on 16 cores, nothing carried compiled).

    cks plan make --shapes data/plans/lease37/shapes.csv --policy exhaustive --pool <any kernel list> \
        --knobs default --group-set train --out /tmp/made.jsonl      # the groups and their tags
    PYTHONPATH=build/python python3 data/plans/lease37/plan37.py /tmp/made.jsonl <cks catalogue list
        --layout tn --format csv> OUT.jsonl [NC=130] [MAX_KERNELS=380]
"""
import csv
import json
import os
import random
import sys
from collections import Counter, defaultdict

import cks

made, catalogue_csv, out = sys.argv[1:4]
NC = int(sys.argv[4]) if len(sys.argv) > 4 else 130
CAP = int(sys.argv[5]) if len(sys.argv) > 5 else 380
DEFAULT = "r=h,s=1,d=h,k=1"

with open(made) as f:
    header = json.loads(next(f))
    groups = [json.loads(line) for line in f]

# The exploration set: stratified round-robin draw.
cat = list(csv.DictReader(open(catalogue_csv)))
strata = defaultdict(list)
for r in cat:
    if int(r["tile_n"]) <= 64 and r["cluster_n"] == "1":
        strata[(r["tile_m"], r["tile_n"], r["tile_k"], r["cluster_m"], r["mainloop"], r["scheduler"])].append(r)
rnd = random.Random(37)
keys = sorted(strata)
rnd.shuffle(keys)
for k in keys:
    rnd.shuffle(strata[k])
explore = []
while len(explore) < NC and any(strata[k] for k in keys):
    for k in keys:
        if strata[k] and len(explore) < NC:
            explore.append(strata[k].pop())
stream_k = {r["id"] for r in explore if r["scheduler"] == "stream_k"}

deployed, static = cks.Selector(), cks.Selector(static=True)
picks, votes, static_votes = {}, Counter(), Counter()
for g in groups:
    p = g["group"]
    d = [(s.kernel_id, s.knobs_text) for s in deployed.select(p["m"], p["n"], p["k"], p["layout"], top=4)]
    s = [(x.kernel_id, x.knobs_text) for x in static.select(p["m"], p["n"], p["k"], p["layout"], top=2)]
    picks[p["key"]] = (d, s)
    for i, (kid, _) in enumerate(d):
        votes[kid] += 4 - i
    for kid, _ in s:
        static_votes[kid] += 1
order = sorted(votes, key=lambda k: (-votes[k], k))
order += sorted((k for k in static_votes if k not in votes), key=lambda k: (-static_votes[k], k))
order += [r["id"] for r in explore if r["id"] not in votes and r["id"] not in static_votes]
keep = set(order[:CAP])

planned, candidates, kernels = [], 0, set()
for g in groups:
    d, s = picks[g["group"]["key"]]
    cands = list(dict.fromkeys(c for c in d + s if c[0] in keep))
    for r in explore:
        if r["id"] not in keep:
            continue
        cands.append((r["id"], DEFAULT))
        if r["id"] in stream_k:
            cands += [(r["id"], f"r=m,s=1,d={d}") for d in ("streamk,k=1", "sk,k=2", "sk,k=4", "sk,k=8")]
    cands = list(dict.fromkeys(cands))
    g["group"]["policy"] = "decode-explore"
    g["group"]["budget"] = len(cands)
    planned.append({"group": g["group"], "candidates": [list(c) for c in cands]})
    candidates += len(cands)
    kernels.update(c[0] for c in cands)

header.update({"name": os.environ.get("NAME", "lease37"), "policy": "decode-explore", "candidates": candidates,
               "kernels": len(kernels), "max_kernels": CAP, "explore_kernels": NC,
               "picked_kernels": len(votes), "static_kernels": len(static_votes),
               "created_by": "data/plans/lease37/plan37.py (model " + os.path.relpath(deployed.model) + ")"})
header.pop("pool", None)
with open(out, "w") as f:
    f.write(json.dumps(header) + "\n")
    for g in planned:
        f.write(json.dumps(g) + "\n")
print(f"{out}: {len(planned)} groups, {candidates} candidates, {len(kernels)} kernels (selector's picks want "
      f"{len(votes)}, static {len(static_votes)}, exploration {len(explore)}, {len(stream_k)} of them stream-K)",
      file=sys.stderr)
