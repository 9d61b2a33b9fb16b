#!/usr/bin/env bash
# Lease 48 plan (session 38, issue 16): a held-out set for the orientation rule's short-K region
# (M > 256 with N <= 512 and K <= 4096, any layout; chosen on training groups of leases 41 and 43
# in session 38). shapes.csv: GQA k/v projections and MoE router gates of public models
# (sources.csv: N, K and the model) at M = 520, 1024, 1536, 2048, 3072 and 3576 tokens in all four
# layouts, minus every shape, and every (N, K, layout), the corpus holds (126 of 336). Base set
# `shortk` (never measured itself, so never trained on: only its `sbs` rows are measured); one
# round of 3 repetitions: the default's top 4, the first 2 of own, of the session-34 default
# (both:m256:ltn+nn+tt:t4096x512:k0, the rule without this region) and of the static score.
#   REG=<corpus merged through lease 44> bash data/plans/lease48/plan48.sh
set -euo pipefail
cd "$(dirname "$0")/../../.."
CKS=${CKS:-build/bin/cks} OUT=${OUT:-/tmp/p48}
DEST=${DEST:-data/plans/lease48/lease_run.jsonl.xz}
: "${REG:?merged corpus registry (cks data merge --out REG data/shards)}"
mkdir -p "$OUT"
$CKS plan make --shapes data/plans/lease48/shapes.csv --policy top --budget 1 --group-set shortk --out "$OUT/made.jsonl"
$CKS plan sidebyside --registry "$REG" --groups "$OUT/made.jsonl" --set shortk --model models/default.json \
  --methods deployed,own,both:m256:ltn+nn+tt:t4096x512:k0,static --pick-top 4 --other-top 2 --measured-top 0 \
  --reps 3 --round 1 --out "$OUT/lease48.jsonl"
xz -9 -T2 -c "$OUT/lease48.jsonl" > "$DEST"
