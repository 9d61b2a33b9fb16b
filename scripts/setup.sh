#!/usr/bin/env bash
# One-command set-up: installs every dependency on a fresh Debian 12 machine, fetches the
# CUTLASS 4.2.0 C++ headers from the nvidia-cutlass==4.2.0.0 wheel into third_party/ (ignored,
# never committed), installs the Python tools, and builds into build/ (binaries in build/bin/) and
# the sanitizer build into build-asan/ (docs/reliability.md; CKS_SANITIZE_BUILD=0 skips it).
# CKS_BUILD_TARGETS="cks cks-worker" builds only those targets of build/ (a device lease needs no
# more; the set-up run again without it builds the rest).
#
# The MLP training plugin (`cks train --model mlp`, libtorch) is opt-in: CKS_WITH_TORCH=1 installs
# libtorch-dev (about 490 MB of packages) and builds it. Nothing else needs libtorch: the runtime,
# the selector, libcks.so and the shipped model do not. Packages are installed without recommends.
# Slurm and munge (slurmctld, slurmd, munge, slurm-client) are installed for the cluster scripts'
# test (ctest -L slurm: a one-node cluster started by the test itself; docs/cluster.md); no
# daemon is started here. The Parquet export (scripts/data/export_parquet.py) needs pyarrow,
# installed by default (CKS_WITH_PARQUET=0 skips it; docs/parquet.md), so CI runs its round trip.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
JOBS=${JOBS:-$(nproc)}

log() { echo "[setup] $*" >&2; }

if [ "${CKS_SKIP_APT:-0}" != 1 ]; then
  PKGS="cmake g++ make pkg-config libgtest-dev libbenchmark-dev nlohmann-json3-dev libcli11-dev libfmt-dev
        libeigen3-dev libsqlite3-dev sqlite3 zlib1g-dev liblzma-dev libxgboost-dev unzip python3-pip xz-utils
        slurmctld slurmd slurm-client munge"
  # OpenBLAS: libtorch's BLAS (MLP training 7x faster than the reference BLAS).
  [ "${CKS_WITH_TORCH:-0}" = 1 ] && PKGS="$PKGS libtorch-dev libopenblas0-pthread"
  missing=$(for p in $PKGS; do dpkg -s "$p" >/dev/null 2>&1 || echo "$p"; done)
  if [ -n "$missing" ]; then
    log "installing Debian packages: $(echo $missing)"
    SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends $missing >/dev/null
  fi
fi

# CUTLASS headers + the cutlass_library generator (for the catalogue cross-check).
CUTLASS_VER=4.2.0.0
TP="$ROOT/third_party"
if [ ! -f "$TP/cutlass/.version" ] || [ "$(cat "$TP/cutlass/.version")" != "$CUTLASS_VER" ]; then
  log "fetching nvidia-cutlass==$CUTLASS_VER"
  tmp=$(mktemp -d)
  python3 -m pip download -q --no-deps "nvidia-cutlass==$CUTLASS_VER" -d "$tmp"
  rm -rf "$TP/cutlass" && mkdir -p "$TP/cutlass"
  unzip -q "$tmp"/nvidia_cutlass-*.whl 'cutlass_library/*.py' 'cutlass_library/source/include/*' \
    'cutlass_library/source/tools/util/include/*' -d "$tmp/x"
  mv "$tmp/x/cutlass_library/source/include" "$TP/cutlass/include"
  mkdir -p "$TP/cutlass/tools/util"
  mv "$tmp/x/cutlass_library/source/tools/util/include" "$TP/cutlass/tools/util/include"
  mkdir -p "$TP/cutlass/python/cutlass_library"
  mv "$tmp/x/cutlass_library/"*.py "$TP/cutlass/python/cutlass_library/"
  echo "$CUTLASS_VER" > "$TP/cutlass/.version"
  rm -rf "$tmp"
fi

# Python tools (analysis plots, Optuna tuning, nvMatmulHeuristics baseline; nanobind and pytest for
# the Python package and its tests: without them the package is not built). Optional ones
# never fail the set-up: the commands that need them say clearly when they are absent.
if [ "${CKS_SKIP_PIP:-0}" != 1 ]; then
  python3 -m pip install -q -r scripts/requirements.txt || log "warning: some Python tools failed to install"
  if [ "${CKS_WITH_PARQUET:-1}" = 1 ]; then
    python3 -m pip install -q pyarrow || log "warning: pyarrow failed to install (scripts/data/export_parquet.py needs it)"
  fi
fi

# ccache when present: CI machines keep its cache between runs, a rebuild then takes seconds.
LAUNCHER=()
if command -v ccache >/dev/null 2>&1; then
  export CCACHE_BASEDIR="$ROOT"
  LAUNCHER=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_CUDA_COMPILER_LAUNCHER=ccache)
fi

TORCH=OFF
[ "${CKS_WITH_TORCH:-0}" = 1 ] && TORCH=ON
log "configuring and building (jobs=$JOBS, MLP training plugin $TORCH)"
# The Python package (python/CMakeLists.txt) is built for the python3 the tools were installed into.
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DCKS_WITH_TORCH=$TORCH -DPython_EXECUTABLE="$(command -v python3)" \
  "${LAUNCHER[@]}" >/dev/null
if [ -n "${CKS_BUILD_TARGETS:-}" ]; then
  # Only these targets (e.g. "cks cks-worker": what a device lease carries), so a lease can start
  # before the rest compiles; run the set-up again without it for the tests and the library.
  # shellcheck disable=SC2086  # a space-separated list of targets
  cmake --build build -j "$JOBS" --target $CKS_BUILD_TARGETS
else
  cmake --build build -j "$JOBS"
fi
log "done: build/bin/cks"

# The sanitizer build (ASan + UBSan, docs/reliability.md), on by default (CKS_SANITIZE_BUILD=0 skips
# it): build-asan/ with the core tests' binary (cks_core_tests, the files of the core suites only)
# and the two executables it runs; ctest's sanitize_0..3 tests run its core suites (skipped without it).
# Session 16, idle 2 cores, no ccache: the build 420 s from scratch, the run 493 s.
if [ "${CKS_SANITIZE_BUILD:-1}" = 1 ]; then
  log "configuring and building the sanitizer build build-asan/ (jobs=$JOBS)"
  cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O0 -g1" \
    -DCKS_SANITIZE=ON -DCKS_WITH_TORCH=OFF -DCKS_BUILD_BENCH=OFF -DCKS_BUILD_LIBRARY=OFF "${LAUNCHER[@]}" >/dev/null
  cmake --build build-asan -j "$JOBS" --target cks_core_tests
  log "done: build-asan/bin/cks_core_tests"
fi
