#!/usr/bin/env python3
"""Lease 30 plan (session 26, issue 16 active learning): wave-fill exploration in the tail class.

Every side-by-side round's tail is small, strongly rectangular problems (2MNK < 1e11) where the best
kernel is the one whose tile grid fills the 132 SMs in one or two waves, not the tile the model
ranks first. Example from the training data: 2592x320x3776 (tn) never measured the pingpong 128x64
tile with raster along N (k7194b9d66a7b1cce r=n) at all; 21 x 5 = 105 of its tiles run in one wave.
The model cannot learn where a tile's grid fills the machine from groups that never measured the
tiles that do. So, for the training groups of that class (2MNK < 1e11, max(M,N) >= 4 min(M,N),
min(M,N) >= 128), a fixed exploration set per layout: pingpong, cooperative (tile M 128) and tma_ws
mainloops, TMA epilogue, persistent scheduler, cluster 1x1, tile K 64, tile M 64 or 128, tile N of
32-256 (45 kernels a layout, 180 in all: few enough to compile in one lease); per group the
TOP kernels of the set with the best wave efficiency T / (132 ceil(T / 132)), T = ceil(M/tm)
ceil(N/tn) (ties: the larger tile), each with raster along M and along N (swizzle 1; the heuristic raster where the kernel has no knobs), less what the
corpus has measured. Groups are drawn seeded when there are more than MAX_GROUPS.
Only training groups: the evaluation and family sets are neither read nor planned.

    python3 data/plans/lease30/plan30.py REGISTRY [TOP=14] [MAX_GROUPS=700] [SEED=30] > plan.jsonl
with REGISTRY the corpus merged (`cks data merge --no-plan-items --out all.db data/shards/*.db.*`).
"""
import csv
import io
import json
import math
import random
import sqlite3
import subprocess
import sys
from datetime import datetime, timezone

reg = sys.argv[1]
TOP = int(sys.argv[2]) if len(sys.argv) > 2 else 14
MAX_GROUPS = int(sys.argv[3]) if len(sys.argv) > 3 else 700
SEED = int(sys.argv[4]) if len(sys.argv) > 4 else 30
# Round 2 (the same lease's second command): RATIO=2 MAX_FLOP=2e11 EXCLUDE=<round 1's plan> widens the
# class and leaves out the groups round 1 planned.
import os
RATIO = float(os.environ.get("RATIO", "4"))
MAX_FLOP = float(os.environ.get("MAX_FLOP", "1e11"))
EXCLUDE = set()
if os.environ.get("EXCLUDE"):
    import lzma
    with (lzma.open if os.environ["EXCLUDE"].endswith(".xz") else open)(os.environ["EXCLUDE"], "rt") as f:
        EXCLUDE = {json.loads(line)["group"]["key"] for line in f.read().splitlines()[1:]}
# Lease 30c (session 26's last device time): CLUSTERS=2x1,1x2 plans the same tiles with those cluster
# shapes instead of 1x1, on both commands' groups (EXCLUDE unset, RATIO=1.5 MAX_FLOP=3e11).
CLUSTERS = {tuple(c.split("x")) for c in os.environ.get("CLUSTERS", "1x1").split(",")}
SMS = 132
TILE_N = (32, 48, 64, 80, 96, 128, 160, 192, 256)

exploration = {}  # layout -> [(kernel id, tm, tn)]
for layout in ("tn", "nt", "nn", "tt"):
    out = subprocess.run(["build/bin/cks", "catalogue", "list", "--layout", layout, "--format", "csv"],
                         check=True, capture_output=True, text=True).stdout
    ks = []
    for r in csv.DictReader(io.StringIO(out)):
        tm, tn = int(r["tile_m"]), int(r["tile_n"])
        if (r["epilogue"] != "tma_ws" or r["scheduler"] != "persistent" or (r["cluster_m"], r["cluster_n"]) not in CLUSTERS
                or r["tile_k"] != "64" or r["stages"] != "0" or tn not in TILE_N):
            continue
        if r["mainloop"] in ("pingpong", "tma_ws") and tm in (64, 128) or r["mainloop"] == "cooperative" and tm == 128:
            ks.append((r["id"], tm, tn, int(r["knobs"])))
    exploration[layout] = ks
    print(f"plan30: {layout}: {len(ks)} exploration kernels", file=sys.stderr)

db = sqlite3.connect(reg)
groups = []
for key, m, n, k, layout, tags, policy, budget, seed in db.execute(
        "SELECT key, m, n, k, layout, tags_json, policy, budget, seed FROM groups WHERE set_name = 'train' ORDER BY key"):
    if 2 * m * n * k < MAX_FLOP and max(m, n) >= RATIO * min(m, n) and min(m, n) >= 128 and key not in EXCLUDE:
        groups.append((key, m, n, k, layout, json.loads(tags), policy, budget, seed))
print(f"plan30: {len(groups)} training groups in the class", file=sys.stderr)
random.Random(SEED).shuffle(groups)
groups = sorted(groups[:MAX_GROUPS])
keys = {g[0] for g in groups}
measured = set()
for key, kid, knobs in db.execute("SELECT DISTINCT group_key, kernel_id, knobs FROM measurements WHERE status != 'cut'"):
    if key in keys:
        measured.add((key, kid, knobs))

def eff(m, n, tm, tn):
    t = math.ceil(m / tm) * math.ceil(n / tn)
    return t / (SMS * math.ceil(t / SMS))

lines = [json.dumps({"plan_version": 1, "name": "lease30_wavefill", "created_by": "data/plans/lease30/plan30.py",
                     "created_at": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.000Z"),
                     "top": TOP, "max_groups": MAX_GROUPS, "seed": SEED, "clusters": sorted("x".join(c) for c in CLUSTERS),
                     "filter": f"train, 2MNK < {MAX_FLOP:g}, max(M,N) >= {RATIO:g} min(M,N), min(M,N) >= 128"
                               + (f", not in {os.environ['EXCLUDE']}" if EXCLUDE else "") + "; wave-fill exploration"})]
kernels, rows = set(), 0
for key, m, n, k, layout, tags, policy, budget, seed in groups:
    ranked = sorted(exploration[layout], key=lambda x: (-round(eff(m, n, x[1], x[2]), 6), -x[1] * x[2], x[0]))
    cands = []
    for kid, tm, tn, nknobs in ranked[:TOP]:
        for r in (("n", "m") if nknobs > 1 else ("h",)):
            knobs = f"r={r},s=1,d=h,k=1"
            if (key, kid, knobs) not in measured:
                cands.append([kid, knobs])
                kernels.add(kid)
    if not cands:
        continue
    rows += len(cands)
    lines.append(json.dumps({"group": {"key": key, "m": m, "n": n, "k": k, "layout": layout, "set": "train", "tags": tags,
                                       "policy": policy, "budget": budget, "seed": seed & (2**64 - 1)},
                             "candidates": cands}, separators=(",", ":")))
print("\n".join(lines))
print(f"plan30: {len(lines) - 1} groups, {rows} candidates, {len(kernels)} kernels", file=sys.stderr)
