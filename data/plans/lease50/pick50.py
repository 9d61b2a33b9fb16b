#!/usr/bin/env python3
"""Lease 50 (issue 16; NOTES.md "Session 41"): sliced-K kernels (deterministic parallel split-K,
KernelDesc::sliced) on the small-M, long-K training groups of lease 49.

Why: the evaluation set's tail is few-tile, long-K problems (nt 32x1536x24576 29.5 %, nn
160x256x8128 19.4 %, nt 1024x512x8192 11.4 %), where no catalogue kernel reaches cuBLAS (our best
0.64-0.91x it on the H200). The stream-K scheduler's split-K is the only split-K the catalogue has:
deterministic, each split waits for the one before (lease 47 on an H100: split-K 16 at 0.60x the
others' best), or nondeterministic (atomics, an opt-in). A sliced-K kernel runs S independent GEMMs
over K / S slices (a batched GEMM, every SM busy) into FP32 partials and sums them in a second,
fixed-order kernel: parallel and bitwise reproducible, the way cuBLAS's split-K with its
reduction kernel works, and with ping-pong's 64-row tiles too.

Per sbs group of lease 49's plan (75 training groups with M <= 64, N <= 4096, K >= 8192, every
layout; 2 repetitions): lease 49's candidates (the group's 3 fastest measured kernels and the
swapped stream-K split-K 2-8 kernels), plus the sliced-K kernels
  swapped ping-pong   64 x T x 128  (T: the smallest of 16, 32, 64 covering M)
  swapped cooperative 128 x T x 128
  ping-pong           64 x 64 x 128 and 64 x 128 x 128
(no-smem epilogue, cluster 1x1, auto stages) at S = 2, 3, 4, 6, 8, 12 and 16 slices, raster
along M (the kernel's own M). cuBLAS is measured beside every group by collect.

    pick50.py OUT.jsonl [ROUND]     ($CKS: the cks binary, default build/bin/cks)
"""
import json, lzma, os, random, sys, zlib

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import fewtile  # noqa: E402  (catalogue_show)

HERE = os.path.dirname(os.path.abspath(__file__))
dst = sys.argv[1]
rnd = int(sys.argv[2]) if len(sys.argv) > 2 else 112
SLICES = (2, 3, 4, 6, 8, 12, 16)

with lzma.open(os.path.join(HERE, "..", "lease49", "lease_run.jsonl.xz"), "rt") as f:
    header49 = json.loads(next(f))
    groups = [json.loads(line) for line in f]

ids = {}


def kid(canonical):
    if canonical not in ids:
        ids[canonical] = fewtile.catalogue_show(canonical)["id"]
    return ids[canonical]


out, rows, bases = [], 0, set()
for g in groups:
    grp = dict(g["group"])
    m, layout = grp["m"], grp["layout"]
    t = next((t for t in (16, 32, 64) if t >= m), 64)
    sliced = [f"sm90_bf16_{layout}_64x{t}x128_1x1x1_s0_pingpong+no_smem+persistent+swap+slicek",
              f"sm90_bf16_{layout}_128x{t}x128_1x1x1_s0_cooperative+no_smem+persistent+swap+slicek",
              f"sm90_bf16_{layout}_64x64x128_1x1x1_s0_pingpong+no_smem+persistent+slicek",
              f"sm90_bf16_{layout}_64x128x128_1x1x1_s0_pingpong+no_smem+persistent+slicek"]
    cands = [tuple(c) for c in g["candidates"]]
    cands += [(kid(c), f"r=m,s=1,d=sk,k={s}") for c in sliced for s in SLICES]
    base, rep = grp["tags"]["base_key"], grp["tags"]["rep"]
    bases.add(base)
    random.Random(zlib.crc32(f"{base}~{rep}~{rnd}".encode())).shuffle(cands)
    grp["key"] = f"{base}~s{rnd}r{rep}"
    grp["tags"] = dict(grp["tags"], round=rnd)
    grp["budget"] = len(cands)
    grp["seed"] = zlib.crc32(grp["key"].encode())
    out.append({"group": grp, "candidates": [list(c) for c in cands]})
    rows += len(cands)

kernels = {c[0] for g in out for c in g["candidates"]}
header = {"plan_version": 1, "name": "lease50", "created_by": "data/plans/lease50/pick50.py",
          "created_at": header49["created_at"], "policy": "sidebyside", "round": rnd, "reps": header49["reps"],
          "base_groups": len(bases), "kernels": len(kernels),
          "selection": "lease 49's groups and candidates plus sliced-K kernels (swapped ping-pong 64xTx128, swapped "
                       "cooperative 128xTx128, ping-pong 64x64x128 and 64x128x128) at 2-16 slices"}
with open(dst, "w") as f:
    f.write(json.dumps(header) + "\n")
    for g in out:
        f.write(json.dumps(g) + "\n")
print(f"{len(bases)} base groups, {len(out)} sbs groups, {rows} candidates, {len(kernels)} kernels "
      f"({len(ids)} sliced-K)", file=sys.stderr)
