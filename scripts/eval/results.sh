#!/usr/bin/env bash
# Rebuilds docs/results.md: every model and baseline of `cks eval` on the evaluation groups of
# the committed data (data/shards). The shipped model is evaluated as shipped; the other arms
# are trained on the spot with their default hyper-parameters (deterministic, 2 threads).
#   scripts/eval/results.sh [OUT_DIR]      (about 5 minutes on 2 cores; CKS_RESULTS_MLP=1 adds
#                                           the MLP arm, about 25 minutes more)
set -euo pipefail
cd "$(dirname "$0")/../.."
OUT=${1:-build/results}
CKS=${CKS:-build/bin/cks}
mkdir -p "$OUT"
run() {  # name, cks eval arguments...
  local name=$1; shift
  echo "[results] $name: cks eval $*" >&2
  local t0=$(date +%s)
  "$CKS" eval --groups evaluation --format json "$@" > "$OUT/$name.json"
  echo $(( $(date +%s) - t0 )) > "$OUT/$name.seconds"
}
run default --model models/default.json
run xgb_pairwise --model xgboost:rank:pairwise --threads 2 --no-baselines
run xgb_reg --model xgboost:reg:squarederror --threads 2 --no-baselines
run ridge --model ridge --no-baselines
if [ "${CKS_RESULTS_MLP:-0}" = 1 ]; then
  run mlp_lambdarank_exp --model mlp:lambdarank-exp --threads 2 --no-baselines || echo "[results] mlp unavailable" >&2
fi
python3 scripts/eval/results_md.py "$OUT" > docs/results.md
echo "[results] wrote docs/results.md" >&2
