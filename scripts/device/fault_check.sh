#!/usr/bin/env bash
# The real CUDA backend's fault paths, checked once on the GPU (issue 18): one TN group of 6 cached
# kernels (data/plans/fault_check.jsonl; carry their library: `scripts/device/kcache.sh pack
# data/plans/fault_check.jsonl`, or merge that plan into the lease's before packing) measured by
# `cks collect --backend cuda --fault ...`, where three kernels have a real device fault launched in
# place of their run() (cks-worker, worker/fake.hpp `cuda_injectable`):
#   hang@K1          a kernel that spins forever: the monitor's --deadline ends the worker
#   launch_error@K2  a trap: cudaErrorLaunchFailure, sticky, the worker exits and is respawned
#   misaligned@K3    a 4-byte load from an odd address: cudaErrorMisalignedAddress, sticky
# and the other three must still measure ok in the same run. Prints every attempt the registry
# recorded and checks what it should hold; exit 1 on a mismatch. Run on the H200 machine from the
# repository root, binaries in $BIN (.carry/bin), about a minute:
#   BIN=.carry/bin bash scripts/device/fault_check.sh [PLAN]
# Writes fault_check.csv and fault_check.log to $OUT. BACKEND=fake rehearses it here (the fake
# backend's faults of the same names, no GPU).
set -uo pipefail
BIN=${BIN:-.carry/bin}
PLAN=${1:-data/plans/fault_check.jsonl}
OUTDIR=${OUT:-out/fault_check}
mkdir -p out "$OUTDIR"
. "$(dirname "$0")/device_env.sh"
# The kernels of the plan's first group: listed, or an exhaustive group's pool file (relative to the plan).
mapfile -t K < <(python3 -c '
import json, os, sys
with open(sys.argv[1]) as f:
    next(f)
    g = json.loads(next(f))
if g["candidates"] == "exhaustive":
    with open(os.path.join(os.path.dirname(sys.argv[1]), g["pool"])) as p:
        ids = [l.strip() for l in p if l.strip() and not l.startswith("#")]
else:
    ids = [c[0] for c in g["candidates"]]
print("\n".join(dict.fromkeys(ids)))' "$PLAN")
[ "${#K[@]}" -ge 4 ] || { echo "fault_check: $PLAN needs at least 4 kernels in its first group" >&2; exit 2; }
FAULTS="hang@${K[0]};launch_error@${K[1]};misaligned@${K[2]}"
REG=out/fault_check.db
rm -f "$REG" "$REG"-wal "$REG"-shm
echo "fault_check: $PLAN, faults $FAULTS" | tee "$OUTDIR/fault_check.log"
t0=$(date +%s)
"$BIN/cks" collect --plan "$PLAN" --registry "$REG" --backend "${BACKEND:-cuda}" --fault "$FAULTS" --deadline 20 --max-attempts 2 \
  --gpus 0 --jobs 4 --cache-dir build/kernel-cache --cutlass-dir third_party/cutlass --progress-every 5 \
  >> "$OUTDIR/fault_check.log" 2>&1
echo "collect exit $? after $(( $(date +%s) - t0 )) s" | tee -a "$OUTDIR/fault_check.log"
python3 - "$REG" "$OUTDIR/fault_check.csv" "${K[@]}" <<'PY' | tee -a "$OUTDIR/fault_check.log"
import csv, sqlite3, sys
reg, out, kernels = sys.argv[1], sys.argv[2], sys.argv[3:]
db = sqlite3.connect(f"file:{reg}?mode=ro", uri=True)
rows = db.execute("SELECT kernel_id, attempt, status, substr(error, 1, 160), worker, finished_at FROM measurements "
                  "WHERE kernel_id != 'cublas' ORDER BY kernel_id, attempt").fetchall()
with open(out, "w", newline="") as f:
    w = csv.writer(f)
    w.writerow(["kernel_id", "injected", "attempt", "status", "error", "worker", "finished_at"])
    role = {kernels[0]: "hang", kernels[1]: "launch_error (trap)", kernels[2]: "misaligned"}
    for r in rows:
        w.writerow([r[0], role.get(r[0], "none"), *r[1:]])
        print(f"{r[0]} {role.get(r[0], 'none'):20} attempt {r[1]} {r[2]:12} {r[3]}")
final = {}
for k, a, s, e, *_ in rows:
    final[k] = (s, e)
ok = db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
checks = [("integrity_check", ok),
          ("the hang ended by the deadline", final.get(kernels[0], ("",))[0] in ("timeout", "quarantined")),
          ("the trap recorded as a launch error", final.get(kernels[1], ("",))[0] in ("launch_error", "quarantined")),
          ("the misaligned load recorded as such", final.get(kernels[2], ("",))[0] in ("launch_error", "quarantined")
           and any("misaligned" in (e or "") for k, a, s, e, *_ in rows if k == kernels[2])),
          ("the other kernels measured ok in the same run", all(final.get(k, ("",))[0] == "ok" for k in kernels[3:])),
          ("one row per attempt, none lost", len({(k, a) for k, a, *_ in rows}) == len(rows))]
for name, passed in checks:
    print(f"{'PASS' if passed else 'FAIL'}: {name}")
sys.exit(0 if all(p for _, p in checks) else 1)
PY
