#!/usr/bin/env bash
# Lease 49 plan (session 40, issue 16): deterministic split-K 2-8 through the swapped orientation
# on small-M, long-K training groups (pick49.py says what and why), round 111, 2 repetitions.
#   REG=<corpus merged through lease 44> bash data/plans/lease49/plan49.sh
set -euo pipefail
cd "$(dirname "$0")/../../.."
OUT=${OUT:-/tmp/p49}
DEST=${DEST:-data/plans/lease49/lease_run.jsonl.xz}
: "${REG:?merged corpus registry (cks data merge --no-plan-items --out REG data/shards/*)}"
mkdir -p "$OUT"
python3 data/plans/lease49/pick49.py "$REG" "$OUT/lease49.jsonl" 111 2
xz -9 -T2 -c "$OUT/lease49.jsonl" > "$DEST"
