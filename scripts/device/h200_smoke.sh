#!/usr/bin/env bash
# First-lease smoke test of the GPU half of the harness, run on the H200 machine from the
# repository root with the carried binaries (build/bin/cks, build/bin/cks-worker) and the
# carried CUTLASS headers (third_party/cutlass):
#   1. prints the GPU (nvidia-smi) and the toolchain;
#   2. compiles a small batch with `cks build` (nvcc compile pool + executable cache): every
#      mainloop/epilogue schedule, both tile schedulers, 1x1/2x1/4x4 clusters, all four layouts;
#   3. drives one cks-worker (real CUDA backend) over its JSON-lines protocol: a group per
#      shape/layout (cuBLAS reference + baseline) and checked measurements of every kernel,
#      stream-K under each decomposition at M=16 (where a stale-flag harness stalls).
# Everything goes to stdout; the compiled libraries stay in $CACHE for later runs.
#
#   scripts/device/h200_smoke.sh [--device N] [--cache DIR] [--bin DIR] [--jobs N]
set -euo pipefail
cd "$(dirname "$0")/../.."

DEVICE=0
CACHE=build/kernel-cache
BIN=build/bin
JOBS=0
while [ $# -gt 0 ]; do
  case "$1" in
    --device) DEVICE="$2"; shift 2 ;;
    --cache) CACHE="$2"; shift 2 ;;
    --bin) BIN="$2"; shift 2 ;;
    --jobs) JOBS="$2"; shift 2 ;;
    *) echo "usage: $0 [--device N] [--cache DIR] [--bin DIR] [--jobs N]" >&2; exit 2 ;;
  esac
done

section() { printf '\n==== %s ====\n' "$*"; }

# nvcc and libcublas.so.13 may not be on the default paths of the lease machine.
for d in /usr/local/cuda/bin /usr/local/cuda-13*/bin; do [ -x "$d/nvcc" ] && export PATH="$d:$PATH" && break; done
if ! ldconfig -p | grep -q 'libcublas.so.13 '; then
  cublas=$(find /usr/local /opt -name libcublas.so.13 2>/dev/null | head -1)
  [ -n "$cublas" ] && export LD_LIBRARY_PATH="$(dirname "$cublas")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fi
export CKS_CUTLASS_DIR="${CKS_CUTLASS_DIR:-$PWD/third_party/cutlass}"
export CKS_INCLUDE_DIR="${CKS_INCLUDE_DIR:-$PWD/include}"

section "GPU"
nvidia-smi --query-gpu=index,name,uuid,driver_version,memory.total,clocks.max.sm,clocks.sm,temperature.gpu,power.draw \
  --format=csv || echo "nvidia-smi failed"
nvidia-smi -q -d CLOCK,PERFORMANCE | sed -n '1,60p' || true

section "toolchain"
nvcc --version | tail -2
"$BIN/cks" --version
ldd "$BIN/cks-worker" | grep -E "cublas|not found" || true
echo "cores: $(nproc)  memory: $(free -g | awk '/Mem:/{print $2" GiB total, "$7" GiB available"}')"

section "cks build (compile pool)"
KERNELS=(
  sm90_bf16_tn_128x128x64_1x1x1_s0_cooperative+tma_ws_cooperative+persistent
  sm90_bf16_tn_128x128x64_1x1x1_s0_cooperative+tma_ws_cooperative+stream_k
  sm90_bf16_tn_64x128x64_1x1x1_s0_pingpong+no_smem+persistent
  sm90_bf16_tn_128x256x64_2x1x1_s0_cooperative+tma_ws_cooperative+stream_k
  sm90_bf16_tn_128x128x64_1x1x1_s4_tma_ws+tma_ws+persistent
  sm90_bf16_tn_128x256x64_4x4x1_s0_cooperative+tma_ws_cooperative+persistent
  sm90_bf16_nt_128x128x64_1x1x1_s0_cooperative+tma_ws_cooperative+persistent
  sm90_bf16_nn_128x128x64_2x1x1_s0_pingpong+tma_ws+persistent
  sm90_bf16_tt_128x128x64_1x1x1_s0_cooperative+no_smem+persistent
)
LIST=$(mktemp)
printf '%s\n' "${KERNELS[@]}" > "$LIST"
BUILD_CSV=$(mktemp)
time "$BIN/cks" build --ids-file "$LIST" --kernels-per-tu 3 --jobs "$JOBS" --cache "$CACHE" --format csv > "$BUILD_CSV"
column -s, -t < "$BUILD_CSV" | cut -c1-220

section "cks-worker (CUDA backend)"
# kernel_id,canonical,status,registers,spill_store_bytes,spill_load_bytes,smem_bytes,compile_seconds,cached,lib,index,error
REQ=$(mktemp)
id=0
request_measures() {  # layout knobs...
  local layout="$1"; shift
  while IFS=, read -r kid canon status _ _ _ _ _ _ lib index _; do
    [ "$status" = ok ] || continue
    case "$canon" in sm90_bf16_${layout}_*) ;; *) continue ;; esac
    local knobs_list=("r=h,s=1,d=h,k=1")
    case "$canon" in *+stream_k) knobs_list=("$@") ;; *cooperative*|*pingpong*) knobs_list=("r=h,s=1,d=h,k=1" "r=n,s=2,d=h,k=1") ;; esac
    for knobs in "${knobs_list[@]}"; do
      id=$((id + 1))
      printf '{"type":"measure","spec":{"id":%d,"lib_path":"%s","index":%d,"kernel_id":"%s","knobs":"%s","check":true,"cutoff_us":0}}\n' \
        "$id" "$(realpath "$lib")" "$index" "$kid" "$knobs"
    done
  done < <(tail -n +2 "$BUILD_CSV")
}
group() {  # id m n k layout
  printf '{"type":"group","spec":{"group_id":%d,"m":%d,"n":%d,"k":%d,"layout":"%s","seed":%d}}\n' "$1" "$2" "$3" "$4" "$5" "$1"
}
STREAMK_KNOBS=("r=h,s=1,d=h,k=1" "r=h,s=1,d=dp,k=1" "r=h,s=1,d=sk,k=3" "r=h,s=1,d=streamk,k=1" "r=m,s=4,d=streamk,k=1")
{
  echo '{"type":"hello"}'
  group 1 16 4096 4096 tn;     request_measures tn "${STREAMK_KNOBS[@]}"
  group 2 4096 4096 4096 tn;   request_measures tn "${STREAMK_KNOBS[@]}"
  group 3 8192 2048 1024 tn;   request_measures tn "r=h,s=1,d=h,k=1" "r=h,s=1,d=streamk,k=1"
  group 4 1024 1536 2048 nt;   request_measures nt
  group 5 1024 1536 2048 nn;   request_measures nn
  group 6 1024 1536 2048 tt;   request_measures tt
  echo '{"type":"quit"}'
} > "$REQ"
echo "$(grep -c '"measure"' "$REQ") measurements in 6 groups"
# A stalled kernel would hang here: the timeout turns that into a visible failure.
set +e
timeout 300 "$BIN/cks-worker" --backend cuda --device "$DEVICE" < "$REQ" | grep -v '"type":"hb"'
echo "cks-worker exit status: ${PIPESTATUS[0]} (124 = timed out: a kernel stalled)"
set -e

section "GPU after the run"
nvidia-smi --query-gpu=index,clocks.sm,clocks.mem,temperature.gpu,power.draw,memory.used --format=csv || true
rm -f "$LIST" "$BUILD_CSV" "$REQ"
