#!/usr/bin/env bash
# Lease 47 plan (session 36, issue 16): split-K for small-M, large-K training groups through the
# swapped orientation (pick47.py says what and why), round 110, 2 repetitions.
#   REG=<corpus merged through lease 44> bash data/plans/lease47/plan47.sh
set -euo pipefail
cd "$(dirname "$0")/../../.."
OUT=${OUT:-/tmp/p47}
DEST=${DEST:-data/plans/lease47/lease_run.jsonl.xz}
: "${REG:?merged corpus registry (cks data merge --no-plan-items --out REG data/shards/*)}"
mkdir -p "$OUT"
python3 data/plans/lease47/pick47.py "$REG" "$OUT/lease47.jsonl" 110 2
xz -9 -T2 -c "$OUT/lease47.jsonl" > "$DEST"
