#!/usr/bin/env bash
# Lease 24's plan (NOTES.md, lease 24 plan; issue 16): the tail's classes in the training data. Every
# shipped model's side-by-side tail is the same groups in rounds 8-10 (3072x320x3776 in three layouts,
# 1024x512x8192_nt, 136x4096x4096_tn, 10368x1216x3712_tt, 160x256x8128: the best rasters along the
# long side, or is a stream-K / split-K setting), problems under 2MNK = 1e11 that lease 21's knob round
# (2MNK >= 1e11 only) left out. So: every runtime-knob variant of the 4 fastest kernels of each
# training group under 1e11 that is strongly rectangular (4M <= N or 4N <= M) or small in M*N
# (<= 2^20), where the corpus has not measured it (`cks plan leaders --set train --top 4`, filtered by
# filter_tail_knobs.py). A model trained with them (r11w4, TOP_WEIGHT=4) is judged side by side
# against r10w4 in the lease after.
#   REG=<the corpus merged through lease 23: cks data merge --out corpus.db data/shards/*.db.*> \
#     bash data/plans/lease24/plan24.sh
set -euo pipefail
cd "$(dirname "$0")/../../.."
: "${REG:?REG=<corpus registry through lease 23>}"
TMP=$(mktemp -d); trap 'rm -rf "$TMP"' EXIT
build/bin/cks plan leaders --registry "$REG" --set train --top 4 --out "$TMP/leaders.jsonl"
python3 data/plans/lease24/filter_tail_knobs.py "$TMP/leaders.jsonl" "$TMP/lease24.jsonl" 1e11
build/bin/cks plan show "$TMP/lease24.jsonl" --format md | tail -3 >&2 || true
xz -9 -c "$TMP/lease24.jsonl" > data/plans/lease24/lease_run.jsonl.xz
