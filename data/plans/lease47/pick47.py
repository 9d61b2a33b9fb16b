#!/usr/bin/env python3
"""Lease 47 (issue 16; NOTES.md "Session 36"): split-K for small-M, large-K problems through the
swapped orientation, on training groups.

Why: in the training groups with M <= 128, N <= 1024 and K >= 4096 (84 groups) the best measured
kernel runs 0.76x cuBLAS (median; 69 of 84 below 0.9), and session 36's held-out pre-run (lease
46, H100) found the same 15-25 % gap in real decode-like shapes (16-128 x 256-576 x 7168). Their
best kernels are small-tile (64x16) persistent ones: few CTAs (e.g. 16x512: 32 tiles on 132 SMs)
and no split-K, which only the stream-K scheduler offers, and only with the cooperative mainloop
(tile M 128), which wastes most of a tile when M is 16-64. The swapped orientation (D^T = B^T A^T:
M' = N, N' = M) fits that tile: 128 x {16, 32, 64} cooperative stream-K kernels with split-K 8-32
give 4-8 output tiles x 8-32 splits, enough CTAs, and the nondeterministic reduction (session 36:
never slower) keeps many splits cheap.

Per base group: its 3 fastest measured kernels (best knobs each), and the swapped cooperative
stream-K kernels 128 x T x {64, 128} (T the smallest of 16, 32, 64 that covers M, 64 above),
no_smem epilogue, cluster 1x1, raster along M' with the heuristic decomposition and split-K 8, 16
and 32, nondeterministic, and the heuristic and split-K 16 deterministic (the reduction's own
share). Training groups only; groups round robin over the layouts.

    pick47.py REG OUT.jsonl [ROUND] [REPS]     ($CKS: the cks binary, default build/bin/cks)
"""
import os, sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import fewtile  # noqa: E402  (the side-by-side plan writer, catalogue_show)

reg, dst = sys.argv[1], sys.argv[2]
rnd = int(sys.argv[3]) if len(sys.argv) > 3 else 110
reps = int(sys.argv[4]) if len(sys.argv) > 4 else 2


def kernel_id(canonical):
    return fewtile.catalogue_show(canonical)["id"]


groups, best, cublas = fewtile.train_groups(reg, "m <= 128 AND n <= 1024 AND k >= 4096")

ids = {}
plan = {}
for key, g in groups.items():
    ranked = sorted(best[key], key=lambda kid: -best[key][kid][0])
    cands = [(kid, best[key][kid][1]) for kid in ranked[:3]]
    t = next((t for t in (16, 32, 64) if t >= g["m"]), 64)
    for tk in (64, 128):
        canonical = f"sm90_bf16_{g['layout']}_128x{t}x{tk}_1x1x1_s0_cooperative+no_smem+stream_k+swap"
        kid = ids.setdefault(canonical, kernel_id(canonical))
        for knobs in ("r=m,s=1,d=h,k=1,x=n", "r=m,s=1,d=sk,k=8,x=n", "r=m,s=1,d=sk,k=16,x=n", "r=m,s=1,d=sk,k=32,x=n",
                      "r=m,s=1,d=h,k=1", "r=m,s=1,d=sk,k=16"):
            cands.append((kid, knobs))
    plan[key] = cands

# Every group of the class (84 at planning time): round robin over the layouts within the budget.
chosen, have, taken, rng = fewtile.choose(plan, groups, 1000, 1000, 47)
n_rows = fewtile.write(dst, {"name": "lease47", "created_by": "data/plans/lease47/pick47.py",
                             "selection": "training groups with M <= 128, N <= 1024, K >= 4096; swapped cooperative "
                                          "stream-K 128xT kernels with split-K, seed 47"},
                       chosen, groups, plan, cublas, rnd, reps, rng)
print(f"{len(chosen)} base groups, {n_rows} candidates, {len(have)} kernels ({len(ids)} swapped stream-K); by layout "
      f"{dict(sorted(taken.items()))}", file=sys.stderr)
