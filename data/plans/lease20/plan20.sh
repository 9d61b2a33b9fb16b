#!/usr/bin/env bash
# Lease 20's plan: what lease 19's plan (data/plans/lease19/) left after its first checkpoint,
# the only registry that came home (the machine was lost after 8.7 min; NOTES, lease 19).
#   REG=<lease 19's registry: data/shards/20261202_011f9136.db.xz, decompressed> bash data/plans/lease20/plan20.sh
set -euo pipefail
cd "$(dirname "$0")/../../.."
: "${REG:?REG=<lease 19 registry>}"
TMP=$(mktemp -d); trap 'rm -rf "$TMP"' EXIT
xz -dc data/plans/lease19/lease_run.jsonl.xz > "$TMP/lease19.jsonl"
build/bin/cks plan remaining "$TMP/lease19.jsonl" --registry "$REG" --out "$TMP/lease20.jsonl"
xz -9 -c "$TMP/lease20.jsonl" > data/plans/lease20/lease_run.jsonl.xz
