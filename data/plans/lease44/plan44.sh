#!/usr/bin/env bash
# Lease 44 plan (session 34, issue 16): a held-out set of tall real-model GEMMs, the first groups
# the tall orientation rule (M > 4096 with N <= 512, any layout; lease 43) changes outside the
# training data. shapes.csv: MoE router gates and GQA k/v projections of public models
# (sources.csv: N, K and the model) at M = 4608, 8192 and 16384 tokens in all four layouts, minus
# every shape, and every (N, K, layout), the corpus holds (168 of 192). Base set `tall` (never
# measured itself, so never trained on: only its `sbs` rows are measured); one round of 3
# repetitions: the default's top 4, own's and the unrestricted rule's first 2, the static first 2.
#   REG=<corpus merged through lease 43> bash data/plans/lease44/plan44.sh
set -euo pipefail
cd "$(dirname "$0")/../../.."
CKS=${CKS:-build/bin/cks} OUT=${OUT:-/tmp/p44}
DEST=${DEST:-data/plans/lease44/lease_run.jsonl.xz}
: "${REG:?merged corpus registry (cks data merge --out REG data/shards/*)}"
mkdir -p "$OUT"
$CKS plan make --shapes data/plans/lease44/shapes.csv --policy top --budget 1 --group-set tall --out "$OUT/made.jsonl"
$CKS plan sidebyside --registry "$REG" --groups "$OUT/made.jsonl" --set tall --model models/default.json \
  --methods deployed,own,both,static --pick-top 4 --other-top 2 --measured-top 0 --reps 3 --round 1 \
  --out "$OUT/lease44.jsonl"
xz -9 -T2 -c "$OUT/lease44.jsonl" > "$DEST"
