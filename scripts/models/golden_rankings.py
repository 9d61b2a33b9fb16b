#!/usr/bin/env python3
"""Regenerates tests/selector/data/default_rankings.json, the shipped model's top-16 rankings of 32
problems (all four layouts) that `SelectorSetupCache.ShippedModelRanksAsBefore` checks bit for bit
with a cold and a warm set-up cache. Run it when models/default.json changes (the test skips while
the file's size differs from the golden's model_bytes), with an empty cache folder so nothing cached
takes part:

    CKS_CACHE_DIR=$(mktemp -d) PYTHONPATH=build/python python3 scripts/models/golden_rankings.py [NOTE]

The problems are kept from the existing file; NOTE goes into generated_by (e.g. the model's name).
"""
import json, os, subprocess, sys
from pathlib import Path

import cks

root = Path(__file__).resolve().parents[2]
golden = root / "tests/selector/data/default_rankings.json"
model = root / "models/default.json"
if not os.environ.get("CKS_CACHE_DIR"):
    sys.exit("golden_rankings.py: set CKS_CACHE_DIR to an empty folder (no cached prior may take part)")
old = json.loads(golden.read_text())
sha = subprocess.run(["git", "-C", str(root), "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
sel = cks.Selector(str(model))
problems = []
for p in old["problems"]:
    ranking = sel.select(p["m"], p["n"], p["k"], p["layout"], top=16)
    problems.append({"layout": p["layout"], "m": p["m"], "n": p["n"], "k": p["k"],
                     "ranking": [[r.kernel_id, r.knobs_text, float(r.score).hex()] for r in ranking]})
note = sys.argv[1] if len(sys.argv) > 1 else ""
out = {"generated_by": f"cks.Selector('models/default.json').select(m, n, k, layout, top=16) with the default options "
                       f"and an empty cache folder, at main {sha}{' (' + note + ')' if note else ''}; scores as float.hex() "
                       f"(scripts/models/golden_rankings.py)",
       "model_bytes": model.stat().st_size, "problems": problems}
# The layout of the file before: the header keys one per line, one problem per line.
lines = [f' "generated_by": {json.dumps(out["generated_by"])},', f' "model_bytes": {out["model_bytes"]},', ' "problems": [']
lines += ["  " + json.dumps(p, separators=(",", ":")) + ("," if i + 1 < len(problems) else "") for i, p in enumerate(problems)]
golden.write_text("{" + "\n".join(lines).lstrip() + "\n ]\n}\n")
print(f"{golden}: {len(problems)} problems, model {out['model_bytes']} bytes", file=sys.stderr)
