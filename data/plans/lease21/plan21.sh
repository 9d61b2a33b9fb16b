#!/usr/bin/env bash
# Lease 21's plan (NOTES, lease 20 and lease 21): (1) the 43 candidates lease 20 left; (2) the knob
# coverage of big training problems: for every training group with 2MNK >= 1e11, the raster x
# swizzle variants (d=h, k=1) of its 4 fastest kernels that the corpus has not measured.
#   REG=<the corpus merged through lease 20: cks data merge --out corpus.db data/shards/*.db.*> \
#     bash data/plans/lease21/plan21.sh
set -euo pipefail
cd "$(dirname "$0")/../../.."
: "${REG:?REG=<corpus registry through lease 20>}"
TMP=$(mktemp -d); trap 'rm -rf "$TMP"' EXIT
xz -dc data/plans/lease20/lease_run.jsonl.xz > "$TMP/lease20.jsonl"
build/bin/cks plan remaining "$TMP/lease20.jsonl" --registry "$REG" --out "$TMP/lease20_rest.jsonl"
build/bin/cks plan leaders --registry "$REG" --set train --top 4 --out "$TMP/leaders.jsonl"
python3 data/plans/lease21/filter_big_raster.py "$TMP/leaders.jsonl" "$TMP/big_raster.jsonl" 1e11
build/bin/cks plan merge --union "$TMP/lease20_rest.jsonl" "$TMP/big_raster.jsonl" --name lease21 --out "$TMP/lease21.jsonl"
build/bin/cks plan show "$TMP/lease21.jsonl" --format md | tail -3 >&2 || true
xz -9 -c "$TMP/lease21.jsonl" > data/plans/lease21/lease_run.jsonl.xz
