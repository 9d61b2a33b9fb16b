#!/usr/bin/env bash
# Builds the collection plans of one layout's corpus, deterministically from the committed code
# (the plans themselves are large and are rebuilt where they are used, e.g. on the GPU machine):
#
#   scripts/corpus/make_plans.sh LAYOUT [OUT_DIR] [CKS]
#
#   OUT_DIR/pool_<l>_2000_seed0.txt   the compiled pool (cks pool: coverage + top 60% + explore)
#   OUT_DIR/eval_<l>.jsonl            32 evaluation groups, exhaustive over the pool at each
#                                     kernel's default runtime knobs: 16 LLM shapes + 16 held-out
#                                     anchor-grid shapes, none of them a paper (training) shape
#                                     (tt: the LLM weight-gradient GEMMs with a row-major output)
#   OUT_DIR/train_<l>.jsonl           every paper-set shape of the layout (less the issue-3 proof
#                                     shapes, which keep their own groups), in a seeded random
#                                     order, biased-diverse (alpha 0.75) at the paper's budgets
#   OUT_DIR/lease_<l>.jsonl           eval + (data/plans/remeasure_<l>.jsonl if present) + train,
#                                     the plan a lease collects (groups in this order)
# The pool and eval plan are committed under data/plans; the training plan (about 1.2 M
# candidates) is rebuilt here from the same commands, so it is identical wherever it is made.
set -euo pipefail
L=${1:?usage: make_plans.sh LAYOUT [OUT_DIR] [CKS]}
OUT=${2:-data/plans}
CKS=${3:-build/bin/cks}
mkdir -p "$OUT"
POOL="$OUT/pool_${L}_2000_seed0.txt"
[ -f "$POOL" ] || "$CKS" pool --layout "$L" --size 2000 --seed 0 --ids > "$POOL"
# The issue-3 proof shapes (TN) keep their own groups: a shape belongs to one set.
EXCL=()
[ -f data/plans/shapes_proof_tn.csv ] && EXCL=(--exclude-shapes data/plans/shapes_proof_tn.csv)

if [ ! -f "$OUT/eval_${L}.jsonl" ]; then
  if [ "$L" = tt ]; then
    # The LLM set lists each pass in one orientation (docs/shapes-and-sampling.md): tt is the
    # weight-gradient (nn) GEMM written with a row-major output, D^T = B^T A^T, i.e. M and N swapped.
    "$CKS" shapes --set llm --layouts nn --format csv |
      awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; print "m,n,k,layout,class,detail"; next }
               { print $c["n"] "," $c["m"] "," $c["k"] ",tt,llm," $c["detail"] }' > "$OUT/llm_tt_shapes.csv"
    LLM_SRC=(--shapes "$OUT/llm_tt_shapes.csv")
  else
    LLM_SRC=(--set llm --layouts "$L")
  fi
  "$CKS" plan make "${LLM_SRC[@]}" --exclude-set paper "${EXCL[@]}" --pick 16 --seed 0 \
    --policy exhaustive --knobs default --pool "$POOL" --group-set eval --out "$OUT/eval_llm_${L}.jsonl"
  "$CKS" plan make --set heldout --layouts "$L" "${EXCL[@]}" --pick 16 --seed 0 \
    --policy exhaustive --knobs default --pool "$POOL" --group-set eval --out "$OUT/eval_heldout_${L}.jsonl"
  "$CKS" plan merge --out "$OUT/eval_${L}.jsonl" "$OUT/eval_llm_${L}.jsonl" "$OUT/eval_heldout_${L}.jsonl"
  rm -f "$OUT/eval_llm_${L}.jsonl" "$OUT/eval_heldout_${L}.jsonl" "$OUT/llm_tt_shapes.csv"
fi
"$CKS" plan make --set paper --layouts "$L" "${EXCL[@]}" --pick 100000 --seed 0 \
  --policy biased-diverse --alpha 0.75 --budget auto --pool "$POOL" --group-set train --out "$OUT/train_${L}.jsonl"
PLANS=("$OUT/eval_${L}.jsonl")
[ -f "data/plans/remeasure_${L}.jsonl" ] && PLANS+=("data/plans/remeasure_${L}.jsonl")
PLANS+=("$OUT/train_${L}.jsonl")
"$CKS" plan merge --out "$OUT/lease_${L}.jsonl" "${PLANS[@]}"
