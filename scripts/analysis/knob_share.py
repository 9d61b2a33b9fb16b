#!/usr/bin/env python3
"""Where the real pick's single-pass regret comes from, and what the corpus says about raster order.

1. `--per-group` rows of `cks eval` (one METHOD) on a registry whose groups measured the pick's
   knob variants (the llm set's tier 0, leases 19-20): over the groups whose pick and best ran
   within TOL MHz, the share of regret where the best is a knob variant of the picked kernel
   (raster, swizzle, decomposition, split) against another kernel; the most frequent knob changes.
2. Paired raster order in a registry (any set): for every (group, kernel, swizzle, decomposition,
   split) measured with both r=m and r=n within TOL MHz, where one of the two is within 5 % of the
   group's best, the throughput ratio n/m by problem size (2MNK >= 1e11 "big") and aspect; and how
   often simple raster rules choose the faster of a big pair (and what a wrong choice costs).

    scripts/analysis/knob_share.py REGISTRY PER_GROUP.csv[.xz] METHOD [--pairs-set SET] [--layout tn] [--tol 30]
"""
import argparse, csv, io, lzma, math, sqlite3, statistics as st
from collections import Counter, defaultdict

ap = argparse.ArgumentParser()
ap.add_argument('registry'); ap.add_argument('per_group'); ap.add_argument('method')
ap.add_argument('--pairs-set', action='append', default=[]); ap.add_argument('--pairs-registry')
ap.add_argument('--layout', default='tn'); ap.add_argument('--tol', type=float, default=30)
a = ap.parse_args()


def knobs(s):
    return dict(p.split('=') for p in s.split(',') if '=' in p)


db = sqlite3.connect(f'file:{a.registry}?mode=ro', uri=True)
clk = defaultdict(list)
for g, k, kn, mhz in db.execute("select group_key, kernel_id, knobs, sm_clock_mhz from measurements where status='ok'"):
    clk[(g, k, kn)].append(mhz)
raw = open(a.per_group, 'rb').read()
if a.per_group.endswith('.xz'):
    raw = lzma.decompress(raw)
rows = [r for r in csv.DictReader(io.StringIO(raw.decode())) if r['method'] == a.method and r['covered'] in ('1', 'true')]
cat, changes = defaultdict(list), Counter()
for r in rows:
    p, b = clk.get((r['group'], r['pick_kernel'], r['pick_knobs'])), clk.get((r['group'], r['best_kernel'], r['best_knobs']))
    if not p or not b or abs(st.median(p) - st.median(b)) > a.tol:
        continue
    reg = float(r['regret'])
    kind = 'pick is the best' if reg <= 0 else 'knob variant of the pick' if r['best_kernel'] == r['pick_kernel'] else 'another kernel'
    cat[kind].append(reg)
    if kind == 'knob variant of the pick' and reg > 0.02:
        changes[(r['pick_knobs'], r['best_knobs'])] += 1
total, n = sum(sum(v) for v in cat.values()), sum(len(v) for v in cat.values())
print(f'{a.method}: {n} clock-matched groups (within {a.tol:g} MHz), mean regret {100 * total / max(n, 1):.2f} %')
for kind, v in cat.items():
    print(f'  {kind}: {len(v)} groups, mean {100 * st.mean(v):.2f} %, {100 * sum(v) / total if total else 0:.0f} % of the regret, > 5 % in {sum(x > 0.05 for x in v)}')
print('  most frequent knob changes (pick -> best, regret > 2 %):', ', '.join(f'{p} -> {b} ({c})' for (p, b), c in changes.most_common(6)))

pdb = sqlite3.connect(f'file:{a.pairs_registry or a.registry}?mode=ro', uri=True)
for setn in a.pairs_set:
    d, shape, best = defaultdict(dict), {}, defaultdict(float)
    q = """select g.key, g.m, g.n, g.k, m.kernel_id, m.knobs, m.tflops, m.sm_clock_mhz from measurements m
           join groups g on g.key = m.group_key where g.set_name = ? and g.layout = ? and m.status = 'ok'
           and m.kernel_id not like 'cublas%'"""
    for key, M, N, K, kid, kn, tf, mhz in pdb.execute(q, (setn, a.layout)):
        kv = knobs(kn)
        d[(key, kid, kv.get('s'), kv.get('d'), kv.get('k'))][kv.get('r')] = (tf, mhz)
        shape[key], best[key] = (M, N, K), max(best[key], tf)
    kt = {k: (tm, tn) for k, tm, tn in pdb.execute('select kernel_id, tm, tn from kernels')}
    bins, rules = defaultdict(list), defaultdict(lambda: [0, 0, 0.0])
    for (key, kid, *_), v in d.items():
        if 'm' in v and 'n' in v and abs(v['m'][1] - v['n'][1]) <= a.tol and max(v['m'][0], v['n'][0]) >= 0.95 * best[key]:
            M, N, K = shape[key]
            aspect = 'N >= 4M' if N >= 4 * M else 'N <= M/4' if 4 * N <= M else 'N ~ M'
            y = math.log(v['n'][0] / v['m'][0])
            bins[('big' if 2 * M * N * K >= 1e11 else 'small', aspect)].append(y)
            if 2 * M * N * K >= 1e11 and abs(y) >= 0.01 and kid in kt:
                tiles_m, tiles_n = math.ceil(M / kt[kid][0]), math.ceil(N / kt[kid][1])
                for rule, pick_n in (('r=m iff tiles_n > tiles_m', tiles_n <= tiles_m),
                                     ('r=m iff N > M', N <= M), ('always r=m', False)):
                    r = rules[rule]
                    r[0] += pick_n == (y > 0)
                    r[1] += 1
                    r[2] += 0 if pick_n == (y > 0) else abs(y)
    print(f'\nraster pairs among the leaders, set {setn}, layout {a.layout}:')
    print('| size | aspect | pairs | r=n faster by > 1 % | r=m faster by > 1 % | geomean n/m |')
    print('| --- | --- | --- | --- | --- | --- |')
    for b in sorted(bins):
        x = bins[b]
        print(f'| {b[0]} | {b[1]} | {len(x)} | {100 * sum(y > 0.01 for y in x) / len(x):.0f} % | '
              f'{100 * sum(y < -0.01 for y in x) / len(x):.0f} % | {math.exp(st.mean(x)):.3f} |')
    print(f'rules on the big pairs that differ by >= 1 % (set {setn}): right / pairs, mean loss per pair')
    for rule, (right, n, loss) in rules.items():
        print(f'  {rule}: {right}/{n} ({100 * right / n:.0f} %), {100 * loss / n:.2f} %')
