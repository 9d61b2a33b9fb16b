#!/usr/bin/env bash
# The compile cache that survives between leases (issue 20). The H200 machine starts bare, and a
# lease used to spend most of its first 15 minutes compiling kernels an earlier lease had already
# built. The compiled libraries come home (`lease.sh cache` ships build/kernel-cache), are kept
# here in an ignored folder, and the libraries holding the next plan's kernels travel in .carry:
# `lease.sh start` unpacks .carry/kcache.tar.xz into build/kernel-cache before collect runs.
# Each kernel is found by its own key (library_hash of the kernel alone, recorded in the
# sidecars), whatever translation unit it was built in, so a plan that groups kernels differently
# still hits; a different nvcc, CUTLASS or flag set changes the key and misses, as it should.
# Compiled binaries are build outputs: never committed (KCACHE is ignored; losing it costs compile
# time, never data).
#
#   scripts/device/kcache.sh import PARTS...      unpack shipped kcache.tar.xz.part-* (in order)
#                                                 into $KCACHE (default .kcache)
#   scripts/device/kcache.sh pack PLAN [MAX_MB]   .carry/kcache.tar.xz: the libraries of $KCACHE
#                                                 holding PLAN's kernels (the plan's compile order:
#                                                 tier 0 first), at most MAX_MB (default 24) of xz
#   scripts/device/kcache.sh stats                libraries, kernels and size of $KCACHE
set -euo pipefail
cd "$(dirname "$0")/../.."
KCACHE=${KCACHE:-.kcache}
case "${1:-}" in
  import)
    shift
    [ $# -gt 0 ] || { echo "kcache.sh import: no parts given" >&2; exit 2; }
    mkdir -p "$KCACHE"
    TMP=$(mktemp -d)
    trap 'rm -rf "$TMP"' EXIT
    cat "$@" | xz -d | tar -xf - -C "$TMP"
    # Only libraries with their sidecar (the key index reads sidecars); no sources or logs.
    n=0
    for j in "$TMP"/kernel-cache/cks_*.json; do
      so=${j%.json}.so
      [ -f "$so" ] || continue
      cp -n "$so" "$j" "$KCACHE/"
      n=$((n + 1))
    done
    echo "kcache.sh import: $n libraries into $KCACHE ($(ls "$KCACHE"/*.so 2> /dev/null | wc -l) in all)" >&2
    ;;
  pack)
    PLAN=${2:?kcache.sh pack PLAN [MAX_MB]} MAX_MB=${3:-24}
    mkdir -p .carry
    python3 - "$KCACHE" "$PLAN" "$MAX_MB" <<'EOF'
import json, lzma, os, subprocess, sys
kcache, plan, max_mb = sys.argv[1], sys.argv[2], float(sys.argv[3])
opener = lzma.open if plan.endswith(".xz") else open
# The plan's kernels in its compile order: the lowest priority tier first, then the plan's order.
first_seen = {}
with opener(plan, "rt") as f:
    next(f)
    for n, line in enumerate(f):
        g = json.loads(line)
        tier = g["group"].get("priority", 0)
        for kernel, _knobs in g["candidates"]:
            first_seen[kernel] = min(first_seen.get(kernel, (tier, n)), (tier, n))
libs = {}  # library -> (best order of a planned kernel it holds, its planned kernels)
for name in os.listdir(kcache):
    if not name.endswith(".json"):
        continue
    with open(os.path.join(kcache, name)) as f:
        side = json.load(f)
    for k in side.get("kernels", []):
        if k.get("status") != "ok" or not k.get("kernel_key") or k["kernel_id"] not in first_seen:
            continue
        lib = name[:-5]
        order, held = libs.get(lib, ((9, 0), 0))
        libs[lib] = (min(order, first_seen[k["kernel_id"]]), held + 1)
ranked = sorted(libs, key=lambda l: libs[l][0])
# xz shrinks these libraries about 15-fold (lease 12: 146 MB of .so, 9.8 MB of xz).
budget, chosen, kernels = max_mb * 1e6 * 14, [], 0
for lib in ranked:
    size = os.path.getsize(os.path.join(kcache, lib + ".so"))
    if size > budget:
        break
    budget -= size
    chosen.append(lib)
    kernels += libs[lib][1]
files = [f"{l}{ext}" for l in chosen for ext in (".so", ".json")]
tar = subprocess.Popen(["tar", "-cf", "-", "--transform", "s,^,kernel-cache/,", "-C", kcache] + files,
                       stdout=subprocess.PIPE)
with open(".carry/kcache.tar.xz", "wb") as out:
    subprocess.run(["xz", "-6", "-T0", "-c"], stdin=tar.stdout, stdout=out, check=True)
if tar.wait() != 0:
    sys.exit("kcache.sh pack: tar failed")
print(f"kcache.sh pack: {len(chosen)} of {len(libs)} libraries holding {kernels} of the plan's "
      f"{len(first_seen)} kernels, {os.path.getsize('.carry/kcache.tar.xz') / 1e6:.1f} MB -> .carry/kcache.tar.xz",
      file=sys.stderr)
EOF
    ;;
  stats)
    libs=$(ls "$KCACHE"/*.so 2> /dev/null | wc -l)
    kernels=$(cat "$KCACHE"/*.json 2> /dev/null | grep -c '"kernel_key": "[0-9a-f]' || true)
    echo "libraries,$libs"; echo "kernels,$kernels"; echo "bytes,$(du -sb "$KCACHE" 2> /dev/null | cut -f1)"
    ;;
  *)
    echo "usage: $0 import PARTS... | pack PLAN [MAX_MB] | stats" >&2
    exit 2
    ;;
esac
