#!/usr/bin/env bash
# New training groups from more public model families (`cks shapes --set llm-train`, issue 16:
# dense and MoE, every projection, forward / data-gradient / weight-gradient), planned for a lease
# here from the committed data, xz-compressed for the device call:
#
#   scripts/corpus/llm_train_plan.sh [OUT_DIR]          (default .carry)
#
#   llm_train_groups.jsonl  $PICK_TN TN and $PICK_GRAD NT + NN groups of set 'train' drawn with
#                           seed $SEED, none of them a shape of the 'llm' set (the evaluation set
#                           draws from it), of the paper set or of a training group of the source
#   llm_train.jsonl         tier $PRIORITY: `cks plan active --groups`: the model's first $PICKS picks
#                           (deployed and over the whole catalogue) and $EXPLORE exploration pick(s)
#                           per group, at most $MAX_KERNELS kernels; joined (`plan merge --union`)
#                           with `plan fill --groups`: every planned kernel at default knobs in every
#                           new group of its layout (their first sweep)
#
# Join it with a lease's other plans by `cks plan merge --union` (after them: its tier orders its
# compiles after theirs). Environment: CKS, MODEL, REG (a merged registry), and the sizes above;
# M_MAX=64 draws only shapes with M <= 64 (decode: the slice where the deployed pick is weakest,
# NOTES.md lease 13).
set -euo pipefail
cd "$(dirname "$0")/../.."
OUT=${1:-.carry}
CKS=${CKS:-build/bin/cks}
MODEL=${MODEL:-models/default.json}
PICK_TN=${PICK_TN:-32} PICK_GRAD=${PICK_GRAD:-64} SEED=${SEED:-0}
PICKS=${PICKS:-4} EXPLORE=${EXPLORE:-2} MAX_KERNELS=${MAX_KERNELS:-150} PRIORITY=${PRIORITY:-1}
. scripts/corpus/corpus_source.sh
mkdir -p "$OUT"
# Excluded: the paper set's shapes and every shape the source already has a training group of (a
# group's seed is part of its identity, so a redrawn group could not join its measured twin).
"$CKS" shapes --set paper --format csv | cut -d, -f1-5 > "$TMP/exclude.csv"
python3 - "${SRC[1]}" >> "$TMP/exclude.csv" <<'PY'
import sqlite3, sys
db = sqlite3.connect(f"file:{sys.argv[1]}?mode=ro", uri=True)
for key, m, n, k, layout in db.execute("SELECT DISTINCT key, m, n, k, layout FROM groups WHERE set_name = 'train'"):
    print(f"{key},{m},{n},{k},{layout}")
PY
SHAPES=(--set llm-train)
if [ -n "${M_MAX:-}" ]; then
  "$CKS" shapes --set llm-train --format csv | awk -F, -v max="$M_MAX" 'NR == 1 || $2 <= max' > "$TMP/llm_train_small.csv"
  SHAPES=(--shapes "$TMP/llm_train_small.csv")
fi
MAKE=("${SHAPES[@]}" --exclude-set llm --exclude-shapes "$TMP/exclude.csv" --seed "$SEED" --policy top --budget 1
      --group-set train)
"$CKS" plan make "${MAKE[@]}" --layouts tn --pick "$PICK_TN" --out "$TMP/tn.jsonl"
"$CKS" plan make "${MAKE[@]}" --layouts nt,nn --pick "$PICK_GRAD" --out "$TMP/grad.jsonl"
"$CKS" plan merge --out "$OUT/llm_train_groups.jsonl" "$TMP/tn.jsonl" "$TMP/grad.jsonl"
"$CKS" plan active "${SRC[@]}" --model "$MODEL" --groups "$OUT/llm_train_groups.jsonl" --set train \
  --picks "$PICKS" --explore "$EXPLORE" --explore-depth 64 --max-kernels "$MAX_KERNELS" --priority "$PRIORITY" \
  --out "$TMP/active.jsonl"
"$CKS" plan fill "${SRC[@]}" --groups "$OUT/llm_train_groups.jsonl" --set train --from "$TMP/active.jsonl" \
  --priority "$PRIORITY" --out "$TMP/fill.jsonl"
"$CKS" plan merge --union --name llm_train --out "$TMP/llm_train.jsonl" "$TMP/active.jsonl" "$TMP/fill.jsonl"
xz -6 -c "$TMP/llm_train.jsonl" > "$OUT/llm_train.jsonl.xz"
"$CKS" plan show "$TMP/llm_train.jsonl" --format csv 2>&1 > /dev/null | head -1 >&2
