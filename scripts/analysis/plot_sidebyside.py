#!/usr/bin/env python3
"""Plots of the side-by-side regret of the real picks (issue 16), from the per-group CSV of
`cks analyze sidebyside --per-group FILE`:

  <prefix>_regret_cdf.png   the CDF of the deployed pick's regret per layout (and the exhaustive
                            ranking's and the own orientation's, where the CSV has them, and the
                            noise floor, dashed), with the issue's 1 % and 5 %
  <prefix>_vs_cublas.png    the deployed pick's throughput over cuBLAS's against M (log), per layout

  scripts/analysis/plot_sidebyside.py GROUPS_CSV [OUT_PREFIX] [--title TEXT]

OUT_PREFIX defaults to the CSV's path without '_groups.csv'. Groups whose pick was not compared
(an empty regret) are left out and counted in the legend.
"""
import argparse
import csv
import math
import os

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

LAYOUTS = ["tn", "nt", "nn", "tt"]
COLOURS = {"tn": "tab:blue", "nt": "tab:orange", "nn": "tab:green", "tt": "tab:red"}


def save_png(fig, path, colours=64):
    """Saves the figure as a palette PNG of at most `colours` colours: a plot of a few flat colours
    reads the same and is 3-4x smaller than matplotlib's RGBA file (the repository keeps every
    copy of a committed plot)."""
    import io

    from PIL import Image

    buf = io.BytesIO()
    fig.savefig(buf, dpi=110, format="png")
    buf.seek(0)
    Image.open(buf).convert("RGB").quantize(colors=colours, dither=Image.Dither.NONE).save(path, optimize=True)


def number(v):
    try:
        x = float(v)
    except (TypeError, ValueError):
        return None
    return x if math.isfinite(x) else None


def cdf(ax, values, **kw):
    values = sorted(values)
    if not values:
        return
    ys = [(i + 1) / len(values) for i in range(len(values))]
    ax.step([100 * v for v in values], ys, where="post", **kw)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("csv")
    ap.add_argument("prefix", nargs="?")
    ap.add_argument("--title", default="side by side")
    a = ap.parse_args()
    prefix = a.prefix or a.csv.removesuffix(".csv").removesuffix("_groups")
    rows = list(csv.DictReader(open(a.csv)))
    if not rows:
        raise SystemExit(f"{a.csv}: no rows")
    present = [l for l in LAYOUTS if any(r["layout"] == l for r in rows)]

    fig, ax = plt.subplots(figsize=(7, 4.5))
    for l in present:
        mine = [r for r in rows if r["layout"] == l]
        dep = [number(r["deployed_regret"]) for r in mine]
        got = [v for v in dep if v is not None]
        mean = 100 * sum(got) / len(got) if got else float("nan")
        cdf(ax, got, color=COLOURS[l], label=f"{l}: deployed ({len(got)}/{len(mine)} groups, mean {mean:.2f} %)")
        if "exhaustive_regret" in mine[0]:
            ex = [number(r["exhaustive_regret"]) for r in mine]
            cdf(ax, [v for v in ex if v is not None], color=COLOURS[l], alpha=0.45, linestyle=":")
        if "own_regret" in mine[0]:
            own = [number(r["own_regret"]) for r in mine]
            cdf(ax, [v for v in own if v is not None], color=COLOURS[l], alpha=0.45, linestyle="-.")
    floor = [number(r["floor"]) for r in rows]
    cdf(ax, [v for v in floor if v is not None], color="black", linestyle="--", label="noise floor (all layouts)")
    for x in (1, 5):
        ax.axvline(x, color="grey", linewidth=0.6)
    ax.set_xscale("symlog", linthresh=1)
    ax.set_xlim(0, 40)
    ax.set_xlabel("regret of the pick against the group's best, % (symlog)")
    ax.set_ylabel("share of groups")
    others = [what for col, what in (("exhaustive_regret", "dotted: exhaustive ranking"),
                                     ("own_regret", "dash-dot: own orientation only"))
              if col in rows[0]]
    ax.set_title(f"{a.title}: regret CDF of the real pick" + (f"\n({'; '.join(others)})" if others else ""),
                 fontsize=10)
    ax.legend(fontsize=8, loc="lower right")
    ax.grid(alpha=0.3)
    fig.tight_layout()
    save_png(fig, prefix + "_regret_cdf.png")

    fig, ax = plt.subplots(figsize=(7, 4.5))
    for l in present:
        pts = [(int(r["m"]), number(r["deployed_vs_cublas"])) for r in rows if r["layout"] == l]
        pts = [(m, v) for m, v in pts if v is not None]
        if pts:
            ax.scatter([m for m, _ in pts], [v for _, v in pts], s=14, color=COLOURS[l], label=l, alpha=0.8)
    ax.axhline(1.0, color="black", linewidth=0.8)
    ax.axvline(2048, color="grey", linewidth=0.6, linestyle="--")
    ax.set_xscale("log", base=2)
    ax.set_xlabel("M")
    ax.set_ylabel("pick / cuBLAS (throughput)")
    ax.set_title(f"{a.title}: the real pick against cuBLAS by M")
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    save_png(fig, prefix + "_vs_cublas.png")
    print(prefix + "_regret_cdf.png", prefix + "_vs_cublas.png")


if __name__ == "__main__":
    main()
