#!/usr/bin/env bash
# The core tests under AddressSanitizer + UndefinedBehaviorSanitizer (docs/reliability.md): runs
# the sanitizer build's cks_core_tests (build-asan/, made by scripts/setup.sh unless
# CKS_SANITIZE_BUILD=0) on the core suites. The main build's ctest tests `sanitize_0..N` call it;
# exit 77 (ctest: skipped) when the sanitizer build is absent, 1 in CI (CI=true).
#
#   scripts/ci/sanitize_tests.sh [ASAN_DIR] [SHARD TOTAL]   SHARD of TOTAL (GoogleTest's sharding:
#                                                           ctest runs sanitize_0 .. sanitize_TOTAL-1)
set -euo pipefail
ASAN_DIR=${1:-"$(dirname "$0")/../../build-asan"}
SHARD=${2:-0} TOTAL=${3:-1}
[[ $SHARD =~ ^[0-9]+$ && $TOTAL =~ ^[1-9][0-9]*$ && $SHARD -lt $TOTAL ]] ||
  { echo "sanitize: shard '$SHARD' of '$TOTAL' is not a shard (0 to TOTAL-1 of a positive TOTAL)"; exit 2; }
BIN="$ASAN_DIR/bin/cks_core_tests"
[ -x "$BIN" ] || BIN="$ASAN_DIR/bin/cks_tests"  # a sanitizer tree built by hand with every test
if [ ! -x "$BIN" ]; then
  # In CI (.ci/run exports CI=true) setup.sh has built it unless told not to: its absence there
  # is a failure, so a passing CI proves the sanitizer suites ran.
  if [ "${CI:-}" = true ] && [ "${CKS_SANITIZE_BUILD:-1}" = 1 ]; then
    echo "sanitize: no sanitizer build at $ASAN_DIR in CI (scripts/setup.sh should have built it)"
    exit 1
  fi
  echo "sanitize: no sanitizer build at $ASAN_DIR (bash scripts/setup.sh builds it); skipped"
  exit 77
fi
# The core: every suite of the library and the CLI's error contract, but not the slow
# end-to-end collections and trainings (they run in the main build). cks_core_tests holds the
# files of these suites only (CKS_CORE_TEST_FILES in CMakeLists.txt). Left out as well: four tests
# that rank the shipped model over whole catalogues, 45-103 s each at -O0 under ASan (session 16,
# idle 2 cores); the rest of their suites, which load the same model, stay.
FILTER=${CKS_SANITIZE_FILTER:-"Table.*:Hash.*:Format.*:OneLine.*:Hw*:Catalogue*:ProblemCheck.*:Features*:Shapes*:Sampling*:Codegen*:ModelsLabels.*:ModelsPairs.*:ModelsEncoding.*:ModelsNativeXgboost.*:ModelsFile.*:ModelFileLimits.*:ModelsRidge.*:Selector*:CApiProblems.*:EvalMetrics.*:NvmmhBridge.*:MonitorPlan.*:PlanLeaders.*:PlanRemeasure.*:Registry*:WorkerProtocol.*:CliNumericOptions.*:CliErrorLine.*-CatalogueCutlassCheck.*:SamplingPerf.*:SelectorSetupCache.ShippedModelRanksAsBefore:SelectorSetupCache.RankingsAreTheSameWithAndWithoutTheCache:CApiProblems.SameMessageAsTheCli:ModelsNativeXgboost.CompiledWalkEqualsTheReferenceWalk"}
export ASAN_OPTIONS="detect_leaks=1:abort_on_error=1:halt_on_error=1:strict_string_checks=1:detect_stack_use_after_return=1${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"
# Every pattern of the filter must name tests of the binary: a suite moved to a file that
# cks_core_tests does not compile would otherwise drop out of this run unnoticed.
names=$("$BIN" --gtest_list_tests | awk '/^[^ ]/ { suite = $1; next } { print suite $1 }')
IFS=: read -ra patterns <<< "${FILTER%%-*}"
for p in "${patterns[@]}"; do
  found=0
  while IFS= read -r n; do [[ $n == $p ]] && { found=1; break; }; done <<< "$names"
  [ "$found" = 1 ] || { echo "sanitize: no test of $BIN matches '$p' (add its file to CKS_CORE_TEST_FILES)"; exit 1; }
done
echo "sanitize: shard $SHARD of $TOTAL: $BIN --gtest_filter=$FILTER"
export GTEST_SHARD_INDEX=$SHARD GTEST_TOTAL_SHARDS=$TOTAL
exec "$BIN" --gtest_filter="$FILTER" --gtest_brief=1
