#!/usr/bin/env bash
# Rebuilds the shipped selector models/default.json from the committed data, deterministically
# (seed 0, 2 threads): XGBoost reg:squarederror with the hyper-parameters of the winning arm of
# the tuning studies (docs/hpo.md: xgb-squared, trial 32, the lowest cross-validated regret of all
# arms), trained on every training group (TN + NT + NN + TT; never the 'eval' or 'proof' sets), at
# most 600 candidates per group (the 300 fastest plus a seeded random rest): the cap and keep-top
# with the lowest 3-fold cross-validated regret after lease 9 (docs/models.md, "Lease 9").
#   scripts/models/train_default.sh [OUT]          (about 4 minutes on 2 cores)
set -euo pipefail
cd "$(dirname "$0")/../.."
CKS=${CKS:-build/bin/cks}
exec "$CKS" train --model xgboost --objective reg:squarederror \
  --eta 0.08584837890435894 --max-depth 9 --rounds 587 --early-stopping 0 \
  --min-child-weight 0.719430966016115 --subsample 0.798399128036934 --colsample-bytree 0.5011748877454569 \
  --reg-lambda 27.724468014215443 --max-bin 128 --max-cat-to-onehot 8 \
  --max-candidates 600 --keep-top 300 \
  --seed 0 --threads 2 --out "${1:-models/default.json}"
