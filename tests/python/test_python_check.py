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


def test_a_bad_layout_is_one_error(tmp_path: pathlib.Path) -> None:
    f = tmp_path / "shapes.csv"
    f.write_text("m,n,k,layout\n8,8,8,tx\n")
    with pytest.raises(SystemExit, match=r"layout 'tx' \(expected tn, nt, nn or tt\)"):
        pc.shape_cases(str(f))
