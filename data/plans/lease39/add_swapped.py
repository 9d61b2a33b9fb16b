#!/usr/bin/env python3
"""Adds the real swapped kernels to lease 39's plan, beside the proxy.

usage: add_swapped.py PLAN_IN CATALOGUE_CSV PLAN_OUT [TWINS_CSV]

The proxy groups (set swap, base problem (N, M, K) in layout L' = swap(L)) measure catalogue
kernels of L' on the transposed problem. A swapped kernel of layout L (KernelDesc::swapped,
docs/catalogue.md "Swapped kernels") runs exactly that kernel's mainloop on the original problem,
writing D^T row-major, i.e. the caller's column-major D. This script adds, to every repetition of
each original group (base set eval or family, base problem (M, N, K, L)), the swapped twins of the
candidates of the same repetition of its proxy group, with the same knobs. So the original group
measures its own picks, cuBLAS and the real swapped kernels interleaved in one stretch: like with like.

CATALOGUE_CSV: `cks catalogue list --layout L' --format csv` of every L' the proxies use (the
columns id and canonical). A twin's canonical text is its kernel's with the layout swapped and
"+swap" appended; its ID is "k" + 16 hex digits of FNV-1a 64 of that text (KernelDesc::id()).
TWINS_CSV (optional): the swapped kernels added (id, canonical, proxy), read_swapped.py's input.
"""
import csv
import json
import sys

SWAP = {"tn": "tn", "nt": "nt", "nn": "tt", "tt": "nn"}


def fnv1a64(text: str) -> int:
    h = 0xCBF29CE484222325
    for b in text.encode():
        h = ((h ^ b) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return h


def twin(canonical: str) -> tuple[str, str]:
    head = "sm90_bf16_"
    if not canonical.startswith(head) or canonical.endswith("+swap"):
        raise SystemExit(f"add_swapped.py: not an unswapped kernel: {canonical}")
    layout, rest = canonical[len(head):].split("_", 1)
    text = f"{head}{SWAP[layout]}_{rest}+swap"
    return f"k{fnv1a64(text):016x}", text


def main() -> None:
    if len(sys.argv) not in (4, 5):
        raise SystemExit(__doc__.strip().splitlines()[2])
    lines = open(sys.argv[1]).read().splitlines()
    header, rows = json.loads(lines[0]), [json.loads(l) for l in lines[1:]]
    canon = {}
    for path in sys.argv[2].split(","):
        canon.update({r["id"]: r["canonical"] for r in csv.DictReader(open(path))})
    # Proxy groups by (original problem, rep): the proxy of (M, N, K, L) is (N, M, K, swap(L)).
    proxies = {}
    for r in rows:
        g = r["group"]
        if g["tags"].get("base_set") == "swap":
            orig = (g["n"], g["m"], g["k"], SWAP[g["layout"]], g["tags"]["rep"])
            proxies[orig] = r["candidates"]
    added, groups, twins = 0, 0, {}
    for r in rows:
        g = r["group"]
        if g["tags"].get("base_set") == "swap":
            continue
        cands = proxies.get((g["m"], g["n"], g["k"], g["layout"], g["tags"]["rep"]))
        if cands is None:
            continue
        have = {tuple(c) for c in r["candidates"]}
        for kernel, knobs in cands:
            if kernel not in canon:
                raise SystemExit(f"add_swapped.py: kernel {kernel} is not in {sys.argv[2]}")
            tid, text = twin(canon[kernel])
            twins[tid] = (text, kernel)
            if (tid, knobs) not in have:
                r["candidates"].append([tid, knobs])
                have.add((tid, knobs))
                added += 1
        groups += 1
    header.update(candidates=sum(len(r["candidates"]) for r in rows),
                  kernels=len({c[0] for r in rows for c in r["candidates"]}),
                  note=header.get("note", "") + "; the originals also measure the real swapped kernels "
                  "(the proxies' kernels' twins, add_swapped.py)")
    with open(sys.argv[3], "w") as f:
        f.write(json.dumps(header) + "\n")
        f.writelines(json.dumps(r) + "\n" for r in rows)
    if len(sys.argv) == 5:
        with open(sys.argv[4], "w") as f:
            f.write("id,canonical,proxy\n")
            f.writelines(f"{t},{text},{proxy}\n" for t, (text, proxy) in sorted(twins.items()))
    print(f"{added} swapped candidates of {len(twins)} swapped kernels added to {groups} original groups; "
          f"{header['candidates']} candidates, {header['kernels']} kernels", file=sys.stderr)


if __name__ == "__main__":
    main()
