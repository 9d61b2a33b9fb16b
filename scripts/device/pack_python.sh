#!/usr/bin/env bash
# Fills .carry/py/ (ignored) with what scripts/device/python_check.sh needs on the H200 machine (no
# network there, no C++ dependencies to build with; its torch interpreter is Python 3.12):
#   cutlass_kernel_selector-*-cp312-*.whl  the package, built here by `pip wheel .` with $PY (a Python
#                                          3.12; the build folder build-pip/cp312-... is kept)
#   cutlass.tar.xz                         the CUTLASS headers (the runtime compiles the picks the
#                                          bundle lacks in the background)
#   bundle.tar.xz                          a bundle of the check's problems (python_check.py --problems),
#                                          top 1, from the libraries of the home compile cache $KCACHE
#                                          (--cached-only: nothing is compiled here; 12 MB, 1 MB in xz)
#
#   shapes.csv                             with SHAPES=FILE: runtime problems (m,n,k,layout) the check adds
#                                          as cases (python_check.py --shapes), bundled as well
#
#   PY=/path/to/python3.12 scripts/device/pack_python.sh      (KCACHE=.kcache BUILD=build TOP=1 by default)
# TOP=N bundles the model's top N of each problem (autotune mode, python_check.sh MODE=autotune, times them).
# A change to python/cks/*.py only: scripts/device/repack_wheel.sh refreshes the wheel in seconds.
# Then on the device (carry [".carry/py"]; scripts/device/slim_tree.sh out first, the call carries at most 64 MiB):
#   bash scripts/device/python_check.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
PY=${PY:-python3.12} KCACHE=${KCACHE:-.kcache} BUILD=${BUILD:-build} TOP=${TOP:-1} SHAPES=${SHAPES:-}
[ -z "$SHAPES" ] || [ -f "$SHAPES" ] || { echo "pack_python.sh: SHAPES=$SHAPES is not a file" >&2; exit 2; }
OUTDIR=.carry/py
"$PY" -c 'import sys; sys.exit(sys.version_info[:2] != (3, 12))' 2> /dev/null ||
  { echo "pack_python.sh: PY=$PY is not a Python 3.12 (the device's torch interpreter is 3.12)" >&2; exit 2; }
if ls "$KCACHE"/cks_*.so > /dev/null 2>&1; then
  [ -x "$BUILD/bin/cks" ] && [ -d "$BUILD/python/cks" ] ||
    { echo "pack_python.sh: no $BUILD/bin/cks or $BUILD/python/cks (build first: they make the bundle)" >&2; exit 2; }
fi
rm -rf "$OUTDIR" && mkdir -p "$OUTDIR"
[ -z "$SHAPES" ] || cp "$SHAPES" "$OUTDIR/shapes.csv"
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

# 1. The wheel (ccache when present: the C++ objects are those of any earlier build of the package).
command -v ccache > /dev/null && export CMAKE_CXX_COMPILER_LAUNCHER=ccache CCACHE_BASEDIR="$PWD"
CMAKE_BUILD_PARALLEL_LEVEL=${JOBS:-2} "$PY" -m pip wheel -q --no-deps -w "$OUTDIR" .

# 2. The CUTLASS headers.
if [ -f .carry/cutlass.tar.xz ]; then cp .carry/cutlass.tar.xz "$OUTDIR/"
else tar -cJf "$OUTDIR/cutlass.tar.xz" -C third_party cutlass/include cutlass/tools cutlass/.version; fi

# 3. The bundle (none when the home compile cache is empty, e.g. on a fresh clone: python_check.sh
# then compiles every pick in the background): the model's top-1 of each problem the kernels can run (the C API's own check, through
# the build's package), where the home cache has it.
if ! ls "$KCACHE"/cks_*.so > /dev/null 2>&1; then
  # What scripts/device/python_bundle.sh needs to compile the bundle on the H200 instead: the CLI
  # and the check's problems the kernels can run.
  [ -x "$BUILD/bin/cks" ] && [ -d "$BUILD/python/cks" ] ||
    { echo "pack_python.sh: no $BUILD/bin/cks or $BUILD/python/cks (build first)" >&2; exit 2; }
  cp "$BUILD/bin/cks" "$OUTDIR/cks"
  python3 scripts/device/python_check.py --problems ${SHAPES:+--shapes "$SHAPES"} > "$TMP/problems.csv"
  PYTHONPATH="$BUILD/python" python3 scripts/device/bundle_shapes.py "$TMP/problems.csv" "$OUTDIR/bundle_shapes.csv"
  echo "pack_python.sh: no libraries in $KCACHE: no bundle; on the device run scripts/device/python_bundle.sh" \
       "(until it says complete), then python_check.sh" >&2
  du -sh "$OUTDIR"/*
  echo "carry: [\".carry/py\"]  (and scripts/device/slim_tree.sh out for the call, in after: it carries at most 64 MiB)"
  exit 0
fi
python3 scripts/device/python_check.py --problems ${SHAPES:+--shapes "$SHAPES"} > "$TMP/problems.csv"
PYTHONPATH="$BUILD/python" python3 - "$TMP/problems.csv" > "$TMP/bundle.csv" <<'EOF'
import csv, sys
import cks
check = cks.Selector(static=True)
print("m,n,k,layout")
for r in csv.DictReader(open(sys.argv[1])):
    try:
        check.select(int(r["m"]), int(r["n"]), int(r["k"]), r["layout"])
        print(f"{r['m']},{r['n']},{r['k']},{r['layout']}")
    except ValueError as e:  # e.g. 1001: cuBLASLt in every mode
        print(f"pack_python.sh: not bundled: {e}", file=sys.stderr)
EOF
# python_bundle.sh compiles on the machine what the home cache lacks (with the CLI of .carry/bin).
cp "$TMP/bundle.csv" "$OUTDIR/bundle_shapes.csv"
mkdir -p "$TMP/kc"
[ -d "$KCACHE" ] && cp "$KCACHE"/cks_*.so "$KCACHE"/cks_*.json "$TMP/kc/" 2> /dev/null || true
"$BUILD/bin/cks" bundle --shapes "$TMP/bundle.csv" --top "$TOP" --cached-only --cache "$TMP/kc" --out "$TMP/bundle" 2>&1 |
  { grep -v "settled" || true; } >&2
echo "pack_python.sh: $(ls "$TMP/bundle/kernels" 2> /dev/null | grep -c '\.so$') libraries in the bundle" >&2
tar -cJf "$OUTDIR/bundle.tar.xz" -C "$TMP" bundle
du -sh "$OUTDIR"/*
echo "carry: [\".carry/py\"]  (and scripts/device/slim_tree.sh out for the call, in after: it carries at most 64 MiB)"
