#!/usr/bin/env bash
# Lease 36 plan (session 28, issue 16; not run): side-by-side round 15 of the evaluation groups and
# round 13 of the families, for the picks that no round has measured yet, so that each of them is
# judged with full coverage:
#   - r10w4 (shipped) with --prefilter 2048 and --exhaustive (1024x512x8192_nt: its best is outside
#     the 1,024 the prefilter keeps; over the rounds, prefilter 2048 covers 165 of 176 groups);
#   - r17 = KEEP_TARGETED=8 scripts/models/train_default.sh on the shards through lease 35 (its top 4);
#   - r16 = scripts/models/train_default.sh on the same shards (its first pick).
# Per group where one of those picks is not in the group's latest round: r10w4's top 4 and the
# first picks of its prefilter-2048, exhaustive and static rankings, the group's 3 fastest measured,
# r17's top 4 and r16's first pick, 8 repetitions. Evaluation groups tier 0, families tier 1.
#   REG=<corpus merged through lease 35> R17=<r17.json> R16=<r16.json> bash data/plans/lease36/plan36.sh
# r16 and r17 are not committed (the repository is at its size limit): train them again with
# EXCLUDE_SHARDS="<shards of leases after 35>" (SEED 0; deterministic, ~5 minutes each on 2 cores).
set -euo pipefail
cd "$(dirname "$0")/../../.."
CKS=${CKS:-build/bin/cks} OUT=${OUT:-/tmp/p36} REPS=${REPS:-8} NAME=${NAME:-lease36}
DEST=${DEST:-data/plans/lease36/lease_run.jsonl.xz}
: "${REG:?merged corpus registry (cks data merge --out REG data/shards/*)}"
: "${R17:?the r17 model file}"
: "${R16:?the r16 model file}"
mkdir -p "$OUT"
R10W4=models/default.json
: > "$OUT/picks.jsonl"
PLANS=()
for tier in ${ROUNDS:-0:eval:15 1:family:13}; do
  IFS=: read -r prio set round <<< "$tier"
  SBS=(--registry "$REG" --reps "$REPS" --priority "$prio" --top 4 --set "$set" --round "$round")
  $CKS plan sidebyside "${SBS[@]}" --model "$R10W4" --methods deployed,prefilter2048,exhaustive,static --pick-top 4 \
    --other-top 1 --static-top 1 --exhaustive-top 1 --measured-top 3 --out "$OUT/${set}_r10w4.jsonl"
  $CKS plan sidebyside "${SBS[@]}" --model "$R17" --methods deployed --pick-top 4 --other-top 0 --measured-top 0 \
    --out "$OUT/${set}_r17.jsonl"
  $CKS plan sidebyside "${SBS[@]}" --model "$R16" --methods deployed --pick-top 1 --other-top 0 --measured-top 0 \
    --out "$OUT/${set}_r16.jsonl"
  # The picks to be covered: r17's top 4, r16's first, r10w4's prefilter-2048 and exhaustive first.
  $CKS plan sidebyside "${SBS[@]}" --model "$R10W4" --methods deployed,prefilter2048,exhaustive --pick-top 1 \
    --other-top 1 --exhaustive-top 1 --measured-top 0 --out "$OUT/${set}_r10w4_picks.jsonl"
  for f in r17 r16 r10w4_picks; do tail -n +2 "$OUT/${set}_$f.jsonl" >> "$OUT/picks.jsonl"; done
  PLANS+=("$OUT/${set}_r10w4.jsonl" "$OUT/${set}_r17.jsonl" "$OUT/${set}_r16.jsonl")
done
sed -i '1i {}' "$OUT/picks.jsonl"  # changed_groups.py skips the first line (a plan's header)
$CKS plan merge --union --name "$NAME" --out "$OUT/all.jsonl" "${PLANS[@]}"
python3 data/plans/lease31/changed_groups.py "$REG" "$OUT/picks.jsonl" "$OUT/all.jsonl" > "$OUT/$NAME.jsonl"
mkdir -p "$(dirname "$DEST")"
xz -9 -T2 -c "$OUT/$NAME.jsonl" > "$DEST"
python3 - "$OUT/$NAME.jsonl" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]).read().splitlines()[1:]]
bases = {r["group"]["tags"]["base_key"] for r in rows}
kernels = {c[0] for r in rows for c in r["candidates"]}
print(f"{len(bases)} base groups, {len(rows)} groups, {sum(len(r['candidates']) for r in rows)} candidates, {len(kernels)} kernels")
PY
