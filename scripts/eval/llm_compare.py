#!/usr/bin/env python3
"""Paired real-pick regret of two models on the same single-pass groups: two `cks eval --per-group`
CSVs (e.g. the llm set, `cks eval --registry R --model M --eval-set llm --no-nvmmh --per-group X`).

    python3 scripts/eval/llm_compare.py NEW.csv[.xz] BASE.csv[.xz] [METHOD] [NEW_NAME BASE_NAME]

METHOD defaults to "xgboost reg:squarederror real pick (deployed)". Over the groups where both real
picks were measured: both means, the paired difference with a 95 % bootstrap interval (4,000 draws,
seed 0), and the same over the groups where the two picks differ. Single-pass rows: a group's pick
and best may have run at different clocks (scripts/eval/clock_matched.py), which is noise common to
both models only where they pick the same candidate.
"""
import csv, lzma, statistics as st, sys

from paired import bootstrap_interval

if len(sys.argv) < 3:
    sys.exit(__doc__)
method = sys.argv[3] if len(sys.argv) > 3 else "xgboost reg:squarederror real pick (deployed)"
new_name = sys.argv[4] if len(sys.argv) > 4 else "new"
base_name = sys.argv[5] if len(sys.argv) > 5 else "base"


def load(path):
    f = lzma.open(path, "rt") if path.endswith(".xz") else open(path)
    rows = {r["group"]: r for r in csv.DictReader(f) if r["method"] == method and r["covered"] == "1" and r["regret"] != ""}
    if not rows:
        sys.exit(f"llm_compare.py: {path}: no covered row of method '{method}'")
    return rows


new, base = load(sys.argv[1]), load(sys.argv[2])
common = sorted(set(new) & set(base))
differ = [g for g in common if (new[g]["pick_kernel"], new[g]["pick_knobs"]) != (base[g]["pick_kernel"], base[g]["pick_knobs"])]
print(f"{new_name}: {len(new)} groups covered; {base_name}: {len(base)}")
for name, keys in (("both covered", common), ("the picks differ", differ)):
    if not keys:
        continue
    d = [float(new[g]["regret"]) - float(base[g]["regret"]) for g in keys]
    lo, hi = bootstrap_interval(d)
    print(f"{name} ({len(keys)} groups): {base_name} {100 * st.mean(float(base[g]['regret']) for g in keys):.2f} %, "
          f"{new_name} {100 * st.mean(float(new[g]['regret']) for g in keys):.2f} %; {new_name} minus {base_name} "
          f"{100 * st.mean(d):+.2f} points (95 % {100 * lo:+.2f} to {100 * hi:+.2f}); "
          f"better in {sum(x < 0 for x in d)}, worse in {sum(x > 0 for x in d)}")
