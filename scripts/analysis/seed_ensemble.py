#!/usr/bin/env python3
"""Offline test of a seed ensemble on a side-by-side round: would averaging the scores of several
models (e.g. one recipe trained with different seeds) pick better than each of them alone?

    PYTHONPATH=build/python python3 scripts/analysis/seed_ensemble.py REGISTRY NAME=MODEL.json ... \
        [--ensemble NAME,NAME,...]... [--top 64] [--round latest] [--out FILE.md]

For every base group of the registry's side-by-side groups (set 'sbs', tags base_key / rep /
round), each model's top --top list (cks.Selector: the deployed ranking, the same as `cks select`)
is read with its scores; an ensemble ranks the union of its members' lists by the mean of their
scores (a member that does not list a candidate gives it its own lowest listed score) and picks the
top one. A pick is scored where the round measured it: per repetition, 1 - its TFLOP/s over the
best candidate of that repetition (rows whose SM clock is more than 30 MHz from the median of their
candidate's repetitions left out, as `cks analyze sidebyside` does), averaged over repetitions.
A pick the round did not measure leaves the group uncovered for that ranking. Paired differences
against the first model are over the groups where both picks were measured, with a bootstrap
interval (scripts/eval/paired.py).

This scores only the final lists of each member (its own prefilter, evidence and cascade), an
approximation of an ensemble scored inside one selection; it says whether building one is worth it.
"""
import argparse, json, math, sqlite3, statistics as st, sys
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "eval"))
from paired import bootstrap_interval  # noqa: E402


def load_round(db: str, round_sel: str):
    """base_key -> (m, n, k, layout, base_set, {(kernel, knobs): {rep: tflops}}, reps)."""
    c = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    groups = {}
    for key, m, n, k, layout, tags in c.execute(
            "SELECT key, m, n, k, layout, tags_json FROM groups WHERE set_name = 'sbs'"):
        t = json.loads(tags)
        groups[key] = (t["base_key"], t.get("base_set", ""), int(t.get("round", 1)), int(t["rep"]), m, n, k, layout)
    latest = defaultdict(int)
    for base, _, rnd, *_ in groups.values():
        latest[base] = max(latest[base], rnd)
    out = {}
    rows = c.execute("SELECT group_key, kernel_id, knobs, tflops, sm_clock_mhz FROM measurements "
                     "WHERE status = 'ok' AND kernel_id != 'cublas'")
    per = defaultdict(lambda: defaultdict(dict))  # base -> cand -> rep -> (tflops, clock)
    for gk, kid, knobs, tf, clk in rows:
        g = groups.get(gk)
        if g is None:
            continue
        base, bset, rnd, rep = g[:4]
        want = latest[base] if round_sel == "latest" else int(round_sel)
        if rnd != want:
            continue
        per[base][(kid, knobs)][rep] = (tf, clk)
        out[base] = (g[4], g[5], g[6], g[7], bset)
    table = {}
    for base, cands in per.items():
        clean = {}
        for cand, reps in cands.items():
            med = st.median_low(clk for _, clk in reps.values())  # a clock of a row: never empty
            clean[cand] = {r: tf for r, (tf, clk) in reps.items() if abs(clk - med) <= 30}
        table[base] = (*out[base], clean)
    return table


def regret(clean, pick):
    if pick not in clean or not clean[pick]:
        return None
    vals = []
    for rep, tf in clean[pick].items():
        best = max(v[rep] for v in clean.values() if rep in v)
        vals.append(1.0 - tf / best)
    return sum(vals) / len(vals)


def p95(v):
    v = sorted(v)
    return v[min(len(v) - 1, int(math.ceil(0.95 * len(v))) - 1)] if v else float("nan")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("registry")
    ap.add_argument("models", nargs="+", help="NAME=MODEL.json")
    ap.add_argument("--ensemble", action="append", default=[], help="comma-separated member names")
    ap.add_argument("--top", type=int, default=64)
    ap.add_argument("--round", default="latest")
    ap.add_argument("--out")
    a = ap.parse_args()
    import cks
    models = dict(s.split("=", 1) for s in a.models)
    table = load_round(a.registry, a.round)
    lists = {}
    for name, path in models.items():
        sel = cks.Selector(path)
        lists[name] = {}
        for base, (m, n, k, layout, *_rest) in table.items():
            lists[name][base] = {(s.kernel_id, s.knobs_text): s.score for s in sel.select(m, n, k, layout, top=a.top)}
        print(f"seed_ensemble: {name}: {len(table)} groups ranked", file=sys.stderr)

    picks = {name: {b: max(l, key=l.get) for b, l in ls.items()} for name, ls in lists.items()}
    for ens in a.ensemble:
        members = ens.split(",")
        name = "mean(" + ",".join(members) + ")"
        picks[name] = {}
        for base in table:
            union = set().union(*(lists[mb][base] for mb in members))
            floor = {mb: min(lists[mb][base].values()) for mb in members}
            score = {c: sum(lists[mb][base].get(c, floor[mb]) for mb in members) / len(members) for c in union}
            picks[name][base] = max(score, key=score.get)

    first = next(iter(models))
    res = {name: {b: regret(table[b][5], p) for b, p in pk.items()} for name, pk in picks.items()}
    lines = [f"Side-by-side round {a.round} of `{Path(a.registry).name}` ({len(table)} base groups); "
             f"regret of each ranking's first pick where the round measured it.", "",
             "| ranking | covered | mean | median | p95 | max | > 5 % | paired vs " + first + " (95 %) | better / worse |",
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for name, r in res.items():
        v = [x for x in r.values() if x is not None]
        both = [b for b in table if r[b] is not None and res[first][b] is not None]
        d = [res[first][b] - r[b] for b in both]
        lo, hi = bootstrap_interval(d) if d and name != first else (float("nan"), float("nan"))
        better = sum(x > 1e-9 for x in d); worse = sum(x < -1e-9 for x in d)
        pair = "" if name == first else f"{100 * st.mean(d):+.2f} ({100 * lo:+.2f}..{100 * hi:+.2f}) over {len(both)}"
        lines.append(f"| {name} | {len(v)} | {100 * st.mean(v):.2f} % | {100 * st.median(v):.2f} % | {100 * p95(v):.1f} % | "
                     f"{100 * max(v):.1f} % | {sum(x > 0.05 for x in v)} | {pair} | "
                     f"{'' if name == first else f'{better} / {worse}'} |")
    text = "\n".join(lines)
    print(text)
    if a.out:
        Path(a.out).write_text(text + "\n")


if __name__ == "__main__":
    main()
