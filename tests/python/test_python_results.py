"""scripts/analysis/python_results.py on lease 23's committed Python checks: the doc's numbers are the
checks' own summary numbers, the plot is written, and a folder without a check is one clear error."""

from __future__ import annotations

import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts/analysis/python_results.py"
CHECKS = ROOT / "data/device_checks"


def test_the_doc_carries_the_checks_geomeans_and_the_plot_is_written(tmp_path: pathlib.Path) -> None:
    pytest.importorskip("matplotlib")
    out = tmp_path / "python-results.md"
    subprocess.run([sys.executable, str(SCRIPT), str(CHECKS / "20261203_lease23_python_select"),
                    str(CHECKS / "20261203_lease23_python_autotune"), str(out), str(tmp_path / "png")], check=True)
    text = out.read_text()
    # python_check.json's own shapes_geomean_torch_over_cks: 1.1297 (select), 1.1392 (autotune).
    assert "| all | 225, **1.130**, 8 | 225, **1.139**, 16 |" in text
    assert (tmp_path / "png" / "python_vs_torch.png").stat().st_size > 10_000


def test_a_folder_without_a_check_is_one_error(tmp_path: pathlib.Path) -> None:
    pytest.importorskip("matplotlib")
    r = subprocess.run([sys.executable, str(SCRIPT), str(tmp_path), str(tmp_path), str(tmp_path / "x.md"), str(tmp_path)],
                       capture_output=True, text=True)
    assert r.returncode != 0
    assert "no python_check.json[.xz] in" in r.stderr
