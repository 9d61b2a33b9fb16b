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
import collections, datetime, json, math, random, sqlite3, sys, zlib

reg, dst = sys.argv[1], sys.argv[2]
quota = int(sys.argv[3]) if len(sys.argv) > 3 else 24
max_kernels = int(sys.argv[4]) if len(sys.argv) > 4 else 250
rnd = int(sys.argv[5]) if len(sys.argv) > 5 else 108
reps = int(sys.argv[6]) if len(sys.argv) > 6 else 2

db = sqlite3.connect(f"file:{reg}?mode=ro", uri=True)
groups = {}
for key, m, n, k, layout, tags in db.execute("SELECT key, m, n, k, layout, tags_json FROM groups WHERE set_name = 'train'"):
    if math.ceil(m / 128) * math.ceil(n / 128) <= 16 and k >= 4096:
        groups[key] = dict(m=m, n=n, k=k, layout=layout, tags=json.loads(tags))
streamk = {kid for (kid,) in db.execute("SELECT kernel_id FROM kernels WHERE scheduler = 'stream_k'")}
db.execute("CREATE TEMP TABLE want(key TEXT PRIMARY KEY)")
db.executemany("INSERT INTO want VALUES (?)", [(g,) for g in groups])
best = collections.defaultdict(dict)  # group -> kernel -> (tflops, knobs)
cublas = {}
for key, kid, knobs, tf in db.execute(
        "SELECT group_key, kernel_id, knobs, tflops FROM measurements JOIN want ON want.key = group_key "
        "WHERE status = 'ok'"):
    if kid == "cublas":
        cublas[key] = max(cublas.get(key, 0), tf)
    elif tf > best[key].get(kid, (0, ""))[0]:
        best[key][kid] = (tf, knobs)


def raster(knobs):
    r = knobs.split(",")[0]
    return "r=n" if r == "r=n" else "r=m"


plan = {}
for key, ks in best.items():
    ranked = sorted(ks, key=lambda kid: -ks[kid][0])
    cands = [(kid, ks[kid][1]) for kid in ranked[:3]]
    for kid in [kid for kid in ranked if kid in streamk][:3]:
        for d in ("d=h,k=1", "d=sk,k=4", "d=sk,k=8", "d=sk,k=16"):
            for x in ("", ",x=n"):
                c = (kid, f"{raster(ks[kid][1])},s=1,{d}{x}")
                if c not in cands:
                    cands.append(c)
    if any(c[1].endswith("x=n") for c in cands):
        plan[key] = cands

by_layout = collections.defaultdict(list)
for key in sorted(plan):
    by_layout[groups[key]["layout"]].append(key)
rng = random.Random(45)
for l in by_layout:
    rng.shuffle(by_layout[l])
chosen, have, taken = [], set(), collections.Counter()
progress = True
while progress:
    progress = False
    for l in sorted(by_layout):
        ks = by_layout[l]
        if not ks or taken[l] >= quota:
            continue
        ks.sort(key=lambda g: len({c[0] for c in plan[g]} - have))
        new = {c[0] for c in plan[ks[0]]}
        if len(have | new) > max_kernels:
            continue
        g = ks.pop(0)
        chosen.append(g)
        have |= new
        taken[l] += 1
        progress = True

now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.000Z")
header = {"plan_version": 1, "name": "lease45", "created_by": "data/plans/lease45/pick45.py", "created_at": now,
          "policy": "sidebyside", "round": rnd, "reps": reps, "base_groups": len(chosen), "kernels": len(have),
          "selection": f"few-tile large-K training groups, {quota} per layout, at most {max_kernels} kernels, seed 45"}
n_rows = 0
with open(dst, "w") as f:
    f.write(json.dumps(header) + "\n")
    for key in sorted(chosen):
        g = groups[key]
        for rep in range(1, reps + 1):
            tags = dict(g["tags"], base_key=key, base_set="train", rep=rep, reps=reps, round=rnd,
                        cublas_tflops_corpus=round(cublas.get(key, 0), 3))
            cands = plan[key][:]
            random.Random(zlib.crc32(f"{key}~{rep}".encode())).shuffle(cands)
            grp = {"key": f"{key}~s{rnd}r{rep}", "m": g["m"], "n": g["n"], "k": g["k"], "layout": g["layout"],
                   "set": "sbs", "tags": tags, "policy": "sidebyside", "budget": len(cands),
                   "seed": rng.getrandbits(63), "whole": True}
            f.write(json.dumps({"group": grp, "candidates": [list(c) for c in cands]}) + "\n")
            n_rows += len(cands)
print(f"{len(chosen)} of {len(plan)} base groups, {n_rows} candidates, {len(have)} kernels; by layout "
      f"{dict(sorted(taken.items()))}", file=sys.stderr)
