#!/usr/bin/env bash
# Lease 19 plan (made in session 15, after r7 was shipped): the real-model shapes first.
#   tier 0  the llm set's TN groups (real-model projection GEMMs, none trained on) with the shipped
#           model's top 4 and every knob variant of its first pick, and cuBLAS: what users run, and
#           every kernel of the runtime check's bundle (top 4 of the shipped model) compiled on the
#           machine before scripts/device/runtime_check.sh and python_check.sh run after the collection;
#   tier 1  side-by-side round 9 of the evaluation groups and round 8 of the families with the
#           shipped r7: its top 4 (never measured as a set: leases 17-18 measured its first pick),
#           the static first pick and the 3 fastest measured, 4 repetitions;
#   tier 2  300 new llm-train groups (seed 5) with r7's picks;
#   tier 3  active-learning round 6: r7's 2 first unmeasured picks and 1 exploration pick (where
#           bootstrap models disagree) in 300 seeded training groups (lease 17 already filled r7's
#           picks into every training group).
#   REG=<merged corpus through lease 18> bash data/plans/lease19/plan19.sh
set -euo pipefail
cd "$(dirname "$0")/../../.."
CKS=${CKS:-build/bin/cks} OUT=${OUT:-/tmp/p19}
: "${REG:?merged corpus registry}"
MODEL=models/default.json
mkdir -p "$OUT"
$CKS plan make --set llm --layouts tn --group-set llm --policy top --budget 1 --out "$OUT/llm_groups.jsonl"
$CKS plan picks --registry "$REG" --groups "$OUT/llm_groups.jsonl" --set llm --model "$MODEL" --methods deployed --top 4 \
  --knob-top 1 --priority 0 --out "$OUT/llm_picks.jsonl"
SBS=(--registry "$REG" --reps 4 --static-top 1 --priority 1 --model "$MODEL" --methods deployed,static --pick-top 4 --other-top 1 \
  --measured-top 3 --top 4)
$CKS plan sidebyside "${SBS[@]}" --set eval --round 9 --out "$OUT/sbs9.jsonl"
$CKS plan sidebyside "${SBS[@]}" --set family --round 8 --out "$OUT/family_sbs8.jsonl"
CKS=$CKS MODEL=$MODEL REG=$REG SEED=5 PICK_TN=100 PICK_GRAD=200 MAX_KERNELS=250 scripts/corpus/llm_train_plan.sh "$OUT"
xz -dc "$OUT/llm_train.jsonl.xz" > "$OUT/llm_train.jsonl"
# An llm shape that is also a training group joins that group (plan merge --union refuses one key in
# two sets): its picks are measured as training rows.
python3 scripts/corpus/join_train_groups.py "$OUT/llm_picks.jsonl" "$OUT/llm_train.jsonl"
$CKS plan active --registry "$REG" --model "$MODEL" --set train --pick 300 --seed 6 --picks 2 --explore 1 --explore-depth 64 \
  --max-kernels 300 --priority 3 --out "$OUT/active6.jsonl"
$CKS plan merge --union --name lease19 --out "$OUT/lease19.jsonl" "$OUT/llm_picks.jsonl" "$OUT/sbs9.jsonl" \
  "$OUT/family_sbs8.jsonl" "$OUT/llm_train.jsonl" "$OUT/active6.jsonl"
$CKS plan show "$OUT/lease19.jsonl" --format csv 2>&1 > /dev/null | head -1
xz -9 -T2 -c "$OUT/lease19.jsonl" > data/plans/lease19/lease_run.jsonl.xz
for f in llm_picks sbs9 family_sbs8 active6; do xz -9 -c "$OUT/$f.jsonl" > "data/plans/lease19/$f.jsonl.xz"; done
cp "$OUT/llm_train.jsonl.xz" data/plans/lease19/
