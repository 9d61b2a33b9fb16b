#!/usr/bin/env python3
"""Chooses the orientation rule of `cks select --orientations both` on training groups (issue 16,
item 5: decide by cross-validation on training groups, report on the evaluation sets).

Input: the per-group CSV of `cks analyze sidebyside --methods own,both,<variants...>
--per-group F` over side-by-side rounds of training groups where both's first pick differs
(data/plans/lease41). Every variant (both:gMARGIN:mMAX_M:lLAYOUTS, a stricter rule than both's
default) picks either both's first pick or own's in these groups, so all are scored on the
same rows. Rules are compared by mean top-1 regret; the estimate of how the chosen rule does on
unseen groups is cross-validated: 5-fold over the groups (20 seeded repetitions; the rule with the
lowest mean on four folds is scored on the fifth), and leave-one-stratum-out (strata: layout x M
regime S <= 64 < M <= 256 < L), the harsher test of a regime the rule never saw.

    orientation_rule.py F [--baseline own] [--out MD]

The baseline is the own-orientation ranking: `own` since session 31 (both orientations became the
default, so `deployed` is the both rule), `deployed` in per-group files made before.
"""
import argparse, collections, csv, random, statistics, sys


def regime(m):
    return "S" if m <= 64 else "M" if m <= 256 else "L"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("per_group")
    ap.add_argument("--out")
    ap.add_argument("--baseline", default="own")
    a = ap.parse_args()
    rows = list(csv.DictReader(open(a.per_group)))
    if not rows:
        sys.exit("orientation_rule.py: no groups in " + a.per_group)
    methods = [c[: -len("_regret")] for c in rows[0] if c.endswith("_regret") and not c.endswith("top4_regret")]
    if a.baseline not in methods:
        sys.exit(f"orientation_rule.py: no {a.baseline}_regret column (--baseline)")
    base = a.baseline
    rows = [r for r in rows if all(r[f"{m}_regret"] not in ("", "nan") for m in methods)]
    strata = collections.defaultdict(list)
    for r in rows:
        strata[(r["layout"], regime(int(r["m"])))].append(r)

    def mean(rs, m):
        return statistics.fmean(float(r[f"{m}_regret"]) for r in rs) if rs else float("nan")

    out = []
    out.append(f"{len(rows)} training groups where both's first pick differs from {base}'s; regret in %\n")
    out.append(f"| rule | mean | median | p95 | max | pick / cuBLAS | better / worse than {base} by > 1 point |")
    out.append("| --- | --- | --- | --- | --- | --- | --- |")
    for m in methods:
        v = sorted(float(r[f"{m}_regret"]) for r in rows)
        cub = [float(r[f"{m}_vs_cublas"]) for r in rows if r.get(f"{m}_vs_cublas") not in (None, "", "nan")]
        geo = statistics.geometric_mean(cub) if cub else float("nan")
        d = [float(r[f"{m}_regret"]) - float(r[f"{base}_regret"]) for r in rows]
        out.append(f"| {m} | {100 * statistics.fmean(v):.2f} | {100 * statistics.median(v):.2f} | "
                   f"{100 * v[min(len(v) - 1, int(0.95 * len(v)))]:.2f} | {100 * v[-1]:.2f} | {geo:.3f} | "
                   f"{sum(x < -0.01 for x in d)} / {sum(x > 0.01 for x in d)} |")
    out.append("\nBy stratum (layout, M regime): mean regret in %, groups\n")
    out.append("| stratum | groups | " + " | ".join(methods) + " |")
    out.append("| --- | --- | " + " | ".join("---" for _ in methods) + " |")
    for s in sorted(strata):
        out.append(f"| {s[0]} {s[1]} | {len(strata[s])} | " + " | ".join(f"{100 * mean(strata[s], m):.2f}" for m in methods) + " |")
    # Leave one stratum out: the rule chosen on the others, scored on the held-out stratum.
    held, chosen = [], collections.Counter()
    for s in sorted(strata):
        rest = [r for t in strata if t != s for r in strata[t]]
        best = min(methods, key=lambda m: (mean(rest, m), methods.index(m)))
        chosen[best] += 1
        held.extend((float(r[f"{best}_regret"]), float(r[f"{base}_regret"])) for r in strata[s])
    out.append("\nLeave one stratum out (the rule with the lowest mean on the other strata, scored on the held-out one):")
    out.append(f"mean regret {100 * statistics.fmean(h[0] for h in held):.2f} % ({base} {100 * statistics.fmean(h[1] for h in held):.2f} %); rules chosen: "
               + ", ".join(f"{m} x{n}" for m, n in chosen.most_common()))
    # 5-fold cross-validation over the groups, 20 seeded repetitions.
    cv, cv_chosen = [], collections.Counter()
    for rep in range(20):
        order = rows[:]
        random.Random(rep).shuffle(order)
        for f in range(5):
            test = order[f::5]
            train = [r for i, r in enumerate(order) if i % 5 != f]
            best = min(methods, key=lambda m: (mean(train, m), methods.index(m)))
            cv_chosen[best] += 1
            cv.append(mean(test, best))
    out.append(f"\n5-fold cross-validation (20 repetitions): mean regret {100 * statistics.fmean(cv):.2f} % "
               f"({base} {100 * mean(rows, base):.2f} %); rules chosen: "
               + ", ".join(f"{m} x{n}" for m, n in cv_chosen.most_common()))
    best_all = min(methods, key=lambda m: (mean(rows, m), methods.index(m)))
    out.append(f"\nLowest mean on all training groups: **{best_all}** ({100 * mean(rows, best_all):.2f} %)")
    text = "\n".join(out) + "\n"
    if a.out:
        open(a.out, "w").write(text)
    sys.stdout.write(text)


if __name__ == "__main__":
    main()
