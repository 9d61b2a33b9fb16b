#!/usr/bin/env bash
# ctest `parquet` (docs/parquet.md): scripts/data/export_parquet.py round-trips a registry. Two
# fake-backend collections of a small plan (two runs, a crash fault: rows of several statuses)
# are packed as two shards; the shard directory is exported (through the corpus cache) and read
# back: every measurement row, its run's provenance and group shape, and every row of the other
# tables must come back equal. Exit 77 (skip) when pyarrow is not installed (scripts/setup.sh
# installs it unless CKS_WITH_PARQUET=0), except in CI (CI=true, .ci/run): there it fails.
set -uo pipefail
BIN=${1:?usage: test_parquet.sh BUILD_BIN_DIR}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
CKS="$BIN/cks"
fail() { echo "test_parquet: FAIL: $*"; exit 1; }
if ! python3 -c 'import pyarrow' 2>/dev/null; then
  [ "${CI:-}" = true ] && [ "${CKS_WITH_PARQUET:-1}" = 1 ] && fail "pyarrow not installed in CI (scripts/setup.sh installs it)"
  echo "test_parquet: SKIP: pyarrow not installed"
  exit 77
fi
W=$(mktemp -d "${TMPDIR:-/tmp}/cks-parquet-XXXXXX")
trap 'rm -rf "$W"' EXIT
export CKS_CORPUS_CACHE="$W/cache"

"$CKS" plan make --set paper --layouts tn,nt --limit-groups 6 --budget 10 --seed 5 --out "$W/plan.jsonl" 2>/dev/null ||
  fail "cks plan make"
kernel=$(python3 -c 'import json,sys; l=open(sys.argv[1]).readlines()[1]; print(json.loads(l)["candidates"][0][0])' "$W/plan.jsonl")
for run in 1 2; do
  "$CKS" collect --plan "$W/plan.jsonl" --registry "$W/r$run.db" --backend fake --fault "crash@$kernel" \
    --max-attempts 2 --progress-every 0 --deadline 60 --heartbeat-timeout 30 2>/dev/null || fail "cks collect (run $run)"
  "$CKS" data pack --registry "$W/r$run.db" --out-dir "$W/shards" >/dev/null || fail "cks data pack (run $run)"
  sleep 1.1  # the second run's shard gets a later name
done
python3 "$ROOT/scripts/data/export_parquet.py" --data "$W/shards" --cks "$CKS" --out "$W/pq" || fail "export"
python3 "$ROOT/scripts/data/export_parquet.py" --data "$W/shards" --cks "$CKS" --check "$W/pq" || fail "round trip"
attempts=$("$CKS" data stats --data "$W/shards" --format csv | grep '^measurements.attempts,' | cut -d, -f2)
python3 - "$W/pq" "$attempts" <<'PY' || fail "the files' contents"
import sys, pyarrow.parquet as pq
m = pq.read_table(sys.argv[1] + "/measurements.parquet")
assert m.num_rows == int(sys.argv[2]), (m.num_rows, sys.argv[2])
statuses = set(m.column("status").to_pylist())
assert {"ok", "crash"} <= statuses, statuses
assert len(set(m.column("run_uuid").to_pylist())) == 2
assert None not in m.column("gpu_name").to_pylist(), "a measurement without its run's provenance"
assert pq.read_metadata(sys.argv[1] + "/measurements.parquet").row_group(0).column(0).compression == "ZSTD"
print(f"test_parquet: {m.num_rows} measurements of statuses {sorted(statuses)} in 2 runs")
PY
# The check is not vacuous: one value changed in the file is found.
python3 - "$W/pq/measurements.parquet" <<'PY' || fail "could not alter the file"
import sys, pyarrow as pa, pyarrow.parquet as pq
t = pq.read_table(sys.argv[1])
i = t.schema.get_field_index("mean_us")
v = t.column(i).to_pylist()
v[len(v) // 2] += 1e-9
pq.write_table(t.set_column(i, t.schema.field(i), pa.array(v, pa.float64())), sys.argv[1], compression="zstd")
PY
if python3 "$ROOT/scripts/data/export_parquet.py" --data "$W/shards" --cks "$CKS" --check "$W/pq" 2>"$W/check.err"; then
  fail "a changed value passed the round trip check"
fi
grep -q "mismatch: measurement" "$W/check.err" || fail "the check did not name the changed measurement: $(cat "$W/check.err")"
echo "test_parquet: PASS"
