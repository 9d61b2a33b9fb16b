#!/usr/bin/env bash
# Readies, at home, everything the next lease's device calls carry (data/plans/next_lease.md), so a
# session on a fresh development machine does not lose its first machine to a missing piece
# (session 45: the runtime check's libraries were still building when the machine came):
#   1. the binaries the calls need: build/bin/cks, cks-worker, cks_runtime_bench and the libraries
#      libcks.so.0 and libcks_runtime.so.0 (built here when absent: `cmake --build build --target`);
#   2. the plans of $LEASES (default 51 50 48 45 47 46) decompressed into .carry/l<N>.jsonl, their
#      kernels in plan order in .carry/ids.txt (cublas left out);
#   3. .carry/bin and .carry/cutlass.tar.xz (scripts/device/pack_carry.sh);
#   4. the compile cache: .carry/kcache.tar.xz from .kcache (scripts/device/kcache.sh pack) when
#      .kcache holds every planned kernel; otherwise it says so, and the first call should be
#      `scripts/device/compile_ids.sh` (the device's cores build them; any card);
#   5. .carry/rt for the runtime check (scripts/device/pack_runtime.sh, with $EXTRA's problems:
#      default lease 51's held-out shapes, so the runtime runs sliced-K picks).
# It prints the state and the device command for each card. Re-running it is cheap.
#
#   bash scripts/device/prepare_next_lease.sh        # LEASES="51 50" EVERY=8 DECODE_M=8,32 MODEL=...
set -euo pipefail
cd "$(dirname "$0")/../.."
LEASES=${LEASES:-51 50 48 45 47 46} BUILD=${BUILD:-build} KCACHE=${KCACHE:-.kcache}
EXTRA_FROM=${EXTRA_FROM:-data/device_checks/20261207_session42_h100/lease51/per_group_113.csv}
EVERY=${EVERY:-8} DECODE_M=${DECODE_M:-8,32} MODEL=${MODEL:-models/default.json}
say() { echo "[prepare] $*" >&2; }
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

need=()
for f in bin/cks bin/cks-worker bin/cks_runtime_bench lib/libcks.so.0 lib/libcks_runtime.so.0; do
  [ -e "$BUILD/$f" ] || need+=("$f")
done
if [ ${#need[@]} -gt 0 ]; then
  [ -f "$BUILD/CMakeCache.txt" ] || { say "no configured build in $BUILD (run scripts/setup.sh first)"; exit 2; }
  say "building what the calls need (missing: ${need[*]})"
  cmake --build "$BUILD" -j "$(nproc)" --target cks cks-worker cks_shared cks_runtime cks_runtime_bench
fi

mkdir -p .carry
plans=()
for l in $LEASES; do
  src=data/plans/lease$l/lease_run.jsonl.xz
  [ -f "$src" ] || { say "no plan $src"; exit 2; }
  xz -dc "$src" > ".carry/l$l.jsonl"
  plans+=(".carry/l$l.jsonl")
done
python3 - "$TMP/all.jsonl" "${plans[@]}" <<'EOF'
import json, sys
seen, ids = set(), []
with open(sys.argv[1], "w") as all_:
    for i, p in enumerate(sys.argv[2:]):
        with open(p) as f:
            header = next(f)
            if i == 0:
                all_.write(header)
            for line in f:
                all_.write(line)
                for k, _ in json.loads(line)["candidates"]:
                    if k != "cublas" and k not in seen:
                        seen.add(k); ids.append(k)
open(".carry/ids.txt", "w").write("".join(k + "\n" for k in ids))
print(f"[prepare] {len(sys.argv) - 2} plans, {len(ids)} kernels -> .carry/ids.txt", file=sys.stderr)
EOF
bash scripts/device/pack_carry.sh > /dev/null

nids=$(grep -c . .carry/ids.txt)
cache_ok=0
rm -f .carry/kcache.tar.xz
if [ -d "$KCACHE" ]; then
  line=$(bash scripts/device/kcache.sh pack "$TMP/all.jsonl" 24 2>&1 | tail -1)
  say "$line"
  [[ $line == *"holding $nids of the plan's $nids kernels"* ]] && cache_ok=1
fi
if [ "$cache_ok" != 1 ]; then
  rm -f .carry/kcache.tar.xz
  say "the compile cache does not hold all $nids kernels: spend the first call(s) on"
  say "  BUDGET_S=540 JOBS=16 KPT=4 bash scripts/device/compile_ids.sh   (carry [\".carry\"]; exit 124: call again)"
  say "then: bash scripts/device/kcache.sh import <its kcache.tar.xz.part-*> and run this script again"
fi

if [ -f "$EXTRA_FROM" ]; then
  python3 - "$EXTRA_FROM" <<'EOF'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
open(".carry/extra.csv", "w").write("m,n,k,layout\n" + "".join(f"{r['m']},{r['n']},{r['k']},{r['layout']}\n" for r in rows))
EOF
  EXTRA=.carry/extra.csv
else
  say "no $EXTRA_FROM: the runtime check runs the llm set only"; EXTRA=
fi
EVERY=$EVERY DECODE_M=$DECODE_M EXTRA=$EXTRA MODEL=$MODEL BUILD=$BUILD KCACHE=$KCACHE \
  bash scripts/device/pack_runtime.sh 2>&1 | grep "pack_runtime.sh:" >&2

say "ready: $(du -sh .carry | cut -f1) in .carry (carry [\".carry\"] after scripts/device/slim_tree.sh out)"
P=$(IFS=,; echo "${plans[*]}")
say "device command (data/plans/next_lease.md), with CKS_GIT_SHA=$(git rev-parse HEAD):"
say "  export CKS_GIT_SHA=$(git rev-parse HEAD) PLANS=$P"
say "  LEASE_S=150 TOTAL_S=540 bash scripts/device/lease_and_runtime.sh"
[ "$cache_ok" = 1 ] || exit 3
