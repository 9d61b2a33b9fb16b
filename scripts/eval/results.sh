#!/usr/bin/env bash
# Rebuilds docs/results.md: the side-by-side regret of the real picks (cks analyze sidebyside, the
# headline), then the shipped model and every baseline of `cks eval` on the evaluation groups of the
# committed data (data/shards), per layout: the 32 exhaustive evaluation groups of each of TN, NT,
# NN and TT. Every other model arm, tuned, is in docs/hpo.md.
#   scripts/eval/results.sh [OUT_DIR]      (about 11 minutes on 2 cores)
# MODEL=path evaluates another model file; NO_DOC=1 leaves docs/results.md alone; REG=path reads a
# registry merged from data/shards (cks data merge) instead of merging the shards in every call;
# PREV_MODEL=path also scores the model shipped before on the same side-by-side rounds.
set -euo pipefail
cd "$(dirname "$0")/../.."
OUT=${1:-build/results}
CKS=${CKS:-build/bin/cks}
mkdir -p "$OUT"
run() {  # name, cks eval arguments...
  local name=$1; shift
  echo "[results] $name: cks eval $*" >&2
  local t0=$(date +%s)
  "$CKS" eval --groups evaluation --format json ${REG:+--registry "$REG"} "$@" > "$OUT/$name.json"
  echo "$*" > "$OUT/$name.args"
  echo $(( $(date +%s) - t0 )) > "$OUT/$name.seconds"
}
MODEL=${MODEL:-models/default.json}
for layout in tn nt nn tt; do
  run default_$layout --model "$MODEL" --layouts $layout --prefilter 1024
done
# Like with like: the side-by-side repetitions (cks plan sidebyside), each group's latest round,
# the headline of docs/results.md: the evaluation groups, the held-out model families (set
# 'family'), the llm set's groups (lease 38), and with PREV_MODEL the model shipped before, whose first pick the same round measured.
sbs() {  # name, model, base set, plot title[, methods]
  echo "[results] $1: cks analyze sidebyside --model $2 --base-set $3" >&2
  local t0=$(date +%s)
  "$CKS" analyze sidebyside ${REG:+--registry "$REG"} --model "$2" --base-set "$3" --methods "${5:-deployed,own,exhaustive,static}" \
    --per-group "$OUT/$1_groups.csv" --format json > "$OUT/$1.json"
  echo $(( $(date +%s) - t0 )) > "$OUT/$1.seconds"
  python3 scripts/analysis/plot_sidebyside.py "$OUT/$1_groups.csv" "$OUT/$1" --title "$4" > /dev/null
}
sbs sidebyside "$MODEL" eval "evaluation groups"
sbs sidebyside_family "$MODEL" family "held-out families"
sbs sidebyside_llm "$MODEL" llm "llm shapes" deployed,own,static
if [ -n "${PREV_MODEL:-}" ]; then
  sbs sidebyside_prev "$PREV_MODEL" eval "evaluation groups, previous model" deployed
  sbs sidebyside_family_prev "$PREV_MODEL" family "held-out families, previous model" deployed
fi
[ -n "${NO_DOC:-}" ] && exit 0
# The per-group tables and plots docs/results.md points to.
for f in "$OUT"/sidebyside*_groups.csv "$OUT"/sidebyside_regret_cdf.png "$OUT"/sidebyside_vs_cublas.png \
         "$OUT"/sidebyside_family_regret_cdf.png "$OUT"/sidebyside_family_vs_cublas.png \
         "$OUT"/sidebyside_llm_regret_cdf.png "$OUT"/sidebyside_llm_vs_cublas.png; do
  [ -f "$f" ] && cp "$f" docs/analysis/
done
python3 scripts/eval/results_md.py "$OUT" > docs/results.md
echo "[results] wrote docs/results.md" >&2
