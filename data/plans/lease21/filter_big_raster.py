#!/usr/bin/env python3
"""Keeps, of a `cks plan leaders` plan, the groups with 2MNK >= MIN_FLOP and, in each, the raster x
swizzle variants only (d=h, k=1): lease 21's knob-coverage round (NOTES, lease 20: the training set
holds few big-problem leader raster pairs).

    filter_big_raster.py IN.jsonl OUT.jsonl [MIN_FLOP=1e11]
"""
import json, sys

src, dst = sys.argv[1], sys.argv[2]
min_flop = float(sys.argv[3]) if len(sys.argv) > 3 else 1e11
lines = open(src).read().splitlines()
header = json.loads(lines[0])
header.update(name='lease21_big_raster', filter=f'2MNK >= {min_flop:g}; knobs d=h,k=1 only')
kept, cands = [], 0
for line in lines[1:]:
    g = json.loads(line)
    G = g['group']
    if 2 * G['m'] * G['n'] * G['k'] < min_flop:
        continue
    g['candidates'] = [c for c in g['candidates'] if c[1].endswith(',d=h,k=1')]
    if g['candidates']:
        kept.append(json.dumps(g, separators=(',', ':')))
        cands += len(g['candidates'])
with open(dst, 'w') as f:
    f.write(json.dumps(header, separators=(',', ':')) + '\n' + '\n'.join(kept) + '\n')
print(f'{dst}: {len(kept)} groups, {cands} candidates', file=sys.stderr)
