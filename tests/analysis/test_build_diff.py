"""Two builds of the report compared file by file (analysis/report/build_diff.py, `mwlab
compare-builds`): equal builds pass, and a changed number, table cell or plotted point is
named."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd

from analysis.report import figures
from analysis.report.build_diff import diff_builds

ROOT = Path(__file__).resolve().parents[2]


def build(root: Path, value: float = 1.5, cell: int = 3, point: float = 2.0) -> Path:
    (root / "paper" / "r2018").mkdir(parents=True)
    (root / "data").mkdir()
    (root / "paper" / "numbers.tex").write_text(f"\\newcommand{{\\X}}{{{value}}}\n% end\n")
    pd.DataFrame({"a": [1, 2, cell], "b": ["x", "y", "z"]}).to_parquet(root / "data" / "t.parquet")
    (root / "data" / "findings.json").write_text(json.dumps({"findings": [{"id": "f", "v": 1}]}))
    fig, axes = figures.figure()
    axes[0][0].plot([0, 1, 2], [1.0, point, 3.0])
    figures.save(fig, root / "paper" / "r2018" / "fig.pdf")
    (root / "paper" / "report.log").write_text(f"built at {time.time()}\n")
    return root


def test_builds_from_the_same_data_are_identical_though_their_pdfs_bytes_differ(
    tmp_path: Path,
) -> None:
    first = build(tmp_path / "a")
    time.sleep(1.1)  # a PDF records its creation time to the second
    second = build(tmp_path / "b")
    fig = Path("paper/r2018/fig.pdf")
    assert (first / fig).read_bytes() != (second / fig).read_bytes()
    assert diff_builds(first, second) == []


def test_a_changed_number_cell_or_file_is_named(tmp_path: Path) -> None:
    first = build(tmp_path / "a")
    second = build(tmp_path / "b", value=1.6, cell=4)
    (second / "paper" / "extra.tex").write_text("")
    found = {d.path: d.what for d in diff_builds(first, second)}
    assert found.keys() == {"paper/numbers.tex", "data/t.parquet", "paper/extra.tex"}
    assert found["paper/numbers.tex"].startswith("line 1:")
    assert "only in" in found["paper/extra.tex"]


def test_a_moved_point_in_a_figure_is_named(tmp_path: Path) -> None:
    found = diff_builds(build(tmp_path / "a"), build(tmp_path / "b", point=2.5))
    assert [d.path for d in found] == ["paper/r2018/fig.pdf"]
    assert "differs as a picture" in found[0].what


def test_the_command_exits_1_and_lists_what_differs(tmp_path: Path) -> None:
    first, second = build(tmp_path / "a"), build(tmp_path / "b", value=2.5)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-m", "mwlab", "compare-builds", str(first), str(second)],
        cwd=ROOT, capture_output=True, text=True, check=False, env=env,
    )  # fmt: skip
    assert done.returncode == 1
    assert "paper/numbers.tex: line 1" in done.stdout
    bad = subprocess.run(
        [sys.executable, "-m", "mwlab", "compare-builds", str(first), str(tmp_path)],
        cwd=ROOT, capture_output=True, text=True, check=False, env=env,
    )  # fmt: skip
    assert bad.returncode == 1 and "not a build" in bad.stderr
