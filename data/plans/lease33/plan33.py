#!/usr/bin/env python3
"""Lease 33 plan (issue 16, active learning by seed disagreement): the union of several models'
unmeasured first picks on the training groups, capped to the kernels most groups want.

    [NAME=lease33] python3 plan33.py OUT MAX_KERNELS UNION.jsonl ACTIVE_1.jsonl ACTIVE_2.jsonl ...

ACTIVE_i: `cks plan active --registry <merged corpus> --model M_i --methods deployed --top 2
--explore 0 --out ACTIVE_i` for each model (seeds of one recipe and the recipe on newer data: where
they agree and their pick is measured, nothing is planned; where they disagree, each one's picks
are). UNION: `cks plan merge --union --out UNION ACTIVE_1 ACTIVE_2 ...`. A kernel's priority is the
number of (model, group) first picks that want it (a first pick counts 2, a second 1); the
MAX_KERNELS of highest priority are kept (a lease compiles every kernel it measures, ~65 a minute
on 16 cores), and every candidate of the union on a kept kernel is planned.
"""
import json, os, sys
from collections import Counter

out, cap, union_path, actives = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4:]
votes = Counter()
for path in actives:
    with open(path) as f:
        next(f)
        for line in f:
            g = json.loads(line)
            for rank, (kernel, knobs) in enumerate(g['candidates']):
                votes[kernel] += 2 if rank == 0 else 1
order = sorted(votes, key=lambda k: (-votes[k], k))
keep = set(order[:cap])
with open(union_path) as f:
    header = json.loads(next(f))
    groups = [json.loads(line) for line in f]
planned, candidates, kernels = [], 0, set()
for g in groups:
    g['candidates'] = [c for c in g['candidates'] if c[0] in keep]
    if g['candidates']:
        planned.append(g)
        candidates += len(g['candidates'])
        kernels.update(c[0] for c in g['candidates'])
header.update({'name': os.environ.get('NAME', 'lease33'), 'candidates': candidates, 'kernels': len(kernels),
               'kernels_wanted': len(votes), 'max_kernels': cap,
               'created_by': 'data/plans/lease33/plan33.py over ' + ', '.join(os.path.basename(a) for a in actives)})
with open(out, 'w') as f:
    f.write(json.dumps(header) + '\n')
    for g in planned:
        f.write(json.dumps(g) + '\n')
print(f'{out}: {len(planned)} groups, {candidates} candidates, {len(kernels)} kernels '
      f'(of {len(votes)} wanted; the last kept has {votes[order[min(cap, len(order)) - 1]]} votes)', file=sys.stderr)
