#!/usr/bin/env python3
"""Side-by-side comparison tables of two `cks analyze sidebyside --per-group` CSVs, by base set.

    python3 scripts/eval/sbs_compare.py NEW.csv BASE.csv [eval|family|both]

NEW.csv: `cks analyze sidebyside --model NEW --methods deployed,prefilter4096,evidence16:4,exhaustive,static
--per-group NEW.csv`; BASE.csv: the same with `--model BASE --methods deployed` (the shipped model's first
pick, measured in the same repetitions). Lease 15 (NOTES.md): NEW = r5 with evidence, BASE = r3.
Prints per set: covered groups, mean / median / p95 / max regret, groups over 5 % and within 1 %,
the geomean of pick / cuBLAS (all, and M >= 2048), the noise floor and the top-4 means.
"""
import csv, math, statistics as st, sys
r5={r['base_key']:r for r in csv.DictReader(open(sys.argv[1]))}
r3={r['base_key']:r for r in csv.DictReader(open(sys.argv[2]))}
def p95(v):
    v=sorted(v); 
    if not v: return float('nan')
    i=0.95*(len(v)-1); lo=int(math.floor(i)); hi=min(lo+1,len(v)-1); return v[lo]+(v[hi]-v[lo])*(i-lo)
def summ(name, rows, col, src):
    v=[]; cub=[]; cub2k=[]
    for k in rows:
        r=src.get(k)
        if r is None or r.get(col,'')=='' : continue
        v.append(float(r[col]))
        cc=col.replace('_regret','_vs_cublas')
        if r.get(cc,'')!='':
            cub.append(math.log(float(r[cc])))
            if int(r['m'])>=2048: cub2k.append(math.log(float(r[cc])))
    if not v: return
    g=lambda x: math.exp(sum(x)/len(x)) if x else float('nan')
    print(f"| {name} | {len(v)} | {100*st.mean(v):.2f} % | {100*st.median(v):.2f} % | {100*p95(v):.1f} % | {100*max(v):.1f} % | {sum(x>0.05 for x in v)} | {sum(x<=0.01 for x in v)} | {g(cub):.3f} | {g(cub2k):.3f} ({len(cub2k)}) |")
sets={'eval':[k for k,r in r5.items() if r['base_set']=='eval'],'family':[k for k,r in r5.items() if r['base_set']=='family'],'both':list(r5)}
extra=sys.argv[3] if len(sys.argv)>3 else ''
for sname,keys in sets.items():
    if extra and sname!=extra: continue
    print(f"\n{sname}: {len(keys)} groups\n| ranking | covered | mean | median | p95 | max | > 5 % | ≤ 1 % | pick/cuBLAS | M ≥ 2048 |\n| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    summ('new + evidence 16:4', keys,'evidence16:4_regret', r5)
    summ('new, prefilter 1024 only', keys,'deployed_regret', r5)
    summ('new, prefilter 4096', keys,'prefilter4096_regret', r5)
    summ('new, exhaustive', keys,'exhaustive_regret', r5)
    summ('base deployed', keys,'deployed_regret', r3)
    summ('static score', keys,'static_regret', r5)
    v=[float(r5[k]['floor']) for k in keys if r5[k]['floor']!='']
    print(f"| noise floor | {len(v)} | {100*st.mean(v):.2f} % | {100*st.median(v):.2f} % | {100*p95(v):.1f} % | {100*max(v):.1f} % | | | | |")
    # top4
    print()
    for col,src,name in [('evidence16:4_top4_regret',r5,'new + evidence, top-4 mean'),('deployed_top4_regret',r5,'new, prefilter 1024 only, top-4 mean')]:
        v=[float(src[k][col]) for k in keys if src[k].get(col,'')!='']
        print(f"{name}: {100*st.mean(v):.2f} %  ")
