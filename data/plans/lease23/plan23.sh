#!/usr/bin/env bash
# Lease 23 plan (made in session 19): r10w4, the first model with a measured offline gain, side by
# side with the shipped r7 in one round.
#   r10w4 = scripts/models/train_default.sh with TOP_WEIGHT=4 (each training row weighs y^4) on the
#   shards through lease 21. Offline, on lease 20's side-by-side round, its first pick was measured in
#   120 of 174 groups, and there it beats r7 by 0.52 points (2.02 -> 1.50 %, 95 % -0.87..-0.19) and the
#   unweighted r9 (same data) by 0.63 (NOTES.md, session 19). The 54 other groups are what this
#   lease measures.
#   tier 0  side-by-side round 10 of the evaluation groups and round 9 of the families: r10w4's top 4
#           (+ the static first pick, the 3 fastest measured), and in the same round the first picks
#           of r7 (the shipped model), r10w4s1 (the same recipe, training seed 1) and r9 (the
#           unweighted recipe on the same data): all scored on the same repetitions, 4 of them.
#           Seed 1 did not repeat seed 0's offline gain (-0.27 points against r7 where measured), so
#           the round also measures how far two seeds of one recipe differ;
#   tier 1  the llm set's TN groups: r10w4's top 4 and the knob variants of its first pick, where
#           not measured yet (single pass, as leases 19-20 measured r7's).
#   REG=<merged corpus through lease 21> [MODEL=<r10w4.json>] [MODEL_S1=<r10w4s1.json>] [MODEL_R9=<r9.json>] \
#     bash data/plans/lease23/plan23.sh
# A model not given is trained first (about 4-7 minutes each on 2 cores): r10w4 = TOP_WEIGHT=4,
# r10w4s1 = TOP_WEIGHT=4 SEED=1, r9 = the plain recipe, each scripts/models/train_default.sh on the
# shards through lease 21.
set -euo pipefail
cd "$(dirname "$0")/../../.."
CKS=${CKS:-build/bin/cks} OUT=${OUT:-/tmp/p23}
: "${REG:?merged corpus registry (cks data merge --out REG data/shards/*)}"
mkdir -p "$OUT"
MODEL=${MODEL:-$OUT/r10w4.json} MODEL_S1=${MODEL_S1:-$OUT/r10w4s1.json} MODEL_R9=${MODEL_R9:-$OUT/r9.json}
[ -f "$MODEL" ] || TOP_WEIGHT=4 scripts/models/train_default.sh "$MODEL"
[ -f "$MODEL_S1" ] || TOP_WEIGHT=4 SEED=1 scripts/models/train_default.sh "$MODEL_S1"
[ -f "$MODEL_R9" ] || scripts/models/train_default.sh "$MODEL_R9"
R7=models/default.json
SBS=(--registry "$REG" --reps 4 --static-top 1 --priority 0 --other-top 1 --measured-top 3 --top 4)
$CKS plan sidebyside "${SBS[@]}" --model "$MODEL" --methods deployed,static --pick-top 4 --set eval --round 10 --out "$OUT/sbs10_r10w4.jsonl"
for M in r7:"$R7" s1:"$MODEL_S1" r9:"$MODEL_R9"; do
  $CKS plan sidebyside "${SBS[@]}" --model "${M#*:}" --methods deployed --pick-top 1 --set eval --round 10 --out "$OUT/sbs10_${M%%:*}.jsonl"
  $CKS plan sidebyside "${SBS[@]}" --model "${M#*:}" --methods deployed --pick-top 1 --set family --round 9 --out "$OUT/family9_${M%%:*}.jsonl"
done
$CKS plan sidebyside "${SBS[@]}" --model "$MODEL" --methods deployed,static --pick-top 4 --set family --round 9 --out "$OUT/family9_r10w4.jsonl"
$CKS plan make --set llm --layouts tn --group-set llm --policy top --budget 1 --out "$OUT/llm_groups.jsonl"
$CKS plan picks --registry "$REG" --groups "$OUT/llm_groups.jsonl" --set llm --model "$MODEL" --methods deployed --top 4 \
  --knob-top 1 --priority 1 --out "$OUT/llm_picks.jsonl"
$CKS plan merge --union --name lease23 --out "$OUT/lease23.jsonl" "$OUT"/sbs10_*.jsonl "$OUT"/family9_*.jsonl \
  "$OUT/llm_picks.jsonl"
$CKS plan show "$OUT/lease23.jsonl" --format csv 2>&1 > /dev/null | head -1
xz -9 -T2 -c "$OUT/lease23.jsonl" > data/plans/lease23/lease_run.jsonl.xz
