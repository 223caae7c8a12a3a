"""Measurements in the study's time, and the agreement of two scale factors."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from analysis.scaling import add_study_columns, agreement


def test_study_columns_divide_throughput_and_multiply_times_by_the_scale() -> None:
    runs = pd.DataFrame(
        {"scale": [0.04, None], "throughput_ops": [400.0, 400.0],
         "response_us_mean": [250_000.0, 250_000.0]}
    )  # fmt: skip
    out = add_study_columns(runs)
    assert out["throughput_study"].tolist() == pytest.approx([10000.0, 400.0])
    assert out["response_ms_study"].tolist() == pytest.approx([10.0, 250.0])
    points = pd.DataFrame({"throughput_ops_ci_low": [40.0], "response_us_mean_mean": [5e4]})
    out = add_study_columns(points)  # no scale recorded: s = 1
    assert out["scale"].tolist() == [1.0]
    assert out["throughput_study_ci_low"].tolist() == [40.0]
    assert out["response_ms_study_mean"].tolist() == [50.0]


def _run(level: str, scale: float, x: float, r_ms: float, status: str = "ok") -> dict:
    return {"level_scale": level, "level_workload": "write-only", "side": "client",
            "type": "all", "scale": scale, "status": status,
            "throughput_ops": x, "response_us_mean": r_ms * 1000}  # fmt: skip


def test_agreement_is_the_ratio_of_rescaled_means_with_an_interval() -> None:
    runs = add_study_columns(
        pd.DataFrame(
            [
                _run("s", 0.04, 400, 250),
                _run("s", 0.04, 420, 240),
                _run("half", 0.02, 190, 520),
                _run("half", 0.02, 210, 480),
                _run("half", 0.02, 1, 1, status="failed"),
            ]
        )
    )
    table = agreement(runs)
    assert len(table) == 1
    row = table.iloc[0]
    assert row["other_scale"] == 0.02 and row["repetitions"] == 2
    assert row["throughput_study_reference"] == pytest.approx(10250.0)
    assert row["throughput_study_ratio"] == pytest.approx(10000.0 / 10250.0)
    assert row["response_ms_study_ratio"] == pytest.approx(10.0 / 9.8)
    assert row["throughput_study_ratio_ci_low"] < row["throughput_study_ratio"]
    assert row["throughput_study_ratio"] < row["throughput_study_ratio_ci_high"]


def test_agreement_without_repetitions_has_no_interval() -> None:
    runs = add_study_columns(
        pd.DataFrame([_run("s", 0.04, 400, 250), _run("half", 0.02, 100, 1000)])
    )
    row = agreement(runs).iloc[0]
    assert row["throughput_study_ratio"] == pytest.approx(0.5)
    assert math.isnan(row["throughput_study_ratio_ci_low"])
