#!/usr/bin/env bash
# Lease 42 plan (session 32, issue 16): r18 side by side. r18 is the shipped recipe
# (scripts/models/train_default.sh, seed 0) on every shard through lease 40: 4,040 training groups,
# lease 37's 301 decode-product groups among them, which no earlier model saw. Per base group where
# r18's first pick differs from the shipped r10w4's (both orientations, the default): every such
# group of the evaluation set (tier 0) and the families (tier 1), and a seeded sample of 100 of the
# llm set's stratified by M regime (tier 2; pick42.py): r10w4's top 4, its own-orientation and
# static first picks, r18's top 4 and the group's 3 fastest measured, 4 repetitions, round 105.
#   REG=<corpus merged through lease 40> R18=<r18.json> bash data/plans/lease42/plan42.sh
# r18 is not committed (the repository is at its size limit): SHARDS=<data/shards through lease 40>
# scripts/models/train_default.sh r18.json (deterministic, ~4 minutes on 2 cores).
set -euo pipefail
cd "$(dirname "$0")/../../.."
CKS=${CKS:-build/bin/cks} OUT=${OUT:-/tmp/p42} REPS=${REPS:-4} NAME=${NAME:-lease42} ROUND=${ROUND:-105}
DEST=${DEST:-data/plans/lease42/lease_run.jsonl.xz}
: "${REG:?merged corpus registry (cks data merge --out REG data/shards/*)}"
: "${R18:?the r18 model file}"
mkdir -p "$OUT"
R10W4=models/default.json
PLANS=()
: > "$OUT/r18_picks.jsonl"
: > "$OUT/r10w4_picks.jsonl"
for tier in ${SETS:-0:eval 1:family 2:llm}; do
  IFS=: read -r prio set <<< "$tier"
  SBS=(--registry "$REG" --reps "$REPS" --priority "$prio" --top 4 --set "$set" --round "$ROUND")
  $CKS plan sidebyside "${SBS[@]}" --model "$R10W4" --methods deployed,own,static --pick-top 4 \
    --other-top 1 --static-top 1 --measured-top 3 --out "$OUT/${set}_r10w4.jsonl"
  $CKS plan sidebyside "${SBS[@]}" --model "$R18" --methods deployed --pick-top 4 --other-top 0 --measured-top 0 \
    --out "$OUT/${set}_r18.jsonl"
  # The picks to be covered: both models' top 4.
  $CKS plan sidebyside "${SBS[@]}" --model "$R10W4" --methods deployed --pick-top 4 --other-top 0 --measured-top 0 \
    --out "$OUT/${set}_r10w4_picks.jsonl"
  cat "$OUT/${set}_r18.jsonl" >> "$OUT/r18_picks.jsonl"
  cat "$OUT/${set}_r10w4_picks.jsonl" >> "$OUT/r10w4_picks.jsonl"
  PLANS+=("$OUT/${set}_r10w4.jsonl" "$OUT/${set}_r18.jsonl")
done
$CKS plan merge --union --name "$NAME" --out "$OUT/all.jsonl" "${PLANS[@]}"
python3 data/plans/lease42/pick42.py "$OUT/all.jsonl" "$OUT/r18_picks.jsonl" "$OUT/r10w4_picks.jsonl" \
  "${LLM_GROUPS:-100}" 42 > "$OUT/$NAME.jsonl"
mkdir -p "$(dirname "$DEST")"
xz -9 -T2 -c "$OUT/$NAME.jsonl" > "$DEST"
