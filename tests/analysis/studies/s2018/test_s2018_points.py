"""What the 2018 report scripts read (analysis.studies.s2018.points), on small files."""

from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd
import pytest

from analysis.studies.s2018 import points as readers


@pytest.fixture
def family(tmp_path: Path) -> tuple[str, str]:
    """A family `fam` with points p1 (kept) and p2 (its only run excluded), and the
    validation table; returns both paths."""
    table = tmp_path / "data" / "fam" / "points.parquet"
    table.parent.mkdir(parents=True)
    pd.DataFrame(
        {
            "point": ["p1", "p1", "p2", "p2"],
            "type": ["all", "get", "all", "get"],
            "throughput_ops_mean": [1.0, 2.0, 3.0, 4.0],
        }
    ).to_parquet(table)
    validation = tmp_path / "data" / "validation.parquet"
    pd.DataFrame(
        {
            "family": ["fam", "fam", "other"],
            "run": ["fam/p1/1", "fam/p2/1", "other/p1/1"],
            "excluded": [False, True, True],
        }
    ).to_parquet(validation)
    return str(table), str(validation)


def test_points_keeps_one_request_type_of_the_points_the_validation_kept(
    family: tuple[str, str],
) -> None:
    table, validation = family
    kept = readers.points(table, validation=validation)
    assert kept["point"].tolist() == ["p1"]
    assert kept["throughput_ops_mean"].tolist() == [1.0]
    gets = readers.points(table, kind="get", validation=validation)
    assert gets["throughput_ops_mean"].tolist() == [2.0]


def test_points_without_validation_keeps_every_point(family: tuple[str, str]) -> None:
    table, _ = family
    assert readers.points(table)["point"].tolist() == ["p1", "p2"]


def test_usable_takes_the_family_from_the_table_path(family: tuple[str, str]) -> None:
    table, validation = family
    frame = pd.read_parquet(table)
    assert set(readers.usable(frame, table, validation)["point"]) == {"p1"}
    assert readers.usable(frame, table, None) is frame


def test_reference_reads_the_yaml_mapping(tmp_path: Path) -> None:
    path = tmp_path / "reference.yaml"
    path.write_text("writes:\n  64: {mw_x: 11469.24}\n")
    assert readers.reference(str(path)) == {"writes": {64: {"mw_x": 11469.24}}}


def test_log_to_sends_stderr_to_the_log(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "stderr", sys.stderr)  # restored after the test
    log = tmp_path / "script.log"
    readers.log_to(str(log))
    print("a warning", file=sys.stderr)
    sys.stderr.close()
    assert log.read_text() == "a warning\n"
