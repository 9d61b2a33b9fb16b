#!/usr/bin/env bash
# Lease 26 plan (made and run in session 22): side-by-side round 11 of the evaluation groups and
# round 10 of the families with 8 repetitions (4 before): the shipped r10w4's top 4, the static
# first pick and each group's 3 fastest measured kernels, and the first pick of r12off (r10w4's
# recipe on the same data with `--run-normalize offset`, docs/models.md), all scored on the same
# repetitions. The evaluation groups are tier 0, the families tier 1.
#   REG=<corpus merged through lease 24> R12OFF=<r12off.json> bash data/plans/lease26/plan26.sh
# r12off = `RUN_NORMALIZE=offset EXCLUDE_SHARDS="20261203_ae842bc1.db.xz" scripts/models/train_default.sh`
# (the shards through lease 21, r10w4's data; session 22 trained it with the same options on a
# registry merged from those shards).
set -euo pipefail
cd "$(dirname "$0")/../../.."
CKS=${CKS:-build/bin/cks} OUT=${OUT:-/tmp/p26}
: "${REG:?merged corpus registry (cks data merge --out REG data/shards/*)}"
: "${R12OFF:?the r12off model file}"
mkdir -p "$OUT"
R10W4=models/default.json
for tier in 0:eval:11 1:family:10; do
  IFS=: read -r prio set round <<< "$tier"
  SBS=(--registry "$REG" --reps 8 --static-top 1 --priority "$prio" --other-top 1 --measured-top 3 --top 4 --set "$set" --round "$round")
  $CKS plan sidebyside "${SBS[@]}" --model "$R10W4" --methods deployed,static --pick-top 4 --out "$OUT/${set}_r10w4.jsonl"
  $CKS plan sidebyside "${SBS[@]}" --model "$R12OFF" --methods deployed --pick-top 1 --out "$OUT/${set}_r12off.jsonl"
done
$CKS plan merge --union --name lease26 --out "$OUT/lease26.jsonl" "$OUT"/eval_*.jsonl "$OUT"/family_*.jsonl
xz -9 -T2 -c "$OUT/lease26.jsonl" > data/plans/lease26/lease_run.jsonl.xz
