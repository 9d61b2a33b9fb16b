#!/usr/bin/env bash
# Lease 41 plan (session 31, issue 16 item 5): the orientation rule of `cks select --orientations
# both` chosen on training groups. Lease 40 measured `both` where it changes the first pick on the
# evaluation, family and llm sets (held out: not to be tuned on). This plan measures the same
# comparison on the training groups: `cks plan sidebyside --set train --methods deployed,both
# --only-differing` (1,168 of 4,042 training groups differ with the corpus through lease 40 and
# r10w4), of which pick41.py keeps a stratified 268 (about 22 per layout x M regime, at most 450
# kernels), one round (104) of 3 repetitions: the two methods' first 2 picks and the group's 3
# fastest measured, with cuBLAS. Any stricter rule (a larger --swap-margin, --swap-max-m,
# --swap-layouts) picks either both's or deployed's first pick in these groups, so its regret is
# read from the same rows: `cks analyze sidebyside --methods deployed,both,both:m256,...`.
#   REG=<corpus merged through lease 40> bash data/plans/lease41/plan41.sh
set -euo pipefail
cd "$(dirname "$0")/../../.."
CKS=${CKS:-build/bin/cks} OUT=${OUT:-/tmp/p41}
DEST=${DEST:-data/plans/lease41/lease_run.jsonl.xz}
: "${REG:?merged corpus registry (cks data merge --out REG data/shards/*)}"
mkdir -p "$OUT"
$CKS plan sidebyside --registry "$REG" --set train --model models/default.json --methods deployed,both \
  --pick-top 2 --other-top 2 --measured-top 3 --reps 3 --round 104 --only-differing --out "$OUT/train_all.jsonl"
python3 data/plans/lease41/pick41.py "$OUT/train_all.jsonl" "$OUT/lease41.jsonl" 28 450 41
xz -9 -T2 -c "$OUT/lease41.jsonl" > "$DEST"
