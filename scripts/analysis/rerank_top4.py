#!/usr/bin/env python3
"""A learned second stage over the model's own top 4 (issue 16; NOTES.md, session 19): does choosing among
`cks select`'s first four by their features beat the first pick?

  python3 scripts/analysis/rerank_top4.py --llm-registry LLM.db --sbs-registry SBS.db [--model M] [--cks build/bin/cks]

LLM.db holds the llm set's groups with the model's top 4 measured (leases 19-20: `cks data merge` of
data/shards/20261202_011f9136.db.xz and lease 20's shard); SBS.db a side-by-side round (set `sbs`, tags
base_key / base_set, e.g. lease 20's shard). For each group the script asks `cks select --top 4` (the
real ranking, cascade and all), reads each candidate's TFLOP/s (median of its ok rows; in SBS.db over the
round's repetitions), and fits an XGBoost regression of a candidate's TFLOP/s over the best of its four
on features of the candidate against the first pick (rank, score gap, tile, cluster, mainloop, scheduler,
CTA count, tile efficiency, waves, knobs). Prints (1) 5-fold group cross-validation on the llm set and
(2) the model trained on the whole llm set, applied to the side-by-side groups, against the first pick.
Needs numpy and xgboost (pip install xgboost-cpu).
"""
import argparse, csv, collections, io, json, math, re, sqlite3, statistics, subprocess, sys, random

ML = ['tma_ws', 'cooperative', 'pingpong']; SCH = ['persistent', 'stream_k']; DEC = ['h', 'dp', 'sk', 'streamk']


def parse(c):
    m = re.match(r'sm90_bf16_\w\w_(\d+)x(\d+)x(\d+)_(\d)x(\d)x1_s\d+_([^+]+)\+([^+]+)\+(\w+)', c)
    if not m:
        sys.exit(f"rerank_top4.py: cannot parse the descriptor {c}")
    tm, tn, tk, cm, cn, ml, ep, sch = m.groups()
    return dict(tm=int(tm), tn=int(tn), tk=int(tk), cm=int(cm), cn=int(cn), ml=ml, ep=ep, sch=sch)


def knob(c, key):
    m = re.search(key + r'=(\w+)', c['knobs'])
    return m.group(1) if m else ''


def feats(p, cs, c):
    m, n, k = p
    r1 = cs[0]
    d = knob(c, 'd')
    return [c['rank'], r1['score'] - c['score'], c['score'], math.log2(m), math.log2(n), math.log2(k),
            c['tm'], c['tn'], c['tk'], c['cm'], c['cn'], c['cm'] * c['cn'], ML.index(c['ml']), SCH.index(c['sch']),
            c['ctas'], c['ctas'] / r1['ctas'], c['eff'], c['eff'] - r1['eff'], c['wave_eff'], c['waves'],
            'rmn'.find(knob(c, 'r')), int(knob(c, 's') or 1), DEC.index(d) if d in DEC else -1,
            int(knob(c, 'k') or 1), int(c['kid'] == r1['kid'])]


def top4(cks, model, m, n, k, layout):
    cmd = [cks, 'select', '--m', str(m), '--n', str(n), '--k', str(k), '--layout', layout, '--top', '4', '--format', 'csv']
    if model:
        cmd += ['--model', model]
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"rerank_top4.py: {' '.join(cmd)}: {out.stderr.strip()}")
    rows = list(csv.DictReader(io.StringIO(out.stdout)))
    return [dict(rank=int(r['rank']), kid=r['kernel_id'], canon=r['canonical'], knobs=r['knobs'], score=float(r['score'])) for r in rows]


def load(path, sbs):
    """group -> ((m,n,k,layout), set, {(kernel, knobs): median TFLOP/s}, best)"""
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    info, base = {}, {}
    q = "select key,set_name,m,n,k,layout,tags_json from groups where set_name=?"
    for key, s, m, n, k, lay, tags in db.execute(q, ('sbs' if sbs else 'llm',)):
        t = json.loads(tags or '{}')
        g = t.get('base_key', key) if sbs else key
        base[key] = g
        info[g] = ((m, n, k, lay), t.get('base_set', s))
    meas = collections.defaultdict(list)
    for g, kid, kn, tf in db.execute("select group_key,kernel_id,knobs,tflops from measurements where status='ok'"):
        if g in base:
            meas[(base[g], kid, kn)].append(tf)
    tf = collections.defaultdict(dict)
    for (g, kid, kn), v in meas.items():
        tf[g][(kid, kn)] = statistics.median(v)
    return {g: (info[g][0], info[g][1], tf[g], max(tf[g].values())) for g in info if tf.get(g)}


def rows_of(groups, cks, model, label):
    out = []
    for i, (g, (shape, s, tf, best)) in enumerate(sorted(groups.items())):
        if i % 100 == 0:
            print(f"rerank_top4.py: {label}: {i}/{len(groups)} groups ranked", file=sys.stderr)
        m, n, k, lay = shape
        cs = top4(cks, model, m, n, k, lay)
        if len(cs) < 4 or any((c['kid'], c['knobs']) not in tf for c in cs):
            continue
        for c in cs:
            c['tf'] = tf[(c['kid'], c['knobs'])]
            c.update(parse(c['canon']))
            c['ctas'] = math.ceil(m / c['tm']) * math.ceil(n / c['tn'])
            c['eff'] = m * n / (c['ctas'] * c['tm'] * c['tn'])
            c['waves'] = c['ctas'] / 132
            c['wave_eff'] = c['waves'] / math.ceil(c['waves'])
        out.append((g, (m, n, k), cs, best, s, lay))
    return out


def fit(rows, seed):
    import numpy as np, xgboost as xgb
    X, y = [], []
    for g, p, cs, best, *_ in rows:
        bk = max(c['tf'] for c in cs)
        for c in cs:
            X.append(feats(p, cs, c)); y.append(c['tf'] / bk)
    mdl = xgb.XGBRegressor(n_estimators=200, max_depth=4, learning_rate=0.05, subsample=0.8, random_state=seed)
    mdl.fit(np.array(X), np.array(y))
    return mdl


def choose(mdl, p, cs):
    import numpy as np
    return cs[int(np.argmax(mdl.predict(np.array([feats(p, cs, c) for c in cs]))))]


def regret(c, best):
    return 1 - c['tf'] / best


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--llm-registry', required=True)
    ap.add_argument('--sbs-registry', required=True)
    ap.add_argument('--model', default='')
    ap.add_argument('--cks', default='build/bin/cks')
    ap.add_argument('--seeds', type=int, default=3)
    a = ap.parse_args()
    import numpy as np
    llm = rows_of(load(a.llm_registry, False), a.cks, a.model, 'llm')
    sbs = rows_of(load(a.sbs_registry, True), a.cks, a.model, 'sbs')
    print(f"llm groups with the top 4 measured: {len(llm)}; side-by-side groups: {len(sbs)}")
    for seed in range(a.seeds):
        rng = random.Random(seed)
        keys = sorted(r[0] for r in llm); rng.shuffle(keys)
        fold = {g: i % 5 for i, g in enumerate(keys)}
        d, first, second = [], [], []
        for f in range(5):
            mdl = fit([r for r in llm if fold[r[0]] != f], seed)
            for g, p, cs, best, *_ in (r for r in llm if fold[r[0]] == f):
                first.append(regret(cs[0], best)); second.append(regret(choose(mdl, p, cs), best))
        d = np.array(second) - np.array(first)
        boot = [np.mean(np.random.default_rng(i).choice(d, len(d))) for i in range(1000)]
        print(f"llm 5-fold CV, fold seed {seed}: first pick {100*np.mean(first):.2f} %, reranked {100*np.mean(second):.2f} % "
              f"(paired {100*np.mean(d):+.2f} points, 95 % {100*np.percentile(boot, 2.5):+.2f}..{100*np.percentile(boot, 97.5):+.2f})")
    print("\n| set | layout | groups | first pick mean | reranked mean (per training seed) |\n| --- | --- | --- | --- | --- |")
    mdls = [fit(llm, s) for s in range(a.seeds)]
    for s in ('eval', 'family'):
        for lay in ('all', 'tn', 'nt', 'nn', 'tt'):
            sub = [r for r in sbs if r[4] == s and (lay == 'all' or r[5] == lay)]
            if not sub:
                continue
            r1 = 100 * np.mean([regret(cs[0], best) for g, p, cs, best, *_ in sub])
            r2 = ", ".join(f"{100*np.mean([regret(choose(m, p, cs), best) for g, p, cs, best, *_ in sub]):.2f}" for m in mdls)
            print(f"| {s} | {lay} | {len(sub)} | {r1:.2f} % | {r2} % |")


if __name__ == '__main__':
    main()
