"""cks._runtime (libcks_runtime.so) without a GPU: options, modes, the query, and one line from CUDA.

Skipped when the package was built without the CUDA toolkit (no runtime)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

runtime = pytest.importorskip("cks._runtime", reason="built without the GEMM runtime (no CUDA toolkit)")


def make(tmp_path: Path, **options: object) -> runtime.Runtime:
    return runtime.Runtime(kernel_cache=str(tmp_path / "kernels"), tuning_file=str(tmp_path / "tuning.csv"), **options)


def test_options_modes_and_query(tmp_path: Path) -> None:
    rt = make(tmp_path, mode="cublas", compile_on_miss=False, strict=True)
    assert rt.mode == "cublas"
    described = json.loads(rt.describe())
    assert (described["mode"], described["compile_on_miss"], described["strict"]) == ("cublas", False, True)
    assert described["kernel_cache"] == str(tmp_path / "kernels")
    rt.mode = "select"
    info = rt.query(4096, 4096, 4096, "tn")
    assert (info["source"], info["mode"], info["calls"]) == ("none", "select", 0)
    assert rt.wait_compiles(0.0) == 0


def test_host_cost_option(tmp_path: Path) -> None:
    assert json.loads(make(tmp_path).describe())["autotune_host_us"] == 0
    assert json.loads(make(tmp_path, autotune_host_us=8).describe())["autotune_host_us"] == 8
    assert json.loads(make(tmp_path).describe())["autotune_lt_margin_pct"] == 0
    assert json.loads(make(tmp_path, autotune_lt_margin_pct=3, autotune_lt_margin_us=1).describe())["autotune_lt_margin_us"] == 1
    with pytest.raises(RuntimeError, match=r"^runtime option autotune_lt_margin_pct must be in \[0, 100\]"):
        make(tmp_path, autotune_lt_margin_pct=200)
    with pytest.raises(RuntimeError, match=r"^runtime option autotune_host_us must be in \[0, 1000\]"):
        make(tmp_path, autotune_host_us=5000)


def test_nondeterministic_option(tmp_path: Path) -> None:
    assert json.loads(make(tmp_path).describe())["nondeterministic"] is False
    assert json.loads(make(tmp_path, nondeterministic=True).describe())["nondeterministic"] is True


def test_errors_are_one_line(tmp_path: Path) -> None:
    with pytest.raises(RuntimeError, match=r"^unknown mode 'fastest' \(expected select, autotune or cublas\)$"):
        make(tmp_path, mode="fastest")
    rt = make(tmp_path, mode="cublas")
    with pytest.raises(RuntimeError, match="^unknown mode"):
        rt.mode = "fastest"
    with pytest.raises(RuntimeError, match="^A must not be NULL$"):
        rt.gemm(64, 64, 64, "tn", 0, 16, 16)
    with pytest.raises(RuntimeError, match="unknown layout 'qq'"):
        rt.gemm(64, 64, 64, "qq", 16, 16, 16)
    if Path("/dev/nvidiactl").exists():
        return  # a GPU: the GEMM below would run on bogus addresses
    # No GPU here: the first GEMM asks CUDA for the device and fails with CUDA's line.
    with pytest.raises(RuntimeError) as e:
        rt.gemm(64, 64, 64, "tn", 16, 16, 16)
    assert "\n" not in str(e.value) and str(e.value).startswith("cuda")
