"""cks.select and cks.Selector against the CLI (`cks select --format json`), and their errors.

Run by the ctest `python` with PYTHONPATH=build/python and CKS_BIN_DIR=build/bin; no GPU, no torch.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import cks

ROOT = Path(__file__).resolve().parents[2]
CKS = Path(os.environ.get("CKS_BIN_DIR", ROOT / "build" / "bin")) / "cks"

PROBLEMS = [(4096, 4096, 4096, "tn"), (512, 1024, 8192, "nt"), (8, 14336, 4096, "nn"), (256, 120, 2048, "tt")]


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(CKS), "select", *args], capture_output=True, text=True, timeout=300)


def cli_select(m: int, n: int, k: int, layout: str, top: int, *extra: str) -> list[dict[str, object]]:
    run = cli("--m", str(m), "--n", str(n), "--k", str(k), "--layout", layout, "--top", str(top), "--format", "json", *extra)
    assert run.returncode == 0, run.stderr
    return json.loads(run.stdout)


@pytest.mark.parametrize("m,n,k,layout", PROBLEMS)
def test_select_equals_the_cli(m: int, n: int, k: int, layout: str) -> None:
    ours = cks.select(m, n, k, layout, top=5)
    theirs = cli_select(m, n, k, layout, 5)
    assert len(ours) == len(theirs) == 5
    for s, row in zip(ours, theirs):
        assert (s.rank, s.kernel_id, s.knobs_text, s.canonical) == (row["rank"], row["kernel_id"], row["knobs"], row["canonical"])
        assert s.score == pytest.approx(row["score"], rel=1e-9, abs=1e-12)


def test_static_score_equals_the_cli_fallback() -> None:
    ours = cks.Selector(static=True).select(1024, 1024, 1024, "tn", top=3)
    theirs = cli_select(1024, 1024, 1024, "tn", 3, "--fallback", "static")
    assert [(s.kernel_id, s.knobs_text) for s in ours] == [(r["kernel_id"], r["knobs"]) for r in theirs]


def test_results_are_structured() -> None:
    best = cks.select(4096, 4096, 4096)[0]
    assert best.rank == 1 and re.fullmatch(r"k[0-9a-f]{16}", best.kernel_id)
    # The fields agree with the canonical descriptor, e.g. sm90_bf16_tn_128x208x64_2x1x1_s0_pingpong+...
    parts = re.match(r"sm90_bf16_tn_(\d+)x(\d+)x(\d+)_(\d+)x(\d+)x1_s(\d+)_", best.canonical)
    assert parts is not None
    values = tuple(int(v) for v in parts.groups())
    assert best.tile == values[0:3] and best.cluster == values[3:5] and best.stages == values[5]
    short = dict(p.split("=") for p in best.knobs_text.split(","))
    assert best.knobs["swizzle"] == int(short["s"]) and best.knobs["splits"] == int(short["k"])
    assert best.knobs["raster"] in ("heuristic", "along_m", "along_n")
    assert best.knobs["decomposition"] in ("heuristic", "data_parallel", "split_k", "stream_k")
    with pytest.raises(AttributeError):
        best.rank = 2  # type: ignore[misc]
    with pytest.raises(TypeError):
        best.knobs["splits"] = 2  # type: ignore[index]
    assert best == cks.select(4096, 4096, 4096)[0] and hash(best) == hash(cks.select(4096, 4096, 4096)[0])


def test_selector_keeps_its_model() -> None:
    model = cks.data_path("model")
    s = cks.Selector(model)
    assert s.model == model and os.path.isfile(model)
    assert s.select(2048, 2048, 2048, "nn", top=2) == cks.select(2048, 2048, 2048, "nn", top=2)
    assert cks.select(64, 64, 64, top=3) is not cks.select(64, 64, 64, top=3)  # a new list each call


def test_top_beyond_the_first_buffer() -> None:
    # The binding asks the C API for 1024 rows first and grows the buffer while it comes back full.
    many = cks.Selector(static=True).select(1024, 1024, 1024, "tn", top=3000)
    assert [s.rank for s in many] == list(range(1, 3001))
    assert len({(s.kernel_id, s.knobs_text) for s in many}) == 3000
    assert many[:5] == cks.Selector(static=True).select(1024, 1024, 1024, "tn", top=5)


def cli_error(m: object, n: object, k: object, layout: str) -> str:
    run = cli("--m", str(m), "--n", str(n), "--k", str(k), "--layout", layout, "--top", "1")
    assert run.returncode != 0
    return run.stderr.strip().removeprefix("cks: error: ")


@pytest.mark.parametrize(
    "m,n,k,layout",
    [(0, 64, 64, "tn"), (64, 64, 12, "tn"), (64, 12, 64, "tt"), (2**31, 8, 8, "nn"), (-8, 8, 8, "nt"), (64, 64, 64, "xy")],
)
def test_bad_problems_raise_the_cli_message(m: int, n: int, k: int, layout: str) -> None:
    with pytest.raises(ValueError) as e:
        cks.select(m, n, k, layout)
    assert str(e.value) == cli_error(m, n, k, layout)


def test_bad_arguments() -> None:
    with pytest.raises(ValueError, match=r"^M is too large \(got 1180591620717411303424, at most 2\^31-1 = 2147483647\)$"):
        cks.select(2**70, 8, 8)
    with pytest.raises(ValueError, match=r"^top must be >= 1 \(got 0\)$"):
        cks.select(64, 64, 64, top=0)
    for bad in (64.0, True, "64", None):
        with pytest.raises(TypeError, match="^M must be an int"):
            cks.select(bad, 64, 64)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="^layout must be a str"):
        cks.select(64, 64, 64, None)  # type: ignore[arg-type]
    with pytest.raises(RuntimeError, match="^cannot read model file '/nonexistent/model.json'"):
        cks.Selector("/nonexistent/model.json")
    with pytest.raises(ValueError, match="^unknown data file 'weights'"):
        cks.data_path("weights")
    with pytest.raises(ValueError, match="static ranks without a model"):
        cks.Selector("x.json", static=True)


def test_import_needs_neither_torch_nor_cuda() -> None:
    # A fresh interpreter: importing cks and selecting loads neither torch nor the CUDA libraries.
    code = (
        "import sys, cks; cks.select(64, 64, 64, 'tn'); "
        "maps = open('/proc/self/maps').read(); "
        "print('torch' in sys.modules, 'cks._runtime' in sys.modules, 'libcudart' in maps, 'libcublas' in maps)"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    assert run.stdout.split() == ["False", "False", "False", "False"]


def test_version_and_data() -> None:
    assert cks.__version__ == subprocess.run([str(CKS), "--version"], capture_output=True, text=True).stdout.split()[-1]
    assert os.path.isfile(cks.data_path("hw_presets"))


def test_swapped_picks_match_the_cli_and_the_env_turns_them_off() -> None:
    # Both orientations are ranked by default: M = 136 leads with a swapped kernel (tile N 144
    # along M) in cks select and in cks.select alike; $CKS_ORIENTATIONS=own ranks the own layout only.
    ours = cks.select(136, 14336, 5120, "tn", top=2)
    theirs = cli_select(136, 14336, 5120, "tn", 2)
    assert [s.kernel_id for s in ours] == [r["kernel_id"] for r in theirs]
    assert [s.swapped for s in ours] == [bool(r["swapped"]) for r in theirs]
    assert ours[0].swapped and ours[0].canonical.endswith("+swap")
    code = "import cks; print(int(cks.select(136, 14336, 5120, 'tn')[0].swapped))"
    own = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300,
                         env={**os.environ, "CKS_ORIENTATIONS": "own"})
    assert own.returncode == 0 and own.stdout.strip() == "0", own.stderr
    bad = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300,
                         env={**os.environ, "CKS_ORIENTATIONS": "sideways"})
    assert bad.returncode != 0 and "$CKS_ORIENTATIONS: 'sideways' is not own or both" in bad.stderr


def test_sliced_picks_match_the_cli() -> None:
    # The sliced-K rule (on by default): a few-tile, long-K problem leads with a sliced-K kernel.
    ours = cks.select(32, 512, 15232, "tn", top=2)
    theirs = cli_select(32, 512, 15232, "tn", 2)
    assert [(s.kernel_id, s.knobs_text) for s in ours] == [(r["kernel_id"], r["knobs"]) for r in theirs]
    assert [s.sliced for s in ours] == [bool(r["sliced"]) for r in theirs]
    assert ours[0].sliced and not ours[0].swapped and ours[0].knobs_text == "r=m,s=1,d=sk,k=8"
