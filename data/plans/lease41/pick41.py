#!/usr/bin/env python3
"""Lease 41 (issue 16, item 5): choose the orientation rule of `cks select --orientations both` on
training groups, not on the evaluation sets. Input: `cks plan sidebyside --set train --methods
deployed,both --only-differing` (every training group where both's first pick differs). Output: a
stratified subset, a quota of base groups per (layout, M regime: S <= 64 < M <= 256 < L) stratum,
chosen round robin over the strata, greedily within each (seeded shuffle, then fewest kernels
not yet in the plan) so that the plan stays
within a kernel budget that one lease compiles; the plan's header is kept, renamed.

    pick41.py IN.jsonl OUT.jsonl [QUOTA] [MAX_KERNELS] [SEED]
"""
import collections, json, random, sys

src, dst = sys.argv[1], sys.argv[2]
quota = int(sys.argv[3]) if len(sys.argv) > 3 else 34
max_kernels = int(sys.argv[4]) if len(sys.argv) > 4 else 520
seed = int(sys.argv[5]) if len(sys.argv) > 5 else 41
lines = open(src).read().splitlines()
header = json.loads(lines[0])
rows = [json.loads(l) for l in lines[1:]]
base = collections.defaultdict(list)
for r in rows:
    base[r["group"]["tags"]["base_key"]].append(r)
kernels = {b: {c[0] for r in rs for c in r["candidates"]} for b, rs in base.items()}


def stratum(b):
    m = base[b][0]["group"]["m"]
    return (base[b][0]["group"]["layout"], "S" if m <= 64 else "M" if m <= 256 else "L")


strata = collections.defaultdict(list)
for b in sorted(base):
    strata[stratum(b)].append(b)
rng = random.Random(seed)
pending = {}
for s in sorted(strata):
    pending[s] = strata[s][:]
    rng.shuffle(pending[s])
chosen, have, taken = [], set(), collections.Counter()
progress = True
while progress:  # round robin over the strata, so that the kernel budget is shared among them
    progress = False
    for s in sorted(pending):
        bs = pending[s]
        if not bs or taken[s] >= quota:
            continue
        bs.sort(key=lambda b: len(kernels[b] - have))  # stable: the shuffle breaks ties
        if len(have | kernels[bs[0]]) > max_kernels:
            continue
        b = bs.pop(0)
        chosen.append(b)
        have |= kernels[b]
        taken[s] += 1
        progress = True
keep = set(chosen)
out = [r for r in rows if r["group"]["tags"]["base_key"] in keep]
header["name"] = "lease41"
header["base_groups"] = len(keep)
header["kernels"] = len(have)
header["selection"] = f"pick41.py quota {quota} per (layout, M regime), at most {max_kernels} kernels, seed {seed}"
with open(dst, "w") as f:
    f.write(json.dumps(header) + "\n")
    for r in out:
        f.write(json.dumps(r) + "\n")
print(f"{len(keep)} base groups, {len(out)} groups, {sum(len(r['candidates']) for r in out)} candidates, "
      f"{len(have)} kernels; by stratum {dict(sorted(collections.Counter(stratum(b) for b in keep).items()))}",
      file=sys.stderr)
