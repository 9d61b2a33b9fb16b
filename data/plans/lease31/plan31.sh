#!/usr/bin/env bash
# Lease 31 plan (session 26, issue 16): side-by-side round 13 of the evaluation groups and round 11
# of the families for r13 (the shipped recipe, `scripts/models/train_default.sh`, on every shard
# through lease 30: the wave-fill exploration in the training groups), in the groups where r13's top 4
# is not all in the group's latest round (elsewhere that round already measured r13's picks
# side by side). Per group: r13's top 4, the static first pick, the group's 3 fastest measured
# kernels, and r10w4's (the shipped model's) top 4, so the two are paired in one round. Evaluation
# groups tier 0, families tier 1.
#   REG=<corpus merged through lease 30> R13=<r13.json> [REPS=8] bash data/plans/lease31/plan31.sh
# Later rounds of the same shape (lease 34): R13=<the new model> NAME=lease34 ROUNDS="0:eval:14
# 1:family:12" DEST=data/plans/lease34/lease_run.jsonl.xz bash data/plans/lease31/plan31.sh
set -euo pipefail
cd "$(dirname "$0")/../../.."
CKS=${CKS:-build/bin/cks} OUT=${OUT:-/tmp/p31} REPS=${REPS:-8} NAME=${NAME:-lease31}
DEST=${DEST:-data/plans/lease31/lease_run.jsonl.xz}
: "${REG:?merged corpus registry (cks data merge --out REG data/shards/*)}"
: "${R13:?the r13 model file}"
mkdir -p "$OUT"
R10W4=models/default.json
for tier in ${ROUNDS:-0:eval:13 1:family:11}; do
  IFS=: read -r prio set round <<< "$tier"
  SBS=(--registry "$REG" --reps "$REPS" --priority "$prio" --top 4 --set "$set" --round "$round")
  $CKS plan sidebyside "${SBS[@]}" --model "$R13" --methods deployed,static --static-top 1 --other-top 1 --pick-top 4 --measured-top 3 --out "$OUT/${set}_r13.jsonl"
  $CKS plan sidebyside "${SBS[@]}" --model "$R10W4" --methods deployed --other-top 0 --pick-top 4 --measured-top 0 --out "$OUT/${set}_r10w4.jsonl"
  $CKS plan sidebyside "${SBS[@]}" --model "$R13" --methods deployed --other-top 0 --pick-top 4 --measured-top 0 --out "$OUT/picks_${set}.jsonl"
done
cat "$OUT/picks_eval.jsonl" > "$OUT/picks.jsonl"; tail -n +2 "$OUT/picks_family.jsonl" >> "$OUT/picks.jsonl"
$CKS plan merge --union --name "$NAME" --out "$OUT/all.jsonl" "$OUT"/eval_r13.jsonl "$OUT"/eval_r10w4.jsonl "$OUT"/family_r13.jsonl "$OUT"/family_r10w4.jsonl
python3 data/plans/lease31/changed_groups.py "$REG" "$OUT/picks.jsonl" "$OUT/all.jsonl" > "$OUT/$NAME.jsonl"
mkdir -p "$(dirname "$DEST")"
xz -9 -T2 -c "$OUT/$NAME.jsonl" > "$DEST"
