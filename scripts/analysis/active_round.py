#!/usr/bin/env python3
"""Per model of an active-learning round (issue 16): how its unmeasured first picks measured.

    active_round.py LEASE_REGISTRY CORPUS_REGISTRY NAME=ACTIVE.jsonl ...

ACTIVE.jsonl: `cks plan active --model M --methods deployed --top 2 --explore 0` on the corpus before
the lease (the model's first two picks per training group that had no measurement). For each model,
over its picks the lease measured: how many, the share that beat the group's best before the lease
by more than 1 % and 5 %, the median and quartiles of pick / best-before (> 1: faster), and the
share within 1 % and beyond 5 % of the group's best after the lease (the regret of the pick against
the new optimum). Times are taken over their own run's cuBLAS row of the group, as new_bests.py does.
"""
import json, sqlite3, statistics, sys
from collections import defaultdict

lease, corpus = sqlite3.connect(sys.argv[1]), sqlite3.connect(sys.argv[2])
plans = [a.split('=', 1) for a in sys.argv[3:]]


def normalized(db):
    """group -> {(kernel, knobs): time / the run's cuBLAS time of the group}"""
    cub = {}
    for key, run, us in db.execute("SELECT group_key, run_uuid, min(mean_us) FROM measurements WHERE status='ok' "
                                   "AND kernel_id='cublas' GROUP BY group_key, run_uuid"):
        cub[(key, run)] = us
    out = defaultdict(dict)
    for key, run, kid, knobs, us in db.execute("SELECT group_key, run_uuid, kernel_id, knobs, min(mean_us) FROM "
                                               "measurements WHERE status='ok' AND kernel_id != 'cublas' "
                                               "GROUP BY group_key, run_uuid, kernel_id, knobs"):
        c = cub.get((key, run))
        if c:
            t = us / c
            out[key][(kid, knobs)] = min(t, out[key].get((kid, knobs), 1e18))
    return out


new, old = normalized(lease), normalized(corpus)
print('| model | picks measured | new best > 1 % | > 5 % | pick / best before: median (q1-q3) | '
      'within 1 % of the new best | > 5 % behind it |')
print('| --- | --- | --- | --- | --- | --- | --- |')
for name, path in plans:
    ratios, regrets = [], []
    with open(path) as f:
        next(f)
        for line in f:
            g = json.loads(line)
            key = g['group']['key']
            if key not in new or key not in old or not old[key]:
                continue
            before = min(old[key].values())
            after = min(before, min(new[key].values()))
            for kid, knobs in g['candidates']:
                t = new[key].get((kid, knobs))
                if t is None:
                    continue
                ratios.append(before / t)
                regrets.append(1 - after / t)
    if not ratios:
        continue
    q = statistics.quantiles(ratios, n=4)
    n = len(ratios)
    print(f'| {name} | {n} | {100 * sum(r > 1.01 for r in ratios) / n:.0f} % | '
          f'{100 * sum(r > 1.05 for r in ratios) / n:.0f} % | {statistics.median(ratios):.3f} ({q[0]:.3f}-{q[2]:.3f}) | '
          f'{100 * sum(x <= 0.01 for x in regrets) / n:.0f} % | {100 * sum(x > 0.05 for x in regrets) / n:.0f} % |')
