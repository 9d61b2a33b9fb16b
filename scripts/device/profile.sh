#!/usr/bin/env bash
# The counter study's device side: profiles the candidates of a profile plan (`cks profile plan`)
# with Nsight Compute on one GPU, while `cks collect` may still be running on the others. Run on
# the H200 machine from the repository root (binaries in .carry/bin):
#
#   scripts/device/profile.sh PLAN.csv REGISTRY KERNEL_CACHE DEVICE OUT_DIR [DEADLINE_EPOCH_S] [SHARD]
#
# SHARD "i/n" profiles only the groups whose index (in group-key order) is i modulo n, so n GPUs
# can share a plan: one OUT_DIR per GPU, each imported as its own run (its GPU's provenance).
# 1. Waits until every kernel of the plan has a final compile status in REGISTRY (the live
#    collect registry, read-only) and resolves each to its library in KERNEL_CACHE.
# 2. Per group (a chunk): `ncu --profile-from-start off --clock-control none` over
#    `cks-worker --profile`, which measures each candidate (the paper's protocol, checked against
#    cuBLAS) and launches it once more inside a cudaProfilerStart/Stop range: ncu sees exactly one
#    kernel per profiled candidate, the i-th row of <chunk>.csv is the results row with seq i.
# 3. Writes OUT_DIR/provenance.json (GPU, driver, CUDA, ncu version, metric list, clocks policy).
# Import at home: `cks profile import --plan PLAN.csv --dir OUT_DIR --provenance OUT_DIR/provenance.json`.
set -uo pipefail
PLAN=$1 REG=$2 CACHE=$3 DEV=$4 DIR=$5 DEADLINE=${6:-0} SHARD=${7:-0/1}
BIN=${BIN:-.carry/bin}
mkdir -p "$DIR"
STARTED=$(date -u +%FT%TZ)
log() { echo "[$(date -u +%T)] profile: $*" >&2; }

# The fixed metric set (docs/analysis.md): the paper's counters, then the context for them.
WANT=(
  gpu__time_duration.sum
  sm__cycles_active.avg sm__cycles_elapsed.avg
  sm__throughput.avg.pct_of_peak_sustained_elapsed
  gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed
  lts__t_sectors_op_read.sum lts__t_sectors_op_write.sum lts__t_sector_hit_rate.pct
  dram__bytes_read.sum dram__bytes_write.sum dram__throughput.avg.pct_of_peak_sustained_elapsed
  sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active
  sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active
  sm__inst_executed_pipe_tensor_op_gmma.sum
  sm__warps_active.avg.pct_of_peak_sustained_active
  launch__registers_per_thread launch__grid_size
)
for r in barrier long_scoreboard wait math_pipe_throttle mio_throttle short_scoreboard not_selected selected \
         lg_throttle membar sleeping dispatch_stall no_instruction drain branch_resolving tex_throttle imc_miss misc; do
  WANT+=("smsp__average_warps_issue_stalled_${r}_per_issue_active.ratio")
done
# Keep the metrics this ncu knows on this GPU (an unknown name would stop every profile).
ncu --query-metrics --devices "$DEV" > "$DIR/ncu_query_metrics.txt" 2>&1 || true
METRICS=$(python3 - "$DIR/ncu_query_metrics.txt" "${WANT[@]}" <<'EOF'
import sys
text = open(sys.argv[1]).read().split()
names = set(text)
keep = [m for m in sys.argv[2:] if m.split('.')[0] in names] if len(names) > 50 else sys.argv[2:]
print(",".join(keep))
EOF
)
log "metrics: $METRICS"

# 1. Wait for the plan's kernels, then write the worker's item files, one chunk per group.
python3 - "$PLAN" "$REG" "$CACHE" "$DIR" "$DEADLINE" "$SHARD" <<'EOF' || exit 1
import csv, os, sqlite3, sys, time
plan, reg, cache, out, deadline = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], float(sys.argv[5])
shard, nshards = map(int, sys.argv[6].split("/"))
items = list(csv.DictReader(open(plan)))
keys = sorted({it["group_key"] for it in items})
mine = {k for i, k in enumerate(keys) if i % nshards == shard}
items = [it for it in items if it["group_key"] in mine]
want = {it["kernel_id"] for it in items}
while True:
    try:
        con = sqlite3.connect(f"file:{reg}?mode=ro", uri=True, timeout=30)
        rows = con.execute("SELECT kernel_id, status, lib_hash, lib_index FROM kernels").fetchall()
        con.close()
    except sqlite3.Error as e:
        rows = []
        print(f"profile: registry not readable yet ({e})", file=sys.stderr)
    known = {r[0]: r for r in rows if r[0] in want}
    done = [k for k, r in known.items() if r[1] != "ok" or os.path.exists(f"{cache}/cks_{r[2]}.so")]
    print(f"profile: {len(done)}/{len(want)} kernels compiled", file=sys.stderr)
    if len(done) == len(want) or (deadline and time.time() > deadline - 120):
        break
    time.sleep(15)
chunks = {}
for it in items:
    r = known.get(it["kernel_id"])
    if not r or r[1] != "ok" or not os.path.exists(f"{cache}/cks_{r[2]}.so"):
        print(f"profile: skipping {it['tag']}: kernel {it['kernel_id']} not compiled", file=sys.stderr)
        continue
    line = "\t".join([it["tag"], it["m"], it["n"], it["k"], it["layout"], it["seed"],
                      os.path.abspath(f"{cache}/cks_{r[2]}.so"), str(r[3]), it["kernel_id"], it["knobs"]])
    chunks.setdefault(it["group_key"], []).append(line)
for key, lines in sorted(chunks.items()):
    with open(f"{out}/c{keys.index(key):02d}_{key}.items.tsv", "w") as f:
        f.write("\n".join(lines) + "\n")
print(f"profile: {sum(map(len, chunks.values()))} candidates in {len(chunks)} chunks", file=sys.stderr)
EOF

# 2. One ncu run per chunk (a chunk cut short loses only itself).
for items in "$DIR"/*.items.tsv; do
  c=${items%.items.tsv}
  left=$(( DEADLINE > 0 ? DEADLINE - $(date +%s) : 600 ))
  if [ "$left" -lt 30 ]; then log "deadline: stopping before $(basename "$c")"; break; fi
  log "$(basename "$c"): $(wc -l < "$items") candidates (${left}s left)"
  timeout -k 10 "$left" ncu --profile-from-start off --clock-control none --cache-control all --replay-mode kernel \
    --metrics "$METRICS" --csv --page raw --print-units base --log-file "$c.csv" \
    "$BIN/cks-worker" --profile "$items" --profile-out "$c.results.tsv" --device "$DEV" --pool-gb 8 \
    2> "$c.worker.log"
  log "$(basename "$c"): ncu exit $? ($(grep -c . "$c.results.tsv" 2> /dev/null) result lines)"
done

# 3. Provenance of the run.
python3 - "$DIR/provenance.json" "$DEV" "$STARTED" "$METRICS" "$0 $*" <<'EOF'
import json, socket, subprocess, sys, datetime, os
path, dev, started, metrics, command = sys.argv[1:6]
def sh(cmd):
    try:
        return subprocess.run(cmd, shell=True, capture_output=True, text=True, timeout=60).stdout.strip()
    except Exception as e:
        return f"error: {e}"
q = sh(f"nvidia-smi -i {dev} --query-gpu=name,uuid,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader").split(", ")
prov = {
    "gpu_name": q[0] if q else "", "gpu_uuid": q[1] if len(q) > 1 else "",
    "driver_version": q[2] if len(q) > 2 else "",
    "cuda_version": sh("nvcc --version | tail -2 | head -1"),
    "cutlass_version": open("third_party/cutlass/.version").read().strip() if os.path.exists("third_party/cutlass/.version") else "4.2.0",
    "git_sha": os.environ.get("CKS_GIT_SHA", ""), "host": socket.gethostname(),
    "started_at": started, "ended_at": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
    "command": command,
    "ncu_version": sh("ncu --version | tail -1"), "clock_control": "none", "cache_control": "all",
    "replay_mode": "kernel", "device": int(dev), "metrics": metrics.split(","),
    "sm_clock_after": q[3] if len(q) > 3 else "", "sm_clock_max": q[4] if len(q) > 4 else "",
}
json.dump(prov, open(path, "w"), indent=1)
EOF
log "done: $(ls "$DIR"/*.csv 2> /dev/null | wc -l) chunk reports"
echo done > "$DIR/profile.done"
