#!/usr/bin/env bash
# Regenerates the parameter / feature study and the sampling-policy study of docs/analysis.md
# (§2 and §3) on every operand layout from the committed data, so that they cannot go stale:
#
#   scripts/analysis/studies.sh [OUT_DIR]     (default docs/analysis/studies)
#
# About 25 minutes on the 2-core dev machine with REG (measured: 1,459 s, next to other jobs: 1,410 s
# of cks commands, 49 s of plots); the train and all-groups feature runs dominate (80–244 s each
# per layout), a sampling run takes 58–82 s. Without REG add the time of the shards' merge.
#
# Per layout L of $LAYOUTS (default "tn nt nn tt"), into OUT_DIR/L/ (its old CSVs and PNGs removed):
#   cks analyze features --groups eval|train|all --layouts L   features_eval.csv, features_train.csv,
#                                                              features_all.csv
#   cks analyze features --groups eval --exclude-cut           features_eval_nocut.csv
#   cks analyze sampling --layouts L --budgets $BUDGETS --alpha-budgets $ALPHA_BUDGETS
#                                                              sampling_curves.csv, sampling_tail.csv
#     only when `cks data stats` counts exhaustively measured evaluation groups of L
#     (groups.eval_kernels_per_group.L.exhaustive > 0); a sampling run that fails is recorded with
#     its error and the script goes on with the next layout
#   python3 scripts/analysis/plot_analysis.py --in-dir OUT_DIR/L --title L --dpi 60 --palette   the PNGs
# and in OUT_DIR: coverage.json (the data: groups per set and layout, eval coverage, latest run),
# runs.tsv (every cks command: layout, study, exit status, seconds, its last stderr line, command)
# and README.md, the summary tables (scripts/analysis/studies_md.py).
#
# Env: REG=path reads a registry merged from data/shards (`cks data merge`); without it the shards
# are merged once into a temporary registry (about 2 GB under $TMPDIR).
# CKS=binary (default build/bin/cks). SKIP_CKS=1 keeps the CSVs and runs.tsv of an earlier run and
# only re-plots and rewrites README.md. The plots need numpy and matplotlib.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
OUT=$(realpath -m -- "${1:-$ROOT/docs/analysis/studies}")
cd "$ROOT"
CKS=${CKS:-build/bin/cks}
LAYOUTS=${LAYOUTS:-tn nt nn tt}
BUDGETS=${BUDGETS:-8,16,32,58,64,117,128,175,256,512,1024,2000}
ALPHA_BUDGETS=${ALPHA_BUDGETS:-117,200}
mkdir -p "$OUT"
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
t_start=$(date +%s)

if [ -z "${SKIP_CKS:-}" ]; then
  if [ -n "${REG:-}" ]; then SRC=(--registry "$REG"); else
    echo "[studies] merging data/shards into $TMP/corpus.db" >&2
    "$CKS" data merge --no-plan-items --out "$TMP/corpus.db" data/shards > /dev/null
    SRC=(--registry "$TMP/corpus.db")
  fi
  # What the data holds: which layouts have exhaustive evaluation groups (the sampling study's universe).
  "$CKS" data stats "${SRC[@]}" --format json > "$TMP/stats.json"
  python3 - "$TMP/stats.json" "$OUT/coverage.json" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
runs = d["runs"]["list"]
latest = max(runs, key=lambda r: r["started_at"]) if runs else {}
json.dump({"runs": len(runs), "latest_run": {k: latest.get(k, "") for k in ("uuid", "kind", "started_at", "git_sha")},
           "measured_by_set_layout": d["groups"]["measured_by_set_layout"],
           "eval_kernels_per_group": d["groups"]["eval_kernels_per_group"]},
          open(sys.argv[2], "w"), indent=1, sort_keys=True)
EOF
  printf 'layout\tstudy\trc\tseconds\tmessage\tcommand\n' > "$OUT/runs.tsv"

  # step LAYOUT STUDY cks-arguments...: runs one cks command, records it in runs.tsv, returns its status.
  step() {
    local layout=$1 study=$2; shift 2
    echo "[studies] $layout $study: cks $*" >&2
    local t0 rc=0 msg cmd="cks $*"
    cmd=${cmd//"$ROOT/"/}
    t0=$(date +%s)
    "$CKS" "$@" > /dev/null 2> "$TMP/err" || rc=$?
    msg=$(tr '\r' '\n' < "$TMP/err" | grep -v '^[[:space:]]*$' | tail -n 1 | tr '\t' ' ' || true)
    printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$layout" "$study" "$rc" "$(( $(date +%s) - t0 ))" "$msg" "$cmd" >> "$OUT/runs.tsv"
    [ "$rc" -eq 0 ] || echo "[studies] $layout $study failed (exit $rc): $msg" >&2
    return "$rc"
  }

  for L in $LAYOUTS; do
    D="$OUT/$L"
    mkdir -p "$D"
    rm -f "$D"/*.csv "$D"/*.png
    for g in eval train all; do
      step "$L" "features_$g" analyze features "${SRC[@]}" --groups "$g" --layouts "$L" --format csv --out-dir "$D"
    done
    step "$L" features_eval_nocut analyze features "${SRC[@]}" --groups eval --layouts "$L" --exclude-cut \
      --format csv --out-dir "$D"
    exhaustive=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["groups"]["eval_kernels_per_group"].get(sys.argv[2], {}).get("exhaustive", 0))' \
      "$TMP/stats.json" "$L")
    if [ "$exhaustive" -gt 0 ]; then
      step "$L" sampling analyze sampling "${SRC[@]}" --layouts "$L" --budgets "$BUDGETS" \
        --alpha-budgets "$ALPHA_BUDGETS" --format csv --out-dir "$D" || true
    else
      printf '%s\tsampling\tskipped\t0\t%s\t\n' "$L" "no exhaustively measured evaluation group of $L" >> "$OUT/runs.tsv"
      echo "[studies] $L sampling skipped: no exhaustively measured evaluation group" >&2
    fi
  done
  printf 'all\ttotal\t0\t%s\tcks commands of this run\t\n' "$(( $(date +%s) - t_start ))" >> "$OUT/runs.tsv"
fi

for L in $LAYOUTS; do
  D="$OUT/$L"
  [ -d "$D" ] || continue
  rm -f "$D"/*.png
  python3 scripts/analysis/plot_analysis.py --in-dir "$D" --title "${L^^}" --dpi 60 --palette > /dev/null
done
# shellcheck disable=SC2086  # LAYOUTS is a list of words
python3 scripts/analysis/studies_md.py "$OUT" $LAYOUTS > "$OUT/README.md"
echo "[studies] wrote $OUT/README.md ($(( $(date +%s) - t_start )) s)" >&2
