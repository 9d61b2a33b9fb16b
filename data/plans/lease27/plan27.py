#!/usr/bin/env python3
"""Lease 27 plan (session 23): side-by-side round 12 of the 128 evaluation groups, 16 repetitions.

Round 11 (lease 26) measured every evaluation group's candidates (r10w4's top 4, the static first
pick, the group's 3 fastest measured kernels and r12off's first pick) in 8 interleaved repetitions;
its per-rep noise floor (0.67 %) is close to the top-4 regret it reads (0.70 %). Round 12 measures
the same candidates of the same groups in 16 repetitions, so the two rounds differ in the number of
repetitions (and the machine) only. Each repetition is one plan group (key BASE~s12rN) holding
every candidate, in round 11's order rotated by N - 1, as `cks plan sidebyside` writes them.

    python3 data/plans/lease27/plan27.py > /tmp/lease27.jsonl
    xz -9 -c /tmp/lease27.jsonl > data/plans/lease27/lease_run.jsonl.xz
"""
import json
import lzma
import sys
from collections import defaultdict
from datetime import datetime, timezone
from pathlib import Path

REPS, ROUND = 16, 12
src = Path(__file__).resolve().parents[1] / "lease26" / "lease_run.jsonl.xz"
with lzma.open(src, "rt") as f:
    lines = f.read().splitlines()
groups = defaultdict(dict)  # base key -> rep -> row
for line in lines[1:]:
    row = json.loads(line)
    tags = row["group"]["tags"]
    if tags["base_set"] == "eval":
        groups[tags["base_key"]][tags["rep"]] = row
if len(groups) != 128:
    sys.exit(f"plan27.py: expected round 11's 128 evaluation groups, found {len(groups)}")
out = [json.dumps({"plan_version": 1, "name": "lease27", "created_by": "data/plans/lease27/plan27.py",
                   "created_at": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.000Z"),
                   "derived_from": "lease26 (side-by-side round 11, evaluation groups)", "reps": REPS, "round": ROUND})]
for base in sorted(groups):
    first = groups[base][1]
    cands = first["candidates"]
    if any(sorted(map(tuple, r["candidates"])) != sorted(map(tuple, cands)) for r in groups[base].values()):
        sys.exit(f"plan27.py: {base}: round 11's repetitions do not hold the same candidates")
    for rep in range(1, REPS + 1):
        row = json.loads(json.dumps(first))
        g = row["group"]
        g["key"] = f"{base}~s{ROUND}r{rep}"
        g["tags"].update(rep=rep, reps=REPS, round=ROUND)
        g["budget"] = len(cands)
        shift = (rep - 1) % len(cands)
        row["candidates"] = cands[shift:] + cands[:shift]
        out.append(json.dumps(row, separators=(",", ":")))
print("\n".join(out))
