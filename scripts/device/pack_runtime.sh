#!/usr/bin/env bash
# Fills .carry/rt/ (ignored) with what scripts/device/runtime_check.sh needs on the H200 machine,
# in under 20 MB so that it fits the 64 MiB a device call carries beside the tracked tree (move
# the large tracked files out for the call, as for the leases: `scripts/device/slim_tree.sh out`, then `in`):
#   rt.tar.xz       bin/cks, bin/cks_runtime_bench, lib/libcks.so.0, lib/libcks_runtime.so.0 (built here)
#   cutlass.tar.xz  the CUTLASS headers (as scripts/device/pack_carry.sh packs them)
#   kcache.tar.xz   the compiled libraries of the home compile cache ($KCACHE, default .kcache) that
#                   hold the bundle's kernels (the model's top-$TOP picks of the check's problems),
#                   with their sidecars, so the device compiles only the picks no lease has built
#   shapes.csv      the check's problems: the llm set's $LAYOUTS plus decode M = $DECODE_M; with
#                   EVERY=N only every Nth of them in the file's order (a quick check: lease 21 ran
#                   EVERY=8 DECODE_M=8, 113 problems); OFFSET=k (0 to EVERY-1) starts at the kth, so
#                   OFFSET=4 is a second, disjoint subset of the same size
#                   EXTRA=FILE (a csv of m,n,k,layout) appends its problems after those (e.g. the
#                   sliced-K rule's held-out groups, data/device_checks/.../lease51/per_group.csv)
#   model.json.xz   with MODEL=FILE: that model, xz-compressed (the tree's models/ is moved aside for
#                   the 64 MiB; runtime_check.sh unpacks it into models/default.json when that is absent)
#
#   scripts/device/pack_runtime.sh            (TOP=4 LAYOUTS=tn DECODE_M=1,8 by default)
# Then run on the device (carry [".carry/rt"]): bash scripts/device/runtime_check.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
TOP=${TOP:-4} LAYOUTS=${LAYOUTS:-tn} DECODE_M=${DECODE_M:-1,8} KCACHE=${KCACHE:-.kcache} BUILD=${BUILD:-build}
EVERY=${EVERY:-1} OFFSET=${OFFSET:-0} MODEL=${MODEL:-} EXTRA=${EXTRA:-}
[ -z "$EXTRA" ] || [ -f "$EXTRA" ] || { echo "pack_runtime.sh: EXTRA=$EXTRA is not a file" >&2; exit 2; }
[[ "$EVERY" =~ ^[1-9][0-9]*$ ]] || { echo "pack_runtime.sh: EVERY must be a positive integer (got '$EVERY')" >&2; exit 2; }
[[ "$OFFSET" =~ ^[0-9]+$ ]] && [ "$OFFSET" -lt "$EVERY" ] || { echo "pack_runtime.sh: OFFSET must be 0 to EVERY-1 (got '$OFFSET')" >&2; exit 2; }
OUTDIR=.carry/rt
rm -rf "$OUTDIR" && mkdir -p "$OUTDIR"
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

# 1. The binaries (cks is static-libstdc++; the libraries and the bench link the host's libstdc++).
mkdir -p "$TMP/rt/bin" "$TMP/rt/lib"
cp "$BUILD/bin/cks" "$BUILD/bin/cks_runtime_bench" "$TMP/rt/bin/"
cp -L "$BUILD/lib/libcks.so.0" "$BUILD/lib/libcks_runtime.so.0" "$TMP/rt/lib/"
tar -cJf "$OUTDIR/rt.tar.xz" -C "$TMP/rt" bin lib
if [ -f .carry/cutlass.tar.xz ]; then cp .carry/cutlass.tar.xz "$OUTDIR/"
else tar -cJf "$OUTDIR/cutlass.tar.xz" -C third_party cutlass/include cutlass/tools cutlass/.version; fi

# 2. The problems: the llm set's groups of $LAYOUTS, plus decode M for each of their (N, K, layout).
"$BUILD/bin/cks" shapes --set llm --layouts "$LAYOUTS" --format csv | cut -d, -f2-5 > "$TMP/llm.csv"
python3 - "$TMP/llm.csv" "$DECODE_M" "$OUTDIR/shapes.csv" "$EVERY" "$OFFSET" "$EXTRA" <<'EOF'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
seen, out = set(), []
for r in rows:
    key = (int(r["m"]), int(r["n"]), int(r["k"]), r["layout"])
    if key not in seen:
        seen.add(key); out.append(key)
pairs = sorted({(n, k, l) for _, n, k, l in out})
for m in [int(x) for x in sys.argv[2].split(",") if x]:
    for n, k, l in pairs:
        if (m, n, k, l) not in seen:
            seen.add((m, n, k, l)); out.append((m, n, k, l))
# Grouped by (layout, N, K), M ascending within a group, the groups in a fixed pseudo-random order:
# a run cut short by its time budget still covers every M and a spread of sizes, not only small N.
import hashlib
out.sort(key=lambda t: (t[3], hashlib.md5(f"{t[1]},{t[2]}".encode()).hexdigest(), t[0]))
with open(sys.argv[3], "w") as f:
    f.write("m,n,k,layout\n")
    chosen = out[int(sys.argv[5])::int(sys.argv[4])]
    extra = [(int(r["m"]), int(r["n"]), int(r["k"]), r["layout"]) for r in csv.DictReader(open(sys.argv[6]))] if sys.argv[6] else []
    chosen += [t for t in dict.fromkeys(extra) if t not in set(chosen)]
    for m, n, k, l in chosen:
        f.write(f"{m},{n},{k},{l}\n")
every = int(sys.argv[4])
off = int(sys.argv[5])
print(f"pack_runtime.sh: {len(chosen)} problems" + (f" (every {every}th of {len(out)} from #{off})" if every > 1 else "") +
      f" ({len(rows)} llm-set rows, the rest decode M" + (f"; {len(chosen) - len(out[off::every])} from {sys.argv[6]}" if extra else "") + ")",
      file=sys.stderr)
EOF
# The bundle's problems: those the kernels can run (M, and the layout's contiguous dimensions,
# multiples of 8); the others (decode M = 1) run on cuBLASLt in every mode.
python3 scripts/device/bundle_shapes.py "$OUTDIR/shapes.csv" "$TMP/bundle_shapes.csv"

# 3. The cached libraries holding the bundle's kernels: a --cached-only bundle from a copy of the
# home cache (the copy: nothing is written into $KCACHE) keeps exactly those libraries + sidecars.
if [ -d "$KCACHE" ]; then
  mkdir -p "$TMP/kc"
  cp "$KCACHE"/cks_*.so "$KCACHE"/cks_*.json "$TMP/kc/" 2> /dev/null || true
  "$BUILD/bin/cks" bundle --shapes "$TMP/bundle_shapes.csv" --top "$TOP" --cached-only --cache "$TMP/kc" \
    --out "$TMP/prebundle" 2>&1 | grep -v "settled" >&2
  mkdir -p "$TMP/kcache/kernel-cache"
  cp "$TMP/prebundle/kernels/"* "$TMP/kcache/kernel-cache/" 2> /dev/null || true
  tar -cJf "$OUTDIR/kcache.tar.xz" -C "$TMP/kcache" kernel-cache
  echo "pack_runtime.sh: $(ls "$TMP/kcache/kernel-cache" | grep -c '\.so$') cached libraries for the bundle" >&2
fi
if [ -n "$MODEL" ]; then
  [ -f "$MODEL" ] || { echo "pack_runtime.sh: MODEL=$MODEL is not a file" >&2; exit 2; }
  xz -T0 -6 -c "$MODEL" > "$OUTDIR/model.json.xz"
fi
du -sh "$OUTDIR"/*
echo "carry: [\".carry/rt\"]  (and scripts/device/slim_tree.sh out for the call, in after: it carries at most 64 MiB)"
