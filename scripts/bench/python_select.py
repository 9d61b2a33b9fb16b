#!/usr/bin/env python3
"""Cost of the Python selector (issue 17: `import cks` plus the first `cks.select` <= 300 ms).

In --runs fresh interpreters (one at a time): `import cks`, then the first `cks.select` (loads the
default model and builds the layout's state), timed inside the process; the process's wall time
from the parent too (interpreter start included). Then, in one more process: the cost of a cached
select (the same problem again, --calls times) and of a cold select once the model and layout are
loaded (--problems distinct problems). Medians; one JSON summary line on stdout.

    PYTHONPATH=build/python python3 scripts/bench/python_select.py          # the build tree's package
    python3 scripts/bench/python_select.py --python /path/to/venv/bin/python  # an installed one
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time

FIRST = """
import time
t0 = time.perf_counter()
import cks
t1 = time.perf_counter()
cks.select({m}, {n}, {k}, "{layout}")
t2 = time.perf_counter()
print((t1 - t0) * 1e3, (t2 - t1) * 1e3)
"""

REPEAT = """
import time, cks
cks.select({m}, {n}, {k}, "{layout}")
t = time.perf_counter()
for _ in range({calls}):
    cks.select({m}, {n}, {k}, "{layout}")
cached = (time.perf_counter() - t) / {calls}
t = time.perf_counter()
for i in range({problems}):
    cks.select({m} + 8 * (i + 1), {n}, {k}, "{layout}")
cold = (time.perf_counter() - t) / {problems}
print(cached * 1e6, cold * 1e3)
"""


def run(python: str, code: str) -> tuple[list[float], float]:
    t = time.perf_counter()
    done = subprocess.run([python, "-c", code], capture_output=True, text=True)
    wall = (time.perf_counter() - t) * 1e3
    if done.returncode != 0:
        sys.exit(f"python_select.py: {python} failed: {done.stderr.strip()}")
    return [float(v) for v in done.stdout.split()], wall


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--python", default=sys.executable, help="the interpreter whose cks is measured")
    p.add_argument("--runs", type=int, default=7, help="fresh processes for the first select")
    p.add_argument("--calls", type=int, default=100000, help="cached selects timed")
    p.add_argument("--problems", type=int, default=100, help="distinct problems for the cold select")
    p.add_argument("--m", type=int, default=4096)
    p.add_argument("--n", type=int, default=4096)
    p.add_argument("--k", type=int, default=4096)
    p.add_argument("--layout", default="tn")
    a = p.parse_args()
    problem = dict(m=a.m, n=a.n, k=a.k, layout=a.layout)

    imports, firsts, walls = [], [], []
    for _ in range(a.runs):
        (imp, first), wall = run(a.python, FIRST.format(**problem))
        imports.append(imp)
        firsts.append(first)
        walls.append(wall)
        print(f"import cks {imp:8.1f} ms   first select {first:8.1f} ms   process {wall:8.1f} ms", file=sys.stderr)
    (cached_us, cold_ms), _ = run(a.python, REPEAT.format(calls=a.calls, problems=a.problems, **problem))
    summary = {
        "problem": problem,
        "runs": a.runs,
        "import_ms": round(statistics.median(imports), 2),
        "first_select_ms": round(statistics.median(firsts), 2),
        "import_plus_first_select_ms": round(statistics.median(i + f for i, f in zip(imports, firsts)), 2),
        "process_wall_ms": round(statistics.median(walls), 2),
        "cached_select_us": round(cached_us, 3),
        "cold_select_ms": round(cold_ms, 3),
        "goal_ms": 300,
    }
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
