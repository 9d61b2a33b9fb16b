#!/usr/bin/env python3
"""Keeps, of lease 42's merged side-by-side plan, the base groups where r18's first pick differs from
r10w4's (the only groups where their first picks can differ in regret): every such evaluation and
family group, and a seeded sample of the llm set's, stratified by M regime (M <= 16, <= 256, > 256).

    pick42.py ALL.jsonl R18_PICKS.jsonl R10W4_PICKS.jsonl LLM_GROUPS SEED > KEPT.jsonl
(the picks files: `cks plan sidebyside --methods deployed --pick-top 4 --other-top 0 --measured-top
0` of each model, several sets concatenated, each with its header line.)
"""
import json
import random
import sys

all_plan, r18_file, r10_file, llm_groups, seed = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5])


def firsts(path):
    out = {}
    for line in open(path).read().splitlines():
        r = json.loads(line)
        if "group" not in r:
            continue  # a header
        g = r["group"]
        out.setdefault(g["tags"]["base_key"], (g["tags"]["base_set"], g["m"], tuple(r["candidates"][0])))
    return out


a, b = firsts(r18_file), firsts(r10_file)
differ = sorted(k for k in a if k in b and a[k][2] != b[k][2])
keep = {k for k in differ if a[k][0] in ("eval", "family")}
llm = [k for k in differ if a[k][0] == "llm" and k not in keep]
strata = {}
for k in llm:
    m = a[k][1]
    strata.setdefault(0 if m <= 16 else 1 if m <= 256 else 2, []).append(k)
rng = random.Random(seed)
for s in sorted(strata):
    share = round(llm_groups * len(strata[s]) / max(1, len(llm)))
    keep.update(rng.sample(strata[s], min(share, len(strata[s]))))
lines = open(all_plan).read().splitlines()
print(lines[0])
kept, candidates, kernels, per_set = 0, 0, set(), {}
for line in lines[1:]:
    row = json.loads(line)
    tags = row["group"]["tags"]
    if tags["base_key"] in keep:
        print(line)
        kept += 1
        candidates += len(row["candidates"])
        kernels.update(c[0] for c in row["candidates"])
        per_set.setdefault(tags["base_set"], set()).add(tags["base_key"])
print(f"pick42.py: {len(keep)} base groups ({len(differ)} differ; "
      f"{', '.join(f'{s} {len(b)}' for s, b in sorted(per_set.items()))}), {kept} plan groups, {candidates} candidates, "
      f"{len(kernels)} kernels", file=sys.stderr)
