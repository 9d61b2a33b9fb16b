#!/usr/bin/env bash
# Lease 40 plan (session 30, issue 16; not run): `cks select --orientations both` measured where it
# changes the pick. The selector ranks the problem and its transposed problem (the latter run by
# swapped kernels, row-major D^T; docs/catalogue.md "Swapped kernels") and leads with the
# orientation whose static estimate is ahead by > 5 %. Its first pick differs from the deployed one
# only where the swapped orientation leads; those base groups of the evaluation, family and llm sets
# get one side-by-side round (103, 4 repetitions) of r10w4's top 4 (own orientation), the both
# method's top 4 (swapped and own interleaved) and the 3 fastest measured, with cuBLAS: like with like.
# Read: `cks analyze sidebyside --registry <lease registry> --model models/default.json --methods
# deployed,both --per-group F` (both's picks are matched by kernel ID), then
# `scripts/eval/sbs_paired.py dep=F:deployed both=F:both`.
#   REG=<corpus merged> bash data/plans/lease40/plan40.sh
set -euo pipefail
cd "$(dirname "$0")/../../.."
CKS=${CKS:-build/bin/cks} OUT=${OUT:-/tmp/p40} NAME=${NAME:-lease40} REPS=${REPS:-4} ROUND=${ROUND:-103}
DEST=${DEST:-data/plans/lease40/lease_run.jsonl.xz}
: "${REG:?merged corpus registry (cks data merge --out REG data/shards/*)}"
mkdir -p "$OUT"
parts=()
for set in eval family llm; do
  $CKS plan sidebyside --registry "$REG" --set "$set" --model models/default.json --methods deployed,both \
    --pick-top 4 --other-top 4 --measured-top 3 --reps "$REPS" --round "$ROUND" --only-differing \
    --out "$OUT/$set.jsonl"
  parts+=("$OUT/$set.jsonl")
done
$CKS plan merge --union --name "$NAME" --out "$OUT/$NAME.jsonl" "${parts[@]}"
mkdir -p "$(dirname "$DEST")"
xz -9 -T2 -c "$OUT/$NAME.jsonl" > "$DEST"
python3 - "$OUT/$NAME.jsonl" <<'PY'
import json, sys
lines = open(sys.argv[1]).read().splitlines()
rows = [json.loads(l) for l in lines[1:]]
print(f"{len({r['group']['tags']['base_key'] for r in rows})} base groups, {len(rows)} groups, "
      f"{sum(len(r['candidates']) for r in rows)} candidates, {len({c[0] for r in rows for c in r['candidates']})} kernels",
      file=sys.stderr)
PY
