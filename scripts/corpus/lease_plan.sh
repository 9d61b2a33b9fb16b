#!/usr/bin/env bash
# Builds the plan of the next collection lease for one layout, here (the shards are too large to
# travel), and packs it for the device call:
#
#   scripts/corpus/lease_plan.sh LAYOUT [OUT_PLAN] [CKS]
#
# = first, the runtime-knob variants around the leaders of every layout's measured evaluation
#   groups (`cks plan leaders --top $LEADERS_TOP`, default 8; 0 = none): all catalogue knob
#   variants of each group's 8 fastest kernels not yet measured (issue 4's "adaptively around the
#   leaders"; a few thousand candidates, a few hundred kernels to compile), then
#   for each "layout:rows" of $REMEASURE_OTHER (e.g. "nn:7900 tt:7400") a two-stage re-measure
#   sample of another layout's ok rows drawn from $REMEASURE_KERNELS (default 300) random kernels
#   (`cks plan remeasure --kernels`: it bounds what the lease compiles for it), then
#   the layout's evaluation groups less what data/shards already holds, then (when the layout has
#   ok rows) a seeded 1 % re-measure sample joined into its groups (repeatability across leases),
#   then the training groups' remainder — `cks plan remaining`, `cks plan remeasure`,
#   `cks plan merge --union`, as lease 5 ran (data/README.md). Writes OUT_PLAN (default
#   .carry/lease_<layout>.jsonl.xz, xz-compressed); on the machine:
#     xz -d -c .carry/lease_<l>.jsonl.xz > out/lease.jsonl
#     scripts/device/lease.sh start out/lease.jsonl BUDGET 0,1 30 235 10
set -euo pipefail
cd "$(dirname "$0")/../.."
L=${1:?usage: lease_plan.sh LAYOUT [OUT_PLAN] [CKS]}
OUT=${2:-.carry/lease_${L}.jsonl.xz}
CKS=${CKS:-${3:-build/bin/cks}}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
cp "data/plans/pool_${L}_2000_seed0.txt" "data/plans/eval_${L}.jsonl" "$TMP/"
scripts/corpus/make_plans.sh "$L" "$TMP" "$CKS" >&2
PARTS=()
LEADERS_TOP=${LEADERS_TOP:-8}
if [ "$LEADERS_TOP" -gt 0 ]; then
  if "$CKS" plan leaders --set eval --top "$LEADERS_TOP" --name "leaders_eval_top${LEADERS_TOP}" \
       --out "$TMP/leaders.jsonl" 2> "$TMP/leaders.err"; then
    cat "$TMP/leaders.err" >&2
    PARTS+=("$TMP/leaders.jsonl")
  else
    echo "lease_plan.sh: no leaders plan ($(tail -n 1 "$TMP/leaders.err"))" >&2
  fi
fi
for p in eval train; do
  "$CKS" plan remaining "$TMP/${p}_${L}.jsonl" --out "$TMP/rem_${p}.jsonl" >&2
done
for spec in ${REMEASURE_OTHER:-}; do
  OL=${spec%%:*} ROWS=${spec#*:}
  [ "$OL" != "$L" ] && [ "$ROWS" -gt 0 ] || { echo "lease_plan.sh: bad REMEASURE_OTHER item '$spec'" >&2; exit 2; }
  "$CKS" plan remeasure --layouts "$OL" --kernels "${REMEASURE_KERNELS:-300}" --min-rows "$ROWS" \
    --fraction 0.000001 --seed "$(date +%Y%m%d)" --name "remeasure_${OL}" --out "$TMP/remeasure_${OL}.jsonl" >&2
  PARTS+=("$TMP/remeasure_${OL}.jsonl")
done
PARTS+=("$TMP/rem_eval.jsonl")  # after the leaders' variants and the other layouts' samples
if "$CKS" plan remeasure --layouts "$L" --fraction 0.01 --seed "$(date +%Y%m%d)" --name "remeasure_${L}" \
     --out "$TMP/remeasure.jsonl" 2> "$TMP/remeasure.err"; then
  cat "$TMP/remeasure.err" >&2
  PARTS+=("$TMP/remeasure.jsonl")
else
  echo "lease_plan.sh: no re-measure sample ($(tail -n 1 "$TMP/remeasure.err"))" >&2
fi
PARTS+=("$TMP/rem_train.jsonl")
"$CKS" plan merge --union --name "lease_${L}" --out "$TMP/lease.jsonl" "${PARTS[@]}" >&2
mkdir -p "$(dirname "$OUT")"
xz -T2 -6 -c "$TMP/lease.jsonl" > "$OUT"
ls -la "$OUT" >&2
