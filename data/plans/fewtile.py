"""What the few-tile, large-K plans share (lease 43 B: split-K 16/32; lease 45: the stream-K
reduction): the training groups with at most 16 output tiles of 128x128 and K >= 4096 and their
fastest measured kernels; the round-robin choice of base groups within a kernel budget; the
side-by-side plan file; and, for the reads, each candidate's median over its repetitions.
Imported by data/plans/lease43/pick43b.py, read43b.py, data/plans/lease45/pick45.py, read45.py,
data/plans/lease46/pick46.py, data/plans/lease47/pick47.py and data/plans/lease49/pick49.py, read49.py.
"""
import collections, csv, datetime, json, math, os, random, sqlite3, statistics, subprocess, zlib


def catalogue_show(ref):
    """`cks catalogue show REF` (a kernel ID or canonical descriptor, swapped kernels included) as
    {field: value}; $CKS or build/bin/cks. Exits with cks's error line when REF is not a kernel."""
    out = subprocess.run([os.environ.get("CKS", "build/bin/cks"), "catalogue", "show", ref, "--format", "csv"],
                         capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit(f"{ref}: {out.stderr.strip()}")
    return {r[0]: r[1] for r in csv.reader(out.stdout.splitlines()) if len(r) > 1}


def load(reg):
    """(groups, streamk, best, cublas): the few-tile, large-K training groups {key: dims and tags},
    the stream-K kernel IDs, per group {kernel: (best TFLOP/s, its knobs)}, per group cuBLAS's best."""
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
    return groups, streamk, best, cublas


def train_groups(reg, where):
    """(groups, best, cublas) for the training groups matching the SQL condition `where` (on m, n,
    k, layout): {key: dims and tags}, per group {kernel: (best TFLOP/s, its knobs)}, per group
    cuBLAS's best. Used by the plans that pick their groups by shape (leases 47 and 49)."""
    db = sqlite3.connect(f"file:{reg}?mode=ro", uri=True)
    groups = {}
    for key, m, n, k, layout, tags in db.execute(
            f"SELECT key, m, n, k, layout, tags_json FROM groups WHERE set_name = 'train' AND {where}"):
        groups[key] = dict(m=m, n=n, k=k, layout=layout, tags=json.loads(tags))
    db.execute("CREATE TEMP TABLE want(key TEXT PRIMARY KEY)")
    db.executemany("INSERT INTO want VALUES (?)", [(g,) for g in groups])
    best = collections.defaultdict(dict)
    cublas = {}
    for key, kid, knobs, tf in db.execute("SELECT group_key, kernel_id, knobs, tflops FROM measurements JOIN want ON "
                                          "want.key = group_key WHERE status = 'ok'"):
        if kid == "cublas":
            cublas[key] = max(cublas.get(key, 0), tf)
        elif tf > best[key].get(kid, (0, ""))[0]:
            best[key][kid] = (tf, knobs)
    return groups, best, cublas


def raster(knobs):
    """The raster of a knob string for a stream-K setting: along N where it is, else along M."""
    r = knobs.split(",")[0]
    return "r=n" if r == "r=n" else "r=m"


def choose(plan, groups, quota, max_kernels, seed):
    """Base groups of `plan` round robin over the layouts, greedily (fewest kernels not yet in the
    plan first) within `max_kernels`, at most `quota` a layout. Returns (chosen, kernels, taken per
    layout, rng): the rng goes on to seed the plan's groups (write)."""
    by_layout = collections.defaultdict(list)
    for key in sorted(plan):
        by_layout[groups[key]["layout"]].append(key)
    rng = random.Random(seed)
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
    return chosen, have, taken, rng


def write(dst, header, chosen, groups, plan, cublas, rnd, reps, rng):
    """The side-by-side plan: `header` (name, created_by, selection) completed, then per base group
    `reps` sbs groups of its candidates, each repetition in its own seeded order. Returns the rows."""
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.000Z")
    header = {"plan_version": 1, "name": header["name"], "created_by": header["created_by"], "created_at": now,
              "policy": "sidebyside", "round": rnd, "reps": reps, "base_groups": len(chosen),
              "kernels": len({c[0] for g in chosen for c in plan[g]}), "selection": header["selection"]}
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
    return n_rows


def medians(reg, rnd):
    """{base: ((m, n, k, layout), {(kernel, knobs): median TFLOP/s})} of round `rnd`'s sbs groups:
    each candidate's median over its repetitions, rows whose SM clock is more than 30 MHz from the
    base group's median left out."""
    db = sqlite3.connect(f"file:{reg}?mode=ro", uri=True)
    dims = {key.split("~")[0]: (m, n, k, layout) for key, m, n, k, layout in db.execute(
        "SELECT key, m, n, k, layout FROM groups WHERE set_name = 'sbs' AND key LIKE ?", (f"%~s{rnd}r%",))}
    rows = collections.defaultdict(list)  # base -> [(kernel, knobs, tflops, clock)]
    for gk, kid, knobs, tf, clk in db.execute(
            "SELECT group_key, kernel_id, knobs, tflops, sm_clock_mhz FROM measurements WHERE status = 'ok' AND group_key LIKE ?",
            (f"%~s{rnd}r%",)):
        rows[gk.split("~")[0]].append((kid, knobs, tf, clk))
    out = {}
    for base, rs in sorted(rows.items()):
        med_clk = statistics.median(r[3] for r in rs)
        by = collections.defaultdict(list)
        for kid, knobs, tf, clk in rs:
            if abs(clk - med_clk) <= 30:
                by[(kid, knobs)].append(tf)
        out[base] = (dims[base], {c: statistics.median(v) for c, v in by.items()})
    return out


def gm(v):
    """Geometric mean of the positive, non-NaN values (NaN if none)."""
    v = [x for x in v if x > 0 and not math.isnan(x)]
    return math.exp(sum(map(math.log, v)) / len(v)) if v else float("nan")


def tiles(m, n):
    return math.ceil(m / 128) * math.ceil(n / 128)


SLICES = [("all", lambda r: True), ("tiles <= 4", lambda r: r["tiles"] <= 4), ("tiles 5-16", lambda r: r["tiles"] > 4),
          ("K >= 8192", lambda r: r["k"] >= 8192), ("K < 8192", lambda r: r["k"] < 8192)]
SLICES += [(f"layout {l}", (lambda l: lambda r: r["layout"] == l)(l)) for l in ("tn", "nt", "nn", "tt")]
# The small-M, long-K groups' slices (leases 49 and 50).
SMALL_M_SLICES = [("all", lambda r: True), ("N <= 1024", lambda r: r["n"] <= 1024),
                  ("N 1025-4096", lambda r: r["n"] > 1024), ("K >= 16384", lambda r: r["k"] >= 16384),
                  ("K < 16384", lambda r: r["k"] < 16384), ("M <= 32", lambda r: r["m"] <= 32),
                  ("M 33-64", lambda r: r["m"] > 32)]
SMALL_M_SLICES += [(f"layout {l}", (lambda l: lambda r: r["layout"] == l)(l)) for l in ("tn", "nt", "nn", "tt")]
