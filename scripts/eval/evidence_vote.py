#!/usr/bin/env python3
"""Screening (issue 16, item 5): re-rank the deployed model's top K by how often each pick leads the
nearest training groups (the model file's "evidence"), scored on the side-by-side rounds.

A candidate's support is the sum over the G nearest training groups of its layout (squared distance
of log2 M, N, K, as the selector's evidence join) of w / (1 + r), r its rank among the group's first
R leaders (kernel ID alone, or kernel and knobs), w = exp(-d / tau) (tau 0: w = 1). The method
keeps the model's first pick unless another of its top K has more support. Regret: a candidate's
median throughput over the repetitions of the latest side-by-side round of the base group that
measured it, against that round's best (coverage: groups whose pick any round measured).

    python3 scripts/eval/evidence_vote.py --registry <corpus with the sbs shards> [--model M] > out.md

Session 29 (the corpus through lease 35, r10w4): every setting is worse than the model's own first
pick on the evaluation groups (NOTES.md, "Session 29 at home").
"""
from __future__ import annotations

import argparse
import collections
import json
import math
import os
import sqlite3
import statistics
import sys


def sbs_table(registry: str) -> tuple[dict, dict]:
    """base -> {(kernel, knobs): ratio to the best of the latest round measuring it}, base -> set."""
    db = sqlite3.connect(registry)
    rows = db.execute("""select g.tags_json, m.kernel_id, m.knobs, m.tflops from measurements m join groups g
      on g.key = m.group_key and g.set_name = 'sbs' where m.status = 'ok' and m.kernel_id != 'cublas'""")
    per: dict = collections.defaultdict(lambda: collections.defaultdict(list))
    sets = {}
    for tags, kid, knobs, tf in rows:
        t = json.loads(tags)
        sets[t["base_key"]] = t["base_set"]
        per[(t["base_key"], t.get("round", 0))][(kid, knobs)].append(tf)
    table: dict = collections.defaultdict(dict)
    for (base, _), cands in sorted(per.items(), key=lambda x: x[0][1]):
        med = {c: statistics.median(v) for c, v in cands.items()}
        best = max(med.values())
        for c, v in med.items():
            table[base][c] = v / best  # later rounds overwrite earlier ones
    return table, sets


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--registry", required=True)
    p.add_argument("--model", default="models/default.json")
    a = p.parse_args()
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "../../build/python"))
    import cks

    table, sets = sbs_table(a.registry)
    by_layout = collections.defaultdict(list)
    for lay, m, n, k, leaders in json.load(open(a.model))["evidence"]["groups"]:
        by_layout[lay].append(((math.log2(m), math.log2(n), math.log2(k)), [tuple(x) for x in leaders]))
    sel = cks.Selector(a.model)
    ranked = {}
    for base in table:
        dims, lay = base.split("_")
        m, n, k = map(int, dims.split("x"))
        q = (math.log2(m), math.log2(n), math.log2(k))
        near = sorted(((sum((x - y) ** 2 for x, y in zip(q, g[0])), g[1]) for g in by_layout[lay]), key=lambda t: t[0])[:16]
        ranked[base] = ([(s.kernel_id, s.knobs_text) for s in sel.select(m, n, k, lay, top=8)], near)

    def pick(base: str, k: int, exact: bool, g: int, r: int, tau: float) -> tuple[str, str]:
        top, near = ranked[base]
        def support(c: tuple[str, str]) -> float:
            s = 0.0
            for d, leaders in near[:g]:
                for i, lead in enumerate(leaders[:r]):
                    if (lead == c) if exact else (lead[0] == c[0]):
                        s += (math.exp(-d / tau) if tau else 1.0) / (1 + i)
                        break
            return s
        sup = [support(c) for c in top[:k]]
        best = max(range(len(sup)), key=lambda i: (sup[i], -i))
        return top[best] if sup[best] > sup[0] else top[0]

    print("| method | set | groups | not measured | mean % | median % | p95 % | max % |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    arms = [("deployed", 1, True, 16, 16, 0.0)] + [
        (f"{'exact' if ex else 'kernel'} K{k} G{g} R{r} tau{tau:g}", k, ex, g, r, tau)
        for ex in (False, True) for k in (2, 4, 8) for g, r in ((4, 4), (8, 4), (16, 4), (16, 16)) for tau in (0.0, 1.0)]
    for name, k, ex, g, r, tau in arms:
        for s in ("eval", "family"):
            v = sorted(1 - table[b][c] for b in table if sets[b] == s for c in [pick(b, k, ex, g, r, tau)] if c in table[b])
            miss = sum(1 for b in table if sets[b] == s) - len(v)
            print(f"| {name} | {s} | {len(v)} | {miss} | {100 * statistics.mean(v):.2f} | {100 * statistics.median(v):.2f} | "
                  f"{100 * v[int(0.95 * (len(v) - 1))]:.1f} | {100 * max(v):.1f} |")


if __name__ == "__main__":
    main()
