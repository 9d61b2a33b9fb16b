#!/usr/bin/env python3
"""Paired regret differences between rankings of `cks analyze sidebyside --per-group` files.

    sbs_paired.py BASE=FILE:METHOD OTHER=FILE:METHOD [OTHER2=FILE:METHOD ...]

METHOD is a method column prefix of the per-group CSV (deployed, prefilter2048, exhaustive, ...:
its `<METHOD>_regret`). For each OTHER, over the groups where both regrets are known (a pick that
no round measured has none), per set (eval, family) and both: the two means, BASE - OTHER (> 0:
OTHER is better) with a 95 % bootstrap interval (2,000 resamples, seed 0), and the groups where
OTHER is better or worse. Session 28 read the prefilter sizes and r16 with it (NOTES.md).
"""
import csv
import random
import sys


def column(spec):
    name, rest = spec.split('=', 1)
    path, method = rest.rsplit(':', 1)
    rows = list(csv.DictReader(open(path)))
    if rows and method + '_regret' not in rows[0]:
        sys.exit(f"sbs_paired.py: {path} has no column {method}_regret")
    regret, sets = {}, {}
    for r in rows:
        v = r.get(method + '_regret', '')
        regret[r['base_key']] = float(v) if v not in ('', 'nan') else None
        sets[r['base_key']] = r['base_set']
    return name, regret, sets


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    base, b, sets = column(sys.argv[1])
    for spec in sys.argv[2:]:
        other, o, _ = column(spec)
        for s in ('eval', 'family', None):
            keys = [k for k in b if b[k] is not None and o.get(k) is not None and (s is None or sets[k] == s)]
            if not keys:
                continue
            d = [b[k] - o[k] for k in keys]
            rng = random.Random(0)
            boot = sorted(sum(rng.choice(d) for _ in d) / len(d) for _ in range(2000))
            mean = lambda xs: 100 * sum(xs) / len(xs)
            print(f"{s or 'both':6s} {base} - {other}: n={len(keys)} {base} {mean([b[k] for k in keys]):.2f} % "
                  f"{other} {mean([o[k] for k in keys]):.2f} % diff {mean(d):+.2f} ({100 * boot[50]:+.2f}..{100 * boot[1949]:+.2f}) "
                  f"{other} better in {sum(x > 1e-9 for x in d)}, worse in {sum(x < -1e-9 for x in d)}")


if __name__ == '__main__':
    main()
