#!/usr/bin/env bash
# Rebuilds the shipped selector models/default.json from the committed data, deterministically
# (seed 0, 2 threads): XGBoost reg:squarederror with the hyper-parameters of the winning arm of
# the tuning studies (docs/hpo.md: xgb-squared, trial 32, the lowest cross-validated regret of all
# arms), trained on every training group (TN + NT + NN + TT; never the 'eval' or 'proof' sets), at
# most 600 candidates per group (the 300 fastest plus a seeded random rest): the cap and keep-top
# with the lowest 3-fold cross-validated regret after lease 9 (docs/models.md, "Lease 9").
# The per-run cuBLAS normalization of load_dataset is on (the default, docs/models.md).
#   scripts/models/train_default.sh [OUT]          (about 4 minutes on 2 cores)
# Each training row weighs y^4 (y = its throughput over its group's best; cks train --top-weight 4):
# the shipped r10w4 (NOTES.md, sessions 19-20). TOP_WEIGHT=P sets another power (0: unweighted, the
# recipe of every model shipped before r10w4).
# KEEP_TARGETED=T (default 0: off) also keeps every row of a run that measured at most T candidates of
# its group (the models' picks of the active-learning rounds, explorations), which the cap otherwise
# drops with the random rest's odds (cks train --keep-targeted; NOTES.md, session 28).
# SEED=S (default 0) is the training seed (row and column subsampling): models of one recipe and two
# seeds differ by as much as ~0.4 points of measured regret (leases 20 and 23, NOTES.md); the shipped
# model is seed 0, measured as itself, not as its recipe.
# The model records its training groups' measured leaders ("evidence", docs/models.md), which the
# selector's default adds to its prefilter. The shipped model (r10w4, shipped after lease 23 measured
# it side by side against r7, and the llm set) was trained on the shards up to lease 21 (3,739 groups,
# data hash 79efa4fd65d7a451); lease 23's shard holds no training group, so on the shards up to
# lease 23 this command rebuilds it (EXCLUDE_SHARDS= the shards of leases 24 and later, data/README.md;
# the same scores bit for bit, since session 27 in the compact model file encoding, docs/models.md
# "Model file", so not the same file bytes). r7, shipped before it, was the unweighted recipe on the
# shards up to lease 16 (2,841 groups, data hash 0979ff5403da2c55):
#   TOP_WEIGHT=0 EXCLUDE_SHARDS="20261202_d709be9e.db.xz 20261202_23498278.db.xz 20261202_011f9136.db.xz
#     20261202_5127b76f.db.xz 20261203_7106b8e9.db.xz 20261203_68d43418.db.xz" scripts/models/train_default.sh
# (with EXCLUDE_SHARDS the model's provenance "source" names the temporary directory; without it every
# committed shard is read: after a lease with training groups, the next model).
# SHARDS=DIR reads the shards from DIR instead of data/shards (e.g. while they are moved aside for a
# device call, which carries at most 64 MiB of working tree).
set -euo pipefail
cd "$(dirname "$0")/../.."
CKS=${CKS:-build/bin/cks}
SHARDS=${SHARDS:-data/shards}
SRC=(--data "$SHARDS")
if [ -n "${EXCLUDE_SHARDS:-}" ]; then
  DIR=$(mktemp -d)
  trap 'rm -rf "$DIR"' EXIT
  for f in "$SHARDS"/*.db.?z "$SHARDS"/*.cols.xz; do
    [ -e "$f" ] || continue
    case " $EXCLUDE_SHARDS " in *" $(basename "$f") "*) continue ;; esac
    ln -s "$(cd "$(dirname "$f")" && pwd)/$(basename "$f")" "$DIR/"
  done
  SRC=(--data "$DIR")
fi
"$CKS" train "${SRC[@]}" --model xgboost --objective reg:squarederror \
  --eta 0.08584837890435894 --max-depth 9 --rounds 587 --early-stopping 0 \
  --min-child-weight 0.719430966016115 --subsample 0.798399128036934 --colsample-bytree 0.5011748877454569 \
  --reg-lambda 27.724468014215443 --max-bin 128 --max-cat-to-onehot 8 \
  --max-candidates 600 --keep-top 300 --keep-targeted "${KEEP_TARGETED:-0}" --top-weight "${TOP_WEIGHT:-4}" \
  --seed "${SEED:-0}" --threads 2 --run-normalize "${RUN_NORMALIZE:-on}" --out "${1:-models/default.json}"
