#!/usr/bin/env bash
# Rebuilds docs/results.md: the shipped model and every baseline of `cks eval` on the evaluation
# groups of the committed data (data/shards), per layout: the 32 exhaustive evaluation groups of
# each of TN, NT and NN. Every other model arm, tuned, is in docs/hpo.md.
#   scripts/eval/results.sh [OUT_DIR]      (about 8 minutes on 2 cores)
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
  echo "$*" > "$OUT/$name.args"
  echo $(( $(date +%s) - t0 )) > "$OUT/$name.seconds"
}
run default_tn --model models/default.json --layouts tn --prefilter 1024
run default_nt --model models/default.json --layouts nt --prefilter 1024
run default_nn --model models/default.json --layouts nn --prefilter 1024
python3 scripts/eval/results_md.py "$OUT" > docs/results.md
echo "[results] wrote docs/results.md" >&2
