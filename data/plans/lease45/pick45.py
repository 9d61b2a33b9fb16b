#!/usr/bin/env python3
"""Lease 45 (issue 16; NOTES.md "Session 35"): the stream-K reduction in few-tile, large-K training
groups, measured like the corpus (the harness, side by side), before any feature or catalogue
change. Session 35's probe found the nondeterministic reduction (`x=n`, KnobScope::measurable)
1.18x the deterministic best in 12 such groups, timed one launch at a time; this plan measures it
with the harness in lease 43 B's groups (cuBLAS 1.24x our best there).

Per base group: the 3 fastest measured kernels (each with its best knobs), and the 3 fastest
stream-K kernels measured in the group, each with the heuristic decomposition and split-K 4, 8
and 16, deterministic and nondeterministic (raster of its best row; along M where that is the
heuristic). Small on purpose: the repository is at its 512 MiB limit (NOTES.md "Session 35"). Groups round robin over the layouts, greedily (fewest kernels not yet in
the plan) within a kernel budget.

    pick45.py REG OUT.jsonl [GROUPS_PER_LAYOUT] [MAX_KERNELS] [ROUND] [REPS]
"""
import os, sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import fewtile  # noqa: E402  (data/plans/fewtile.py: what the few-tile plans share)

reg, dst = sys.argv[1], sys.argv[2]
quota = int(sys.argv[3]) if len(sys.argv) > 3 else 24
max_kernels = int(sys.argv[4]) if len(sys.argv) > 4 else 250
rnd = int(sys.argv[5]) if len(sys.argv) > 5 else 108
reps = int(sys.argv[6]) if len(sys.argv) > 6 else 2

groups, streamk, best, cublas = fewtile.load(reg)
plan = {}
for key, ks in best.items():
    ranked = sorted(ks, key=lambda kid: -ks[kid][0])
    cands = [(kid, ks[kid][1]) for kid in ranked[:3]]
    for kid in [kid for kid in ranked if kid in streamk][:3]:
        for d in ("d=h,k=1", "d=sk,k=4", "d=sk,k=8", "d=sk,k=16"):
            for x in ("", ",x=n"):
                c = (kid, f"{fewtile.raster(ks[kid][1])},s=1,{d}{x}")
                if c not in cands:
                    cands.append(c)
    if any(c[1].endswith("x=n") for c in cands):
        plan[key] = cands

chosen, have, taken, rng = fewtile.choose(plan, groups, quota, max_kernels, 45)
n_rows = fewtile.write(dst, {"name": "lease45", "created_by": "data/plans/lease45/pick45.py",
                             "selection": f"few-tile large-K training groups, {quota} per layout, at most {max_kernels} kernels, seed 45"},
                       chosen, groups, plan, cublas, rnd, reps, rng)
print(f"{len(chosen)} of {len(plan)} base groups, {n_rows} candidates, {len(have)} kernels; by layout "
      f"{dict(sorted(taken.items()))}", file=sys.stderr)
