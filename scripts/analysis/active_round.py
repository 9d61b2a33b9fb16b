#!/usr/bin/env python3
"""What an active-learning round measured (issue 16, `cks plan active`): per round, the share of
groups where the model's pick was a new group best, and the measured regret of its picks.

  scripts/analysis/active_round.py REGISTRY ROUND=PLAN:RUN[,RUN...] [ROUND=...] [--csv OUT]

PLAN is the round's plan (a .jsonl or .jsonl.xz; only groups of `"priority": 1` are read when the
plan is a lease's merged plan with tiers, else every group), RUN the uuid prefixes of the runs
that measured it. A group's earlier best is its best row from the runs that started before the
round's first run (rows of later runs, e.g. a later lease's fill, are not read); throughputs of
different runs are put on the reference run's scale by the group's cuBLAS rows (the per-run
normalization of load_dataset, docs/models.md). Regret of a pick: 1 - T_pick / T_best, T_best
the best of the earlier rows and the round's.
"""
import argparse
import collections
import csv
import json
import lzma
import sqlite3
import statistics
import sys


def read_plan(path):
    opener = lzma.open if path.endswith(".xz") else open
    groups = {}
    tiered = False
    with opener(path, "rt") as f:
        for line in f:
            j = json.loads(line)
            if "group" not in j:
                continue
            g = j["group"]
            tiered = tiered or "priority" in g
            groups[g["key"]] = (g.get("priority", 0), {tuple(c) for c in j.get("candidates", [])})
    if tiered and any(p == 1 for p, _ in groups.values()) and any(p != 1 for p, _ in groups.values()):
        groups = {k: v for k, v in groups.items() if v[0] == 1}
    return {k: c for k, (_, c) in groups.items()}


def round_stats(db, plan_path, runs):
    plan = read_plan(plan_path)
    started = dict(db.execute("SELECT uuid, started_at FROM runs").fetchall())
    in_round = lambda r: any(r.startswith(p) for p in runs)
    round_start = min((t for u, t in started.items() if in_round(u)), default=None)
    if round_start is None:
        sys.exit(f"active_round.py: no run {','.join(runs)} in the registry")
    out = []
    for key, cands in plan.items():
        rows = db.execute("SELECT run_uuid, kernel_id, knobs, tflops FROM measurements "
                          "WHERE group_key = ? AND +status = 'ok' AND tflops > 0", (key,)).fetchall()
        rows = [r for r in rows if in_round(r[0]) or started.get(r[0], "") < round_start]
        cublas = collections.defaultdict(list)
        count = collections.Counter()
        for run, kernel, knobs, t in rows:
            if kernel == "cublas":
                cublas[run].append(t)
            else:
                count[run] += 1
        ref = max((r for r in count if r in cublas), key=lambda r: count[r], default=None)
        def scale(run):
            if ref is None or run not in cublas:
                return 1.0
            f = statistics.mean(cublas[ref]) / statistics.mean(cublas[run])
            return 1.0 if abs(f - 1) < 0.01 else min(max(f, 0.8), 1.25)
        earlier, picks, new_rows = 0.0, [], 0.0
        for run, kernel, knobs, t in rows:
            if kernel == "cublas":
                continue
            t *= scale(run)
            if in_round(run):
                new_rows = max(new_rows, t)
                if (kernel, knobs) in cands:
                    picks.append(t)
            else:
                earlier = max(earlier, t)
        if not picks or earlier <= 0:
            continue
        best = max(earlier, new_rows)
        out.append({"group": key, "picks": len(picks), "earlier_best": earlier, "best_pick": max(picks),
                    "new_best": max(picks) > earlier, "pick_regret": 1 - max(picks) / best,
                    "gain_over_earlier": max(picks) / earlier - 1})
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("registry")
    ap.add_argument("rounds", nargs="+", help="NAME=PLAN:RUN[,RUN...]")
    ap.add_argument("--csv")
    a = ap.parse_args()
    db = sqlite3.connect(f"file:{a.registry}?mode=ro", uri=True)
    summary = []
    for spec in a.rounds:
        name, rest = spec.split("=", 1)
        plan, runs = rest.rsplit(":", 1)
        rows = round_stats(db, plan, runs.split(","))
        if not rows:
            print(f"{name}: no group of the plan has both earlier rows and a measured pick", file=sys.stderr)
            continue
        reg = [r["pick_regret"] for r in rows]
        new = [r for r in rows if r["new_best"]]
        summary.append({
            "round": name, "groups": len(rows), "picks": sum(r["picks"] for r in rows),
            "new_best_share": round(len(new) / len(rows), 4),
            "new_best_gain_mean": round(statistics.mean(r["gain_over_earlier"] for r in new), 4) if new else 0,
            "pick_regret_mean": round(statistics.mean(reg), 4),
            "pick_regret_median": round(statistics.median(reg), 4),
            "pick_regret_p95": round(sorted(reg)[int(0.95 * (len(reg) - 1))], 4),
        })
    w = csv.DictWriter(open(a.csv, "w") if a.csv else sys.stdout, fieldnames=list(summary[0].keys()))
    w.writeheader()
    w.writerows(summary)


if __name__ == "__main__":
    main()
