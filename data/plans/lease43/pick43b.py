#!/usr/bin/env python3
"""Lease 43, part B (issue 16; NOTES.md "Lease 43"): split-K 16 and 32 in few-tile, large-K training
groups. In 219 of the 290 training groups with at most 16 output tiles of 128x128 and K >= 4096, the
best kernel measured is below 0.95x cuBLAS (0.54x at worst); the catalogue's split-K stops at 8.
Split-K is a runtime knob: the plan measures the same compiled stream-K kernels with k = 16 and 32
(KnobScope::measurable admits them in plans, the selector does not rank them yet), beside each
group's fastest measured candidates and their own split-K 8, side by side (sbs groups, REPS
repetitions, round ROUND), so that the knob enters the catalogue only behind data.

Per base group: the 3 fastest measured kernels (each with its best knobs), and the 4 fastest
stream-K kernels measured in the group, each with split-K 8, 16 and 32 (raster of its best row;
along M where that is the heuristic). Groups are taken round robin over the layouts, greedily
(fewest kernels not yet in the plan) within a kernel budget.

    pick43b.py REG OUT.jsonl [GROUPS_PER_LAYOUT] [MAX_KERNELS] [ROUND] [REPS]
"""
import os, sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import fewtile  # noqa: E402  (data/plans/fewtile.py: what the few-tile plans share)

reg, dst = sys.argv[1], sys.argv[2]
quota = int(sys.argv[3]) if len(sys.argv) > 3 else 40
max_kernels = int(sys.argv[4]) if len(sys.argv) > 4 else 400
rnd = int(sys.argv[5]) if len(sys.argv) > 5 else 107
reps = int(sys.argv[6]) if len(sys.argv) > 6 else 3

groups, streamk, best, cublas = fewtile.load(reg)
plan = {}
for key, ks in best.items():
    ranked = sorted(ks, key=lambda kid: -ks[kid][0])
    cands = [(kid, ks[kid][1]) for kid in ranked[:3]]
    for kid in [kid for kid in ranked if kid in streamk][:4]:
        for s in (8, 16, 32):
            c = (kid, f"{fewtile.raster(ks[kid][1])},s=1,d=sk,k={s}")
            if c not in cands:
                cands.append(c)
    if any(c[1].endswith("k=16") for c in cands):
        plan[key] = cands

chosen, have, taken, rng = fewtile.choose(plan, groups, quota, max_kernels, 43)
n_rows = fewtile.write(dst, {"name": "lease43b", "created_by": "data/plans/lease43/pick43b.py",
                             "selection": f"few-tile large-K training groups, {quota} per layout, at most {max_kernels} kernels, seed 43"},
                       chosen, groups, plan, cublas, rnd, reps, rng)
print(f"{len(chosen)} of {len(plan)} base groups, {n_rows} candidates, {len(have)} kernels; by layout "
      f"{dict(sorted(taken.items()))}", file=sys.stderr)
