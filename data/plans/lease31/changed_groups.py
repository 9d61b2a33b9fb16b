#!/usr/bin/env python3
"""Keeps, of a side-by-side plan, the base groups where the model's top 4 is not all among the
candidates of the group's latest measured side-by-side round (plan31.sh).

    changed_groups.py REGISTRY PICKS.jsonl PLAN.jsonl > KEPT.jsonl
PICKS: the model's top 4 per group as a side-by-side plan (`cks plan sidebyside --methods deployed
--pick-top 4 --measured-top 0 --other-top 0`: its candidates are exactly the deployed top 4), or
several such plans concatenated without their headers (lease 36: every picks row of a base joins).
"""
import json
import re
import sqlite3
import sys
from collections import defaultdict

reg, picks_plan, plan = sys.argv[1:4]
lines = open(plan).read().splitlines()
bases = {}
for line in lines[1:]:
    g = json.loads(line)["group"]
    bases[g["tags"]["base_key"]] = (g["m"], g["n"], g["k"], g["layout"])
latest = defaultdict(dict)  # base -> round -> candidate set
pat = re.compile(r"^(.*)~(?:s(\d+))?r(\d+)$")
for key, kid, knobs in sqlite3.connect(reg).execute(
        "SELECT DISTINCT group_key, kernel_id, knobs FROM measurements WHERE status = 'ok' AND group_key LIKE '%~%'"):
    mt = pat.match(key)
    if mt and mt.group(1) in bases:
        latest[mt.group(1)].setdefault(int(mt.group(2) or 1), set()).add((kid, knobs))
model_picks = {}  # several picks plans may be concatenated (their header lines dropped): their picks are joined
for line in open(picks_plan).read().splitlines()[1:]:
    row = json.loads(line)
    model_picks.setdefault(row["group"]["tags"]["base_key"], set()).update(tuple(c) for c in row["candidates"])
keep = set()
for base in sorted(bases):
    picks = model_picks[base]
    rounds = latest.get(base)
    if not rounds or not picks <= rounds[max(rounds)]:
        keep.add(base)
print(lines[0])
for line in lines[1:]:
    if json.loads(line)["group"]["tags"]["base_key"] in keep:
        print(line)
print(f"changed_groups.py: {len(keep)} of {len(bases)} base groups kept", file=sys.stderr)
