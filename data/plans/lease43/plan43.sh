#!/usr/bin/env bash
# Lease 43 plan (session 34, issue 16), training groups only, 3 repetitions (A round 106, B 107):
#   A. pick43a.py: the orientation rule at M > 256 with small N (N <= 512): the base groups where
#      the unrestricted rule's first pick differs from the default's (M <= 256; tn, nn, tt), which
#      lease 41 did not measure; the default's and the unrestricted rule's first 2 picks and the
#      group's 3 fastest measured, with cuBLAS; at most 200 kernels to compile on the machine.
#   B. pick43b.py: split-K 16 and 32 (KnobScope::measurable) on the 4 fastest stream-K kernels of
#      few-tile (<= 16 tiles of 128x128), large-K (>= 4096) training groups, beside their split-K 8
#      and the group's 3 fastest measured.
#   REG=<corpus merged through lease 42> bash data/plans/lease43/plan43.sh
set -euo pipefail
cd "$(dirname "$0")/../../.."
CKS=${CKS:-build/bin/cks} OUT=${OUT:-/tmp/p43}
DEST=${DEST:-data/plans/lease43/lease_run.jsonl.xz}
: "${REG:?merged corpus registry (cks data merge --out REG data/shards/*)}"
mkdir -p "$OUT"
$CKS plan sidebyside --registry "$REG" --set train --model models/default.json --methods deployed,both \
  --pick-top 2 --other-top 2 --measured-top 3 --reps 3 --round 106 --only-differing --out "$OUT/train_all.jsonl"
python3 data/plans/lease43/pick43a.py "$OUT/train_all.jsonl" data/plans/lease41/lease_run.jsonl.xz "$OUT/a.jsonl" 512 200
python3 data/plans/lease43/pick43b.py "$REG" "$OUT/b.jsonl" 80 400 107 3
$CKS plan merge --union --out "$OUT/lease43.jsonl" "$OUT/a.jsonl" "$OUT/b.jsonl"
xz -9 -T2 -c "$OUT/lease43.jsonl" > "$DEST"
