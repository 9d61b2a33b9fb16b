#!/usr/bin/env python3
"""Keeps, of a `cks plan leaders --set train` plan, the training groups of the classes where every
shipped model's side-by-side tail sits (NOTES.md, leases 18-23) and which lease 21's knob round
(2MNK >= 1e11 only) left out: problems under MAX_FLOP that are strongly rectangular (4M <= N or
4N <= M: the best kernel rasters along the long side, e.g. 3072x320x3776, 136x4096x4096,
10368x1216x3712) or small in M*N (<= 2^20: stream-K and split-K, e.g. 1024x512x8192, 160x256x8128).
Every runtime-knob variant of their leaders is kept (raster x swizzle, and stream-K / split-K
splits), as the plan lists them; the collector skips what the corpus has measured.

    filter_tail_knobs.py IN.jsonl OUT.jsonl [MAX_FLOP=1e11] [MAX_CANDIDATES_PER_GROUP=0: all]
"""
import json, sys

src, dst = sys.argv[1], sys.argv[2]
max_flop = float(sys.argv[3]) if len(sys.argv) > 3 else 1e11
cap = int(sys.argv[4]) if len(sys.argv) > 4 else 0
lines = open(src).read().splitlines()
header = json.loads(lines[0])
header.update(name='lease24_tail_knobs',
              filter=f'2MNK < {max_flop:g} and (4M <= N or 4N <= M or MN <= 2^20); every knob variant of the leaders'
                     + (f'; at most {cap} candidates a group, in the plan order' if cap else ''))
kept, cands, classes = [], 0, {'rect': 0, 'small_mn': 0}
for line in lines[1:]:
    g = json.loads(line)
    G = g['group']
    m, n, k = G['m'], G['n'], G['k']
    if 2 * m * n * k >= max_flop:
        continue
    rect = 4 * m <= n or 4 * n <= m
    small = m * n <= 1 << 20
    if not (rect or small):
        continue
    if cap:
        g['candidates'] = g['candidates'][:cap]
    if g['candidates']:
        kept.append(json.dumps(g, separators=(',', ':')))
        cands += len(g['candidates'])
        classes['small_mn' if small else 'rect'] += 1
with open(dst, 'w') as f:
    f.write(json.dumps(header, separators=(',', ':')) + '\n' + '\n'.join(kept) + '\n')
print(f'{dst}: {len(kept)} groups ({classes["rect"]} rectangular, {classes["small_mn"]} small M*N), {cands} candidates',
      file=sys.stderr)
