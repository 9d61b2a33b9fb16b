#!/usr/bin/env bash
# Lease 45 plan (session 35, issue 16), training groups only, 2 repetitions (round 108):
# pick45.py: the stream-K reduction (x=n, KnobScope::measurable) on the 3 fastest stream-K kernels
# of few-tile (<= 16 tiles of 128x128), large-K (>= 4096) training groups (heuristic, split-K 4,
# 8, 16; deterministic and nondeterministic), beside the group's 3 fastest measured.
#   REG=<corpus merged through lease 43> bash data/plans/lease45/plan45.sh
set -euo pipefail
cd "$(dirname "$0")/../../.."
OUT=${OUT:-/tmp/p45}
DEST=${DEST:-data/plans/lease45/lease_run.jsonl.xz}
: "${REG:?merged corpus registry (cks data merge --out REG data/shards/*)}"
mkdir -p "$OUT"
python3 data/plans/lease45/pick45.py "$REG" "$OUT/lease45.jsonl" 24 250 108 2
xz -9 -T2 -c "$OUT/lease45.jsonl" > "$DEST"
