#!/usr/bin/env bash
# The GEMM runtime on the H200 (issue 17, items 2-3 and 6), in one device command of about 8
# minutes, from the repository root with .carry/rt/ filled by scripts/device/pack_runtime.sh:
#   1. unpacks the binaries, the CUTLASS headers and the carried compile cache (the libraries of
#      earlier leases that hold the bundle's kernels);
#   2. `cks bundle` of the check's problems (.carry/rt/shapes.csv less the ones the kernels cannot
#      run: decode M = 1): the model's top $TOP picks, compiled where the carried cache lacks them
#      with the machine's cores for at most $COMPILE_S seconds (top-1 picks first), and per pick up
#      to $VARIANTS knob variants of its kernel (no compile; autotune times them too), taken in
#      $VARIANT_ORDER order (`cks bundle --variant-order`: model, or raster = the pick's other
#      raster at its decomposition and splits first);
#   3. cks_runtime_bench over every problem in ONE process: per problem the first call of each mode
#      (select: a bundle hit; autotune: the tuning), correctness of select / autotune / cublas
#      against an FP32 cuBLAS reference (max relative error), time per call of the three modes
#      interleaved on rotating operands (TFLOP/s, ratio to cuBLASLt), and for small problems the
#      host cost of a cached call (10,000 calls into a gated stream) beside the bare kernel launch;
#   4. a second process of autotune mode over the first problems, reading the tuning file the first
#      wrote (no tuning: first calls as fast as select's).
# Results under $OUT (8 files, the most a device command returns): runtime_bench.csv (one row per
# problem), runtime_bench.json (summary), reuse.json, bundle.log, bench.log, machine.txt,
# tuning.csv.xz, index.json.xz.
#
#   bash scripts/device/runtime_check.sh    # TOP=4 VARIANTS=0 VARIANT_ORDER=model JOBS=14 KPT=4
#                                           # COMPILE_S=200 BUDGET_S=470 LT_ALGOS=4 by default
# LT_ALGOS=N: autotune times the cuBLASLt heuristic's first N algorithms (autotune_lt_algos,
# cks_runtime_bench --autotune-lt-algos), not only its top-1.
# AT_TOP=N (default: TOP) kernels timed by autotune (autotune_top; the bundle holds TOP per problem),
# ROUNDS=N (default 5) its interleaved timing rounds (autotune_rounds); REUSE_S=0 skips step 4
# (a short lease: its 60 s go to the measurement).
# (14 nvcc jobs of 8-kernel TUs: ~0.9 GB per kernel measured, under the machine's 128 GB).
set -uo pipefail
cd "$(dirname "$0")/../.."
START=$(date +%s)
BUDGET_S=${BUDGET_S:-470} TOP=${TOP:-4} JOBS=${JOBS:-14} KPT=${KPT:-4} COMPILE_S=${COMPILE_S:-200}
VARIANTS=${VARIANTS:-0} VARIANT_ORDER=${VARIANT_ORDER:-model} LT_ALGOS=${LT_ALGOS:-4}
AT_TOP=${AT_TOP:-$TOP} ROUNDS=${ROUNDS:-5} REUSE_S=${REUSE_S:-60}
AT=(--autotune-lt-algos "$LT_ALGOS" --autotune-top "$AT_TOP" --autotune-rounds "$ROUNDS")
OUTDIR=${OUT:-out/runtime_check}
CARRY=.carry/rt
W=out/rt
mkdir -p "$OUTDIR" "$W"
left() { echo $(( START + BUDGET_S - $(date +%s) )); }
say() { echo "[runtime_check $(( $(date +%s) - START ))s] $*" >&2; }

for d in /usr/local/cuda/bin /usr/local/cuda-13*/bin; do [ -x "$d/nvcc" ] && export PATH="$d:$PATH" && break; done
for d in /usr/local/cuda/lib64 /usr/local/cuda-13*/lib64 /usr/local/cuda/targets/x86_64-linux/lib; do
  [ -e "$d/libcublasLt.so.13" ] && export LD_LIBRARY_PATH="$d${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" && break
done
[ -d "$CARRY" ] || { echo "runtime_check.sh: no $CARRY (run scripts/device/pack_runtime.sh and carry .carry/rt)" >&2; exit 2; }
tar -xJf "$CARRY/rt.tar.xz" -C "$W"
export LD_LIBRARY_PATH="$PWD/$W/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
if [ ! -d third_party/cutlass/include ]; then mkdir -p third_party && tar -xJf "$CARRY/cutlass.tar.xz" -C third_party; fi
export CKS_CUTLASS_DIR="$PWD/third_party/cutlass" CKS_INCLUDE_DIR="$PWD/include" CKS_DATA_DIR="$PWD/data"
if [ ! -f models/default.json ] && [ -f "$CARRY/model.json.xz" ]; then
  mkdir -p models && xz -dc "$CARRY/model.json.xz" > models/default.json
fi
[ -f models/default.json ] || { echo "runtime_check.sh: no models/default.json (pack with MODEL=FILE, or carry models/)" >&2; exit 2; }
export CKS_MODEL="$PWD/models/default.json"
mkdir -p build/kernel-cache
[ -f "$CARRY/kcache.tar.xz" ] && tar -xJf "$CARRY/kcache.tar.xz" -C build --skip-old-files
{
  date -u +%FT%TZ
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv
  nvcc --version | tail -1
  echo "cores=$(nproc) carried libraries=$(ls build/kernel-cache/*.so 2> /dev/null | wc -l)"
  ldd "$W/bin/cks_runtime_bench" | grep -E "cks|cublas|cudart|not found"
} > "$OUTDIR/machine.txt" 2>&1
cat "$OUTDIR/machine.txt" >&2

# 2. The bundle: only the problems the kernels can run (the others go to cuBLASLt in every mode).
python3 scripts/device/bundle_shapes.py "$CARRY/shapes.csv" "$W/bundle_shapes.csv"
say "cks bundle: $(($(wc -l < "$W/bundle_shapes.csv") - 1)) problems, top $TOP, $VARIANTS variant(s) per pick ($VARIANT_ORDER order), $JOBS nvcc jobs, at most ${COMPILE_S}s"
# The compile gets at most COMPILE_S seconds (top-1 picks first); what is not compiled by then is
# left out of the bundle (the query then says why), so the measurement always runs.
"$W/bin/cks" bundle --shapes "$W/bundle_shapes.csv" --top "$TOP" --variants "$VARIANTS" --variant-order "$VARIANT_ORDER" \
  --out "$W/bundle" --cache build/kernel-cache \
  --jobs "$JOBS" --kernels-per-tu "$KPT" --mem-per-kernel-gb 0.9 --mem-limit-gb 110 --time-budget "$COMPILE_S" \
  > /dev/null 2> "$OUTDIR/bundle.log" || { tail -5 "$OUTDIR/bundle.log"; exit 1; }
grep -E "ranked|in the cache|budget|wrote|warning" "$OUTDIR/bundle.log" | tail -6 >&2
xz -c "$W/bundle/index.json" > "$OUTDIR/index.json.xz"

# 3. The measurement, in one process; it keeps REUSE_S (60) s for the reuse check (0: none).
rm -f "$W/tuning.csv"
MAX=$(( $(left) - REUSE_S ))
say "cks_runtime_bench: $(($(wc -l < "$CARRY/shapes.csv") - 1)) problems, at most ${MAX}s, autotune: $AT_TOP kernel(s), $LT_ALGOS cuBLASLt algorithm(s), $ROUNDS round(s)"
"$W/bin/cks_runtime_bench" --shapes "$CARRY/shapes.csv" --bundle "$W/bundle" --tuning-file "$W/tuning.csv" \
  --out "$OUTDIR" --max-seconds "$MAX" "${AT[@]}" 2>&1 | tee "$OUTDIR/bench.log" | grep -v "^cks runtime:" >&2

# 4. Autotune in a second process: the tuning file's winners, no timing on the first call.
MAX=$(( $(left) - 10 ))
if [ "$REUSE_S" -gt 0 ] && [ "$MAX" -gt 15 ] && [ -f "$W/tuning.csv" ]; then
  head -61 "$CARRY/shapes.csv" > "$W/reuse_shapes.csv"
  mkdir -p "$W/reuse"
  "$W/bin/cks_runtime_bench" --shapes "$W/reuse_shapes.csv" --bundle "$W/bundle" --tuning-file "$W/tuning.csv" \
    --out "$W/reuse" --reps 1 --overhead-calls 0 --max-seconds "$MAX" "${AT[@]}" > "$W/reuse.log" 2>&1
  { echo "== second process (tuning file reuse)"; grep -v "^cks runtime:" "$W/reuse.log" | tail -5; } >> "$OUTDIR/bench.log"
  python3 - "$W/reuse/runtime_bench.csv" "$OUTDIR/runtime_bench.csv" "$OUTDIR/reuse.json" <<'EOF'
import csv, json, statistics, sys
again = {(r["layout"], r["m"], r["n"], r["k"]): r for r in csv.DictReader(open(sys.argv[1]))}
first = {(r["layout"], r["m"], r["n"], r["k"]): r for r in csv.DictReader(open(sys.argv[2]))}
both = [k for k in again if k in first and again[k]["autotune_first_call_ms"] and first[k]["autotune_first_call_ms"]]
out = {
  "problems": len(both),
  "sources_second_process": {s: sum(1 for k in both if again[k]["autotune_source"] == s) for s in {again[k]["autotune_source"] for k in both}},
  "same_winner": sum(1 for k in both if (again[k]["autotune_kernel"], again[k]["autotune_knobs"]) == (first[k]["autotune_kernel"], first[k]["autotune_knobs"])),
  "first_call_ms_tuning_median": statistics.median(float(first[k]["autotune_first_call_ms"]) for k in both) if both else None,
  "first_call_ms_from_file_median": statistics.median(float(again[k]["autotune_first_call_ms"]) for k in both) if both else None,
}
json.dump(out, open(sys.argv[3], "w"), indent=1)
print("reuse:", json.dumps(out), file=sys.stderr)
EOF
fi
[ -f "$W/tuning.csv" ] && xz -c "$W/tuning.csv" > "$OUTDIR/tuning.csv.xz"
[ -f "$OUTDIR/runtime_bench.json" ] && python3 - "$OUTDIR/runtime_bench.json" <<'EOF' >&2
import json, sys
s = json.load(open(sys.argv[1]))
print(f"measured {s['problems_measured']}/{s['problems_planned']} problems ({s['problems_failed']} failed) in {s['wall_seconds']:.0f} s")
for k in ("select_vs_cublas", "autotune_vs_cublas", "max_rel_err", "sources", "first_call_ms_bundle_hit", "host_us_per_call"):
    print(k, json.dumps(s[k]))
EOF
say "done; results in $OUTDIR"
ls -la "$OUTDIR" >&2
