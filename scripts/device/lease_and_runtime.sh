#!/usr/bin/env bash
# One device command for a short lease (session 43 had ~600 s of device time left after a failed
# start): on an H200, the corpus plans first (lease.sh start + wait: the registry comes home through
# $OUT), then issue 17's runtime check (scripts/device/runtime_check.sh, .carry/rt filled by
# scripts/device/pack_runtime.sh) with what is left of TOTAL_S; on another card, the runtime check
# alone (a pre-run: nothing for data/shards). The runtime check's files go into one tarball,
# $OUT/runtime_check.tar.xz, so that they and the lease's stay within the 8 files a command returns.
#
#   PLANS=.carry/l51.jsonl,.carry/l50.jsonl LEASE_S=150 TOTAL_S=400 bash scripts/device/lease_and_runtime.sh
set -uo pipefail
cd "$(dirname "$0")/../.."
START=$(date +%s)
TOTAL_S=${TOTAL_S:-400} LEASE_S=${LEASE_S:-150} PLANS=${PLANS:-}
OUTDIR=${OUT:-out/lease_and_runtime}
mkdir -p "$OUTDIR"
g=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
echo "lease_and_runtime.sh: card $g" >&2
if [[ $g == *H200* ]] && [ -n "$PLANS" ]; then
  # collect stops at its own time budget (LEASE_S); wait returns as soon as it has ended.
  EXPECT_GPU=H200 bash scripts/device/lease.sh start "$PLANS" "$LEASE_S" 0 16 120 4 &&
    bash scripts/device/lease.sh wait $((LEASE_S + 30))
fi
left=$((START + TOTAL_S - $(date +%s)))
if [ "$left" -gt 90 ]; then
  RT=$(mktemp -d)
  OUT=$RT BUDGET_S=$((left - 15)) COMPILE_S=${COMPILE_S:-$(((left - 15) / 3))} bash scripts/device/runtime_check.sh
  tar -cJf "$OUTDIR/runtime_check.tar.xz" -C "$RT" .
else
  echo "lease_and_runtime.sh: ${left}s left, no runtime check" >&2
fi
