#!/usr/bin/env python3
"""Side-by-side comparison tables of two `cks analyze sidebyside --per-group` CSVs, by base set.

    python3 scripts/eval/sbs_compare.py NEW.csv BASE.csv [SET|both|all] [NEW_NAME BASE_NAME]

NEW.csv: `cks analyze sidebyside --model NEW --methods deployed,... --per-group NEW.csv`; BASE.csv:
the same with `--model BASE --methods deployed` (the shipped model's first pick, measured in the same
repetitions). Every method of NEW.csv gets a row (its `<method>_regret` column), then BASE's
deployed one. Prints per set: covered groups, mean / median / p95 / max regret, groups over 5 % and
within 1 %, the top-4 mean, the geomean of pick / cuBLAS (all, and M >= 2048), the noise floor, and the
paired difference of the two deployed picks with a bootstrap interval. SET: one base set (eval,
family, llm: lease 38's round); both: every set together; all (default): each set, then together.
Lease 15 (NOTES.md): NEW = r5 with evidence, BASE = r3; lease 16: NEW = r6, BASE = r5.
"""
import csv, math, statistics as st, sys

from paired import bootstrap_interval

new = {r['base_key']: r for r in csv.DictReader(open(sys.argv[1]))}
base = {r['base_key']: r for r in csv.DictReader(open(sys.argv[2]))}
only = sys.argv[3] if len(sys.argv) > 3 and sys.argv[3] != 'all' else ''
new_name = sys.argv[4] if len(sys.argv) > 4 else 'new'
base_name = sys.argv[5] if len(sys.argv) > 5 else 'base'
methods = [c[:-len('_regret')] for c in next(iter(new.values())).keys()
           if c.endswith('_regret') and not c.endswith('_top4_regret')]


def p95(v):
    v = sorted(v)
    if not v:
        return float('nan')
    i = 0.95 * (len(v) - 1)
    lo = int(math.floor(i))
    hi = min(lo + 1, len(v) - 1)
    return v[lo] + (v[hi] - v[lo]) * (i - lo)


def geomean(x):
    return math.exp(sum(x) / len(x)) if x else float('nan')


def row(name, keys, method, src):
    v, cub, cub2k = [], [], []
    for k in keys:
        r = src.get(k)
        if r is None or r.get(method + '_regret', '') == '':
            continue
        v.append(float(r[method + '_regret']))
        if r.get(method + '_vs_cublas', '') != '':
            cub.append(math.log(float(r[method + '_vs_cublas'])))
            if int(r['m']) >= 2048:
                cub2k.append(math.log(float(r[method + '_vs_cublas'])))
    if not v:
        return
    t4 = [float(src[k][method + '_top4_regret']) for k in keys
          if k in src and src[k].get(method + '_top4_regret', '') != '']
    top4 = f"{100 * st.mean(t4):.2f} %" if t4 else ''
    print(f"| {name} | {len(v)} | {100 * st.mean(v):.2f} % | {100 * st.median(v):.2f} % | {100 * p95(v):.1f} % | "
          f"{100 * max(v):.1f} % | {sum(x > 0.05 for x in v)} | {sum(x <= 0.01 for x in v)} | {top4} | "
          f"{geomean(cub):.3f} | {geomean(cub2k):.3f} ({len(cub2k)}) |")


# One table per base set found (eval, family, llm, ...), then all of them together ('both').
sets = {s: [k for k, r in new.items() if r['base_set'] == s] for s in sorted({r['base_set'] for r in new.values()})}
sets['both'] = list(new)
for sname, keys in sets.items():
    if only and sname != only:
        continue
    print(f"\n{sname}: {len(keys)} groups\n\n| ranking | covered | mean | median | p95 | max | > 5 % | ≤ 1 % | top-4 | "
          "pick/cuBLAS | M ≥ 2048 |\n| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for m in methods:
        row(f"{new_name} {m}", keys, m, new)
    row(f"{base_name} deployed", keys, 'deployed', base)
    v = [float(new[k]['floor']) for k in keys if new[k]['floor'] != '']
    noise = (f"| noise floor | {len(v)} | {100 * st.mean(v):.2f} % | {100 * st.median(v):.2f} % | {100 * p95(v):.1f} % | "
             f"{100 * max(v):.1f} % | | | | | |")
    print(noise)
    v = [float(new[k]['floor_median']) for k in keys if new[k].get('floor_median', '') != '']
    if v:  # per-group CSVs since session 23: the floor at the round's precision (medians, bootstrap)
        print(f"| noise floor (median) | {len(v)} | {100 * st.mean(v):.2f} % | {100 * st.median(v):.2f} % | "
              f"{100 * p95(v):.1f} % | {100 * max(v):.1f} % | | | | | |")
    # Paired: the same groups and repetitions, base deployed minus new deployed (> 0: new better),
    # with a bootstrap 95 % interval over the groups (seed 0).
    d = [float(base[k]['deployed_regret']) - float(new[k]['deployed_regret']) for k in keys
         if k in base and new[k].get('deployed_regret', '') != '' and base[k].get('deployed_regret', '') != '']
    if d:
        lo, hi = bootstrap_interval(d)
        print(f"\npaired over {len(d)} groups: {base_name} deployed minus {new_name} deployed = "
              f"{100 * st.mean(d):+.2f} points (95 % bootstrap interval {100 * lo:+.2f} to "
              f"{100 * hi:+.2f}); {new_name} better in {sum(x > 0 for x in d)}, worse in "
              f"{sum(x < 0 for x in d)}, the same in {sum(x == 0 for x in d)}")
