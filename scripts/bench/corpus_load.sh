#!/usr/bin/env bash
# Benchmark of reading the committed corpus (issue 19, docs/registry.md "Corpus cache"): wall and
# CPU seconds of `cks data stats` and of the data loading of `cks train` / `cks eval` (their
# "cks: note: read N rows ... in X s" line), without the cache (every call merges the shards),
# on the first call with an empty cache (builds the entry) and warm (opens it in place).
#
#   scripts/bench/corpus_load.sh [--data data/shards] [--cks build/bin/cks] [--skip-uncached]
#
# Uses a scratch cache directory (removed at the end), never ~/.cache/cks/corpus. Prints a
# markdown table; run it under `nice -n 19` on a shared machine (the CPU column is what the
# command itself used, the wall column what it waited too).
set -euo pipefail
cd "$(dirname "$0")/../.."
data=data/shards cks=build/bin/cks uncached=1
while [ $# -gt 0 ]; do
  case "$1" in
    --data) data=$2; shift 2 ;;
    --cks) cks=$2; shift 2 ;;
    --skip-uncached) uncached=0; shift ;;
    *) echo "corpus_load: unknown option '$1'" >&2; exit 2 ;;
  esac
done
[ -x "$cks" ] || { echo "corpus_load: no cks at $cks" >&2; exit 1; }
cache=$(mktemp -d "${TMPDIR:-/tmp}/cks-bench-cache-XXXXXX")
out=$(mktemp -d "${TMPDIR:-/tmp}/cks-bench-out-XXXXXX")
trap 'rm -rf "$cache" "$out"' EXIT

rows=()
# run LABEL CACHE_SETTING CMD...: wall and CPU (user + sys of the command and its children).
run() {
  local label=$1 setting=$2
  shift 2
  local t0 t1 c0 c1 load
  t0=$(date +%s.%N)
  c0=$(awk '{print $14 + $15 + $16 + $17}' /proc/$$/stat)
  CKS_PROGRESS=1 CKS_CORPUS_CACHE=$setting "$@" >"$out/stdout" 2>"$out/stderr" || { cat "$out/stderr" >&2; exit 1; }
  t1=$(date +%s.%N)
  c1=$(awk '{print $14 + $15 + $16 + $17}' /proc/$$/stat)
  load=$(grep -o 'read [0-9]* rows of [0-9]* groups from .* in [0-9.]* s' "$out/stderr" | head -1 | awk '{print $(NF - 1)}' || true)
  local tick
  tick=$(getconf CLK_TCK)
  rows+=("| $label | $(printf '%.1f' "$(echo "$t1 - $t0" | bc)") | $(printf '%.1f' "$(echo "($c1 - $c0) / $tick" | bc -l)") | ${load:-} |")
  echo "corpus_load: $label done" >&2
}

stats=("$cks" data stats --data "$data" --format json)
# Both load the whole corpus (every ok row, its features and labels), then do little: the
# cross-validation of a ridge model on 20 groups, a ridge model on <= 8 candidates per group.
eval=("$cks" eval --data "$data" --model ridge --groups cv --folds 2 --cv-max-groups 20 --cv-max-candidates 20
      --no-baselines --format json)
train=("$cks" train --data "$data" --model ridge --max-candidates 8 --out "$out/model.json")
if [ "$uncached" = 1 ]; then
  run "data stats, no cache (CKS_CORPUS_CACHE=off)" off "${stats[@]}"
fi
run "data stats, first call (builds the cache entry)" "$cache" "${stats[@]}"
run "data stats, warm (stats computed once)" "$cache" "${stats[@]}"
run "data stats, warm again" "$cache" "${stats[@]}"
run "eval, first call on the cache (scan + features, data set kept)" "$cache" "${eval[@]}"
run "eval, warm (the kept data set)" "$cache" "${eval[@]}"
run "train, warm" "$cache" "${train[@]}"
if [ "$uncached" = 1 ]; then
  run "eval, no cache (merge + scan + features)" off "${eval[@]}"
fi

echo "| command | wall s | CPU s | data loading s (\`cks: note: read ... in X s\`) |"
echo "| --- | --- | --- | --- |"
printf '%s\n' "${rows[@]}"
echo
echo "$(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg); $(du -sh "$data" | cut -f1) of shards; $(date -u +%F)"
