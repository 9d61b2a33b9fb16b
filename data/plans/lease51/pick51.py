#!/usr/bin/env python3
"""Lease 51 (issue 16; NOTES.md "Session 42"): the sliced-K rule's region beyond lease 50, and the
rule measured on held-out groups.

Why: lease 50's H100 pre-run (data/device_checks/20261207_session42_h100/) put sliced-K kernels at
1.21x the others' best in the 33 training groups of M <= 64, K >= 8192 with N <= 1024, and the
rule chosen there (SlicedRule: the ping-pong 64x64x128 kernel's sliced-K variant where
ceil(M/64) ceil(N/64) <= 14, at the largest slice count S with tiles x S <= 64 and K / S >= 512)
scores 0.51 % mean regret in those 75 groups against 7.75 % without sliced-K. Lease 50 says
nothing about M > 64 or K < 8192, where the evaluation set's 160x256x8128 groups (19.4 % in nn)
and the llm set's K = 7168 groups lie.

A (training, to choose the region): the training groups with M <= 256, K >= 4096 and
ceil(M/64) ceil(N/64) <= 32 that lease 50 did not measure (not M <= 64 with K >= 8192 and
N <= 4096): the group's 3 fastest measured kernels (each at its best knobs) and the sliced-K
kernels below at every slice count.
B (held out: the eval and llm groups of the same region, never used to choose the rule): the
deployed top 4 (`cks select --top 4` with the shipped model), the fastest candidate of the
group's earlier side-by-side rounds, and the same sliced-K kernels.

Sliced-K kernels (raster along M, swizzle 1, S = 2, 3, 4, 6, 8, 12, 16): ping-pong 64x64x128 and
64x128x128 (no-smem epilogue, persistent, cluster 1x1, auto stages), and the swapped ping-pong
64xTx128 (T the smallest of 16, 32, 64 covering M, else 64). 3 repetitions a group, round 113.

    pick51.py REGISTRY OUT.jsonl [ROUND]   (REGISTRY: the merged corpus, `cks data merge`;
                                            $CKS: the cks binary; $CKS_MODEL: the model)
"""
import collections, datetime, json, math, os, sqlite3, subprocess, sys, zlib

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import fewtile  # noqa: E402

reg, dst = sys.argv[1], sys.argv[2]
rnd = int(sys.argv[3]) if len(sys.argv) > 3 else 113
REPS, SLICES = 3, (2, 3, 4, 6, 8, 12, 16)
CKS = os.environ.get("CKS", "build/bin/cks")
db = sqlite3.connect(f"file:{reg}?mode=ro", uri=True)
REGION = "k >= 4096 AND m <= 256 AND ((m + 63) / 64) * ((n + 63) / 64) <= 32"
LEASE50 = "(m <= 64 AND k >= 8192 AND n <= 4096)"

ids = {}


def kid(canonical):
    if canonical not in ids:
        ids[canonical] = fewtile.catalogue_show(canonical)["id"]
    return ids[canonical]


def sliced(m, layout):
    t = next((t for t in (16, 32, 64) if t >= m), 64)
    ks = [f"sm90_bf16_{layout}_64x64x128_1x1x1_s0_pingpong+no_smem+persistent+slicek",
          f"sm90_bf16_{layout}_64x128x128_1x1x1_s0_pingpong+no_smem+persistent+slicek",
          f"sm90_bf16_{layout}_64x{t}x128_1x1x1_s0_pingpong+no_smem+persistent+swap+slicek"]
    return [(kid(c), f"r=m,s=1,d=sk,k={s}") for c in ks for s in SLICES]


def fastest(keys, n):
    """The n fastest distinct kernels measured in any of `keys` (each at its best knobs)."""
    best = {}
    for key in keys:
        for k, kn, tf in db.execute("SELECT kernel_id, knobs, tflops FROM measurements INDEXED BY measurements_candidate WHERE group_key = ? AND "
                                    "status = 'ok' AND kernel_id != 'cublas'", (key,)):
            if tf > best.get(k, (0, ""))[0]:
                best[k] = (tf, kn)
    return [(k, best[k][1]) for k in sorted(best, key=lambda k: -best[k][0])[:n]]


def deployed(m, n, k, layout):
    out = subprocess.run([CKS, "select", "--m", str(m), "--n", str(n), "--k", str(k), "--layout", layout, "--top", "4",
                          "--format", "json"], capture_output=True, text=True, check=True)
    return [(r["kernel_id"], r["knobs"]) for r in json.loads(out.stdout)]


groups = []  # (base dims, set, tags, candidates)
train = db.execute(f"SELECT key, m, n, k, layout, tags_json FROM groups WHERE set_name = 'train' AND {REGION} "
                   f"AND NOT {LEASE50} ORDER BY key").fetchall()
for key, m, n, k, layout, tags in train:
    groups.append((key, m, n, k, layout, "train", json.loads(tags), fastest([key], 3)))
held = db.execute(f"SELECT key, m, n, k, layout, set_name, tags_json FROM groups WHERE set_name IN ('eval', 'llm') "
                  f"AND {REGION} ORDER BY set_name, key").fetchall()
sbs_keys = collections.defaultdict(list)
for (gk,) in db.execute("SELECT key FROM groups WHERE set_name = 'sbs'"):
    sbs_keys[gk.split("~")[0]].append(gk)
for i, (key, m, n, k, layout, set_name, tags) in enumerate(held):
    print(f"pick51: select {i + 1}/{len(held)} {key}", file=sys.stderr)
    cands = deployed(m, n, k, layout)
    cands += [c for c in fastest(sbs_keys.get(key, []) or [key], 1) if c not in cands]
    groups.append((key, m, n, k, layout, set_name, json.loads(tags), cands))

out, kernels, rows = [], set(), 0
for key, m, n, k, layout, set_name, tags, cands in groups:
    cands = list(dict.fromkeys(cands + sliced(m, layout)))
    kernels.update(c[0] for c in cands)
    for rep in range(1, REPS + 1):
        t = dict(tags, base_key=key, base_set=set_name, rep=rep, reps=REPS, round=rnd)
        g = dict(key=f"{key}~s{rnd}r{rep}", m=m, n=n, k=k, layout=layout, set="sbs", tags=t, policy="sidebyside",
                 budget=len(cands), seed=zlib.crc32(f"{key}~{rnd}~{rep}".encode()), whole=True)
        out.append(dict(group=g, candidates=[list(c) for c in cands]))
        rows += len(cands)
header = dict(plan_version=1, name="lease51", created_by="data/plans/lease51/pick51.py",
              created_at="2026-12-07T06:00:00.000Z", policy="sidebyside", round=rnd, reps=REPS,
              base_groups=len(groups), kernels=len(kernels),
              selection="A: training groups of M <= 256, K >= 4096, <= 32 64x64 tiles beyond lease 50 (3 fastest "
                        "measured + sliced-K); B: the eval and llm groups there (deployed top 4, the earlier rounds' "
                        "fastest + sliced-K)")
with open(dst, "w") as f:
    f.write(json.dumps(header) + "\n")
    for g in out:
        f.write(json.dumps(g) + "\n")
print(f"pick51: {len(groups)} base groups ({len(train)} train, {len(held)} held out), {len(out)} sbs groups, "
      f"{rows} candidates, {len(kernels)} kernels -> {dst}", file=sys.stderr)
