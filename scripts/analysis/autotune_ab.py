#!/usr/bin/env python3
"""Autotune settings A/B from runtime checks (scripts/device/runtime_check.sh, scripts/device/autotune_ab.sh).

  python3 scripts/analysis/autotune_ab.py [--md OUT.md] [--margin F ...] RUN ...

RUN is a run directory (runtime_bench.csv[.xz] + runtime_bench.json) or a tarball of run directories
(autotune_ab.sh's ab.tar.xz), optionally prefixed LABEL= (e.g. machine2/subsetA=path.tar.xz) to name
the machine and problem subset it ran on. Prints one row per run (autotune and select against cuBLASLt,
geomean by M regime, problems below 0.98) and one row per (label, configuration) pooled over its repeats.
The configuration is read from each run's runtime JSON (bundle top, autotune_top, autotune_lt_algos,
autotune_rounds), not from the file names. A run directory found twice (a tarball of a machine's /tmp
that also holds an earlier command's runs) counts once.

--margin F (repeatable) replays each run as if autotune had kept cuBLASLt's heuristic top-1 unless the
winner's tuning median was at least F faster than the top-1's (the winner's and the top-1's tuning times
are in each row's autotune_reason; a replaced winner scores 1.0, as the top-1 is the reference) and
prints the pooled table per F: what the engine's kTuneMargin was chosen from.
"""
import argparse, csv, io, json, lzma, math, re, sys, tarfile, collections, os


def read_text(tf, name):
    data = tf.extractfile(name).read() if tf else open(name, "rb").read()
    return lzma.decompress(data).decode() if name.endswith(".xz") else data.decode()


def runs_of(path):
    """Yields (name, rows, summary) for each run in a directory or tarball."""
    if os.path.isdir(path):
        names = os.listdir(path)
        csvn = "runtime_bench.csv" if "runtime_bench.csv" in names else "runtime_bench.csv.xz"
        s = json.loads(read_text(None, os.path.join(path, "runtime_bench.json")))
        if "bundle.log" in names:
            s["bundle_top"] = bundle_top_of(read_text(None, os.path.join(path, "bundle.log")))
        yield os.path.basename(path.rstrip("/")), list(csv.DictReader(io.StringIO(read_text(None, os.path.join(path, csvn))))), s
        return
    with tarfile.open(path) as tf:
        dirs = sorted({m.name.split("/")[0] for m in tf.getmembers() if m.name.endswith("runtime_bench.json")})
        for d in dirs:
            members = set(tf.getnames())
            csvn = f"{d}/runtime_bench.csv" if f"{d}/runtime_bench.csv" in members else f"{d}/runtime_bench.csv.xz"
            s = json.loads(read_text(tf, f"{d}/runtime_bench.json"))
            s["bundle_top"] = bundle_top_of(read_text(tf, f"{d}/bundle.log")) if f"{d}/bundle.log" in members else None
            yield d, list(csv.DictReader(io.StringIO(read_text(tf, csvn)))), s


def bundle_top_of(log):
    m = re.search(r"top (\d+) \+", log)
    return int(m.group(1)) if m else None


CAND = re.compile(r"(k[0-9a-f]{16}) (r=[^ ,]+(?:,[^ ,]+)*) ([\d.]+) us")


def replay(r, margin):
    """autotune / cuBLASLt of row r had autotune kept the top-1 unless beaten by more than margin."""
    a = float(r["autotune_vs_cublas"])
    reason = r.get("autotune_reason", "")
    top1 = re.search(r"cuBLASLt \(([\d.]+) us", reason)
    if not top1 or margin <= 0:
        return a
    top1 = float(top1.group(1))
    if r.get("autotune_kernel"):
        t = [float(x[2]) for x in CAND.findall(reason) if x[0] == r["autotune_kernel"] and x[1] == r["autotune_knobs"]]
    else:
        won = re.match(r"cuBLASLt algorithm (\d+) won", reason)
        algos = re.search(r"algorithms? 1(?:-\d+)?: ([^)]*)\)", reason)
        if not won or not algos:
            return a
        times = [float(x.split()[0]) if x.strip() != "failed" else float("inf") for x in algos.group(1).split(", ")]
        t = [times[int(won.group(1)) - 1]]
    return 1.0 if t and min(t) > top1 * (1 - margin) else a


def gmean(xs):
    xs = [x for x in xs if x > 0]
    return math.exp(sum(map(math.log, xs)) / len(xs)) if xs else float("nan")


def regime(m):
    return "M<=64" if m <= 64 else ("M 65-2047" if m < 2048 else "M>=2048")


def summarize(rows, margin=0.0):
    out = {"n": 0}
    by = collections.defaultdict(list)
    sel, low = [], []
    for r in rows:
        if r.get("error") or not r.get("autotune_vs_cublas"):
            continue
        a = replay(r, margin)
        by["all"].append(a); by[regime(int(r["m"]))].append(a)
        sel.append(float(r["select_vs_cublas"]))
        if a < 0.98:
            low.append(f"{r['layout']} {r['m']}x{r['n']}x{r['k']} {a:.3f}")
    out["n"] = len(by["all"])
    for k, v in by.items():
        out[k] = gmean(v)
    out["select"] = gmean(sel)
    out["below"] = low
    return out


def config(s):
    rt = s.get("runtime", {})
    top = s.get("bundle_top") or rt.get("bundle_top") or "?"
    return f"bundle top {top}, autotune_top {rt.get('autotune_top')}, lt_algos {rt.get('autotune_lt_algos')}, rounds {rt.get('autotune_rounds')}"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("runs", nargs="+")
    ap.add_argument("--md", help="also write the tables as Markdown here")
    ap.add_argument("--margin", type=float, action="append", default=[], help="replay with this keep-the-top-1 margin")
    a = ap.parse_args()
    per_run, pooled, seen, raw = [], collections.defaultdict(list), set(), []
    for spec in a.runs:
        label, path = spec.split("=", 1) if "=" in spec else (os.path.basename(spec), spec)
        if not os.path.exists(path):
            sys.exit(f"autotune_ab.py: {path}: no such file or directory")
        for name, rows, s in runs_of(path):
            if (label, name) in seen:
                continue
            seen.add((label, name))
            raw.append((label, rows, s))
            sm = summarize(rows)
            cfg = config(s)
            per_run.append((label, name, cfg, sm))
            pooled[(label, cfg)].append(sm)
    cols = ["all", "M<=64", "M 65-2047", "M>=2048"]
    lines = ["| where | configuration | runs | n | autotune / cuBLASLt | " + " | ".join(cols[1:]) + " | below 0.98 (per run) | select |",
             "| --- | --- | --- | --- | --- | " + " | ".join("---" for _ in cols[1:]) + " | --- | --- |"]
    for (label, cfg), sms in sorted(pooled.items()):
        g = {c: gmean([sm[c] for sm in sms if c in sm]) for c in cols}
        lines.append(f"| {label} | {cfg} | {len(sms)} | {sms[0]['n']} | {g['all']:.4f} | " +
                     " | ".join(f"{g[c]:.4f}" for c in cols[1:]) +
                     f" | {sum(len(sm['below']) for sm in sms) / len(sms):.1f} | {gmean([sm['select'] for sm in sms]):.4f} |")
    lines += ["", "| where | run | configuration | autotune / cuBLASLt | below 0.98 |", "| --- | --- | --- | --- | --- |"]
    for label, name, cfg, sm in per_run:
        lines.append(f"| {label} | {name} | {cfg} | {sm['all']:.4f} | {'; '.join(sm['below']) or '-'} |")
    for margin in a.margin:
        pm = collections.defaultdict(list)
        for label, rows, s in raw:
            pm[(label, config(s))].append(summarize(rows, margin))
        lines += ["", f"Replayed with a {margin:g} margin for the top-1 (--margin):", "",
                  "| where | configuration | runs | autotune / cuBLASLt | below 0.98 (per run) |", "| --- | --- | --- | --- | --- |"]
        for (label, cfg), sms in sorted(pm.items()):
            lines.append(f"| {label} | {cfg} | {len(sms)} | {gmean([sm['all'] for sm in sms]):.4f} | "
                         f"{sum(len(sm['below']) for sm in sms) / len(sms):.1f} |")
        lines.append(f"| all | | {sum(len(v) for v in pm.values())} | {gmean([sm['all'] for v in pm.values() for sm in v]):.4f} | "
                     f"{sum(len(sm['below']) for v in pm.values() for sm in v)} in all |")
    text = "\n".join(lines) + "\n"
    print(text, end="")
    if a.md:
        cmd = " ".join(["python3", "scripts/analysis/autotune_ab.py"] + sys.argv[1:])
        open(a.md, "w").write("# Autotune settings A/B on the H200\n\nGenerated by `" + cmd + "` from runs of "
                              "`scripts/device/runtime_check.sh` / `scripts/device/autotune_ab.sh` (ratios: cuBLASLt's heuristic "
                              "top-1 time / the mode's time in the steady-state bench, > 1 is faster; `where` names the machine "
                              "and the problem subset).\n\n" + text)


if __name__ == "__main__":
    main()
