#!/usr/bin/env python3
"""Two models' real picks on single-pass groups measured over several leases, each against the
cuBLAS of its own run: the comparison that stays fair when one model's picks were measured later.

    python3 scripts/eval/llm_cublas_paired.py REGISTRY A.csv[.xz] B.csv[.xz] [METHOD] [TOL_MHZ=30]

A.csv / B.csv: `cks eval --registry REGISTRY --model A|B --eval-set llm --no-nvmmh --per-group X`.
Why: merging leases (e.g. the llm set's leases 19-20 with lease 23, which measured only r10w4's new
picks) makes the group's best the maximum over runs scaled to one reference run by single cuBLAS
rows (--run-normalize): that scaling is noisy, and the maximum picks up the upward noise, so the
model whose picks were measured in the later lease gains against the one measured in the earlier.
Here each pick's throughput is divided by the cuBLAS row of the run that measured it (both within
TOL MHz of each other), and the two models are paired per group: the geomean of
(A pick / its cuBLAS) / (B pick / its cuBLAS), with a 95 % bootstrap interval; groups where the two
picks are the same candidate count as 1.
"""
import csv, io, lzma, math, sqlite3, statistics as st, sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from paired import bootstrap_interval  # noqa: E402


def picks(path, method):
    raw = lzma.open(path, "rt") if path.endswith(".xz") else open(path)
    return {r["group"]: (r["pick_kernel"], r["pick_knobs"]) for r in csv.DictReader(raw)
            if r["method"] == method and r["covered"] == "1"}


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    reg, fa, fb = sys.argv[1:4]
    method = sys.argv[4] if len(sys.argv) > 4 else "xgboost reg:squarederror real pick (deployed)"
    tol = float(sys.argv[5]) if len(sys.argv) > 5 else 30.0
    a, b = picks(fa, method), picks(fb, method)
    c = sqlite3.connect(f"file:{reg}?mode=ro", uri=True)

    def over_cublas(group, cand):
        out = []
        for run, tf, clk in c.execute("SELECT run_uuid, tflops, sm_clock_mhz FROM measurements WHERE group_key = ? "
                                      "AND kernel_id = ? AND knobs = ? AND status = 'ok'", (group, *cand)):
            for ctf, cclk in c.execute("SELECT tflops, sm_clock_mhz FROM measurements WHERE group_key = ? AND "
                                       "kernel_id = 'cublas' AND run_uuid = ? AND status = 'ok'", (group, run)):
                if abs(cclk - clk) <= tol and ctf > 0:
                    out.append(tf / ctf)
        return st.median(out) if out else None

    d, same = [], 0
    for g in sorted(a.keys() & b.keys()):
        if a[g] == b[g]:
            d.append(0.0)
            same += 1
            continue
        ra, rb = over_cublas(g, a[g]), over_cublas(g, b[g])
        if ra and rb:
            d.append(math.log(ra) - math.log(rb))
    if not d:
        sys.exit("llm_cublas_paired.py: no group with both picks measured against a clock-matched cuBLAS")
    lo, hi = bootstrap_interval(d)
    diff = [x for x in d if x != 0.0]
    print(f"{len(d)} groups ({same} the same pick, {len(diff)} different picks, each against the cuBLAS of its "
          f"own run within {tol:g} MHz)")
    print(f"geomean (A pick / cuBLAS) / (B pick / cuBLAS) = {math.exp(st.mean(d)):.4f} "
          f"(95 % {math.exp(lo):.4f}..{math.exp(hi):.4f}); over the different picks only "
          f"{math.exp(st.mean(diff)) if diff else float('nan'):.4f}; A faster in {sum(x > 0 for x in diff)}, "
          f"slower in {sum(x < 0 for x in diff)}")


if __name__ == "__main__":
    main()
