#!/usr/bin/env python3
"""nvMatmulHeuristics bridge for `cks eval` (the nvMMH baseline).

Reads a JSON request on stdin:
  {"gpu": "H200_SXM", "count": 16, "problems": [{"key": "...", "m": M, "n": N, "k": K, "layout": "tn"}]}
and prints one JSON object on stdout:
  {"available": true, "version": "...", "results": {"<key>": [{"tile": [m, n, k], "cluster": [m, n],
   "stages": s, "split_k": s, "swizzle": s, "raster": "along_m"|"along_n"}, ...]}}
or {"available": false, "reason": "..."} when the package (PyPI nvidia-matmul-heuristics,
proprietary, installed by scripts/setup.sh, never committed) or its GPU description is missing.

Queried as CUTLASS's own integration does (cutlass_library/heuristics_provider.py): CUTLASS3
target, PERF_MODEL_BASED_AUTO_TUNING, BF16 inputs/output with FP32 compute ("TST"), layout
"<A><B>_COL_MAJOR" (D is column-major). Suggestions that differ only in fields CUTLASS 3 does
not use (warp tile) are merged, keeping the first.
"""
import json
import sys


def unavailable(reason):
    print(json.dumps({"available": False, "reason": reason}))
    sys.exit(0)


def main():
    request = json.load(sys.stdin)
    try:
        import nvMatmulHeuristics as nvmmh
    except Exception as e:  # ImportError, or a broken install
        unavailable(f"python package nvidia-matmul-heuristics not importable ({type(e).__name__}: {e})")
    try:
        gpu = nvmmh.NvMatmulHeuristicsNvidiaGpu[request.get("gpu", "H200_SXM")]
        target = nvmmh.NvMatmulHeuristicsTarget["CUTLASS3"]
        lh = nvmmh.NvMatmulHeuristicsInterfaceEx(
            backend=target,
            flags=nvmmh.NvMatmulHeuristicsFlags.PERF_MODEL_BASED_AUTO_TUNING,
            load_discovery_implicitly=True,
            gpu=gpu,
        )
        backend = lh.createBackend(target)
    except Exception as e:
        unavailable(f"nvMatmulHeuristics cannot describe {request.get('gpu')}: {type(e).__name__}: {e}")

    count = int(request.get("count", 16))
    results = {}
    for p in request["problems"]:
        layout = nvmmh.NvMatmulHeuristicsMatmulLayout[p["layout"].upper() + "_COL_MAJOR"]
        problem = lh.makeNvMatmulHeuristicsProblem(p["m"], p["n"], p["k"], layout, 1)
        # Ask for more than needed: merged duplicates would otherwise shorten the list.
        configs = lh.getEx(problem, 2 * count, backend, precision="TST")
        out, seen = [], set()
        for c in configs:
            k = c["kernel"]
            item = {
                "tile": [k.cta_tile_m, k.cta_tile_n, k.cta_tile_k],
                "cluster": [k.cluster_m, k.cluster_n],
                "stages": k.stages,
                "split_k": k.split_k,
                "swizzle": k.swizzle_factor,
                "raster": "along_m" if k.cta_order == 0 else "along_n",
            }
            ident = json.dumps([item["tile"], item["cluster"], item["stages"], item["split_k"]])
            if ident in seen:
                continue
            seen.add(ident)
            out.append(item)
            if len(out) == count:
                break
        results[p["key"]] = out
    version = getattr(nvmmh, "__version__", None)
    if version is None:
        try:
            from importlib.metadata import version as pkg_version
            version = pkg_version("nvidia-matmul-heuristics")
        except Exception:
            version = "unknown"
    print(json.dumps({"available": True, "version": version, "results": results}))


if __name__ == "__main__":
    main()
