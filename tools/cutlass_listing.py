#!/usr/bin/env python3
"""List the BF16 SM90 dense GEMM kernels CUTLASS's own generator emits, for the catalogue cross-check.

Runs cutlass_library (the Python half of the nvidia-cutlass wheel, unpacked by scripts/setup.sh into
third_party/cutlass/python; no GPU needed) exactly as CUTLASS's CMake would at instantiation level
`max`, and writes one compact JSON entry per kernel with the fields `cks catalogue check-cutlass`
maps onto a KernelDesc. The CUDA version must be given: the generator's default (11.0) silently
emits no SM90 kernel.

Kept: GemmKind.Universal3x, A = B = bf16, f32 accumulation, D = bf16 column-major, C = bf16 or void,
A and B alignment 8, TensorOp. Generation takes about 80 s; the C++ side caches the output.

usage: cutlass_listing.py [--cutlass-python DIR] [--level max] [--cuda-version 13.0] OUT.json
"""
import argparse
import json
import os
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LAYOUT_LETTER = {"RowMajor": "t", "ColumnMajor": "n"}


def log(msg):
    print(f"[cutlass_listing] {msg}", file=sys.stderr, flush=True)


def member(enum_value):
    """KernelScheduleType.ScheduleAuto -> ScheduleAuto."""
    return str(enum_value).split(".")[-1]


def generate(cutlass_python, level, cuda_version):
    sys.path.insert(0, cutlass_python)
    from cutlass_library import generator  # noqa: E402 (path set above)
    from cutlass_library.library import DataType, GemmKind, LayoutType, OpcodeClass
    from cutlass_library.manifest import Manifest

    args = generator.define_parser().parse_args([
        "--operations", "gemm", "--architectures", "90a", "--cuda-version", cuda_version,
        "--instantiation-level", level, "--kernels", "*bf16*"])
    manifest = Manifest(args)
    start = time.time()
    log(f"running GenerateSM90 at instantiation level {level}, CUDA {cuda_version} (about 80 s)")
    generator.GenerateSM90(manifest, args.cuda_version)
    log(f"generated in {time.time() - start:.0f} s")

    kernels = []
    for ops_by_kind in manifest.operations.values():
        for ops_by_name in ops_by_kind.values():
            for ops in ops_by_name.values():
                for op in ops:
                    td = op.tile_description
                    keep = (op.gemm_kind == GemmKind.Universal3x
                            and td.math_instruction.opcode_class == OpcodeClass.TensorOp
                            and op.A.element == DataType.bf16 and op.B.element == DataType.bf16
                            and td.math_instruction.element_accumulator == DataType.f32
                            and op.D.element == DataType.bf16 and op.D.layout == LayoutType.ColumnMajor
                            and op.C.element in (DataType.bf16, DataType.void)
                            and op.A.alignment == 8 and op.B.alignment == 8)
                    if not keep:
                        continue
                    kernels.append({
                        "name": op.procedural_name(),
                        "layout": LAYOUT_LETTER[member(op.A.layout)] + LAYOUT_LETTER[member(op.B.layout)],
                        "tile": list(td.threadblock_shape),
                        "cluster": list(td.cluster_shape),
                        "stages": td.stages,
                        "kernel_schedule": member(op.kernel_schedule),
                        "epilogue_schedule": member(op.epilogue_schedule),
                        "tile_scheduler": member(op.tile_scheduler),
                        "c_type": member(op.C.element),
                    })
    kernels.sort(key=lambda k: k["name"])
    return kernels


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("out", help="output JSON path")
    p.add_argument("--cutlass-python", default=os.path.join(ROOT, "third_party", "cutlass", "python"),
                   help="directory holding cutlass_library/ (default: third_party/cutlass/python)")
    p.add_argument("--level", default="max", help="SM90 instantiation level (default: max)")
    p.add_argument("--cuda-version", default="13.0", help="CUDA version the generator assumes (default: 13.0)")
    a = p.parse_args()
    if not os.path.isfile(os.path.join(a.cutlass_python, "cutlass_library", "generator.py")):
        sys.exit(f"cutlass_listing: no cutlass_library in {a.cutlass_python} (run scripts/setup.sh)")
    version_file = os.path.join(os.path.dirname(a.cutlass_python), ".version")
    version = open(version_file).read().strip() if os.path.isfile(version_file) else "unknown"

    kernels = generate(a.cutlass_python, a.level, a.cuda_version)
    listing = {
        "generator": f"cutlass_library {version} GenerateSM90 level={a.level} cuda={a.cuda_version} arch=90a",
        "count": len(kernels),
        "kernels": kernels,
    }
    # Write atomically: a half-written cache would be read as a truncated listing.
    out_dir = os.path.dirname(os.path.abspath(a.out))
    os.makedirs(out_dir, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=out_dir, suffix=".tmp")
    with os.fdopen(fd, "w") as f:
        json.dump(listing, f, separators=(",", ":"))
    os.chmod(tmp, 0o644)  # mkstemp creates 0600
    os.replace(tmp, a.out)
    log(f"wrote {len(kernels)} kernels to {a.out}")


if __name__ == "__main__":
    main()
