#!/usr/bin/env bash
# The Python package on the H200 (issue 17, item 5), in one device command of 3-7 minutes, from
# the repository root with .carry/py/ filled by scripts/device/pack_python.sh:
#   1. installs the carried wheel (built here for the machine's Python 3.12: the machine has no
#      network and none of the C++ dependencies) into /tmp/cks-site, no build, no dependencies;
#   2. unpacks the CUTLASS headers: the runtime compiles the picks the carried bundle lacks in the
#      background ($JOBS nvcc processes), and the check waits for them at most $COMPILE_S seconds;
#   3. scripts/bench/python_select.py: `import cks` + the first cks.select (fresh processes), cached
#      and cold selects, on this machine's CPU;
#   4. scripts/device/python_check.py: cks.torch.mm (select mode: bundle, compiled or cuBLASLt) against
#      torch.matmul for a handful of products (contiguous, x @ w.t(), transposed views, odd sizes, a
#      strided operand): max relative error against FP32, time per call with CUDA events, what each
#      dispatched to; torch.library.opcheck, torch.compile and the backward of the op.
# Results under $OUT (5 files; a device command returns at most 8): python_check.json (summary and
# rows), python_check.csv, python_select.json, check.log, machine.txt.
#
#   bash scripts/device/python_check.sh      # JOBS=14 COMPILE_S=240 MODE=select REPS=11 by default
# REPS=N: interleaved timing rounds per case (python_check.py --reps; ~975 cases x 11 rounds ~ 6-7 min).
# MODE=autotune runs cks.torch in autotune mode (its first call of a problem times the bundle's top
# picks and cuBLASLt's algorithms); .carry/py/shapes.csv (pack_python.sh SHAPES=) adds those runtime
# problems as cases (python_check.py --shapes): torch.matmul against cks.torch.mm on the runtime check's set.
# PROBE=scripts/device/gap_probe.py [PROBE_ARGS=...] runs that probe after the set-up instead (issue 17).
set -uo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
START=$(date +%s)
JOBS=${JOBS:-14} COMPILE_S=${COMPILE_S:-240} MODE=${MODE:-select} REPS=${REPS:-11}
case "$MODE" in select|autotune|cublas) ;; *) echo "python_check.sh: MODE must be select, autotune or cublas (got '$MODE')" >&2; exit 2;; esac
OUTDIR=$(mkdir -p "${OUT:-out/python_check}" && cd "${OUT:-out/python_check}" && pwd)
CARRY=$ROOT/.carry/py
say() { echo "[python_check $(( $(date +%s) - START ))s] $*" >&2; }

[ -d "$CARRY" ] || { echo "python_check.sh: no .carry/py (run scripts/device/pack_python.sh and carry .carry/py)" >&2; exit 2; }
for d in /usr/local/cuda/bin /usr/local/cuda-13*/bin; do [ -x "$d/nvcc" ] && export PATH="$d:$PATH" && break; done
for d in /usr/local/cuda/lib64 /usr/local/cuda-13*/lib64 /usr/local/cuda/targets/x86_64-linux/lib; do
  [ -e "$d/libcublasLt.so.13" ] && export LD_LIBRARY_PATH="$d${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" && break
done

# 1. The package.
SITE=/tmp/cks-site
rm -rf "$SITE"
python3 -m pip install -q --no-index --no-deps --no-compile --target "$SITE" "$CARRY"/cutlass_kernel_selector-*-cp312-*.whl ||
  { echo "python_check.sh: the wheel did not install" >&2; exit 1; }
export PYTHONPATH="$SITE${PYTHONPATH:+:$PYTHONPATH}"

# 2. The runtime's settings: $MODE, the carried bundle, a fresh compile cache and tuning file.
if [ ! -d third_party/cutlass/include ]; then mkdir -p third_party && tar -xJf "$CARRY/cutlass.tar.xz" -C third_party; fi
export CKS_CUTLASS_DIR="$ROOT/third_party/cutlass" CKS_MODE=$MODE CKS_COMPILE=1
rm -rf /tmp/cks-bundle
if [ -f out/pybundle/bundle/index.json ] && ! grep -qE "[0-9]+ skipped" out/pybundle.log 2> /dev/null; then
  # compiled (complete) on this machine by python_bundle.sh, seeded from the carried bundle
  export CKS_BUNDLE=$ROOT/out/pybundle/bundle
elif [ -f "$CARRY/bundle.tar.xz" ]; then
  # A bundle that does not unpack whole is an error, not a silent run without it (lease 22's first
  # autotune check ran with kernels/ but no index.json, every product on cuBLASLt).
  mkdir -p /tmp/cks-bundle && tar -xJf "$CARRY/bundle.tar.xz" -C /tmp/cks-bundle && [ -f /tmp/cks-bundle/bundle/index.json ] ||
    { echo "python_check.sh: $CARRY/bundle.tar.xz did not unpack into /tmp/cks-bundle/bundle (index.json missing)" >&2; exit 1; }
  export CKS_BUNDLE=/tmp/cks-bundle/bundle
elif [ -f out/pybundle/bundle/index.json ]; then  # compiled on this machine by python_bundle.sh
  export CKS_BUNDLE=$ROOT/out/pybundle/bundle
  grep -qE "[0-9]+ skipped" out/pybundle.log 2> /dev/null &&
    say "WARNING: out/pybundle is incomplete (python_bundle.sh ran out of time): the rest compiles beside the timing"
else  # packed without a home compile cache: every pick is compiled in the background
  say "WARNING: no bundle: every pick compiles beside the timing (run scripts/device/python_bundle.sh first)"
  unset CKS_BUNDLE
fi
export CKS_KERNEL_CACHE=/tmp/cks-kernels CKS_TUNING_FILE=/tmp/cks-tuning.csv
unset CKS_MODEL CKS_DATA_DIR  # the wheel's own model and data
{
  date -u +%FT%TZ
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv
  nvcc --version | tail -1
  python3 -c 'import sys, torch; print("python", sys.version.split()[0], "torch", torch.__version__, torch.version.cuda)'
  echo "cores=$(nproc) bundle libraries=$(ls "${CKS_BUNDLE:-/nonexistent}"/kernels/*.so 2> /dev/null | wc -l)"
  ls -la "$SITE/cks" "$SITE/cks/lib"
  ldd "$SITE"/cks/_runtime.*.so | grep -E "cks|cublas|cudart|not found"
} > "$OUTDIR/machine.txt" 2>&1
cat "$OUTDIR/machine.txt" >&2

# PROBE=scripts/device/gap_probe.py: run that probe (--out $OUTDIR $PROBE_ARGS) instead of steps 3-4.
if [ -n "${PROBE:-}" ]; then
  say "probe $PROBE"
  (cd /tmp && PYTHONUNBUFFERED=1 python3 "$ROOT/$PROBE" --out "$OUTDIR" ${PROBE_ARGS:-}) 2>&1 | tee "$OUTDIR/check.log" >&2
  say "done; results in $OUTDIR"
  exit 0
fi

# 3. The selector from Python, fresh processes (outside the repository: the installed package).
say "python_select.py"
(cd /tmp && python3 "$ROOT/scripts/bench/python_select.py" --runs 7) > "$OUTDIR/python_select.json" 2> "$OUTDIR/check.log"
cat "$OUTDIR/check.log" "$OUTDIR/python_select.json" >&2

# 4. cks.torch against torch.matmul.
say "python_check.py (background compiles: $JOBS jobs, at most ${COMPILE_S}s)"
SHAPES=()
[ -f "$CARRY/shapes.csv" ] && SHAPES=(--shapes "$CARRY/shapes.csv")
(cd /tmp && PYTHONUNBUFFERED=1 python3 "$ROOT/scripts/device/python_check.py" --out "$OUTDIR" --compile-s "$COMPILE_S" \
  --compile-jobs "$JOBS" --reps "$REPS" "${SHAPES[@]}") 2>&1 | tee -a "$OUTDIR/check.log" >&2
say "done; results in $OUTDIR"
ls -la "$OUTDIR" >&2
