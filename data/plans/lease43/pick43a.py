#!/usr/bin/env python3
"""Lease 43, part A (issue 16, item 5): the orientation rule at M > 256 with small N, on training
groups. The default rule (lease 41) ranks the transposed problem only at M <= 256 in tn, nn and tt;
the evaluation set's one large loss from it is 3072x320x3776 (a swap wins 13 % in all four
layouts), and lease 41 measured only 19 training groups of that kind (mean +0.02 points). Input:
`cks plan sidebyside --set train --methods deployed,both --only-differing` (deployed = the default
rule, both = the unrestricted one); kept: the base groups with M > 256 and N <= NMAX that lease 41
did not measure, every layout; with MAX_NEW, greedily (round robin over the layouts, fewest
kernels not yet in the plan nor in the home compile cache KCACHE first) until MAX_NEW kernels
would have to be compiled on the machine.

    pick43a.py IN.jsonl LEASE41.jsonl.xz OUT.jsonl [NMAX] [MAX_NEW] [KCACHE]
"""
import collections, glob, json, lzma, os, sys

src, l41, dst = sys.argv[1], sys.argv[2], sys.argv[3]
nmax = int(sys.argv[4]) if len(sys.argv) > 4 else 512
max_new = int(sys.argv[5]) if len(sys.argv) > 5 else 10**9
kcache = sys.argv[6] if len(sys.argv) > 6 else ".kcache"
cached = set()
for f in glob.glob(os.path.join(kcache, "cks_*.json")):
    cached |= {k["kernel_id"] for k in json.load(open(f))["kernels"] if not k.get("error")}
done = {json.loads(l)["group"]["tags"]["base_key"] for l in lzma.open(l41, "rt").read().splitlines()[1:]}
lines = open(src).read().splitlines()
header = json.loads(lines[0])
rows = collections.defaultdict(list)
for l in lines[1:]:
    r = json.loads(l)
    g = r["group"]
    b = g["tags"]["base_key"]
    if g["m"] > 256 and g["n"] <= nmax and b not in done:
        rows[b].append(r)
need = {b: {c[0] for r in rs for c in r["candidates"]} for b, rs in rows.items()}
pending = collections.defaultdict(list)
for b in sorted(rows):
    pending[rows[b][0]["group"]["layout"]].append(b)
base, kernels, progress = [], set(), True
while progress:  # round robin over the layouts within the compile budget
    progress = False
    for l in sorted(pending):
        bs = pending[l]
        if not bs:
            continue
        bs.sort(key=lambda b: (len(need[b] - kernels - cached), b))
        if len((kernels | need[bs[0]]) - cached) > max_new:
            continue
        b = bs.pop(0)
        base.append(b)
        kernels |= need[b]
        progress = True
out = [r for b in sorted(base) for r in rows[b]]
header["name"] = "lease43a"
header["base_groups"] = len(base)
header["kernels"] = len(kernels)
header["selection"] = f"pick43a.py: M > 256, N <= {nmax}, not in lease 41, at most {max_new} kernels to compile"
with open(dst, "w") as f:
    f.write(json.dumps(header) + "\n")
    for r in out:
        f.write(json.dumps(r) + "\n")
print(f"{len(base)} base groups, {len(out)} groups, {sum(len(r['candidates']) for r in out)} candidates, "
      f"{len(kernels)} kernels ({len(kernels - cached)} not in {kcache}); by layout "
      f"{dict(sorted(collections.Counter(rows[b][0]['group']['layout'] for b in base).items()))}", file=sys.stderr)
