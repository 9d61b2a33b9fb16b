#!/usr/bin/env bash
# Lease 18 plan (made in session 14): side-by-side round 8 (eval) and round 7 (family) with r8
# (trained through lease 17) against the shipped r6 and r7 (lease 17's candidate); new llm-train
# shapes (seed 4) with r8's picks; r8's picks filled into every training group; and, last, the
# shipped model's top 4 in the llm set's TN groups (group set "llm": real-model shapes measured
# with their picks and cuBLAS), so that the machine's compile cache holds every kernel of the
# runtime check's bundle when scripts/device/runtime_check.sh runs after the collection.
#   R8=<r8.json> R7=<r7.json> REG=<merged corpus> bash data/plans/lease18/plan18.sh
# r8: scripts/models/train_default.sh on every shard through lease 17 (EXCLUDE_SHARDS empty);
# r7: EXCLUDE_SHARDS="20261202_d709be9e.db.xz" scripts/models/train_default.sh.
set -euo pipefail
cd "$(dirname "$0")/../../.."
CKS=${CKS:-build/bin/cks} OUT=${OUT:-/tmp/p18}
: "${R8:?r8 model}" "${R7:?r7 model}" "${REG:?merged corpus registry}"
BASE=models/default.json
mkdir -p "$OUT"
SBS=(--registry "$REG" --reps 4 --static-top 1 --priority 0)
$CKS plan sidebyside "${SBS[@]}" --model "$R8" --set eval --round 8 --methods deployed,static --pick-top 4 --other-top 1 \
  --measured-top 3 --top 4 --out "$OUT/sbs8.jsonl"
$CKS plan sidebyside "${SBS[@]}" --model "$BASE" --set eval --round 8 --methods deployed --pick-top 1 --measured-top 0 \
  --top 1 --out "$OUT/sbs8_base.jsonl"
$CKS plan sidebyside "${SBS[@]}" --model "$R7" --set eval --round 8 --methods deployed --pick-top 1 --measured-top 0 \
  --top 1 --out "$OUT/sbs8_r7.jsonl"
$CKS plan sidebyside "${SBS[@]}" --model "$R8" --set family --round 7 --methods deployed,static --pick-top 4 --other-top 1 \
  --measured-top 3 --top 4 --out "$OUT/family_sbs7.jsonl"
$CKS plan sidebyside "${SBS[@]}" --model "$BASE" --set family --round 7 --methods deployed --pick-top 1 --measured-top 0 \
  --top 1 --out "$OUT/family_sbs7_base.jsonl"
$CKS plan sidebyside "${SBS[@]}" --model "$R7" --set family --round 7 --methods deployed --pick-top 1 --measured-top 0 \
  --top 1 --out "$OUT/family_sbs7_r7.jsonl"
CKS=$CKS MODEL=$R8 REG=$REG SEED=4 PICK_TN=100 PICK_GRAD=200 MAX_KERNELS=250 scripts/corpus/llm_train_plan.sh "$OUT"
xz -dc "$OUT/llm_train.jsonl.xz" > "$OUT/llm_train.jsonl"
$CKS plan fill --registry "$REG" --from "$OUT/sbs8.jsonl" --from "$OUT/family_sbs7.jsonl" --set train --seed 18 --priority 2 \
  --out "$OUT/fill18.jsonl"
# The llm set's TN groups with the shipped model's top 4 (what the runtime's bundle holds).
$CKS plan make --set llm --layouts tn --group-set llm --policy top --budget 1 --out "$OUT/llm_groups.jsonl"
$CKS plan picks --registry "$REG" --groups "$OUT/llm_groups.jsonl" --set llm --model "$BASE" --methods deployed --top 4 --knob-top 0 \
  --priority 3 --out "$OUT/llm_picks.jsonl"
# An llm shape that is also a training group of the other parts joins that group (same key and
# seed; plan merge --union refuses one key in two sets): its picks are measured as training rows.
python3 scripts/corpus/join_train_groups.py "$OUT/llm_picks.jsonl" "$OUT/fill18.jsonl" "$OUT/llm_train.jsonl"
$CKS plan merge --union --name lease18 --out "$OUT/lease18.jsonl" "$OUT/sbs8.jsonl" "$OUT/sbs8_base.jsonl" \
  "$OUT/sbs8_r7.jsonl" "$OUT/family_sbs7.jsonl" "$OUT/family_sbs7_base.jsonl" "$OUT/family_sbs7_r7.jsonl" \
  "$OUT/llm_train.jsonl" "$OUT/fill18.jsonl" "$OUT/llm_picks.jsonl"
$CKS plan show "$OUT/lease18.jsonl" --format csv 2>&1 > /dev/null | head -1
xz -9 -T2 -c "$OUT/lease18.jsonl" > data/plans/lease18/lease_run.jsonl.xz
for f in sbs8 sbs8_base sbs8_r7 family_sbs7 family_sbs7_base family_sbs7_r7 llm_picks; do
  xz -9 -c "$OUT/$f.jsonl" > "data/plans/lease18/$f.jsonl.xz"
done
cp "$OUT/llm_train.jsonl.xz" data/plans/lease18/
