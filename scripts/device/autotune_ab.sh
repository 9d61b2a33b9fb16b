#!/usr/bin/env bash
# Autotune settings A/B on the warm device machine, after scripts/device/pack_runtime.sh (carry [".carry/rt"]):
# each argument "TOP AT_TOP LT_ALGOS ROUNDS" is one scripts/device/runtime_check.sh run (the bundle's top TOP
# picks; autotune times AT_TOP of them, cuBLASLt's first LT_ALGOS algorithms, ROUNDS rounds); one line each on
# stdout; every run's files tarred into $OUT/ab.tar.xz (one file: $OUT brings back 8).
#   COMPILE_S=400 FIRST_BUDGET_S=470 bash scripts/device/autotune_ab.sh "8 4 1 5" "8 8 4 5" "8 4 1 5" "8 8 4 5"
# The first run compiles what the carried cache lacks (COMPILE_S, budget FIRST_BUDGET_S); the others BUDGET_S each.
set -uo pipefail
cd "$(dirname "$0")/../.."
R=${OUT:-out/autotune_ab}; mkdir -p "$R"
B=${FIRST_BUDGET_S:-${BUDGET_S:-120}}
for cfg in "$@"; do
  set -- $cfg
  d=/tmp/ab_top$1_at$2_lt$3_r$4_$RANDOM; mkdir -p "$d"
  OUT=$d TOP=$1 AT_TOP=$2 LT_ALGOS=$3 ROUNDS=$4 COMPILE_S=${COMPILE_S:-60} BUDGET_S=$B JOBS=${JOBS:-15} \
    bash scripts/device/runtime_check.sh > "$d/log.txt" 2>&1
  B=${BUDGET_S:-120}
  echo "top=$1 at=$2 lt=$3 rounds=$4 $(grep -o 'autotune_vs_cublas.*' "$d/log.txt" | cut -c1-90)" \
       "$(grep -o 'bundle: wrote.*' "$d/log.txt" | grep -o '([^)]*)' | head -1)"
done
(cd /tmp && tar -cJf "$R/ab.tar.xz" ab_top*)
