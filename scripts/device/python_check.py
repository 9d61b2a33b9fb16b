#!/usr/bin/env python3
"""cks.torch on the H200 (scripts/device/python_check.sh runs it): cks.torch.mm against torch.matmul.

Per case (a PyTorch product: shapes, which operands are transposed views or strided):
  * correctness: the max relative error (max |C - R| / max |R|) of cks.torch.mm and of torch.matmul
    against an FP32 reference R = a.float() @ b.float();
  * what the runtime dispatched to (cks.torch.query: bundle, compiled, cublas; kernel, reason);
  * time per call with CUDA events: cks.torch.mm (its eager fast path), torch.ops.cks.mm (the op's dispatch)
    and torch.matmul interleaved, --reps rounds of
    back-to-back calls of at least ~200 us each; medians, TFLOP/s, ratio to torch.matmul (of the
    medians, and paired: the median over rounds of each round's torch.matmul time over cks.torch.mm's,
    the two timed next to each other, with the interquartile range of those per-round ratios: the GPU's
    clock moves by several percent between rounds, and a pairing within a round cancels most of it).
Then the op itself: torch.library.opcheck (schema, fake tensor, autograd registration, AOT dispatch),
torch.compile of a function calling it, and its backward against torch's.

    python3 scripts/device/python_check.py --out DIR [--compile-s 240] [--shapes CSV]
    python3 scripts/device/python_check.py --problems [--shapes CSV]   # the runtime problems, CSV (no torch)

--shapes CSV adds one case per runtime problem of the file (m,n,k,layout rows, as
scripts/device/pack_runtime.sh writes .carry/rt/shapes.csv): the PyTorch product that cks.torch maps to
that problem (tn: x @ w.t(), nn: x @ w, nt: x.t() @ w.t(), tt: x.t() @ w); the summary then also has the
geomean and the problems below 0.98x over those cases (the runtime check's problems, against
torch.matmul instead of cuBLASLt). The runtime's mode comes from $CKS_MODE (python_check.sh MODE=).
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import statistics
import sys
import time
from typing import Any, NamedTuple


class Case(NamedTuple):
    name: str
    m: int  # a: m x k, b: k x n (PyTorch's shapes)
    n: int
    k: int
    a_t: bool = False  # a is the transposed view of a contiguous (k x m) tensor
    b_t: bool = False  # b is the transposed view of a contiguous (n x k) tensor: x @ w.t()
    strided: bool = False  # a is every other column of a wider tensor (copied by each call, timed with it)


CASES = [
    Case("square_nn", 4096, 4096, 4096),
    Case("square_big_nn", 8192, 8192, 8192),
    Case("linear_prefill", 8192, 14336, 4096, b_t=True),  # x @ w.t(), Llama-3-8B MLP up
    Case("linear_down", 8192, 4096, 14336, b_t=True),
    Case("linear_decode16", 16, 4096, 4096, b_t=True),
    Case("grad_weight_nt", 4096, 4096, 8192, a_t=True),  # x.t() @ g
    Case("both_t", 2048, 2048, 2048, a_t=True, b_t=True),
    Case("odd_1001", 1001, 1001, 1001),  # sizes the kernels cannot run: cuBLASLt
    Case("strided_copy", 2048, 2048, 2048, strided=True),
]


def shape_cases(path: str) -> list[Case]:
    """The PyTorch products that cks.torch maps to the runtime problems of a CSV (runtime_problem inverted)."""
    out = []
    with open(path) as f:
        for r in csv.DictReader(f):
            m, n, k, lay = int(r["m"]), int(r["n"]), int(r["k"]), r["layout"].strip().lower()
            if len(lay) != 2 or any(ch not in "nt" for ch in lay):
                sys.exit(f"python_check.py: {path}: layout '{lay}' (expected tn, nt, nn or tt)")
            out.append(Case(f"rt_{m}x{n}x{k}_{lay}", n, m, k, a_t=lay[1] == "t", b_t=lay[0] == "t"))
    return out


def runtime_problem(c: Case) -> tuple[int, int, int, str]:
    """cks.torch's mapping without torch: row-major C = A B is column-major C^T = B^T A^T; a @ v
    (N = 1, M > 1) is the runtime's (M, 1, K) with A first (its M x 1 output is column-major too), so a
    CSV problem (1, N, K) comes back as (N, 1, K)."""
    a_row = not c.a_t or c.strided
    if c.n == 1 and c.m > 1:
        return c.m, 1, c.k, ("t" if a_row else "n") + "n"
    return c.n, c.m, c.k, ("t" if c.b_t else "n") + ("n" if a_row else "t")


def print_problems(cases: list[Case]) -> None:
    w = csv.writer(sys.stdout, lineterminator="\n")
    w.writerow(["m", "n", "k", "layout"])
    for c in cases:
        w.writerow(runtime_problem(c))


def operands(torch: Any, c: Case, seed: int) -> tuple[Any, Any]:
    g = torch.Generator(device="cuda").manual_seed(seed)

    def randn(*shape: int) -> Any:
        return torch.randn(*shape, device="cuda", dtype=torch.bfloat16, generator=g)

    a = randn(c.k, c.m).t() if c.a_t else randn(c.m, 2 * c.k)[:, ::2] if c.strided else randn(c.m, c.k)
    b = randn(c.n, c.k).t() if c.b_t else randn(c.k, c.n)
    return a, b


def max_rel_err(torch: Any, out: Any, ref: Any) -> float:
    return float((out.float() - ref).abs().max() / ref.abs().max().clamp_min(1e-30))


def time_interleaved(torch: Any, fns: dict[str, Any], reps: int, min_us: float = 200.0, batch: int | None = None,
                     idle_start: bool = False) -> dict[str, list[float]]:
    """Microseconds per call of each function in each of reps interleaved rounds (the order reversed
    every other round); each round times a batch of back-to-back calls (at least min_us long, or
    `batch` calls) between CUDA events. idle_start: the GPU is idle when each batch starts (the first
    call's launch latency counted, as scripts/device/gap_probe.py measures it)."""
    for f in fns.values():  # warm-up (and the batch size)
        f()
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    if batch is None:
        start.record()
        next(iter(fns.values()))()
        end.record()
        end.synchronize()
        batch = max(1, min(1000, int(min_us / max(start.elapsed_time(end) * 1e3, 1.0)) + 1))
    times: dict[str, list[float]] = {name: [] for name in fns}
    for r in range(reps):
        order = list(fns.items())
        if r % 2:
            order.reverse()
        for name, f in order:
            if idle_start:
                torch.cuda.synchronize()
            start.record()
            for _ in range(batch):
                f()
            end.record()
            end.synchronize()
            times[name].append(start.elapsed_time(end) * 1e3 / batch)
    return times


def paired_ratio(num: list[float], den: list[float]) -> tuple[float, float, float]:
    """The median and quartiles (q1, q3) over rounds of num[i] / den[i]: e.g. torch.matmul's time over
    cks.torch.mm's in the same round, so a clock change between rounds moves both."""
    if len(num) != len(den) or not num:
        raise ValueError(f"paired_ratio: {len(num)} and {len(den)} rounds (need the same, at least one)")
    ratios = sorted(a / b for a, b in zip(num, den))
    if len(ratios) == 1:
        return ratios[0], ratios[0], ratios[0]
    q1, _, q3 = statistics.quantiles(ratios, n=4, method="inclusive")
    return statistics.median(ratios), q1, q3


def check_op(torch: Any, ct: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    a = torch.randn(256, 128, device="cuda", dtype=torch.bfloat16, requires_grad=True)
    b = torch.randn(128, 64, device="cuda", dtype=torch.bfloat16, requires_grad=True)
    try:
        torch.library.opcheck(torch.ops.cks.mm.default, (a, b))
        out["opcheck"] = "ok"
    except Exception as e:  # report, do not stop the check
        out["opcheck"] = f"{type(e).__name__}: {e}"[:400]
    try:
        compiled = torch.compile(lambda x, y: ct.mm(x, y).relu(), fullgraph=True)
        x, y = a.detach(), b.detach()
        out["compile_max_abs_diff"] = float((compiled(x, y).float() - ct.mm(x, y).relu().float()).abs().max())
    except Exception as e:
        out["compile_max_abs_diff"] = f"{type(e).__name__}: {e}"[:400]
    try:
        ct.mm(a, b).float().square().sum().backward()
        ga, gb = a.grad.clone(), b.grad.clone()
        a.grad = b.grad = None
        (a @ b).float().square().sum().backward()
        out["grad_a_max_rel_err"] = max_rel_err(torch, ga, a.grad.float())
        out["grad_b_max_rel_err"] = max_rel_err(torch, gb, b.grad.float())
    except Exception as e:
        out["backward"] = f"{type(e).__name__}: {e}"[:400]
    try:
        ct.mm(a.detach().cpu(), b.detach().cpu())
        out["cpu_tensor_error"] = "none raised"
    except ValueError as e:
        out["cpu_tensor_error"] = str(e)
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--problems", action="store_true", help="print the runtime problems (CSV) and exit")
    p.add_argument("--out", default="out/python_check")
    p.add_argument("--compile-s", type=float, default=240, help="wait at most this long for background compiles")
    p.add_argument("--compile-jobs", type=int, default=14, help="nvcc processes of the runtime's compile cache")
    p.add_argument("--reps", type=int, default=11)
    p.add_argument("--shapes", help="also the runtime problems of this CSV (m,n,k,layout), one case each")
    a = p.parse_args()
    extra = shape_cases(a.shapes) if a.shapes else []
    all_cases = CASES + [c for c in extra if c.name not in {x.name for x in CASES}]
    if a.problems:
        print_problems(all_cases)
        return

    import torch

    import cks
    import cks.torch as ct

    t0 = time.perf_counter()
    rt = ct.configure(compile_jobs=a.compile_jobs)  # the rest from $CKS_MODE, $CKS_BUNDLE, ... (python_check.sh)
    print(f"runtime: {rt.describe()}", file=sys.stderr)
    # Each case's operands are made when it runs, from its own seed (the same tensors both times), and
    # dropped after: the whole set's operands at once do not fit (lease 24: 975 cases, 139 GiB).
    seed = {c.name: i for i, c in enumerate(all_cases)}
    # First calls: bundle hits run the pick; misses run cuBLASLt and compile the pick in the background.
    first_ms: dict[str, float] = {}
    for c in all_cases:
        x, y = operands(torch, c, seed[c.name])
        torch.cuda.synchronize()
        t = time.perf_counter()
        try:
            ct.mm(x, y)
            torch.cuda.synchronize()
            first_ms[c.name] = (time.perf_counter() - t) * 1e3
        except Exception as e:  # reported in the case's row below; the other cases still run
            print(f"{c.name}: first call: {type(e).__name__}: {e}", file=sys.stderr)
    pending = rt.wait_compiles(max(0.0, a.compile_s - (time.perf_counter() - t0)))
    print(f"background compiles still running after the wait: {pending}", file=sys.stderr)
    if pending:
        # Lease 27: 109 compiles beside the timing (14 nvcc on 16 cores) slowed every host-bound
        # product and left problems untuned; such a run is not a read of the product.
        print(f"WARNING: {pending} compiles run beside the timing: the times are confounded "
              "(build the whole bundle first, or give --compile-s enough)", file=sys.stderr)

    rows = []
    for c in all_cases:
        try:
            row = measure(torch, cks, ct, c, *operands(torch, c, seed[c.name]), first_ms.get(c.name), a.reps)
        except Exception as e:
            row = {"case": c.name, "error": f"{type(e).__name__}: {e}"[:400]}
        rows.append(row)
        print(json.dumps(row), file=sys.stderr)
    ok = [r for r in rows if "error" not in r]

    summary = {
        "torch": torch.__version__, "cks": cks.__version__, "gpu": torch.cuda.get_device_name(),
        "runtime": json.loads(rt.describe()), "cases": len(rows), "failed": len(rows) - len(ok),
        "compiles_pending": pending,
        "timing_beside_compiles": bool(pending),
        "max_rel_err_cks": max((r["max_rel_err_cks"] for r in ok), default=None),
        "max_rel_err_torch": max((r["max_rel_err_torch"] for r in ok), default=None),
        "geomean_torch_over_cks": statistics.geometric_mean(r["torch_over_cks"] for r in ok) if ok else None,
        "sources": {s: sum(r["source"] == s for r in ok) for s in {r["source"] for r in ok}},
        "mode": os.environ.get("CKS_MODE", "select"),
        **shapes_summary([r for r in ok if r["case"].startswith("rt_")]),
        "op": check_op(torch, ct),
        "rows": rows,
    }
    os.makedirs(a.out, exist_ok=True)
    with open(os.path.join(a.out, "python_check.json"), "w") as f:
        json.dump(summary, f, indent=1)
    with open(os.path.join(a.out, "python_check.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=[*(ok[0] if ok else {"case": ""}), "error"], restval="")
        w.writeheader()
        w.writerows(rows)
    print(json.dumps({k: v for k, v in summary.items() if k not in ("rows", "runtime")}), file=sys.stderr)


def shapes_summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The --shapes cases: torch.matmul's time over cks.torch.mm's, geomean by M regime (the runtime
    problem's M, as the runtime check reports it), and the cases below 0.98."""
    if not rows:
        return {}
    def regime(r: dict[str, Any]) -> str:
        m = int(r["runtime_problem"].split("x")[0])
        return "m<=64" if m <= 64 else "m65-2047" if m < 2048 else "m>=2048"
    out: dict[str, Any] = {"shapes_cases": len(rows),
                           "shapes_geomean_torch_over_cks": statistics.geometric_mean(r["torch_over_cks"] for r in rows)}
    for g in ("m<=64", "m65-2047", "m>=2048"):
        sub = [r["torch_over_cks"] for r in rows if regime(r) == g]
        if sub:
            out[f"shapes_geomean_{g}"] = statistics.geometric_mean(sub)
    out["shapes_below_0.98"] = sorted((r["runtime_problem"], r["torch_over_cks"]) for r in rows if r["torch_over_cks"] < 0.98)
    # Paired within rounds (older rows lack it): the geomean, the problems whose median per-round ratio
    # is below 0.98, and those of them where three rounds in four agree (q3 < 0.98: beyond the noise).
    paired = [r for r in rows if "torch_over_cks_paired" in r]
    if paired:
        out["shapes_geomean_paired"] = statistics.geometric_mean(r["torch_over_cks_paired"] for r in paired)
        for g in ("m<=64", "m65-2047", "m>=2048"):
            sub = [r["torch_over_cks_paired"] for r in paired if regime(r) == g]
            if sub:
                out[f"shapes_geomean_paired_{g}"] = statistics.geometric_mean(sub)
        out["shapes_below_0.98_paired"] = sorted(
            (r["runtime_problem"], r["torch_over_cks_paired"], r["paired_q1"], r["paired_q3"])
            for r in paired if r["torch_over_cks_paired"] < 0.98)
        out["shapes_below_0.98_beyond_noise"] = [p for p in out["shapes_below_0.98_paired"] if p[3] < 0.98]
    return out


def measure(torch: Any, cks: Any, ct: Any, c: Case, x: Any, y: Any, first_ms: float | None, reps: int) -> dict[str, Any]:
    """One case's row: error against FP32, what it dispatched to, time per call beside torch.matmul."""
    ref = x.float() @ y.float()
    ct.mm(x, y)  # after the compiles: a finished one replaces cuBLASLt at this call
    torch.cuda.synchronize()
    info = ct.query(x, y)
    err = max_rel_err(torch, ct.mm(x, y), ref)
    err_torch = max_rel_err(torch, torch.matmul(x, y), ref)
    # cks.torch.mm (eager fast path), the same product through the custom op's dispatch, and torch.
    times = time_interleaved(torch, {"cks": lambda: ct.mm(x, y), "cks_op": lambda: torch.ops.cks.mm(x, y),
                                     "torch": lambda: torch.matmul(x, y)}, reps)
    us = {name: statistics.median(v) for name, v in times.items()}
    paired, q1, q3 = paired_ratio(times["torch"], times["cks"])
    flop = 2.0 * c.m * c.n * c.k
    m, n, k, layout = ct.problem(x, y)
    try:
        pick = cks.select(m, n, k, layout)[0].kernel_id
    except ValueError:  # a size the kernels cannot run
        pick = ""
    return {
        "case": c.name, "M": c.m, "N": c.n, "K": c.k, "a_t": c.a_t, "b_t": c.b_t, "strided": c.strided,
        "runtime_problem": f"{m}x{n}x{k} {layout}", "source": info["source"], "kernel_id": info["kernel_id"],
        "knobs": info["knobs"], "rank": info["rank"], "model_top1": pick, "reason": info["reason"],
        "first_call_ms": None if first_ms is None else round(first_ms, 3),
        "max_rel_err_cks": err, "max_rel_err_torch": err_torch,
        "us_cks": round(us["cks"], 3), "us_cks_op": round(us["cks_op"], 3), "us_torch": round(us["torch"], 3),
        "tflops_cks": round(flop / us["cks"] / 1e6, 1), "tflops_torch": round(flop / us["torch"] / 1e6, 1),
        "torch_over_cks": round(us["torch"] / us["cks"], 4),
        "torch_over_cks_paired": round(paired, 4), "paired_q1": round(q1, 4), "paired_q3": round(q3, 4),
    }


if __name__ == "__main__":
    main()
