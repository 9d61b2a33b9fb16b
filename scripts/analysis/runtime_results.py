#!/usr/bin/env python3
"""The GEMM runtime's H200 measurement as a doc section and plots (issue 17, item 6).

Reads what scripts/device/runtime_check.sh brought home (committed under data/device_checks/<run>/:
runtime_bench.csv.xz, runtime_bench.json, reuse.json) and writes
  <out_md>                         tables: per M regime the geomean of select / autotune against
                                   cuBLASLt, the worst problems, first-call latency, dispatch cost
  <png_dir>/runtime_vs_cublas.png  per problem, each mode's speed relative to cuBLASLt against M
  <png_dir>/runtime_ratio_cdf.png  the distribution of those ratios

  python3 scripts/analysis/runtime_results.py data/device_checks/20261202_lease17 \
      docs/runtime-results.md docs/analysis
The ratio is cuBLASLt's time / the mode's time (> 1: the mode is faster), as the bench's CSV
holds it (columns select_vs_cublas, autotune_vs_cublas).
"""
import csv
import io
import json
import lzma
import math
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

REGIMES = [("decode, M ≤ 64", 1, 64), ("M 65-2047", 65, 2047), ("M ≥ 2048", 2048, 1 << 40)]


def geomean(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


def load_rows(run_dir):
    path = os.path.join(run_dir, "runtime_bench.csv.xz")
    with lzma.open(path, "rt") if os.path.exists(path) else open(path[:-3]) as f:
        rows = list(csv.DictReader(io.StringIO(f.read())))
    out = []
    for r in rows:
        if r["error"]:
            continue
        r["m"], r["n"], r["k"] = int(r["m"]), int(r["n"]), int(r["k"])
        r["sel"], r["auto"] = float(r["select_vs_cublas"]), float(r["autotune_vs_cublas"])
        if r["sel"] > 0 and r["auto"] > 0:
            out.append(r)
    return out


def regime_table(rows):
    lines = ["| problems | n | select / cuBLASLt (geomean) | autotune / cuBLASLt (geomean) | autotune < 0.98 | "
             "select ran a CUTLASS kernel | autotune kept a CUTLASS kernel |",
             "| --- | --- | --- | --- | --- | --- | --- |"]
    for name, lo, hi in REGIMES + [("all", 1, 1 << 40)]:
        sub = [r for r in rows if lo <= r["m"] <= hi]
        if not sub:
            continue
        below = sum(r["auto"] < 0.98 for r in sub)
        cut_sel = sum(r["select_source"] == "bundle" for r in sub)
        cut_auto = sum(r["autotune_source"] == "tuned" and r["autotune_kernel"] != "" for r in sub)
        lines.append(f"| {name} | {len(sub)} | {geomean([r['sel'] for r in sub]):.3f} | "
                     f"{geomean([r['auto'] for r in sub]):.3f} | {below} | {cut_sel} | {cut_auto} |")
    return "\n".join(lines)


def worst_table(rows, key, n=8):
    lines = ["| problem | select | autotune | cuBLASLt us | what autotune kept |", "| --- | --- | --- | --- | --- |"]
    for r in sorted(rows, key=lambda r: r[key])[:n]:
        kept = r["autotune_kernel"] or "cuBLASLt"
        lines.append(f"| {r['layout']} {r['m']}×{r['n']}×{r['k']} | {r['sel']:.3f} | {r['auto']:.3f} | "
                     f"{float(r['cublas_us']):.1f} | {kept} |")
    return "\n".join(lines)


def plots(rows, png_dir):
    os.makedirs(png_dir, exist_ok=True)
    fig, ax = plt.subplots(figsize=(8, 4.5))
    for key, label, marker in (("sel", "select (model's top-1)", "o"), ("auto", "autotune (top-4 + cuBLASLt)", "x")):
        ax.scatter([r["m"] for r in rows], [r[key] for r in rows], s=9, marker=marker, alpha=0.55, label=label)
    ax.axhline(1.0, color="k", lw=0.8)
    ax.axhline(0.98, color="grey", lw=0.6, ls="--")
    ax.set_xscale("log", base=2)
    ax.set_xlabel("M")
    ax.set_ylabel("cuBLASLt time / mode time")
    ax.set_title("cks runtime on the H200: each problem against cuBLASLt (same process, interleaved)")
    ax.legend(loc="lower right")
    fig.tight_layout()
    fig.savefig(os.path.join(png_dir, "runtime_vs_cublas.png"), dpi=120)
    plt.close(fig)

    fig, ax = plt.subplots(figsize=(6, 4))
    for key, label in (("sel", "select"), ("auto", "autotune")):
        xs = sorted(r[key] for r in rows)
        ax.step(xs, [(i + 1) / len(xs) for i in range(len(xs))], where="post", label=label)
    ax.axvline(1.0, color="k", lw=0.8)
    ax.set_xlabel("cuBLASLt time / mode time")
    ax.set_ylabel("share of problems ≤ x")
    ax.legend()
    fig.tight_layout()
    fig.savefig(os.path.join(png_dir, "runtime_ratio_cdf.png"), dpi=120)
    plt.close(fig)


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    run_dir, out_md, png_dir = sys.argv[1:]
    rows = load_rows(run_dir)
    if not rows:
        sys.exit(f"runtime_results.py: no measured problem in {run_dir}")
    summary = json.load(open(os.path.join(run_dir, "runtime_bench.json")))
    reuse_path = os.path.join(run_dir, "reuse.json")
    reuse = json.load(open(reuse_path)) if os.path.exists(reuse_path) else {}
    plots(rows, png_dir)
    rel_png = os.path.relpath(png_dir, os.path.dirname(out_md) or ".")
    host = summary.get("host_us_per_call", {})
    first = summary.get("first_call_ms_bundle_hit", {})
    err = summary.get("max_rel_err", {})
    notes_path = os.path.join(run_dir, "notes.md")
    notes = open(notes_path).read().strip() if os.path.exists(notes_path) else ""
    bundle = ""
    log_path = os.path.join(run_dir, "bundle.log")
    if os.path.exists(log_path):
        wrote = [line for line in open(log_path) if "wrote" in line]
        bundle = ("The bundle (`cks bundle`, its log `bundle.log`): " + wrote[-1].split(": ", 2)[-1].strip()
                  if wrote else "")
    md = f"""# The GEMM runtime measured on the H200

Generated by `python3 scripts/analysis/runtime_results.py {run_dir} {out_md} {png_dir}` from
what `scripts/device/runtime_check.sh` measured ({summary.get('gpu', '?')}, one process,
`cks_runtime_bench`; the run's files are in `{run_dir}/`). The reference is cuBLASLt called
through the runtime's `cublas` mode in the same process, interleaved with the other modes (the
ratio is cuBLASLt's time / the mode's time; > 1 means faster than cuBLASLt). The comparison
with `torch.matmul` from Python is `docs/python-results.md`.

{len(rows)} problems: the llm set's TN shapes and decode M = 1 and 8 for each (N, K). Since
`b86b99b` the runtime runs an M = 1 product as its column problem (N, 1, K) (`docs/library.md`, "Row
products"); before, M = 1 ran on cuBLASLt in every mode. {bundle}

{notes}

## Speed against cuBLASLt

{regime_table(rows)}

![per problem]({rel_png}/runtime_vs_cublas.png)
![distribution]({rel_png}/runtime_ratio_cdf.png)

Worst problems for autotune:

{worst_table(rows, 'auto')}

## Correctness, first calls, dispatch cost

- Max relative error against an FP32 cuBLAS reference of the same BF16 operands: select
  {err.get('select', float('nan')):.4f}, autotune {err.get('autotune', float('nan')):.4f}, cuBLASLt
  {err.get('cublas', float('nan')):.4f}.
- First call of a problem whose kernel is in the bundle (select mode): median
  {first.get('median', float('nan')):.3f} ms, max {first.get('max', float('nan')):.1f} ms over {first.get('n', 0)} problems
  (the first call loads the kernel's library and builds its operation).
- Autotune's first call (the tuning): median {reuse.get('first_call_ms_tuning_median', float('nan')):.1f} ms;
  a second process reading the tuning file: median {reuse.get('first_call_ms_from_file_median', float('nan')):.2f} ms,
  same winner in {reuse.get('same_winner', 0)} of {reuse.get('problems', 0)} problems.
- Host cost of a cached call (small problems, calls into a gated stream): select
  {host.get('select_median', float('nan')):.2f} us per call against {host.get('raw_launch_median', float('nan')):.2f} us for
  the bare kernel launch through its library (the runtime's dispatch adds
  {host.get('select_minus_raw', float('nan')):.2f} us) and {host.get('cublas_median', float('nan')):.2f} us for cuBLASLt.
"""
    with open(out_md, "w") as f:
        f.write(md)
    print(f"runtime_results.py: {len(rows)} problems -> {out_md}, {png_dir}/runtime_*.png", file=sys.stderr)


if __name__ == "__main__":
    main()
