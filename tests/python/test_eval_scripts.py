"""scripts/eval/swap_pairs.py and scripts/eval/clock_split.py (lease 39's and the llm set's
readings) on small made-up inputs: what they pair, split and print, and one clear error."""

from __future__ import annotations

import pathlib
import sqlite3
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]


def run(script: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(ROOT / "scripts/eval" / script), *args], capture_output=True, text=True)


def test_swap_pairs_pairs_each_swapped_group_with_its_original(tmp_path: pathlib.Path) -> None:
    f = tmp_path / "per_group.csv"
    f.write_text(
        "base_key,base_set,layout,m,n,k,best_tflops,cublas_tflops\n"
        "136x4096x4096_tn,family,tn,136,4096,4096,300,315\n"
        "4096x136x4096_tn,swap,tn,4096,136,4096,330,316\n"
        "160x256x8128_nn,eval,nn,160,256,8128,50,78\n"
        "256x160x8128_tt,swap,tt,256,160,8128,70,77\n"  # nn swaps to tt
        "999x8x64_tn,swap,tn,999,8,64,1,1\n"  # its original is not in the file: left out
    )
    r = run("swap_pairs.py", str(f))
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[2] == "| 136x4096x4096_tn | family | 0.952 | 1.048 | 1.100 | 1.003 |"
    assert lines[3] == "| 160x256x8128_nn | eval | 0.641 | 0.897 | 1.400 | 0.987 |"
    assert "2 pairs:" in r.stdout and "better by > 2 % in 2" in r.stdout


def test_swap_pairs_without_a_pair_is_one_error(tmp_path: pathlib.Path) -> None:
    f = tmp_path / "per_group.csv"
    f.write_text("base_key,base_set,layout,m,n,k,best_tflops,cublas_tflops\n8x8x8_tn,eval,tn,8,8,8,1,1\n")
    r = run("swap_pairs.py", str(f))
    assert r.returncode != 0 and "no swapped group" in r.stderr


def test_clock_split_sorts_groups_by_run_and_clock(tmp_path: pathlib.Path) -> None:
    reg = tmp_path / "r.db"
    db = sqlite3.connect(reg)
    db.execute("create table measurements(group_key text, kernel_id text, knobs text, status text, tflops real, "
                "sm_clock_mhz real, run_uuid text)")
    rows = [  # group, kernel, knobs, tflops, clock, run
        ("g1", "kp", "r=m", 90, 1980, "a"), ("g1", "kb", "r=n", 100, 1975, "a"),  # one run, clocks match
        ("g2", "kp", "r=m", 80, 1500, "a"), ("g2", "kb", "r=n", 100, 1980, "b"),  # two runs, apart
        ("g3", "kp", "r=m", 99, 1980, "a"), ("g3", "kb", "r=n", 100, 1700, "a"),  # one run, apart
    ]
    db.executemany("insert into measurements values (?, ?, ?, 'ok', ?, ?, ?)",
                   [(g, k, kn, t, c, run) for g, k, kn, t, c, run in rows])
    db.commit()
    f = tmp_path / "per_group.csv"
    f.write_text("method,group,covered,regret,pick_kernel,pick_knobs,best_kernel,best_knobs\n" +
                 "".join(f"xgboost real pick (deployed),{g},1,{r},kp,r=m,kb,r=n\n" for g, r in (("g1", 0.1), ("g2", 0.2), ("g3", 0.01))) +
                 "xgboost,g1,1,0.5,kp,r=m,kb,r=n\n")  # another method's row: not counted
    r = run("clock_split.py", str(reg), str(f))
    assert r.returncode == 0, r.stderr
    table = {line.split(" | ")[0].lstrip("| "): line for line in r.stdout.splitlines()[2:]}
    assert table["all"].startswith("| all | 3 | 10.33 %")
    assert table["one run, clocks within 30 MHz"].startswith("| one run, clocks within 30 MHz | 1 | 10.00 %")
    assert table["two runs, clocks > 30 MHz apart"].startswith("| two runs, clocks > 30 MHz apart | 1 | 20.00 %")
    assert table["one run, clocks > 30 MHz apart"].startswith("| one run, clocks > 30 MHz apart | 1 | 1.00 %")
    r = run("clock_split.py", str(reg), str(f), "no such method")
    assert r.returncode != 0 and "no covered rows of method 'no such method'" in r.stderr


def test_add_swapped_names_twins_as_the_catalogue_does_and_adds_them_per_rep(tmp_path: pathlib.Path) -> None:
    """data/plans/lease39/add_swapped.py: the twin's ID is KernelDesc::id() of its canonical text (checked
    against `cks catalogue show` in session 30), and each original repetition gets its proxy's twins."""
    import importlib.util
    import json

    script = ROOT / "data/plans/lease39/add_swapped.py"
    spec = importlib.util.spec_from_file_location("add_swapped", script)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    assert mod.twin("sm90_bf16_tt_128x144x64_1x1x1_s0_pingpong+tma_ws+persistent") == (
        "k73dd8ea4a563102d", "sm90_bf16_nn_128x144x64_1x1x1_s0_pingpong+tma_ws+persistent+swap")
    cat = tmp_path / "cat.csv"
    cat.write_text("id,canonical\nkaaa,sm90_bf16_tt_128x144x64_1x1x1_s0_pingpong+tma_ws+persistent\n")

    def group(m, n, layout, base_set, rep, cands):
        tags = {"base_set": base_set, "rep": rep}
        return {"group": {"key": f"{m}x{n}~r{rep}", "m": m, "n": n, "k": 64, "layout": layout, "tags": tags},
                "candidates": cands}

    rows = [group(136, 4096, "nn", "family", 1, [["kbbb", "r=h,s=1,d=h,k=1"]]),
            group(136, 4096, "nn", "family", 2, [["kbbb", "r=h,s=1,d=h,k=1"]]),
            group(4096, 136, "tt", "swap", 1, [["kaaa", "r=m,s=2,d=h,k=1"]]),
            group(4096, 136, "tt", "swap", 2, [["kaaa", "r=n,s=1,d=h,k=1"]])]
    plan, out, twins = tmp_path / "p.jsonl", tmp_path / "o.jsonl", tmp_path / "t.csv"
    plan.write_text(json.dumps({"plan_version": 1}) + "\n" + "".join(json.dumps(r) + "\n" for r in rows))
    r = subprocess.run([sys.executable, str(script), str(plan), str(cat), str(out), str(twins)],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    got = [json.loads(l) for l in out.read_text().splitlines()[1:]]
    assert got[0]["candidates"] == [["kbbb", "r=h,s=1,d=h,k=1"], ["k73dd8ea4a563102d", "r=m,s=2,d=h,k=1"]]
    assert got[1]["candidates"] == [["kbbb", "r=h,s=1,d=h,k=1"], ["k73dd8ea4a563102d", "r=n,s=1,d=h,k=1"]]
    assert got[2]["candidates"] == rows[2]["candidates"]  # the proxies are unchanged
    assert twins.read_text().splitlines()[1].startswith("k73dd8ea4a563102d,sm90_bf16_nn_")
