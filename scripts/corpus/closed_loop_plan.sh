#!/usr/bin/env bash
# Builds the plans of a closed-loop lease (issue 16) from the committed data, here (the shards are
# too large to travel), and packs them xz-compressed for the device call:
#
#   scripts/corpus/closed_loop_plan.sh [OUT_DIR]        (default .carry; ~25 min on 2 cores: the
#                                                        exhaustive rankings dominate)
#
#   tier 0  picks.jsonl   `cks plan picks`: the evaluation groups' real picks not measured yet
#                         (deployed top $TOP with every knob variant of its kernels, exhaustive
#                         top $EXH_TOP, static top $STATIC_TOP)
#           sbs.jsonl     `cks plan sidebyside`: the deployed top $PICK_TOP, the other methods'
#                         first picks and the $MEASURED_TOP fastest measured kernels of every
#                         evaluation group, $REPS repetitions in one stretch each
#   tier 1  active.jsonl  `cks plan active`: on $ACTIVE_GROUPS seeded training groups, the model's
#                         $ACTIVE_PICKS first unmeasured picks (deployed and over the whole catalogue)
#                         and $EXPLORE exploration pick(s), at most $ACTIVE_KERNELS kernels
#   tier 2  fill.jsonl    `cks plan fill`: every kernel of the plans above in every training group
#                         of its layout that lacks it (the idle GPU's work; no further compile)
#
# On the machine (scripts/device/lease.sh runs the plans one after the other, sharing the budget;
# the tiers also order the compiles inside one plan):
#   for f in .carry/*.jsonl.xz; do xz -d -c $f > out/$(basename $f .xz); done
#   scripts/device/lease.sh start out/picks.jsonl,out/sbs.jsonl,out/active.jsonl,out/fill.jsonl ...
# Environment: CKS (binary), MODEL, REG (a registry merged from data/shards to reuse: saves the
# merge each command repeats), and the sizes above.
set -euo pipefail
cd "$(dirname "$0")/../.."
OUT=${1:-.carry}
CKS=${CKS:-build/bin/cks}
MODEL=${MODEL:-models/default.json}
TOP=${TOP:-4} EXH_TOP=${EXH_TOP:-2} STATIC_TOP=${STATIC_TOP:-1}
REPS=${REPS:-5} PICK_TOP=${PICK_TOP:-4} MEASURED_TOP=${MEASURED_TOP:-4}
ACTIVE_GROUPS=${ACTIVE_GROUPS:-300} ACTIVE_PICKS=${ACTIVE_PICKS:-2} EXPLORE=${EXPLORE:-1} ACTIVE_KERNELS=${ACTIVE_KERNELS:-300}
SEED=${SEED:-1}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
if [ -n "${REG:-}" ]; then SRC=(--registry "$REG"); else
  "$CKS" data merge --out "$TMP/corpus.db" data/shards/*.db.gz > /dev/null
  SRC=(--registry "$TMP/corpus.db")
fi
mkdir -p "$OUT"
"$CKS" plan picks "${SRC[@]}" --model "$MODEL" --set eval --top "$TOP" --exhaustive-top "$EXH_TOP" \
  --static-top "$STATIC_TOP" --knob-top "$TOP" --priority 0 --out "$TMP/picks.jsonl"
"$CKS" plan sidebyside "${SRC[@]}" --model "$MODEL" --set eval --reps "$REPS" --pick-top "$PICK_TOP" \
  --other-top 1 --measured-top "$MEASURED_TOP" --top "$PICK_TOP" --exhaustive-top 1 --static-top 1 --priority 0 \
  --out "$TMP/sbs.jsonl"
"$CKS" plan active "${SRC[@]}" --model "$MODEL" --set train --pick "$ACTIVE_GROUPS" --seed "$SEED" \
  --picks "$ACTIVE_PICKS" --explore "$EXPLORE" --explore-depth 64 --max-kernels "$ACTIVE_KERNELS" --priority 1 \
  --out "$TMP/active.jsonl"
"$CKS" plan fill "${SRC[@]}" --from "$TMP/picks.jsonl,$TMP/sbs.jsonl,$TMP/active.jsonl" --set train --seed "$SEED" \
  --priority 2 --out "$TMP/fill.jsonl"
for p in picks sbs active fill; do
  xz -6 -c "$TMP/$p.jsonl" > "$OUT/$p.jsonl.xz"
  "$CKS" plan show "$TMP/$p.jsonl" --format csv 2>&1 > /dev/null | head -1 >&2
done
ls -la "$OUT"/*.jsonl.xz >&2
