"""scripts/device/python_check.py's --shapes cases (no torch, no GPU): each runtime problem of the CSV
becomes the PyTorch product that cks.torch maps back onto exactly that problem, and a bad layout is one
clear error."""

from __future__ import annotations

import importlib.util
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
spec = importlib.util.spec_from_file_location("python_check", ROOT / "scripts/device/python_check.py")
pc = importlib.util.module_from_spec(spec)
spec.loader.exec_module(pc)


def test_shape_cases_map_back_onto_their_runtime_problems(tmp_path: pathlib.Path) -> None:
    f = tmp_path / "shapes.csv"
    problems = [(128, 6144, 4096, "tn"), (8, 16384, 8192, "nn"), (2048, 1024, 512, "nt"), (64, 256, 1024, "tt")]
    f.write_text("m,n,k,layout\n" + "".join(f"{m},{n},{k},{l}\n" for m, n, k, l in problems))
    cases = pc.shape_cases(str(f))
    assert [pc.runtime_problem(c) for c in cases] == problems
    tn = cases[0]  # tn is x @ w.t(): torch's M is the runtime's N
    assert (tn.m, tn.n, tn.k, tn.a_t, tn.b_t) == (6144, 128, 4096, False, True)


def test_a_runtime_problem_with_m_1_comes_back_as_a_at_v(tmp_path: pathlib.Path) -> None:
    # (1, N, K) is torch's a (N x K) @ v (K x 1), which cks.torch runs as the runtime's (N, 1, K):
    # the kernels need the runtime's M in multiples of 8, and there it is N.
    f = tmp_path / "shapes.csv"
    f.write_text("m,n,k,layout\n1,6144,4096,tn\n1,4096,1024,nn\n1,4096,1024,nt\n")
    assert [pc.runtime_problem(c) for c in pc.shape_cases(str(f))] == [
        (6144, 1, 4096, "tn"), (4096, 1, 1024, "tn"), (4096, 1, 1024, "nn")]


def test_a_bad_layout_is_one_error(tmp_path: pathlib.Path) -> None:
    f = tmp_path / "shapes.csv"
    f.write_text("m,n,k,layout\n8,8,8,tx\n")
    with pytest.raises(SystemExit, match=r"layout 'tx' \(expected tn, nt, nn or tt\)"):
        pc.shape_cases(str(f))


def test_paired_ratio_cancels_a_clock_change_between_rounds() -> None:
    # Round 2 ran ~8 % slower for both (the GPU's clock moved): the ratio of the medians mixes rounds,
    # the per-round ratios do not.
    torch_us = [100.0, 108.0, 100.0, 108.0, 100.0]
    cks_us = [98.0, 105.8, 98.0, 105.8, 98.0]
    med, q1, q3 = pc.paired_ratio(torch_us, cks_us)
    assert med == pytest.approx(100.0 / 98.0, rel=1e-3)
    assert q1 <= med <= q3
    with pytest.raises(ValueError, match="same"):
        pc.paired_ratio([1.0, 2.0], [1.0])


def test_shapes_summary_reports_paired_ratios_and_what_lies_beyond_the_noise() -> None:
    rows = [
        {"runtime_problem": "8x4096x4096 tn", "torch_over_cks": 0.95, "torch_over_cks_paired": 0.97,
         "paired_q1": 0.93, "paired_q3": 1.01},
        {"runtime_problem": "4096x4096x4096 tn", "torch_over_cks": 0.96, "torch_over_cks_paired": 0.96,
         "paired_q1": 0.955, "paired_q3": 0.965},
        {"runtime_problem": "128x4096x4096 tn", "torch_over_cks": 1.10, "torch_over_cks_paired": 1.08,
         "paired_q1": 1.05, "paired_q3": 1.10},
    ]
    out = pc.shapes_summary(rows)
    assert out["shapes_cases"] == 3
    assert [p[0] for p in out["shapes_below_0.98_paired"]] == ["4096x4096x4096 tn", "8x4096x4096 tn"]
    assert [p[0] for p in out["shapes_below_0.98_beyond_noise"]] == ["4096x4096x4096 tn"]
    assert out["shapes_geomean_paired_m>=2048"] == pytest.approx(0.96)
    # Rows of older checks (no paired ratio) still summarize.
    old = pc.shapes_summary([{k: v for k, v in r.items() if k == "runtime_problem" or k == "torch_over_cks"} for r in rows])
    assert "shapes_geomean_paired" not in old and out["shapes_geomean_torch_over_cks"] == old["shapes_geomean_torch_over_cks"]
