#!/usr/bin/env bash
# The stream-K reduction probe on the device (make_probe.py's header says what and why): compiles
# each emitted .cu of PROBEDIR into its own shared library ($JOBS nvcc at a time), the driver
# probe_main.cu, then times every case; results in $OUT/probe.csv (+ build.log).
#   bash scripts/device/reduction_probe/run_probe.sh PROBEDIR [ROUNDS] [REPS]
set -uo pipefail
cd "$(dirname "$0")/../../.."
DIR=$1 ROUNDS=${2:-5} REPS=${3:-30} JOBS=${JOBS:-$(nproc)}
OUTDIR=${OUT:-out/reduction_probe}
mkdir -p "$OUTDIR" out/probe_libs
. scripts/device/device_env.sh
CUT=third_party/cutlass
FLAGS=(-O3 -DNDEBUG -DCUTE_SM90_EXTENDED_MMA_SHAPES_ENABLED -std=c++17 --expt-relaxed-constexpr
       -gencode=arch=compute_90a,code=sm_90a -I$CUT/include -I$CUT/tools/util/include -Xcompiler -fPIC -shared)
start=$(date +%s)
ls "$DIR"/*.cu | xargs -P "$JOBS" -I{} sh -c 'f={}; b=$(basename $f .cu); nvcc '"${FLAGS[*]}"' -o out/probe_libs/$b.so $f > out/probe_libs/$b.log 2>&1 || echo "FAILED $b"' 2>&1 | tee "$OUTDIR/build.log"
echo "compiled $(ls out/probe_libs/*.so | wc -l) libraries in $(( $(date +%s) - start )) s" | tee -a "$OUTDIR/build.log"
nvcc -O2 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -o out/probe_main scripts/device/reduction_probe/probe_main.cu -lcublas -ldl >> "$OUTDIR/build.log" 2>&1 ||
  { cat "$OUTDIR/build.log"; exit 1; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,power.draw,temperature.gpu --format=csv,noheader >> "$OUTDIR/build.log"
out/probe_main "$DIR/cases.csv" out/probe_libs "$ROUNDS" "$REPS" > "$OUTDIR/probe.csv"
echo "probe rc=$? in $(( $(date +%s) - start )) s" | tee -a "$OUTDIR/build.log"
nvidia-smi --query-gpu=name,clocks.sm,power.draw,temperature.gpu --format=csv,noheader >> "$OUTDIR/build.log"
