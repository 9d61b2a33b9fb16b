#!/usr/bin/env bash
# Lease 39 plan (session 29, issue 16; not run): does the transposed orientation beat cuBLAS where
# our kernels lose to it? A proxy measurement before building kernels that write D row-major.
#
# D (M x N, column-major) = A B is also D^T = B^T A^T: the problem (N, M, K) in the swapped layout
# (tn -> tn, nt -> nt, nn -> tt, tt -> nn) whose output, stored row-major, is D itself. The catalogue's
# kernels write D column-major only, so today a problem runs in its own orientation, with tile M in
# {64, 128, 256} along M; swapped, M lies along tile N (16-256 in steps of 16): M = 136 fits 144 (6 %
# padding) instead of 192 (41 %), M = 520 fits 176 x 3 (1.5 %) instead of 576 (11 %). The families'
# M = 136 and 520 groups are where cuBLAS beats the best kernel we measured (0.73-0.98x), as in 24 of
# the 176 evaluation and family base groups (the latest side-by-side rounds through lease 35,
# docs/analysis/sbs_lease35_r10w4.csv: best / cuBLAS < 0.98).
#
# The proxy: the existing kernels on the swapped problem (N, M, K, L') writing D'^T column-major run
# the same mainloop as row-major-D kernels would on (M, N, K, L); only the epilogue's store order
# differs. Per each of those 24 base groups, one side-by-side round (4 repetitions, round 102) of
#   - the original group: r10w4's top 4, the static first pick, the 3 fastest measured, cuBLAS;
#   - the swapped group (set `swap`, never trained on: `sbs` groups): r10w4's top 8, the static top 2
#     and the exhaustive ranking's top 2 on (N, M, K, L'), cuBLAS.
# Read: per base, best swapped kernel / cuBLAS of the original (and / the original's best), with the
# two cuBLAS times side by side (cuBLAS chooses its own orientation either way).
# Since session 30 the originals also measure the real swapped kernels (row-major D) of the proxy's
# candidates, in the same repetitions: read_swapped.py REGISTRY data/plans/lease39/swapped_twins.csv.
#   REG=<corpus merged through lease 35> bash data/plans/lease39/plan39.sh
set -euo pipefail
cd "$(dirname "$0")/../../.."
CKS=${CKS:-build/bin/cks} OUT=${OUT:-/tmp/p39} NAME=${NAME:-lease39} REPS=${REPS:-4} ROUND=${ROUND:-102}
SBS_CSV=${SBS_CSV:-docs/analysis/sbs_lease35_r10w4.csv}
DEST=${DEST:-data/plans/lease39/lease_run.jsonl.xz}
: "${REG:?merged corpus registry (cks data merge --out REG data/shards/*)}"
mkdir -p "$OUT"
# The base groups where cuBLAS beats the best kernel measured, and their swapped shapes.
python3 - "$SBS_CSV" "$OUT" <<'PY'
import csv, sys
swap = {"tn": "tn", "nt": "nt", "nn": "tt", "tt": "nn"}
bases = [r for r in csv.DictReader(open(sys.argv[1])) if float(r["best_tflops"]) / float(r["cublas_tflops"]) < 0.98]
with open(f"{sys.argv[2]}/bases.txt", "w") as f:
    f.writelines(f"{r['base_set']} {r['base_key']}\n" for r in bases)
with open(f"{sys.argv[2]}/swapped.csv", "w") as f:
    f.write("key,m,n,k,layout\n")
    for r in bases:
        m, n, k, lay = int(r["n"]), int(r["m"]), int(r["k"]), swap[r["layout"]]
        f.write(f"{m}x{n}x{k}_{lay},{m},{n},{k},{lay}\n")
print(f"{len(bases)} base groups with best / cuBLAS < 0.98", file=sys.stderr)
PY
# The originals, in this round (each set's round, filtered to the chosen bases below).
for set in eval family; do
  $CKS plan sidebyside --registry "$REG" --set "$set" --model models/default.json --methods deployed,static \
    --pick-top 4 --other-top 1 --static-top 1 --measured-top 3 --reps "$REPS" --round "$ROUND" --out "$OUT/orig_$set.jsonl"
done
# The swapped problems: new groups of set swap.
$CKS plan make --shapes "$OUT/swapped.csv" --budget 1 \
  --group-set swap --out "$OUT/made.jsonl"  # the groups and their tags (sidebyside plans the candidates)
$CKS plan sidebyside --registry "$REG" --groups "$OUT/made.jsonl" --set swap --model models/default.json \
  --methods deployed,static,exhaustive --pick-top 8 --other-top 2 --static-top 2 --exhaustive-top 2 --measured-top 0 \
  --reps "$REPS" --round "$ROUND" --out "$OUT/swapped.jsonl"
$CKS plan merge --union --name "$NAME" --out "$OUT/all.jsonl" "$OUT/orig_eval.jsonl" "$OUT/orig_family.jsonl" "$OUT/swapped.jsonl"
python3 - "$OUT/all.jsonl" "$OUT/bases.txt" "$OUT/swapped.csv" "$OUT/$NAME.jsonl" <<'PY'
import csv, json, sys
keep = {l.split()[1] for l in open(sys.argv[2])} | {r["key"] for r in csv.DictReader(open(sys.argv[3]))}
lines = open(sys.argv[1]).read().splitlines()
header, rows = json.loads(lines[0]), [json.loads(l) for l in lines[1:]]
rows = [r for r in rows if r["group"]["tags"]["base_key"] in keep]
header.update(groups=len(rows), candidates=sum(len(r["candidates"]) for r in rows),
              kernels=len({c[0] for r in rows for c in r["candidates"]}),
              note="originals of the base groups with best / cuBLAS < 0.98 and their swapped problems (set swap)")
with open(sys.argv[4], "w") as f:
    f.write(json.dumps(header) + "\n")
    f.writelines(json.dumps(r) + "\n" for r in rows)
bases = {r["group"]["tags"]["base_key"] for r in rows}
print(f"{len(bases)} base groups, {len(rows)} groups, {header['candidates']} candidates, {header['kernels']} kernels", file=sys.stderr)
PY
# Session 30: the real swapped kernels (row-major D, KernelDesc::swapped) beside the proxy: each
# original group's repetitions also measure the twins of its proxy's candidates (add_swapped.py).
$CKS catalogue list --layout all --format csv > "$OUT/catalogue.csv"
python3 data/plans/lease39/add_swapped.py "$OUT/$NAME.jsonl" "$OUT/catalogue.csv" "$OUT/$NAME.swapped.jsonl" \
  data/plans/lease39/swapped_twins.csv
mkdir -p "$(dirname "$DEST")"
xz -9 -T2 -c "$OUT/$NAME.swapped.jsonl" > "$DEST"
