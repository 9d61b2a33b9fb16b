#!/usr/bin/env bash
# One GPU lease of collection, run on the H200 machine from the repository root:
#   scripts/device/lease_collect.sh PLAN TIME_BUDGET_S [GPUS] [JOBS] [MEM_GB]
# Binaries come carried in .carry/bin (built on the dev machine; libstdc++ static), the CUTLASS
# headers in third_party/cutlass; kernels are compiled here by the monitor's nvcc pool while the
# GPU workers measure. The registry lives node-locally in out/ and is checkpointed to $OUT
# (the only way results come home) every minute and at exit. CKS_GIT_SHA names the commit.
set -uo pipefail
PLAN=$1
BUDGET=$2
GPUS=${3:-0}
JOBS=${4:-0}
MEM=${5:-0}
BIN=${BIN:-.carry/bin}
OUT=${OUT:-out/lease}
mkdir -p out "$OUT"
for d in /usr/local/cuda/bin /usr/local/cuda-13*/bin; do [ -x "$d/nvcc" ] && export PATH="$d:$PATH" && break; done
for d in /usr/local/cuda/lib64 /usr/local/cuda-13*/lib64 /usr/local/cuda/targets/x86_64-linux/lib; do
  [ -e "$d/libcublas.so.13" ] && export LD_LIBRARY_PATH="$d${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" && break
done
export CKS_INCLUDE_DIR="$PWD/include" CKS_DATA_DIR="$PWD/data"
{
  date -u +%FT%TZ
  nvidia-smi --query-gpu=index,name,uuid,driver_version,memory.total,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv
  nvcc --version | tail -2
  echo "cores=$(nproc) $(grep -E 'MemTotal|MemAvailable' /proc/meminfo | tr -s ' ' | tr '\n' ' ')"
  "$BIN/cks" hw --device 0 --format csv
} > "$OUT/machine.txt" 2>&1
cat "$OUT/machine.txt"
"$BIN/cks" collect --plan "$PLAN" --registry out/registry.db --checkpoint "$OUT/registry.db" --checkpoint-every 60 \
  --time-budget "$BUDGET" --gpus "$GPUS" --jobs "$JOBS" --mem-limit-gb "$MEM" --cache-dir build/kernel-cache \
  --cutlass-dir third_party/cutlass --progress-every 20 2> >(tee "$OUT/collect.log" >&2)
echo "collect exit status: $?"
"$BIN/cks" data stats --registry out/registry.db --format json > "$OUT/stats.json" 2>&1
cat "$OUT/stats.json"
# Results come home compressed (a returned file may hold at most 16 MiB).
gzip -c out/registry.db > "$OUT/registry.db.gz" && rm -f "$OUT/registry.db"
ls -la "$OUT"
