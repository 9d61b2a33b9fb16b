#!/usr/bin/env bash
# How far is each evaluation group's optimum over its 2,000-kernel pool (plus every method's
# picks) from the optimum over the whole catalogue (issue 16, item 2)? A seeded uniform random
# slice of the catalogue kernels that no evaluation group of their layout has measured (not in the
# pool, never a pick), $PER_LAYOUT per layout, filled at default knobs into every evaluation group
# of the layout (a compile-free `lease.sh leaders` run on set eval afterwards adds the knob
# variants of whatever then leads a group). Planned from a merged registry:
#
#   REG=corpus.db scripts/corpus/catalogue_slice_plan.sh OUT.jsonl
#
# Environment: CKS, REG, PER_LAYOUT (default 125), SEED (default 16), PRIORITY (default 1),
# LAYOUTS (default "tn nt nn tt").
set -euo pipefail
cd "$(dirname "$0")/../.."
OUT=${1:?usage: REG=corpus.db $0 OUT.jsonl}
CKS=${CKS:-build/bin/cks}
PER_LAYOUT=${PER_LAYOUT:-125} SEED=${SEED:-16} PRIORITY=${PRIORITY:-1} LAYOUTS=${LAYOUTS:-tn nt nn tt}
. scripts/corpus/corpus_source.sh
parts=()
for L in $LAYOUTS; do
  "$CKS" catalogue list --layout "$L" --format csv | cut -d, -f1 | tail -n +2 > "$TMP/catalogue_$L.txt"
  python3 - "${SRC[1]}" "$L" "data/plans/pool_${L}_2000_seed0.txt" "$TMP/catalogue_$L.txt" "$PER_LAYOUT" "$SEED" \
    > "$TMP/slice_$L.txt" <<'PY'
import random, sqlite3, sys
reg, layout, pool, catalogue, n, seed = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5]), int(sys.argv[6])
db = sqlite3.connect(f"file:{reg}?mode=ro", uri=True)
seen = {k for (k,) in db.execute(
    "SELECT DISTINCT m.kernel_id FROM measurements m JOIN groups g ON g.key = m.group_key "
    "WHERE g.layout = ? AND g.set_name IN ('eval', 'sbs')", (layout,))}
seen |= {l.strip() for l in open(pool) if l.strip() and not l.startswith("#")}
rest = sorted(k.strip() for k in open(catalogue) if k.strip() and k.strip() not in seen)
picked = random.Random(seed).sample(rest, min(n, len(rest)))
print(f"# {layout}: {len(picked)} of {len(rest)} catalogue kernels no evaluation group has measured (seed {seed})")
print("\n".join(sorted(picked)))
PY
  head -1 "$TMP/slice_$L.txt" >&2
  # A one-group carrier plan of the slice's kernels, then the fill into every evaluation group.
  "$CKS" shapes --set paper --format csv | awk -F, -v l="$L" 'NR == 1 || ($5 == l && !done) { print; if (NR > 1) done = 1 }' > "$TMP/one_$L.csv"
  "$CKS" plan make --shapes "$TMP/one_$L.csv" --layouts "$L" --policy exhaustive --pool "$TMP/slice_$L.txt" \
    --knobs default --group-set slice --out "$TMP/carrier_$L.jsonl" 2> /dev/null
  "$CKS" plan fill "${SRC[@]}" --from "$TMP/carrier_$L.jsonl" --set eval --layouts "$L" --seed "$SEED" \
    --priority "$PRIORITY" --out "$TMP/slice_fill_$L.jsonl"
  parts+=("$TMP/slice_fill_$L.jsonl")
done
"$CKS" plan merge --name catalogue_slice --out "$OUT" "${parts[@]}"
