#!/usr/bin/env python3
"""Lease 46 (issue 16; NOTES.md "Session 36"): the nondeterministic stream-K reduction on HELD-OUT
groups (sets eval, family, llm: never trained or tuned on), the test of the opt-in that lease 45
(training groups) is read for. Planned before lease 45 was read, so no rule is tuned to it.

Base groups: few output tiles and a large K (K >= 4096; <= 32 tiles of 128x128 in eval and family,
<= 16 in llm, whose 89 such groups would not fit the repository's last megabyte). Candidates:
  - the side-by-side plan of `cks plan sidebyside --methods deployed --pick-top 4 --measured-top 3`:
    the default's top 4 as `cks select` returns them (swapped kernels included) and the group's 3
    fastest measured kernels;
  - every stream-K candidate among those with the nondeterministic reduction (`,x=n`);
  - stream-K kernels (the default's stream-K picks, then the group's fastest measured stream-K
    kernels, then those of the nearest training group of the class, same layout: 2 in all) with the heuristic decomposition and split-K 8 and 16, deterministic and
    nondeterministic, with the raster of their first setting (along M where that is the heuristic).
Kernels of other schedulers have no reduction and are kept as they are.

    pick46.py REG CATALOGUE.csv OUT.jsonl ROUND REPS BASE_PLAN.jsonl [BASE_PLAN.jsonl ...]

REG: the merged corpus; CATALOGUE.csv: `cks catalogue list --layout all --format csv` (id ->
scheduler; swapped kernels, not listed there, through `cks catalogue show`, $CKS or build/bin/cks).
"""
import collections, csv, json, math, os, random, sqlite3, sys, zlib

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import fewtile  # noqa: E402  (data/plans/fewtile.py: catalogue_show)

reg, cat_csv, dst, rnd, reps = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
_sched = {r["id"]: r["scheduler"] for r in csv.DictReader(open(cat_csv))}


def scheduler(kid):
    if kid not in _sched:
        _sched[kid] = fewtile.catalogue_show(kid).get("scheduler", "")
    return _sched[kid]


def in_class(g, base_set):
    t = math.ceil(g["m"] / 128) * math.ceil(g["n"] / 128)
    return g["k"] >= 4096 and t <= (16 if base_set == "llm" else 32)


def raster(knobs):
    r = knobs.split(",")[0]
    return "r=n" if r == "r=n" else "r=m"


bases = {}  # base key -> (the first repetition's group, its candidates)
header = None
for path in sys.argv[6:]:
    with open(path) as f:
        first = json.loads(f.readline())
        header = header or first
        for line in f:
            rec = json.loads(line)
            g = rec["group"]
            base = g["tags"]["base_key"]
            if base not in bases and in_class(g, g["tags"]["base_set"]):
                bases[base] = (g, [tuple(c) for c in rec["candidates"]])

# Each base group's measured stream-K kernels, fastest first (best ok row of each).
db = sqlite3.connect(f"file:{reg}?mode=ro", uri=True)
train = {key: dict(m=m, n=n, k=k, layout=l) for key, m, n, k, l in db.execute(
    "SELECT key, m, n, k, layout FROM groups WHERE set_name = 'train'") if in_class(dict(m=m, n=n, k=k), "train")}


def nearest(g):
    """The training group of the class nearest in log M, N, K, same layout."""
    d = lambda t: sum(math.log(g[x] / t[x]) ** 2 for x in "mnk")
    return min((key for key, t in train.items() if t["layout"] == g["layout"]), key=lambda key: d(train[key]))


near = {base: nearest(g) for base, (g, _) in bases.items()}
db.execute("CREATE TEMP TABLE want(key TEXT PRIMARY KEY)")
db.executemany("INSERT INTO want VALUES (?)", [(b,) for b in set(bases) | set(near.values())])
best = collections.defaultdict(dict)
for key, kid, knobs, tf in db.execute(
        "SELECT group_key, measurements.kernel_id, knobs, tflops FROM measurements JOIN want ON want.key = group_key "
        "JOIN kernels ON kernels.kernel_id = measurements.kernel_id WHERE measurements.status = 'ok' AND kernels.scheduler = 'stream_k'"):
    if tf > best[key].get(kid, (0, ""))[0]:
        best[key][kid] = (tf, knobs)

plan = {}
for base, (g, cands) in bases.items():
    out = list(cands)
    sk = [c for c in cands if scheduler(c[0]) == "stream_k"]
    extra = [(c[0], c[1] + ",x=n") for c in sk if not c[1].endswith(",x=n")]
    kernels = {}  # kernel -> raster, in order: the plan's stream-K candidates, then the measured
    for c in sk:
        kernels.setdefault(c[0], raster(c[1]))
    for src in (base, near[base]):
        for kid, (tf, knobs) in sorted(best[src].items(), key=lambda kv: -kv[1][0]):
            if len(kernels) >= 2:
                break
            kernels.setdefault(kid, raster(knobs))
    for kid, r in list(kernels.items())[:2]:
        for d in ("d=h,k=1", "d=sk,k=8", "d=sk,k=16"):
            for x in ("", ",x=n"):
                extra.append((kid, f"{r},s=1,{d}{x}"))
    for e in extra:
        if e not in out:
            out.append(e)
    if len(out) > len(cands):
        plan[base] = (g, out)

n_rows = 0
rng = random.Random(46)
kernels = {c[0] for _, cs in plan.values() for c in cs}
with open(dst, "w") as f:
    f.write(json.dumps({"plan_version": 1, "name": "lease46", "created_by": "data/plans/lease46/pick46.py",
                        "created_at": header.get("created_at", ""), "policy": "sidebyside", "round": rnd, "reps": reps,
                        "base_groups": len(plan), "kernels": len(kernels),
                        "selection": "held-out (eval, family, llm) few-tile, large-K groups; the default's top 4, the "
                                     "group's 3 fastest measured, stream-K kernels with the nondeterministic reduction "
                                     "and split-K 8/16"}) + "\n")
    for base in sorted(plan):
        g, cands = plan[base]
        for rep in range(1, reps + 1):
            cs = cands[:]
            random.Random(zlib.crc32(f"{base}~{rep}".encode())).shuffle(cs)
            grp = dict(g, key=f"{base}~s{rnd}r{rep}", tags=dict(g["tags"], rep=rep, reps=reps, round=rnd),
                       budget=len(cs), seed=rng.getrandbits(63))
            f.write(json.dumps({"group": grp, "candidates": [list(c) for c in cs]}) + "\n")
            n_rows += len(cs)
by_set = collections.Counter(g["tags"]["base_set"] for g, _ in plan.values())
print(f"{len(plan)} base groups of {len(bases)} in the class ({dict(by_set)}), {n_rows} candidates, "
      f"{len(kernels)} kernels", file=sys.stderr)
