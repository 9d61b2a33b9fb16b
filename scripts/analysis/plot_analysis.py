#!/usr/bin/env python3
"""Plots of the `cks analyze` studies (docs/analysis.md).

Reads the CSV tables that `cks analyze features|sampling --out-dir DIR --format csv` writes and
writes PNGs next to them (or to --out-dir):

  features_rho_<groups>.png        rho_global vs mean within-group rho_g per feature (partition "all")
  features_partitions_<groups>.png heatmap of the mean rho_g per partition value for the leading features
  sampling_regret.png              mean sampling regret vs budget B, per policy
  sampling_p_eps.png               P_eps(B) per policy, one panel per eps
  sampling_alpha.png               the alpha ablation: mean regret and P_0.05 vs alpha, per budget
  sampling_tail.png                share of each group's candidates within eps of the oracle
  counters_rho.png                 the counter study: pooled rho vs mean within-group rho_g per counter,
                                   the paper's GH200 values as markers
  counters_scatter.png             within-group view: throughput / group best vs the leading counters

Only the standard library, numpy and matplotlib (scripts/requirements.txt).

    python3 scripts/analysis/plot_analysis.py [--in-dir docs/analysis] [--out-dir docs/analysis]
        [--title TN] [--dpi 130] [--palette]

--title prefixes every plot title (e.g. the layout of a per-layout directory of
scripts/analysis/studies.sh); --dpi sets the resolution; --palette stores each PNG with an adaptive
256-colour palette (Pillow, which matplotlib depends on), about a third of the size.
"""
import argparse
import csv
import math
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

POLICY_STYLE = {
    "uniform": dict(color="tab:gray", marker="o"),
    "top": dict(color="tab:blue", marker="s"),
    "biased-diverse": dict(color="tab:orange", marker="^"),
}
# The features the paper discusses by name ("Table 4" and its text), always shown when present.
PAPER_FEATURES = ["tile_k", "n_k_iters", "stages", "k_iters_per_unit", "pipeline_fill", "pipeline_amortization",
                  "stage_bytes", "smem_total_bytes", "f_smem", "stages_x_fsmem", "b_res", "tile_intensity",
                  "consumer_producer_ratio", "wave_eff", "streamk_proxy"]
# The paper's budgets B = 1000, 2000, 3000 (of its full catalogue) scaled to our 2,000-kernel pool
# as a fraction of the 34,265-kernel tn catalogue (one default-knob candidate per kernel).
PAPER_SCALED = {58: 1000, 117: 2000, 175: 3000}
PARTITION_ORDER = [("size", ["small", "medium", "large"]),
                   ("geometry", ["square", "tall", "wide", "skinny_k"]),
                   ("regime", ["memory_bound", "balanced", "compute_bound"])]


def read_csv(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def num(s):
    return float(s) if s not in ("", None) else math.nan


# Set by main(): the title prefix, the resolution and whether the PNGs are palette-quantized.
OPTIONS = dict(title="", dpi=130, palette=False)


def titled(text):
    return f"{OPTIONS['title']}: {text}" if OPTIONS["title"] else text


def save(fig, out_dir, name):
    path = os.path.join(out_dir, name)
    for ax in fig.axes:
        if ax.get_title():
            ax.set_title(titled(ax.get_title()), fontsize=ax.title.get_fontsize())
            break
    else:
        sup = getattr(fig, "_suptitle", None)
        if sup is not None:
            fig.suptitle(titled(sup.get_text()), fontsize=sup.get_fontsize())
    fig.savefig(path, dpi=OPTIONS["dpi"], bbox_inches="tight")
    plt.close(fig)
    if OPTIONS["palette"]:
        from PIL import Image
        with Image.open(path) as im:
            q = im.convert("RGB").quantize(colors=256, method=Image.Quantize.MEDIANCUT)
        q.save(path, optimize=True)
    print(path)


def plot_feature_rho(rows, groups, out_dir, top=30):
    """Bars of rho_global (pooled, vs y) and the mean within-group rho_g, partition 'all'."""
    rows = [r for r in rows if r["partition"] == "all" and not math.isnan(num(r["rho_within_mean"]))]
    rows.sort(key=lambda r: -abs(num(r["rho_within_mean"])))
    chosen = rows[:top]
    names = {r["feature"] for r in chosen}
    chosen += [r for r in rows if r["feature"] in PAPER_FEATURES and r["feature"] not in names]
    chosen.sort(key=lambda r: num(r["rho_within_mean"]))
    y = np.arange(len(chosen))
    fig, ax = plt.subplots(figsize=(7.5, 0.25 * len(chosen) + 1.5))
    ax.barh(y - 0.2, [num(r["rho_global"]) for r in chosen], height=0.4, color="tab:gray", label="global ρ (pooled, y = T/T*)")
    ax.barh(y + 0.2, [num(r["rho_within_mean"]) for r in chosen], height=0.4, color="tab:blue",
            label="mean within-group ρ_g")
    ax.set_yticks(y, [r["feature"] + (" *" if r["feature"] in PAPER_FEATURES else "") for r in chosen], fontsize=8)
    ax.axvline(0, color="black", linewidth=0.6)
    ax.set_xlim(-1, 1)
    ax.set_xlabel("Spearman ρ with measured throughput")
    n = chosen[0]["groups"] if chosen else "0"
    ax.set_title(f"Features vs throughput, {groups} groups (n = {n}); * named in the paper", fontsize=10)
    ax.legend(loc="lower right", fontsize=8)
    ax.grid(axis="x", alpha=0.3)
    save(fig, out_dir, f"features_rho_{groups}.png")


def plot_feature_partitions(rows, groups, out_dir, top=20):
    """Heatmap of the mean within-group rho_g: features x partition values."""
    allrows = [r for r in rows if r["partition"] == "all" and not math.isnan(num(r["rho_within_mean"]))]
    allrows.sort(key=lambda r: -abs(num(r["rho_within_mean"])))
    features = [r["feature"] for r in allrows[:top]]
    features += [f for f in PAPER_FEATURES if f not in features and any(r["feature"] == f for r in allrows)]
    cols = [("all", "all")] + [(p, v) for p, vs in PARTITION_ORDER for v in vs]
    by_key = {(r["feature"], r["partition"], r["value"]): r for r in rows}
    cols = [c for c in cols if any((f, c[0], c[1]) in by_key for f in features)]
    data = np.full((len(features), len(cols)), np.nan)
    for i, f in enumerate(features):
        for j, (p, v) in enumerate(cols):
            r = by_key.get((f, p, v))
            if r is not None:
                data[i, j] = num(r["rho_within_mean"])
    fig, ax = plt.subplots(figsize=(0.75 * len(cols) + 3.5, 0.3 * len(features) + 1.8))
    im = ax.imshow(data, cmap="RdBu_r", vmin=-1, vmax=1, aspect="auto")
    labels = []
    for p, v in cols:
        r = next((by_key[(f, p, v)] for f in features if (f, p, v) in by_key), None)
        labels.append(f"{v}\n(n={r['groups'] if r else 0})")
    ax.set_xticks(range(len(cols)), labels, fontsize=7, rotation=45, ha="right")
    ax.set_yticks(range(len(features)), features, fontsize=8)
    for i in range(len(features)):
        for j in range(len(cols)):
            if not np.isnan(data[i, j]):
                ax.text(j, i, f"{data[i, j]:+.2f}", ha="center", va="center", fontsize=6,
                        color="white" if abs(data[i, j]) > 0.55 else "black")
    fig.colorbar(im, ax=ax, label="mean within-group ρ_g", shrink=0.8)
    ax.set_title(f"Within-group ρ_g by partition ({groups} groups)", fontsize=10)
    save(fig, out_dir, f"features_partitions_{groups}.png")


def eps_columns(rows):
    return [c for c in rows[0].keys() if c.startswith("p_within_")]


def budget_axis(ax, budgets):
    """Log-2 budget axis labelled with the budgets themselves, the paper's budgets marked."""
    ax.set_xscale("log", base=2)
    ticks = [b for b in sorted(budgets) if b not in PAPER_SCALED]
    ax.set_xticks(ticks, [str(b) for b in ticks], fontsize=7)
    ax.minorticks_off()
    for b, paper in PAPER_SCALED.items():
        if b in budgets:
            ax.axvline(b, color="tab:green", linestyle=":", linewidth=0.9)
            ax.text(b, 1.0, f" {paper}", transform=ax.get_xaxis_transform(), rotation=90, va="top", ha="right",
                    fontsize=6, color="tab:green")


def universe_size(rows):
    """The groups' universe size as the curves imply it: B / budget_fraction (the harmonic mean of
    |C_g| while B < every |C_g|), '2,000' when exact, '≈2,064' when the groups differ."""
    sizes = sorted(int(r["budget"]) / num(r["budget_fraction"]) for r in rows
                   if num(r["budget_fraction"]) > 0 and num(r["budget_fraction"]) < 0.5)
    if not sizes:
        return "its"
    n = sizes[0]
    return f"{round(n):,}" if abs(n - round(n)) < 1e-6 else f"≈{round(n):,}"


def plot_sampling_regret(rows, out_dir):
    rows = [r for r in rows if r["study"] == "budget"]
    budgets = {int(r["budget"]) for r in rows}
    n_groups = rows[0]["groups"] if rows else "?"
    universe = universe_size(rows)
    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    for log, ax in zip((False, True), axes):
        for policy, style in POLICY_STYLE.items():
            pts = sorted((int(r["budget"]), num(r["regret_mean"]), r["alpha"]) for r in rows if r["policy"] == policy)
            if log:
                pts = [p for p in pts if p[1] > 0]
            if not pts:
                continue
            label = policy + (f" (α = {pts[0][2]})" if policy == "biased-diverse" else "")
            ax.plot([p[0] for p in pts], [100 * p[1] for p in pts], label=label, **style)
        budget_axis(ax, budgets)
        ax.set_xlabel(f"budget B (of each group's {universe} candidates)")
        ax.grid(alpha=0.3, which="both")
        if log:
            ax.set_yscale("log")
            ax.set_title("log scale (B = pool size has zero regret)", fontsize=9)
        else:
            ax.set_ylabel("mean sampling regret (%)")
            ax.set_title(f"Sampling regret vs budget, {n_groups} exhaustive eval groups", fontsize=9)
            ax.legend(fontsize=8)
    fig.text(0.01, -0.02, "dotted: the paper's B = 1000 / 2000 / 3000 scaled to our pool (B x 2000 / 34,265 tn kernels)",
             fontsize=7, color="tab:green")
    save(fig, out_dir, "sampling_regret.png")


def plot_sampling_p_eps(rows, out_dir):
    rows = [r for r in rows if r["study"] == "budget"]
    cols = eps_columns(rows)
    fig, axes = plt.subplots(1, len(cols), figsize=(4.2 * len(cols), 3.8), sharey=True)
    axes = np.atleast_1d(axes)
    for ax, col in zip(axes, cols):
        for policy, style in POLICY_STYLE.items():
            pts = sorted((int(r["budget"]), num(r[col])) for r in rows if r["policy"] == policy)
            if pts:
                ax.plot([p[0] for p in pts], [100 * p[1] for p in pts], label=policy, **style)
        budget_axis(ax, {int(r["budget"]) for r in rows})
        ax.set_xlabel("budget B")
        ax.set_title("P_ε(B), ε = " + col.removeprefix("p_within_").replace("pct", "%"), fontsize=10)
        ax.grid(alpha=0.3, which="both")
    axes[0].set_ylabel("groups whose sample holds a kernel within ε (%)")
    axes[0].legend(fontsize=8)
    save(fig, out_dir, "sampling_p_eps.png")


def plot_sampling_alpha(rows, out_dir):
    rows = [r for r in rows if r["study"] == "alpha"]
    if not rows:
        return
    budgets = sorted({int(r["budget"]) for r in rows})
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(9, 3.8))
    for b in budgets:
        pts = sorted((num(r["alpha"]), num(r["regret_mean"]), num(r.get("p_within_5pct", "nan")))
                     for r in rows if int(r["budget"]) == b)
        a1.plot([p[0] for p in pts], [100 * p[1] for p in pts], marker="o", label=f"B = {b}")
        a2.plot([p[0] for p in pts], [100 * p[2] for p in pts], marker="o", label=f"B = {b}")
    a1.set_yscale("log")
    a1.set_ylabel("mean sampling regret (%)")
    a2.set_ylabel("P_0.05 (%)")
    for ax in (a1, a2):
        ax.set_xlabel("α (top share of the budget)")
        ax.grid(alpha=0.3, which="both")
        ax.legend(fontsize=8)
    fig.suptitle("α ablation of biased-diverse sampling", fontsize=10)
    save(fig, out_dir, "sampling_alpha.png")


def plot_sampling_tail(rows, out_dir):
    groups = [r for r in rows if r["group"] not in ("mean", "median", "min", "max")]
    cols = [c for c in rows[0].keys() if c.startswith("within_")]
    if not groups or not cols:
        return
    groups.sort(key=lambda r: num(r[cols[-1]]))
    x = np.arange(len(groups))
    fig, ax = plt.subplots(figsize=(9, 4))
    width = 0.8 / len(cols)
    for i, c in enumerate(cols):
        ax.bar(x + (i - (len(cols) - 1) / 2) * width, [100 * num(r[c]) for r in groups], width=width,
               label="within " + c.removeprefix("within_").replace("pct", "%"))
    ax.set_yscale("log")
    ax.set_xticks(x, [r["group"] for r in groups], rotation=75, fontsize=7)
    ax.set_ylabel("candidates within ε of the oracle (%)")
    sizes = sorted({int(num(r["candidates"])) for r in groups})
    each = f"{sizes[0]:,}" if len(sizes) == 1 else f"{sizes[0]:,}–{sizes[-1]:,}"
    ax.set_title(f"The near-optimal tail per eval group ({each} candidates each)", fontsize=10)
    ax.grid(axis="y", alpha=0.3, which="both")
    ax.legend(fontsize=8)
    save(fig, out_dir, "sampling_tail.png")


def plot_counters(rows, out_dir):
    rows = [r for r in rows if not math.isnan(num(r["rho_within_mean"]))]
    rows.sort(key=lambda r: num(r["rho_within_mean"]))
    y = np.arange(len(rows))
    fig, ax = plt.subplots(figsize=(8.5, 0.32 * len(rows) + 1.5))
    ax.barh(y + 0.2, [num(r["rho_global"]) for r in rows], height=0.4, color="tab:gray",
            label="pooled ρ (all profiles)")
    ax.barh(y - 0.2, [num(r["rho_within_mean"]) for r in rows], height=0.4, color="tab:blue",
            label="mean within-group ρ_g")
    for i, r in enumerate(rows):
        if not math.isnan(num(r["paper_rho_global"])):
            ax.plot(num(r["paper_rho_global"]), i + 0.2, "k|", markersize=12, mew=2)
        if not math.isnan(num(r["paper_rho_within"])):
            ax.plot(num(r["paper_rho_within"]), i - 0.2, "r|", markersize=12, mew=2)
    ax.plot([], [], "k|", markersize=10, mew=2, label="paper GH200: pooled")
    ax.plot([], [], "r|", markersize=10, mew=2, label="paper GH200: within-group")
    ax.set_yticks(y)
    ax.set_yticklabels([r["counter"] for r in rows], fontsize=8)
    ax.axvline(0, color="black", lw=0.6)
    ax.set_xlim(-1.05, 1.05)
    ax.set_xlabel("Spearman ρ with measured throughput")
    n = rows[0]["profiles"] if rows else "?"
    g = rows[0]["groups"] if rows else "?"
    ax.set_title(f"Counter study, H200: {n} Nsight Compute profiles in {g} groups")
    ax.legend(fontsize=7, loc="lower right")
    save(fig, out_dir, "counters_rho.png")


def plot_counter_scatter(rows, out_dir, counters=("dram_throughput_pct", "tensor_active_pct", "sm_active_pct",
                                                   "l2_read_sectors")):
    best = {}
    for r in rows:
        best[r["group_key"]] = max(best.get(r["group_key"], 0.0), num(r["tflops"]))
    present = [c for c in counters if c in rows[0]]
    fig, axes = plt.subplots(1, len(present), figsize=(3.6 * len(present), 3.4), squeeze=False)
    keys = sorted(best)
    cmap = plt.get_cmap("tab20", len(keys))
    for ax, c in zip(axes[0], present):
        for i, key in enumerate(keys):
            pts = [(num(r[c]), num(r["tflops"]) / best[key]) for r in rows if r["group_key"] == key]
            ax.scatter([p[0] for p in pts], [p[1] for p in pts], s=9, color=cmap(i), alpha=0.8)
        ax.set_xlabel(c)
        if c.endswith("sectors") or c.endswith("bytes"):
            ax.set_xscale("log")
        ax.set_ylim(0, 1.05)
    axes[0][0].set_ylabel("T / best T in its group")
    fig.suptitle("Counters vs throughput, one colour per group", fontsize=10)
    save(fig, out_dir, "counters_scatter.png")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--in-dir", default="docs/analysis", help="directory of the cks analyze CSVs")
    ap.add_argument("--out-dir", default=None, help="where the PNGs go (default: --in-dir)")
    ap.add_argument("--title", default="", help="prefix of every plot title (e.g. the layout)")
    ap.add_argument("--dpi", type=int, default=130, help="resolution of the PNGs")
    ap.add_argument("--palette", action="store_true", help="store the PNGs with a 256-colour palette (smaller)")
    args = ap.parse_args()
    OPTIONS.update(title=args.title, dpi=args.dpi, palette=args.palette)
    out_dir = args.out_dir or args.in_dir
    os.makedirs(out_dir, exist_ok=True)
    found = False
    for groups in ("eval", "train", "all"):
        path = os.path.join(args.in_dir, f"features_{groups}.csv")
        if os.path.exists(path):
            rows = read_csv(path)
            plot_feature_rho(rows, groups, out_dir)
            plot_feature_partitions(rows, groups, out_dir)
            found = True
    curves = os.path.join(args.in_dir, "sampling_curves.csv")
    if os.path.exists(curves):
        rows = read_csv(curves)
        plot_sampling_regret(rows, out_dir)
        plot_sampling_p_eps(rows, out_dir)
        plot_sampling_alpha(rows, out_dir)
        found = True
    tail = os.path.join(args.in_dir, "sampling_tail.csv")
    if os.path.exists(tail):
        plot_sampling_tail(read_csv(tail), out_dir)
    counters = os.path.join(args.in_dir, "counters.csv")
    if os.path.exists(counters):
        rows = read_csv(counters) + read_csv(os.path.join(args.in_dir, "counters_parameters.csv"))
        plot_counters(rows, out_dir)
        profiles = os.path.join(args.in_dir, "counter_profiles.csv")
        if os.path.exists(profiles):
            plot_counter_scatter(read_csv(profiles), out_dir)
        found = True
    if not found:
        sys.exit(f"plot_analysis: no features_*.csv, sampling_curves.csv or counters.csv in {args.in_dir}")


if __name__ == "__main__":
    main()
