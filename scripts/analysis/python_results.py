#!/usr/bin/env python3
"""cks.torch.mm against torch.matmul on the H200 as a doc and a plot (issue 17, item 6): the
runtime check's problems through the PyTorch entry (scripts/device/python_check.sh with
.carry/py/shapes.csv), select mode and autotune mode.

    python3 scripts/analysis/python_results.py SELECT_DIR AUTOTUNE_DIR OUT.md PNG_DIR

SELECT_DIR / AUTOTUNE_DIR: what python_check.sh brought home, committed under data/device_checks/
(python_check.json[.xz], python_select.json). Writes OUT.md (per M regime the geomean of torch.matmul's
time over cks.torch.mm's, the problems below 0.98, the worst ones, the selector's start-up) and
PNG_DIR/python_vs_torch.png (per problem, each mode's ratio against the problem's FLOP). Where the rows
carry the per-round paired ratio (python_check.py since session 20) it is reported beside the ratio
of medians, with the problems below 0.98 beyond the noise (q3 of the per-round ratios below 0.98).
"""
import json
import lzma
import math
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

REGIMES = [("decode, M ≤ 64", 1, 64), ("M 65-2047", 65, 2047), ("M ≥ 2048", 2048, 1 << 40), ("all", 1, 1 << 40)]


def geomean(xs):
    xs = list(xs)
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


def load(run_dir):
    path = os.path.join(run_dir, "python_check.json")
    if os.path.exists(path + ".xz"):
        with lzma.open(path + ".xz", "rt") as f:
            summary = json.load(f)
    elif os.path.exists(path):
        with open(path) as f:
            summary = json.load(f)
    else:
        sys.exit(f"python_results.py: no python_check.json[.xz] in {run_dir}")
    rows = []
    for r in summary["rows"]:
        if "error" in r or not r["case"].startswith("rt_"):
            continue
        m, n, k = (int(x) for x in r["runtime_problem"].split()[0].split("x"))
        r["rm"], r["flop"] = m, 2.0 * m * n * k
        rows.append(r)
    if not rows:
        sys.exit(f"python_results.py: {run_dir} has no runtime-problem rows (python_check.py --shapes)")
    start = {}
    sel = os.path.join(run_dir, "python_select.json")
    if os.path.exists(sel):
        with open(sel) as f:
            start = json.load(f)
    return summary, rows, start


def regime_table(modes):
    paired = all("torch_over_cks_paired" in r for _, rows in modes for r in rows)
    head = "| problems | " + " | ".join(f"{name}: n, geomean, < 0.98" + (", paired, beyond noise" if paired else "")
                                         for name, _ in modes) + " |"
    lines = [head, "| --- |" + " --- |" * len(modes)]
    for reg, lo, hi in REGIMES:
        cells = []
        for _, rows in modes:
            sub = [r for r in rows if lo <= r["rm"] <= hi]
            if not sub:
                cells.append("")
                continue
            c = f"{len(sub)}, **{geomean(r['torch_over_cks'] for r in sub):.3f}**, {sum(r['torch_over_cks'] < 0.98 for r in sub)}"
            if paired:
                c += (f", {geomean(r['torch_over_cks_paired'] for r in sub):.3f}, "
                      f"{sum(r['torch_over_cks_paired'] < 0.98 and r['paired_q3'] < 0.98 for r in sub)}")
            cells.append(c)
        lines.append(f"| {reg} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def worst_table(rows, n=10):
    lines = ["| problem (runtime) | torch / cks | torch us | cks us | ran |", "| --- | --- | --- | --- | --- |"]
    for r in sorted(rows, key=lambda r: r["torch_over_cks"])[:n]:
        ran = r["source"] + (f" {r['kernel_id']}" if r.get("kernel_id") else "")
        lines.append(f"| {r['runtime_problem']} | {r['torch_over_cks']:.3f} | {r['us_torch']:.1f} | {r['us_cks']:.1f} | {ran} |")
    return "\n".join(lines)


def plot(modes, png):
    fig, ax = plt.subplots(figsize=(8, 4.5))
    for (name, rows), marker in zip(modes, ("o", "x")):
        ax.scatter([r["flop"] for r in rows], [r["torch_over_cks"] for r in rows], s=10, marker=marker, alpha=0.6,
                   label=f"{name} (geomean {geomean(r['torch_over_cks'] for r in rows):.3f})")
    ax.axhline(1.0, color="grey", lw=0.8)
    ax.axhline(0.98, color="red", lw=0.6, ls="--", label="0.98")
    ax.set_xscale("log")
    ax.set_xlabel("problem size, 2MNK (FLOP)")
    ax.set_ylabel("torch.matmul time / cks.torch.mm time")
    ax.set_title("cks.torch.mm against torch.matmul on an H200, per problem")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(png, dpi=120)
    plt.close(fig)


def main():
    if len(sys.argv) != 5:
        sys.exit(__doc__)
    sel_dir, auto_dir, out_md, png_dir = sys.argv[1:]
    s_sum, s_rows, start = load(sel_dir)
    a_sum, a_rows, _ = load(auto_dir)
    os.makedirs(png_dir, exist_ok=True)
    png = os.path.join(png_dir, "python_vs_torch.png")
    modes = [("select", s_rows), ("autotune", a_rows)]
    plot(modes, png)
    md = [
        "# cks.torch.mm against torch.matmul on the H200",
        "",
        f"Generated by `python3 scripts/analysis/python_results.py {sel_dir} {auto_dir} {out_md} {png_dir}` from",
        f"`scripts/device/python_check.sh` runs (torch {s_sum.get('torch')}, {s_sum.get('gpu')}; select: "
        f"{s_sum.get('shapes_cases')} runtime problems, sources {s_sum.get('sources')}; autotune: sources "
        f"{a_sum.get('sources')}, {a_sum.get('compiles_pending')} compiles still pending at the end of the wait).",
        "Each runtime problem runs as the PyTorch product that maps onto it (tn: `x @ w.t()`); the ratio is",
        "torch.matmul's time per call over cks.torch.mm's (> 1: cks is faster), medians over interleaved rounds",
        "of back-to-back calls between CUDA events; \"paired\" is the median of the per-round ratios, \"beyond",
        "noise\" counts problems whose per-round ratios are below 0.98 in three rounds of four.",
        "On small products (kernels of a few to a few tens of microseconds) a call's time is its host cost:",
        "there the ratio compares the two Python call paths (torch.matmul's dispatch against cks.torch.mm's",
        "eager fast path), which is what a launch-bound step (decode) sees, not the kernels; the C++ runtime",
        "check (`docs/runtime-results.md`) compares the kernels against cuBLASLt without Python.",
        "",
        regime_table(modes),
        "",
        "Worst problems, select mode:",
        "",
        worst_table(s_rows),
        "",
        "Worst problems, autotune mode:",
        "",
        worst_table(a_rows),
        "",
        f"![per problem]({os.path.relpath(png, os.path.dirname(out_md) or '.')})",
        "",
    ]
    if start:
        md += [f"`import cks` + the first `cks.select`: {start.get('import_plus_first_select_ms')} ms (median of "
               f"{start.get('runs')} fresh processes; goal {start.get('goal_ms')} ms); a cached select "
               f"{start.get('cached_select_us')} us.", ""]
    with open(out_md, "w") as f:
        f.write("\n".join(md))
    print(f"python_results.py: wrote {out_md} and {png}", file=sys.stderr)


if __name__ == "__main__":
    main()
