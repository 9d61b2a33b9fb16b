#!/usr/bin/env bash
# Lease 46 plan (session 36, issue 16): the nondeterministic stream-K reduction on held-out
# few-tile, large-K groups (eval, family, llm), round 109, 2 repetitions (pick46.py says what).
#   REG=<corpus merged through lease 44> bash data/plans/lease46/plan46.sh
set -euo pipefail
cd "$(dirname "$0")/../../.."
OUT=${OUT:-/tmp/p46}
DEST=${DEST:-data/plans/lease46/lease_run.jsonl.xz}
MODEL=${MODEL:-models/default.json}
: "${REG:?merged corpus registry (cks data merge --no-plan-items --out REG data/shards/*)}"
mkdir -p "$OUT"
build/bin/cks catalogue list --layout all --format csv > "$OUT/catalogue.csv"
for s in eval family llm; do
  build/bin/cks plan sidebyside --registry "$REG" --set "$s" --methods deployed --pick-top 4 --measured-top 3 \
    --reps 3 --round 109 --model "$MODEL" --out "$OUT/base_$s.jsonl"
done
python3 data/plans/lease46/pick46.py "$REG" "$OUT/catalogue.csv" "$OUT/lease46.jsonl" 109 2 "$OUT"/base_{eval,family,llm}.jsonl
xz -9 -T2 -c "$OUT/lease46.jsonl" > "$DEST"
