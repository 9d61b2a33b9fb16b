#!/usr/bin/env bash
# `pip install .` from a clean state into a fresh virtual environment, then the Python example of
# docs/library.md ("Python and PyTorch") against the installed package, from outside the source tree
# with an empty environment: the package must use its own library and data (cks/lib, cks/share/cks),
# and pick what the build's `cks select` picks. Not a ctest: a clean build of the package takes 7-9
# min of CPU (10-25 min wall on a loaded 2-core machine; 72 s with a warm ccache), more than CI's
# share for it; run it by hand:
#
#   bash scripts/ci/pip_install_check.sh      # after scripts/setup.sh (the C++ dependencies, build/bin/cks)
#
# KEEP_BUILD=1 keeps build-pip/ (pip's build folder; with pip's build isolation it is configured
# afresh each time anyway). With ccache on PATH the compiles go through it (CCACHE_BASEDIR: this tree).
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
python3 -m venv "$TMP/venv"
[ "${KEEP_BUILD:-0}" = 1 ] || rm -rf build-pip
if command -v ccache > /dev/null; then export CMAKE_CXX_COMPILER_LAUNCHER=ccache CCACHE_BASEDIR="$ROOT"; fi
export CMAKE_BUILD_PARALLEL_LEVEL=${JOBS:-2}
start=$(date +%s)
"$TMP/venv/bin/python" -m pip install -q "$ROOT"
echo "pip install .: $(( $(date +%s) - start )) s" >&2

cd "$TMP"
expected=$("$ROOT/build/bin/cks" select --m 4096 --n 14336 --k 4096 --layout tn --top 3 --format csv 2> /dev/null |
  tail -n +2 | cut -d, -f2 | tr '\n' ' ')
env -i PATH=/usr/bin:/bin "$TMP/venv/bin/python" - "$expected" <<'EOF'
import os, sys, sysconfig
import cks

package = os.path.join(sysconfig.get_paths()["platlib"], "cks")
assert os.path.dirname(cks.__file__) == package, cks.__file__
for what in ("model", "hw_presets"):  # the package's own data, found beside its library
    assert cks.data_path(what).startswith(os.path.join(package, "share", "cks")), cks.data_path(what)

# The example of docs/library.md.
picks = cks.select(4096, 14336, 4096, "tn", top=3)
for p in picks:
    print(p.rank, p.kernel_id, p.knobs_text, p.canonical, f"{p.score:.4f}")
assert " ".join(p.kernel_id for p in picks) == sys.argv[1].strip(), ("cks select picks", sys.argv[1])
try:
    cks.select(4096, 14336, 4100, "tn")
except ValueError as e:
    print("refused:", e)
print("pip_install_check: ok", cks.__version__, "runtime" if os.path.exists(os.path.join(package, "lib", "libcks_runtime.so.0")) else "no runtime")
EOF
