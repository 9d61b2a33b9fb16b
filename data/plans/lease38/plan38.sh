#!/usr/bin/env bash
# Lease 38 plan (session 29, issue 16; not run): a side-by-side round of 196 groups of the llm set,
# a third held-out evaluation set of real-model GEMMs (822 groups, never trained on: `cks train` leaves
# the eval, family, llm, proof and sbs sets out). Its single-pass regret is polluted by clock states and runs: on the
# corpus through lease 35 the shipped selector's real pick loses 3.89 % on average over 809 measured
# groups, but 1.70 % (median 0.27 %, p95 8.3 %) in the 410 where the pick and the group's best were
# measured in one run within 30 MHz, and 7.42 % where they were not (NOTES.md, "Session 29 at home").
# Per group: r10w4's top 4 (shipped), the static first pick and the group's 3 fastest measured, 4
# repetitions (round 101: keys <shape>~s101r<i>, apart from the evaluation rounds of the same shapes);
# a seeded random 200 of the llm groups, less the shapes of the eval and family sets (measured in
# their own rounds).
# With R17=<model>, also that model's first pick in each group (r17 = `KEEP_TARGETED=8 SEED=0
# scripts/models/train_default.sh` on the shards through lease 35: on the llm set's single pass it
# lost 0.46 points less than r10w4 over 637 groups, -0.17 (n.s.) over the 286 clean ones, while it
# lost 0.89 more on the families' side-by-side rounds; NOTES.md, session 29).
#   REG=<corpus merged through lease 35> [R17=r17.json] bash data/plans/lease38/plan38.sh
set -euo pipefail
cd "$(dirname "$0")/../../.."
CKS=${CKS:-build/bin/cks} OUT=${OUT:-/tmp/p38} NAME=${NAME:-lease38}
DEST=${DEST:-data/plans/lease38/lease_run.jsonl.xz}
: "${REG:?merged corpus registry (cks data merge --out REG data/shards/*)}"
mkdir -p "$OUT"
$CKS plan sidebyside --registry "$REG" --set llm --model models/default.json --methods deployed,static \
  --pick-top 4 --other-top 1 --static-top 1 --measured-top 3 --reps 4 --round 101 --pick 200 --seed 38 \
  --name "$NAME" --out "$OUT/raw.jsonl"
if [ -n "${R17:-}" ]; then
  $CKS plan sidebyside --registry "$REG" --set llm --model "$R17" --methods deployed --pick-top 1 --other-top 0 \
    --measured-top 0 --reps 4 --round 101 --pick 200 --seed 38 --out "$OUT/r17.jsonl"
  mv "$OUT/raw.jsonl" "$OUT/r10w4.jsonl"
  $CKS plan merge --union --name "$NAME" --out "$OUT/raw.jsonl" "$OUT/r10w4.jsonl" "$OUT/r17.jsonl"
fi
python3 - "$REG" "$OUT/raw.jsonl" "$OUT/$NAME.jsonl" <<'PY'
import json, sqlite3, sys
held = {r[0] for r in sqlite3.connect(sys.argv[1]).execute("select key from groups where set_name in ('eval', 'family')")}
lines = open(sys.argv[2]).read().splitlines()
header, rows = json.loads(lines[0]), [json.loads(l) for l in lines[1:]]
rows = [r for r in rows if r["group"]["tags"]["base_key"] not in held]
header.update(groups=len(rows), candidates=sum(len(r["candidates"]) for r in rows),
              kernels=len({c[0] for r in rows for c in r["candidates"]}), excluded="shapes of the eval and family sets")
with open(sys.argv[3], "w") as f:
    f.write(json.dumps(header) + "\n")
    for r in rows:
        f.write(json.dumps(r) + "\n")
bases = {r["group"]["tags"]["base_key"] for r in rows}
print(f"{len(bases)} base groups, {len(rows)} groups, {header['candidates']} candidates, {header['kernels']} kernels", file=sys.stderr)
PY
mkdir -p "$(dirname "$DEST")"
xz -9 -T2 -c "$OUT/$NAME.jsonl" > "$DEST"
