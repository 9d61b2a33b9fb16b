#!/usr/bin/env bash
# Builds the plans of a closed-loop lease (issue 16) from the committed data, here (the shards are
# too large to travel), and packs them xz-compressed for the device call:
#
#   scripts/corpus/closed_loop_plan.sh [OUT_DIR]        (default .carry; ~25 min on 2 cores: the
#                                                        exhaustive rankings dominate)
#
#   tier 0  picks.jsonl    `cks plan picks`: the evaluation groups' real picks not measured yet
#                          (deployed top $TOP with every knob variant of its kernels, exhaustive
#                          top $EXH_TOP, static top $STATIC_TOP)
#           sbs.jsonl      `cks plan sidebyside --round $SBS_ROUND`: the deployed top $PICK_TOP,
#                          the other methods' first picks and the $MEASURED_TOP fastest measured
#                          kernels of every evaluation group, $REPS repetitions in one stretch each;
#                          with $BASE_MODEL also that model's first $BASE_TOP picks (a new model
#                          against the shipped one, like with like)
#           family.jsonl   ($FAMILY=1) the held-out model families (`cks shapes --set family`,
#                          set 'family', never trained on): $FAMILY_TN TN and $FAMILY_NTNN NT/NN
#                          groups, `cks plan picks --groups` (deployed top $FAM_TOP, knob
#                          variants of the first $FAM_KNOB_TOP, exhaustive top $FAM_EXH_TOP,
#                          static top 1), plus (tier 2, joined) every tier-0 kernel at default
#                          knobs: their pool sweep. Their side-by-side round is planned on the
#                          machine once they are measured (scripts/device/lease.sh sbs).
#   tier 1  active.jsonl   `cks plan active`: on $ACTIVE_GROUPS seeded training groups (seed $SEED:
#                          another round, other groups), the model's $ACTIVE_PICKS first unmeasured
#                          picks (deployed and over the whole catalogue) and $EXPLORE exploration
#                          pick(s), at most $ACTIVE_KERNELS kernels
#   tier 2  fill.jsonl     `cks plan fill`: every kernel of the plans above in every training group
#                          of its layout that lacks it (the idle GPU's work; no further compile)
#   lease.jsonl            all of them joined (`cks plan merge --union`) in that order
#
# On the machine: xz -d .carry/lease.jsonl.xz, then scripts/device/lease.sh start out/lease.jsonl ...
# Environment: CKS (binary), MODEL, BASE_MODEL, REG (a registry merged from data/shards to reuse:
# saves the merge each command repeats), and the sizes above.
set -euo pipefail
cd "$(dirname "$0")/../.."
OUT=${1:-.carry}
CKS=${CKS:-build/bin/cks}
MODEL=${MODEL:-models/default.json}
BASE_MODEL=${BASE_MODEL:-}
TOP=${TOP:-4} EXH_TOP=${EXH_TOP:-1} STATIC_TOP=${STATIC_TOP:-1}
REPS=${REPS:-4} PICK_TOP=${PICK_TOP:-4} MEASURED_TOP=${MEASURED_TOP:-3} SBS_ROUND=${SBS_ROUND:-2} BASE_TOP=${BASE_TOP:-1}
FAMILY=${FAMILY:-1} FAMILY_TN=${FAMILY_TN:-32} FAMILY_NTNN=${FAMILY_NTNN:-16}
FAM_TOP=${FAM_TOP:-8} FAM_KNOB_TOP=${FAM_KNOB_TOP:-2} FAM_EXH_TOP=${FAM_EXH_TOP:-2}
ACTIVE_GROUPS=${ACTIVE_GROUPS:-300} ACTIVE_PICKS=${ACTIVE_PICKS:-2} EXPLORE=${EXPLORE:-1} ACTIVE_KERNELS=${ACTIVE_KERNELS:-200}
SEED=${SEED:-2}
. scripts/corpus/corpus_source.sh
mkdir -p "$OUT"
PLANS=()
"$CKS" plan picks "${SRC[@]}" --model "$MODEL" --set eval --top "$TOP" --exhaustive-top "$EXH_TOP" \
  --static-top "$STATIC_TOP" --knob-top "$TOP" --priority 0 --out "$TMP/picks.jsonl"
PLANS+=("$TMP/picks.jsonl")
SBS=(--set eval --reps "$REPS" --round "$SBS_ROUND" --exhaustive-top 1 --static-top 1 --priority 0)
"$CKS" plan sidebyside "${SRC[@]}" --model "$MODEL" "${SBS[@]}" --pick-top "$PICK_TOP" --other-top 1 \
  --measured-top "$MEASURED_TOP" --top "$PICK_TOP" --out "$TMP/sbs.jsonl"
PLANS+=("$TMP/sbs.jsonl")
if [ -n "$BASE_MODEL" ]; then
  "$CKS" plan sidebyside "${SRC[@]}" --model "$BASE_MODEL" "${SBS[@]}" --methods deployed --pick-top "$BASE_TOP" \
    --measured-top 0 --top "$BASE_TOP" --out "$TMP/sbs_base.jsonl"
  PLANS+=("$TMP/sbs_base.jsonl")
fi
if [ "$FAMILY" = 1 ]; then
  "$CKS" plan make --set family --layouts tn --exclude-set paper --pick "$FAMILY_TN" --seed 0 --policy top --budget 1 \
    --group-set family --out "$TMP/fam_tn.jsonl"
  "$CKS" plan make --set family --layouts nt,nn --exclude-set paper --pick "$FAMILY_NTNN" --seed 0 --policy top \
    --budget 1 --group-set family --out "$TMP/fam_ntnn.jsonl"
  "$CKS" plan merge --out "$OUT/family_groups.jsonl" "$TMP/fam_tn.jsonl" "$TMP/fam_ntnn.jsonl"
  "$CKS" plan picks "${SRC[@]}" --model "$MODEL" --groups "$OUT/family_groups.jsonl" --set family --top "$FAM_TOP" \
    --exhaustive-top "$FAM_EXH_TOP" --static-top 1 --knob-top "$FAM_KNOB_TOP" --priority 0 --out "$TMP/family.jsonl"
  PLANS+=("$TMP/family.jsonl")
  if [ -n "$BASE_MODEL" ]; then
    "$CKS" plan picks "${SRC[@]}" --model "$BASE_MODEL" --groups "$OUT/family_groups.jsonl" --set family \
      --methods deployed --top "$BASE_TOP" --knob-top 0 --priority 0 --out "$TMP/family_base.jsonl"
    PLANS+=("$TMP/family_base.jsonl")
  fi
  FROM=$(IFS=,; echo "${PLANS[*]}")
  "$CKS" plan fill "${SRC[@]}" --groups "$OUT/family_groups.jsonl" --set family --from "$FROM" --priority 2 \
    --out "$TMP/family_fill.jsonl"
  PLANS+=("$TMP/family_fill.jsonl")
fi
"$CKS" plan active "${SRC[@]}" --model "$MODEL" --set train --pick "$ACTIVE_GROUPS" --seed "$SEED" \
  --picks "$ACTIVE_PICKS" --explore "$EXPLORE" --explore-depth 64 --max-kernels "$ACTIVE_KERNELS" --priority 1 \
  --out "$TMP/active.jsonl"
PLANS+=("$TMP/active.jsonl")
FROM=$(IFS=,; echo "${PLANS[*]}")
"$CKS" plan fill "${SRC[@]}" --from "$FROM" --set train --seed "$SEED" --priority 2 --out "$TMP/fill.jsonl"
PLANS+=("$TMP/fill.jsonl")
"$CKS" plan merge --union --out "$TMP/lease.jsonl" "${PLANS[@]}"
for p in "${PLANS[@]}" "$TMP/lease.jsonl"; do
  xz -6 -c "$p" > "$OUT/$(basename "$p").xz"
  "$CKS" plan show "$p" --format csv 2>&1 > /dev/null | head -1 >&2
done
ls -la "$OUT"/*.jsonl.xz >&2
