#!/usr/bin/env bash
# The Python check's kernel bundle, compiled on the H200 itself (issue 17): for a session without a
# home compile cache (a fresh machine here: .kcache is a build output and does not survive it),
# scripts/device/pack_python.sh packs no bundle, and letting the runtime compile the picks during
# the check confounds its timing (lease 27: 109 compiles beside the timing, the geomean 1.03 instead
# of 1.14). Run this first, in commands of its own, until it says the bundle is complete; then
# python_check.sh in the next command, on the same warm machine, uses it (out/pybundle/bundle).
#
#   BUDGET_S=540 bash scripts/device/python_bundle.sh     (from the repository root, carry .carry/py)
#
# With a carried bundle.tar.xz (pack_python.sh from the home cache) its libraries seed the cache.
# Needs in .carry/py (pack_python.sh): the wheel (its model ranks the picks), bundle_shapes.csv (the
# check's problems the kernels can run), cks (the CLI), cutlass.tar.xz. TOP=4 picks a problem (the
# autotune check times the top 4). Resumable: the compiled libraries stay in build/kernel-cache on
# the machine, so a second call compiles only what the first left (the top-1 picks come first).
# Exit status 0 with the bundle complete, 3 when kernels are left (call again), else an error.
# The bundle also comes home through $OUT as pybundle.tar.xz.part-* (cat | xz -d | tar -x).
set -uo pipefail
cd "$(dirname "$0")/../.."
CARRY=.carry/py BUDGET_S=${BUDGET_S:-540} TOP=${TOP:-4} JOBS=${JOBS:-$(nproc)}
OUTDIR=${OUT:-out/python_bundle}
mkdir -p out "$OUTDIR"
# The CLI: .carry/py/cks (pack_python.sh without a home cache) or .carry/bin/cks (pack_carry.sh).
[ -e "$CARRY/cks" ] || { [ -x .carry/bin/cks ] && cp .carry/bin/cks "$CARRY/cks"; }
for f in bundle_shapes.csv cks cutlass.tar.xz; do
  [ -e "$CARRY/$f" ] || { echo "python_bundle.sh: no $CARRY/$f (scripts/device/pack_python.sh packs it)" >&2; exit 2; }
done
WHEEL=$(ls "$CARRY"/cutlass_kernel_selector-*.whl 2> /dev/null | head -1)
[ -n "$WHEEL" ] || { echo "python_bundle.sh: no wheel in $CARRY" >&2; exit 2; }
. scripts/device/device_env.sh
if [ ! -d third_party/cutlass/include ]; then mkdir -p third_party && tar -xJf "$CARRY/cutlass.tar.xz" -C third_party; fi
python3 -c "import sys, zipfile; sys.stdout.buffer.write(zipfile.ZipFile(sys.argv[1]).read('cks/share/cks/models/default.json'))" \
  "$WHEEL" > out/pybundle_model.json || { echo "python_bundle.sh: the wheel holds no cks/share/cks/models/default.json" >&2; exit 1; }
chmod +x "$CARRY/cks"
# A carried bundle (pack_python.sh, from the home compile cache) seeds the cache: only the picks it
# lacks are compiled here (its libraries carry the cache's names, cks_<key>.so + sidecar).
if [ -f "$CARRY/bundle.tar.xz" ] && [ ! -f build/kernel-cache/.seeded ]; then
  mkdir -p build/kernel-cache out/seed && tar -xJf "$CARRY/bundle.tar.xz" -C out/seed &&
    cp -n out/seed/bundle/kernels/cks_* build/kernel-cache/ && touch build/kernel-cache/.seeded
  echo "python_bundle.sh: seeded build/kernel-cache with $(ls out/seed/bundle/kernels/*.so 2> /dev/null | wc -l) carried libraries" >&2
fi
rm -rf out/pybundle.new && mkdir -p out/pybundle.new
"$CARRY/cks" bundle --shapes "$CARRY/bundle_shapes.csv" --top "$TOP" --model out/pybundle_model.json \
  --cache build/kernel-cache --out out/pybundle.new/bundle --jobs "$JOBS" --cutlass third_party/cutlass \
  --time-budget "$BUDGET_S" 2>&1 | tee out/pybundle.log | grep -v "settled" >&2
rc=${PIPESTATUS[0]}
cp out/pybundle.log "$OUTDIR/python_bundle.log"
[ "$rc" = 0 ] && [ -f out/pybundle.new/bundle/index.json ] || { echo "python_bundle.sh: cks bundle failed (status $rc)" >&2; exit 1; }
rm -rf out/pybundle && mv out/pybundle.new out/pybundle
tar -cf - -C out/pybundle bundle | xz -T0 -6 | split -b 15m - "$OUTDIR/pybundle.tar.xz.part-"
# "... in N libraries (C cached, K compiled, F failed, S skipped)": complete when nothing was skipped.
if grep -q "wrote .*index.json" out/pybundle.log && ! grep -qE "[0-9]+ skipped" out/pybundle.log; then
  echo "python_bundle.sh: the bundle is complete (out/pybundle/bundle): run python_check.sh next" >&2
  exit 0
fi
echo "python_bundle.sh: kernels left (the time budget ran out): call again to compile the rest" >&2
exit 3
