#!/usr/bin/env python3
"""Which knob variants should the runtime's autotune mode time? An offline study on a registry.

The runtime bundle (`cks bundle --top K --variants V`, src/runtime/bundle_build.cpp) keeps a
problem's model picks and, per pick, up to V other knob settings of the same compiled kernel
(raster r, max swizzle s, decomposition d, splits k); autotune mode times them all on the first
call and keeps the fastest. Variants cost no compile, only first-call tuning time. This script
simulates candidate sets on a set's measured groups and reports the best-of-set regret:

- ranking: the model's top DEPTH (256, bundle_build's kVariantDepth) of each group's problem,
  through the selector's C API (the Python extension `cks._cks` of build/python, one model load;
  `--ranker cli` runs `build/bin/cks select --top DEPTH` once per problem instead, ~10x slower;
  `--check-cli N` compares the two on N problems). Rankings are cached in --cache (keyed by the
  model file's size and mtime and DEPTH), so a re-run on a newer registry only ranks new problems.
- base: the top K *distinct kernels* (each at its best-ranked knobs; `distinct`), or the first K
  ranking entries as bundle_build takes them today (`ranks`: two entries can be the same kernel
  with another raster; its `model` policy is bundle_build's loop exactly, the other policies add
  variants once per distinct kernel around its best-ranked knobs); K in --ks (1, 2, 4).
- policies, V in --vs (0..4) variants per distinct base kernel, never a candidate already in the set:
  model   the kernel's next entries in the model's order (bundle_build's --variants);
  raster  the kernel's entries whose raster differs from the pick's first (model order), then the rest;
  flip    a fixed list around the pick's knobs (r0, s0), valid settings only, whether or not the
          model ranks them: (other raster, s0), (other raster, s=4), (other raster, s=8),
          (other raster, s=2), (r0, s=4), (r0, s=8) (for stream-K kernels, s is always 1: the
          other raster, then the model's order); "other raster" of r=h is m, then n;
  learned the same kind of fixed list, ordered by how often each (raster flipped?, swizzle) change
          is the best variant of the pick in the --learn-set groups (default train; printed).
- regret of a group = 1 - T* / min over the set of T, T = median of mean_us over the candidate's
  ok rows (repetitions pooled; `--run-normalize` scales each run by the group's cuBLAS ratio as
  model training does), T* = the fastest measured kernel of the group (cuBLAS not counted; a set
  "+cuBLAS" row in the summary adds cuBLAS to the set as autotune does, regret floored at 0).
  "full": only groups where every candidate of the set has an ok row (coverage = their share);
  "ignore-unmeasured": the best of the set's measured members (groups with none are dropped) --
  optimistic for the unmeasured candidates' sake is NOT assumed, it only ignores them.
  "common": the full version restricted to the groups where every cell's set of that K (every
  base, policy and V) is fully measured: the same groups in every cell of a K, like with like.
- splits: M regime (M <= 64, 65-2047, >= 2048) and size (2MNK >= 1e11 "big"); for the training
  set also whether the model saw the group (its evidence list) or not.

    PYTHONPATH=build/python python3 scripts/analysis/autotune_variants.py \\
        --registry /work/l20/corpus.db --model /work/aside/models/default.json --set train \\
        --cache /tmp/atv_rank_cache.json.xz --csv /tmp/atv_train.csv > /tmp/atv_train.md

(--set llm for the check set; --md-only-k 4 limits the split tables to one K.)
"""
import argparse
import csv
import json
import lzma
import os
import sqlite3
import statistics as st
import subprocess
import sys
import time
from collections import Counter, defaultdict

ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
ap.add_argument('--registry', required=True)
ap.add_argument('--model', required=True)
ap.add_argument('--set', default='train')
ap.add_argument('--learn-set', default='train', help="groups that order the 'learned' policy (default train)")
ap.add_argument('--layouts', default='', help='comma-separated layouts (default all)')
ap.add_argument('--depth', type=int, default=256)
ap.add_argument('--ks', default='1,2,4')
ap.add_argument('--vs', default='0,1,2,3,4')
ap.add_argument('--policies', default='model,raster,flip,learned')
ap.add_argument('--bases', default='distinct,ranks')
ap.add_argument('--ranker', choices=('python', 'cli'), default='python')
ap.add_argument('--cks', default='build/bin/cks')
ap.add_argument('--check-cli', type=int, default=0, help='compare the python ranking with cks select on N problems')
ap.add_argument('--cache', default='', help='ranking cache file (.json.xz)')
ap.add_argument('--run-normalize', action='store_true')
ap.add_argument('--csv', default='', help='every cell (base, policy, K, V, split, version) as CSV')
ap.add_argument('--md-only-k', type=int, default=4, help='K of the split tables (0: every K)')
a = ap.parse_args()
KS = [int(x) for x in a.ks.split(',')]
VS = [int(x) for x in a.vs.split(',')]
POLICIES = a.policies.split(',')
BASES = a.bases.split(',')
t0 = time.time()


def log(*x):
    print(f'[{time.time() - t0:6.1f} s]', *x, file=sys.stderr, flush=True)


def parse_knobs(s):
    d = dict(p.split('=', 1) for p in s.split(','))
    return d['r'], int(d['s']), d['d'], int(d['k'])


def knob_text(r, s, d, k):
    return f'r={r},s={s},d={d},k={k}'


db = sqlite3.connect(f'file:{a.registry}?mode=ro', uri=True)

# ---- groups -----------------------------------------------------------------------------------
def groups_of(setname):
    q = 'select key, m, n, k, layout from groups where set_name = ?'
    rows = db.execute(q, (setname,)).fetchall()
    lay = set(a.layouts.split(',')) if a.layouts else None
    return [r for r in rows if lay is None or r[4] in lay]


# ---- rankings ---------------------------------------------------------------------------------
st_model = os.stat(a.model)
cache_id = f'{os.path.realpath(a.model)}:{st_model.st_size}:{int(st_model.st_mtime)}:{a.depth}'
cache = {}
if a.cache and os.path.exists(a.cache):
    c = json.loads(lzma.decompress(open(a.cache, 'rb').read()))
    if c.get('id') == cache_id:
        cache = c['rankings']
    else:
        log('ranking cache is for another model or depth: ignored')
cache_dirty = False
_selector = None


def rank_python(m, n, k, layout):
    global _selector
    if _selector is None:
        import cks  # build/python on PYTHONPATH
        _selector = cks.Selector(a.model)
    return [(s.kernel_id, s.knobs_text) for s in _selector.select(m, n, k, layout, a.depth)]


def rank_cli(m, n, k, layout):
    out = subprocess.run([a.cks, 'select', '--m', str(m), '--n', str(n), '--k', str(k), '--layout', layout,
                          '--top', str(a.depth), '--model', a.model, '-o', 'csv'],
                         check=True, capture_output=True, text=True).stdout
    return [(r['kernel_id'], r['knobs']) for r in csv.DictReader(out.splitlines())]


def ranking(m, n, k, layout):
    global cache_dirty
    key = f'{layout}:{m}x{n}x{k}'
    if key not in cache:
        cache[key] = (rank_python if a.ranker == 'python' else rank_cli)(m, n, k, layout)
        cache_dirty = True
    return cache[key]


# ---- measurements -----------------------------------------------------------------------------
def group_times(key):
    """{(kernel, knobs): median time}, best kernel time, cuBLAS median time (None if none)."""
    rows = db.execute("select kernel_id, knobs, mean_us, run_uuid from measurements indexed by measurements_candidate "
                      "where group_key = ? and status = 'ok' and mean_us > 0", (key,)).fetchall()
    factor = defaultdict(lambda: 1.0)
    if a.run_normalize:  # as src/models/dataset.cpp: reference = the run with a cuBLAS row and the most rows
        cub, cnt = defaultdict(list), Counter()
        for kid, kn, t, run in rows:
            (cub[run].append(t) if kid.startswith('cublas') else cnt.update([run]))
        ref = max((r for r in cub), key=lambda r: cnt[r], default=None)
        if ref is not None:
            tref = st.mean(cub[ref])
            for r, v in cub.items():
                f = st.mean(v) / tref  # time ratio run / ref -> divide times by it
                if abs(f - 1) >= 0.01:
                    factor[r] = min(max(f, 1 / 1.25), 1.25)
    cand, cub = defaultdict(list), []
    for kid, kn, t, run in rows:
        (cub.append(t / factor[run]) if kid.startswith('cublas') else cand[(kid, kn)].append(t / factor[run]))
    times = {c: st.median(v) for c, v in cand.items()}
    return times, (min(times.values()) if times else None), (st.median(cub) if cub else None)


# ---- kernel knob validity (src/catalogue/knobs.cpp) -------------------------------------------
def kernel_kind(canonical):
    # sm90_bf16_tn_128x208x64_2x1x1_s0_pingpong+tma_ws+persistent -> (mainloop, scheduler)
    tail = canonical.split('_s', 1)[1].split('_', 1)[1] if '_s' in canonical else canonical
    parts = tail.split('+')
    return parts[0], parts[-1]


kinds = {kid: kernel_kind(c) for kid, c in db.execute('select kernel_id, canonical from kernels')}


def valid_setting(kid, ranked_kind, r, s, d, k):
    ml, sc = kinds.get(kid, ranked_kind.get(kid, ('?', '?')))
    if ml == 'tma_ws':
        return r == 'h' and s == 1 and d == 'h' and k == 1
    if sc == 'persistent':
        return d == 'h' and k == 1 and s in (1, 2, 4, 8)
    if sc == 'stream_k':
        return s == 1
    return False


def other_rasters(r):
    return {'m': ['n'], 'n': ['m'], 'h': ['m', 'n']}[r]


# ---- candidate sets ---------------------------------------------------------------------------
def base_picks(rank, K, base):
    if base == 'ranks':
        return list(rank[:K])
    out, seen = [], set()
    for kid, kn in rank:
        if kid not in seen:
            seen.add(kid)
            out.append((kid, kn))
            if len(out) == K:
                break
    return out


def fixed_list(kid, kn, order, rank_same):
    """Knob settings of kernel kid around its pick's knobs kn: order = [(flip?, swizzle or None)]."""
    r0, s0, d0, k0 = parse_knobs(kn)
    out = []
    ml, sc = kinds.get(kid, ('?', '?'))
    if sc == 'stream_k' or ml == 'tma_ws':  # no swizzle choice: other raster, then the model's order
        if ml != 'tma_ws':
            out += [knob_text(r, 1, d0, k0) for r in other_rasters(r0)]
        return out + [x for x in rank_same if x not in out]
    for flip, s in order:
        s = s0 if s is None else s
        for r in (other_rasters(r0) if flip else [r0]):
            t = knob_text(r, s, d0, k0)
            if t != kn and t not in out and valid_setting(kid, {}, r, s, d0, k0):
                out.append(t)
    return out + [x for x in rank_same if x not in out]


FLIP_ORDER = [(True, None), (True, 4), (True, 8), (True, 2), (False, 4), (False, 8), (True, 1), (False, 2), (False, 1)]
learned_order = None  # set below


def variants(policy, kid, kn, rank, exclude):
    same = [x for (k2, x) in rank if k2 == kid and x != kn]
    if policy == 'model':
        lst = same
    elif policy == 'raster':
        r0 = parse_knobs(kn)[0]
        lst = [x for x in same if parse_knobs(x)[0] != r0] + [x for x in same if parse_knobs(x)[0] == r0]
    elif policy == 'flip':
        lst = fixed_list(kid, kn, FLIP_ORDER, same)
    elif policy == 'learned':
        lst = fixed_list(kid, kn, learned_order, same)
    else:
        raise SystemExit(f'unknown policy {policy}')
    return [(kid, x) for x in lst if (kid, x) not in exclude]


def candidate_set(rank, K, V, policy, base):
    picks = base_picks(rank, K, base)
    out = list(dict.fromkeys(picks))
    if V == 0:
        return out
    if base == 'ranks' and policy == 'model':
        # bundle_build exactly: per pick i, the next V entries of its kernel at ranks > K
        for kid, kn in picks:
            added = 0
            for k2, x in rank[K:]:
                if added >= V:
                    break
                if k2 == kid:
                    added += 1
                    if (k2, x) not in out:
                        out.append((k2, x))
        return out
    done = set()
    for kid, kn in picks:
        if kid in done:  # ranks base: a kernel's variants once, around its best-ranked knobs
            continue
        done.add(kid)
        out += variants(policy, kid, kn, rank, set(out))[:V]
    return out


# ---- learn the fixed order on the learn set ---------------------------------------------------
def learn_order(groups):
    """Per training group: the top-1 pick's kernel; among its measured settings of the same d/k,
    which (raster flipped?, swizzle) change holds the fastest; count wins and gains."""
    wins, gain = Counter(), defaultdict(float)
    n = 0
    for key, m, nn, k, layout in groups:
        rank = ranking(m, nn, k, layout)
        if not rank:
            continue
        kid, kn = rank[0]
        ml, sc = kinds.get(kid, ('?', '?'))
        if sc != 'persistent' or ml == 'tma_ws':
            continue
        times, best, _ = group_times(key)
        if (kid, kn) not in times:
            continue
        r0, s0, d0, k0 = parse_knobs(kn)
        var = {}
        for r in ('m', 'n', 'h'):
            for s in (1, 2, 4, 8):
                t = times.get((kid, knob_text(r, s, d0, k0)))
                if t is not None and (r, s) != (r0, s0):
                    var[(r in other_rasters(r0), s)] = min(t, var.get((r in other_rasters(r0), s), 1e30))
        if len(var) < 4:  # too few of the pick's settings measured to say which is best
            continue
        n += 1
        (flip, s), t = min(var.items(), key=lambda x: x[1])
        if t < times[(kid, kn)]:
            wins[(flip, s)] += 1
            gain[(flip, s)] += 1 - t / times[(kid, kn)]
    order = sorted(set(FLIP_ORDER) - {(True, None)}, key=lambda x: -gain[x])
    print(f'\n`learned` order from {n} {a.learn_set} groups whose top-1 persistent kernel has >= 4 other r/s settings measured '
          f'(win count, summed gain over the pick\'s knobs): ' +
          ', '.join(f'{"other r" if f else "same r"} s={s} ({wins[(f, s)]}, {100 * gain[(f, s)]:.0f} %)' for f, s in order))
    return order


# ---- main -------------------------------------------------------------------------------------
groups = groups_of(a.set)
log(f'{len(groups)} groups of set {a.set}')
probs = sorted({(m, n, k, l) for _, m, n, k, l in groups} |
               ({(m, n, k, l) for _, m, n, k, l in groups_of(a.learn_set)} if 'learned' in POLICIES else set()))
todo = [p for p in probs if f'{p[3]}:{p[0]}x{p[1]}x{p[2]}' not in cache]
log(f'{len(probs)} problems, {len(todo)} to rank ({a.ranker})')
for i, (m, n, k, l) in enumerate(todo):
    ranking(m, n, k, l)
    if i % 500 == 499:
        log(f'ranked {i + 1}')
if a.check_cli:
    bad = 0
    for m, n, k, l in probs[::max(1, len(probs) // a.check_cli)][:a.check_cli]:
        bad += rank_cli(m, n, k, l) != [tuple(x) for x in ranking(m, n, k, l)]
    print(f'ranking check: python vs `cks select` differ on {bad} of {a.check_cli} problems')
if a.cache and cache_dirty:
    open(a.cache, 'wb').write(lzma.compress(json.dumps({'id': cache_id, 'rankings': cache}).encode()))
cache = {kk: [tuple(x) for x in v] for kk, v in cache.items()}
log('ranked')

if 'learned' in POLICIES:
    learned_order = learn_order(groups_of(a.learn_set))

ev = {(g[0], g[1], g[2], g[3]) for g in json.load(open(a.model))['evidence']['groups']}


def splits_of(m, n, k, layout):
    out = ['all', 'M<=64' if m <= 64 else 'M 65-2047' if m < 2048 else 'M>=2048',
           'big (2MNK>=1e11)' if 2 * m * n * k >= 1e11 else 'small (2MNK<1e11)']
    out.append('model saw it' if (layout, m, n, k) in ev else 'new to the model')
    return out


cells = [(b, p, K, V) for b in BASES for p in POLICIES for K in KS for V in VS]
full, ign, comm, cub = (defaultdict(list) for _ in range(4))  # (cell, split) -> regrets
n_split, sizes = Counter(), defaultdict(list)
for gi, (key, m, n, k, layout) in enumerate(groups):
    rank = cache[f'{layout}:{m}x{n}x{k}']
    times, best, tcub = group_times(key)
    if best is None or not rank:
        continue
    sp = splits_of(m, n, k, layout)
    n_split.update(sp)
    res = {}
    for c in cells:
        s = candidate_set(rank, c[2], c[3], c[1], c[0])
        sizes[c].append(len(s))
        t = [times.get(x) for x in s]
        tm = [x for x in t if x is not None]
        res[c] = (all(x is not None for x in t), (1 - best / min(tm)) if tm else None, min(tm) if tm else None)
    by_k = defaultdict(list)
    for c, (f, r, _) in res.items():
        by_k[c[2]].append(f)
    for c, (f, r, tmin) in res.items():
        for x in sp:
            if r is not None:
                ign[(c, x)].append(r)
            if f:
                full[(c, x)].append(r)
                if all(by_k[c[2]]):
                    comm[(c, x)].append(r)
                if tcub is not None:
                    cub[(c, x)].append(max(0.0, 1 - best / min(tmin, tcub)))
    if gi % 500 == 499:
        log(f'simulated {gi + 1}')
log('simulated')


def stats(v):
    if not v:
        return None
    v = sorted(v)
    return st.mean(v), st.median(v), v[min(len(v) - 1, int(0.95 * len(v)))]


def pct(x):
    return f'{100 * x:.2f}'


SPLITS = ['all', 'M<=64', 'M 65-2047', 'M>=2048', 'big (2MNK>=1e11)', 'small (2MNK<1e11)', 'model saw it', 'new to the model']
print(f'\n# autotune variants, set {a.set}: {n_split["all"]} groups with a measured kernel '
      f'({a.registry}, model {a.model}, depth {a.depth}{", run-normalized" if a.run_normalize else ""})')
print('groups per split: ' + ', '.join(f'{s} {n_split[s]}' for s in SPLITS))
for base in BASES:
    print(f'\n## base `{base}`, every group (split all): regret % (mean / median / p95)')
    print('| policy | K | V | cands (mean) | full: cover | full: mean / med / p95 | common: groups | common: mean / med / p95 '
          '| ignore-unmeasured: mean / med / p95 | full +cuBLAS: mean |')
    print('| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |')
    for c in cells:
        if c[0] != base:
            continue
        f, cm, ig, cb = (stats(d[(c, 'all')]) for d in (full, comm, ign, cub))
        fmt = lambda s: ' / '.join(pct(x) for x in s) if s else '-'
        print(f'| {c[1]} | {c[2]} | {c[3]} | {st.mean(sizes[c]):.1f} | {100 * len(full[(c, "all")]) / n_split["all"]:.0f} % '
              f'| {fmt(f)} | {len(comm[(c, "all")])} | {fmt(cm)} | {fmt(ig)} | {pct(cb[0]) if cb else "-"} |')
    for K in KS:
        if a.md_only_k and K != a.md_only_k:
            continue
        print(f'\n### base `{base}`, K={K}, by split: full version "mean / p95 (groups)", common version "mean"')
        print('| policy | V | ' + ' | '.join(SPLITS[1:]) + ' |')
        print('| --- | --- | ' + ' | '.join('---' for _ in SPLITS[1:]) + ' |')
        for c in cells:
            if c[0] != base or c[2] != K:
                continue
            row = []
            for x in SPLITS[1:]:
                s, cs = stats(full[(c, x)]), stats(comm[(c, x)])
                row.append((f'{pct(s[0])} / {pct(s[2])} ({len(full[(c, x)])})' if s else '-') +
                           (f'; c {pct(cs[0])}' if cs else ''))
            print(f'| {c[1]} | {c[3]} | ' + ' | '.join(row) + ' |')

if a.csv:
    with open(a.csv, 'w', newline='') as f:
        w = csv.writer(f)
        w.writerow(['set', 'base', 'policy', 'K', 'V', 'split', 'version', 'groups', 'split_groups', 'mean', 'median', 'p95', 'cands_mean'])
        for c in cells:
            for x in SPLITS:
                for name, d in (('full', full), ('common', comm), ('ignore-unmeasured', ign), ('full+cublas', cub)):
                    s = stats(d[(c, x)])
                    if s:
                        w.writerow([a.set, *c, x, name, len(d[(c, x)]), n_split[x], *(f'{v:.5f}' for v in s), f'{st.mean(sizes[c]):.2f}'])
log('done')
