#!/usr/bin/env python3
"""Replays autotune's cuBLASLt choices of a Python check against the select mode's kernels measured
on the same machine, under margins against cuBLASLt (the runtime's autotune_lt_margin_pct / _us).

For each problem that autotune gave to cuBLASLt and select ran on a kernel, the rule "the kernel
wins when its timed median <= cuBLASLt's fastest algorithm x (1 + P/100) + U us" picks either the
autotune row's ratio (cuBLASLt kept) or the select row's (the kernel); every other problem keeps its
autotune ratio. The kernel's timed median is the select kernel's entry in autotune's reason (the
model's top-1 is among autotune's candidates), so this replays the model's top-1, not autotune's
fastest kernel: an approximation of what the runtime does with the margin.

    python3 scripts/analysis/lt_margin_replay.py SELECT_DIR AUTOTUNE_DIR [SELECT_DIR AUTOTUNE_DIR ...]

Each DIR is a scripts/device/python_check.sh result folder (python_check.json or .json.xz), e.g.
data/device_checks/20261203_lease25_python_select data/device_checks/20261203_lease25_python_autotune.
Prints, per pair and margin: the paired geomean (torch.matmul over cks.torch.mm), the problems whose
median paired ratio is below 0.98, and those beyond the noise (q3 < 0.98).
"""

from __future__ import annotations

import json
import lzma
import os
import re
import statistics
import sys
from typing import Any

MARGINS = [(0.0, 0.0), (0.0, 2.0), (0.0, 3.0), (2.0, 1.0), (3.0, 1.0), (5.0, 1.0)]


def load(folder: str) -> dict[str, Any]:
    for name, opener in (("python_check.json", open), ("python_check.json.xz", lzma.open)):
        path = os.path.join(folder, name)
        if os.path.exists(path):
            with opener(path, "rt") as f:
                return json.load(f)
    sys.exit(f"lt_margin_replay.py: no python_check.json(.xz) in {folder}")


def lt_fastest(reason: str) -> float | None:
    m = re.search(r"cuBLASLt \(([\d.]+) us(?:; algorithms? 1(?:-\d)?: ([^)]*))?\)", reason)
    if not m:
        return None
    return min([float(m.group(1))] + [float(x) for x in re.findall(r"([\d.]+) us", m.group(2) or "")])


def kernel_time(reason: str, kernel: str, knobs: str) -> float | None:
    m = re.search(re.escape(f"{kernel} {knobs}") + r" ([\d.]+) us", reason)
    return float(m.group(1)) if m else None


def replay(select: dict[str, Any], autotune: dict[str, Any]) -> None:
    sel = {r["runtime_problem"]: r for r in select["rows"] if r.get("runtime_problem")}
    base: list[tuple[float, float]] = []
    swaps: list[tuple[float, float, tuple[float, float], tuple[float, float]]] = []
    for r in autotune["rows"]:
        p = r.get("runtime_problem")
        if not p or p not in sel:
            continue
        s = sel[p]
        own = (r["torch_over_cks_paired"], r["paired_q3"])
        lt = lt_fastest(r["reason"]) if not r["kernel_id"] else None
        kt = kernel_time(r["reason"], s["kernel_id"], s["knobs"]) if lt is not None and s["kernel_id"] else None
        if kt is None:
            base.append(own)
        else:
            swaps.append((lt, kt, own, (s["torch_over_cks_paired"], s["paired_q3"])))
    print(f"  {len(base) + len(swaps)} problems, {len(swaps)} on cuBLASLt with a select kernel to replay")
    for pct, us in MARGINS:
        rows = list(base) + [kernel if kt <= lt * (1 + pct / 100) + us else own for lt, kt, own, kernel in swaps]
        print(f"  margin {pct:g} % + {us:g} us: geomean {statistics.geometric_mean(x[0] for x in rows):.4f}, "
              f"below 0.98 {sum(x[0] < 0.98 for x in rows)}, beyond the noise {sum(x[1] < 0.98 for x in rows)}")


def main() -> None:
    args = sys.argv[1:]
    if not args or len(args) % 2:
        sys.exit(__doc__)
    for i in range(0, len(args), 2):
        print(f"{args[i]} against {args[i + 1]}:")
        replay(load(args[i]), load(args[i + 1]))


if __name__ == "__main__":
    main()
