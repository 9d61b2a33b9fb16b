#!/usr/bin/env bash
# Rebuilds the shipped selector models/default.json from the committed data, deterministically
# (seed 0, 2 threads): XGBoost reg:squarederror with the hyper-parameters of the winning arm of
# the tuning studies (docs/hpo.md: xgb-squared, trial 32, the lowest cross-validated regret of all
# arms), trained on every training group (TN + NT + NN + TT; never the 'eval' or 'proof' sets), at
# most 600 candidates per group (the 300 fastest plus a seeded random rest): the cap and keep-top
# with the lowest 3-fold cross-validated regret after lease 9 (docs/models.md, "Lease 9").
# The per-run cuBLAS normalization of load_dataset is on (the default, docs/models.md).
#   scripts/models/train_default.sh [OUT]          (about 4 minutes on 2 cores)
# TOP_WEIGHT=P weighs each training row by y^P (y = its throughput over its group's best; cks train
# --top-weight): r10w4 of NOTES.md (session 19) is TOP_WEIGHT=4 on the shards through lease 21.
# SEED=S (default 0) is the training seed (row and column subsampling): models of one recipe and two
# seeds differ by as much as ~0.5 points of measured regret (session 19, NOTES.md).
# The model records its training groups' measured leaders ("evidence", docs/models.md), which the
# selector's default adds to its prefilter. The shipped model (r7 in NOTES.md, shipped after
# leases 17 and 18 measured it side by side against r6) was trained on the shards up to lease 16
# (2,841 groups, data hash 0979ff5403da2c55); reproduce it with
#   EXCLUDE_SHARDS="20261202_d709be9e.db.xz 20261202_23498278.db.xz" scripts/models/train_default.sh
# (the same bytes but for provenance "source", which then names the temporary directory)
# (without EXCLUDE_SHARDS every committed shard is read: the next model).
set -euo pipefail
cd "$(dirname "$0")/../.."
CKS=${CKS:-build/bin/cks}
SRC=(--data data/shards)
if [ -n "${EXCLUDE_SHARDS:-}" ]; then
  DIR=$(mktemp -d)
  trap 'rm -rf "$DIR"' EXIT
  for f in data/shards/*.db.?z; do
    case " $EXCLUDE_SHARDS " in *" $(basename "$f") "*) continue ;; esac
    ln -s "$PWD/$f" "$DIR/"
  done
  SRC=(--data "$DIR")
fi
"$CKS" train "${SRC[@]}" --model xgboost --objective reg:squarederror \
  --eta 0.08584837890435894 --max-depth 9 --rounds 587 --early-stopping 0 \
  --min-child-weight 0.719430966016115 --subsample 0.798399128036934 --colsample-bytree 0.5011748877454569 \
  --reg-lambda 27.724468014215443 --max-bin 128 --max-cat-to-onehot 8 \
  --max-candidates 600 --keep-top 300 ${TOP_WEIGHT:+--top-weight "$TOP_WEIGHT"} \
  --seed "${SEED:-0}" --threads 2 --run-normalize on --out "${1:-models/default.json}"
