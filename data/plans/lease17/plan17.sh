#!/usr/bin/env bash
# Lease 17 plan (made in session 13): side-by-side round 7 (eval) and round 6 (family) with r7
# against the shipped r6; new llm-train shapes (seed 3) with r7's picks; r7's picks filled into
# every training group.
set -euo pipefail
cd /work/main
CKS=build/bin/cks REG=/tmp/corpus8.db M=/tmp/s13/r7.json BASE=models/default.json OUT=/tmp/s13/p17
SBS=(--registry $REG --reps 4 --static-top 1 --priority 0)
$CKS plan sidebyside "${SBS[@]}" --model $M --set eval --round 7 --methods deployed,static --pick-top 4 --other-top 1 \
  --measured-top 3 --top 4 --out $OUT/sbs7.jsonl
$CKS plan sidebyside "${SBS[@]}" --model $BASE --set eval --round 7 --methods deployed --pick-top 1 --measured-top 0 \
  --top 1 --out $OUT/sbs7_base.jsonl
$CKS plan sidebyside "${SBS[@]}" --model $M --set family --round 6 --methods deployed,static --pick-top 4 --other-top 1 \
  --measured-top 3 --top 4 --out $OUT/family_sbs6.jsonl
$CKS plan sidebyside "${SBS[@]}" --model $BASE --set family --round 6 --methods deployed --pick-top 1 --measured-top 0 \
  --top 1 --out $OUT/family_sbs6_base.jsonl
CKS=$CKS MODEL=$M REG=$REG SEED=3 PICK_TN=100 PICK_GRAD=200 MAX_KERNELS=250 scripts/corpus/llm_train_plan.sh $OUT
xz -dc $OUT/llm_train.jsonl.xz > $OUT/llm_train.jsonl
$CKS plan fill --registry $REG --from $OUT/sbs7.jsonl --from $OUT/family_sbs6.jsonl --set train --seed 17 --priority 2 \
  --out $OUT/fill17.jsonl
$CKS plan merge --union --name lease17 --out $OUT/lease17.jsonl $OUT/sbs7.jsonl $OUT/sbs7_base.jsonl \
  $OUT/family_sbs6.jsonl $OUT/family_sbs6_base.jsonl $OUT/llm_train.jsonl $OUT/fill17.jsonl
$CKS plan show $OUT/lease17.jsonl --format csv 2>&1 > /dev/null | head -1
