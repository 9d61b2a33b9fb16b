#!/usr/bin/env python3
"""How close is each evaluation group's optimum to the catalogue's? (issue 16, item 2)

    python3 scripts/analysis/catalogue_slice.py LEASE.db SLICE_PLAN.jsonl SBS.csv BEFORE.db [--csv OUT.csv]

LEASE.db: the registry of the lease that measured the slice (scripts/corpus/catalogue_slice_plan.sh:
random unmeasured catalogue kernels at default knobs in every evaluation group, then `lease.sh
leaders` on set eval: the knob variants of each group's 8 fastest); SLICE_PLAN.jsonl: that plan
(its kernels per layout); SBS.csv: `cks analyze sidebyside --per-group` of the same lease (each
group's T* measured side by side: best_tflops, cublas_tflops); BEFORE.db: the corpus before the
lease (every earlier row). Runs differ in clocks, so every comparison is of ratios to the cuBLAS
reference measured in the same group and run: slice best / cuBLAS against T* / cuBLAS.
Prints the distribution per layout; --csv writes one row per group.
"""
import argparse, collections, csv, json, sqlite3, statistics as st

ap = argparse.ArgumentParser()
ap.add_argument('lease'); ap.add_argument('plan'); ap.add_argument('sbs'); ap.add_argument('before')
ap.add_argument('--csv')
a = ap.parse_args()
kernels = collections.defaultdict(set)
with open(a.plan) as f:
    next(f)
    for line in f:
        g = json.loads(line)
        kernels[g['group']['layout']].update(c[0] for c in g['candidates'])
lease = sqlite3.connect(f"file:{a.lease}?mode=ro", uri=True)
before = sqlite3.connect(f"file:{a.before}?mode=ro", uri=True)
sbs = {r['base_key']: r for r in csv.DictReader(open(a.sbs))}
num = lambda x: float(x) if x not in ('', None) else None
rows, status = [], collections.Counter()
for key, layout in lease.execute("SELECT key, layout FROM groups WHERE set_name = 'eval' ORDER BY key"):
    ms = lease.execute("SELECT kernel_id, knobs, status, tflops FROM measurements WHERE group_key = ?", (key,)).fetchall()
    cub = [t for k, _, s, t in ms if k == 'cublas' and s == 'ok']
    mine = [m for m in ms if m[0] in kernels[layout]]
    status.update(m[2] for m in mine)
    ok = [m for m in mine if m[2] == 'ok']
    if not ok or not cub:
        continue
    best = max(ok, key=lambda m: m[3])
    slice_rel = best[3] / (sum(cub) / len(cub))
    prev, prev_cub = before.execute(
        "SELECT max(CASE WHEN kernel_id != 'cublas' THEN tflops END), avg(CASE WHEN kernel_id = 'cublas' THEN tflops END) "
        "FROM measurements WHERE group_key = ? AND status = 'ok'", (key,)).fetchone()
    s = sbs.get(key, {})
    t_sbs, c_sbs = num(s.get('best_tflops')), num(s.get('cublas_tflops'))
    rows.append({'group': key, 'layout': layout, 'slice_kernels_ok': len({m[0] for m in ok}),
                 'slice_best_kernel': best[0], 'slice_best_knobs': best[1], 'slice_best_tflops': round(best[3], 2),
                 'vs_sbs_tstar': round(slice_rel / (t_sbs / c_sbs), 4) if t_sbs and c_sbs else '',
                 'vs_corpus_tstar': round(slice_rel / (prev / prev_cub), 4) if prev and prev_cub else ''})
print(f"slice rows by status: {dict(status)}; {len(rows)} evaluation groups\n")
print("| layout | groups | slice best / T* (median) | p90 | max | groups where the slice beat T* (> 1.00 / > 1.02) | against the corpus T* before: median, > 1.00 |")
print("| --- | --- | --- | --- | --- | --- | --- |")
for layout in ['tn', 'nt', 'nn', 'tt', 'all']:
    sel = [r for r in rows if layout == 'all' or r['layout'] == layout]
    v = sorted(r['vs_sbs_tstar'] for r in sel if r['vs_sbs_tstar'] != '')
    w = sorted(r['vs_corpus_tstar'] for r in sel if r['vs_corpus_tstar'] != '')
    if not v:
        continue
    print(f"| {layout} | {len(v)} | {st.median(v):.3f} | {v[int(0.9 * (len(v) - 1))]:.3f} | {max(v):.3f} | "
          f"{sum(x > 1 for x in v)} / {sum(x > 1.02 for x in v)} | {st.median(w):.3f}, {sum(x > 1 for x in w)} |")
if a.csv:
    with open(a.csv, 'w', newline='') as f:
        wr = csv.DictWriter(f, fieldnames=list(rows[0]))
        wr.writeheader()
        wr.writerows(rows)
