#!/usr/bin/env bash
# Compile-only device command: when the home compile cache (.kcache) is gone (a fresh development
# machine: ~2.5 hours of its 2 cores for ~500 kernels, ~34 s of nvcc a kernel), the device's 16
# cores build the next leases' kernels instead (session 45: 506 kernels in 1,309 s, three calls on
# a warm machine), and the libraries come home through $OUT
# (`lease.sh cache`: kcache.tar.xz.part-*, then `scripts/device/kcache.sh import` at home). On a
# warm machine the libraries stay in build/kernel-cache, so a lease or runtime check started by the
# next command finds them there too. Any card compiles (nothing runs on the GPU).
#
#   IDS=.carry/ids.txt BUDGET_S=480 JOBS=16 KPT=4 bash scripts/device/compile_ids.sh
#
# IDS: a file of kernel IDs (one a line, in the order to compile: the first lease's first). The
# compile stops at BUDGET_S (`timeout`; finished libraries are already in the cache, each written
# whole) and what was built is shipped either way. Exit status: cks build's (0: every kernel built
# or cached; 124: stopped at the budget, run it again on the warm machine to go on).
set -uo pipefail
cd "$(dirname "$0")/../.."
IDS=${IDS:-.carry/ids.txt} BUDGET_S=${BUDGET_S:-480} JOBS=${JOBS:-16} KPT=${KPT:-4} BIN=${BIN:-.carry/bin}
OUTDIR=${OUT:-out/compile_ids}
mkdir -p "$OUTDIR" build/kernel-cache
[ -f "$IDS" ] || { echo "compile_ids.sh: no IDS file '$IDS'" >&2; exit 2; }
. scripts/device/device_env.sh
START=$(date +%s)
{
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2> /dev/null || echo "no GPU (nvidia-smi)"
  nvcc --version | tail -1
  echo "cores=$(nproc) ids=$(grep -c . "$IDS") cached before=$(ls build/kernel-cache/*.so 2> /dev/null | wc -l)"
} | tee "$OUTDIR/compile_info.txt" >&2
timeout --signal=TERM "$BUDGET_S" "$BIN/cks" build --ids-file "$IDS" -j "$JOBS" --kernels-per-tu "$KPT" \
  --cache build/kernel-cache --cutlass third_party/cutlass --mem-limit-gb 110 --format csv \
  > "$OUTDIR/compile.csv" 2> "$OUTDIR/compile.log"
rc=$?
{
  echo "cks build status $rc after $(( $(date +%s) - START )) s (124: stopped at the budget)"
  echo "libraries now $(ls build/kernel-cache/*.so 2> /dev/null | wc -l)"
} | tee -a "$OUTDIR/compile_info.txt" >&2
tail -c 200000 "$OUTDIR/compile.log" > "$OUTDIR/compile.log.tail" && mv "$OUTDIR/compile.log.tail" "$OUTDIR/compile.log"
OUT=$OUTDIR bash scripts/device/lease.sh cache > /dev/null
ls -la "$OUTDIR" >&2
exit "$rc"
