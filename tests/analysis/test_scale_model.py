"""Measurements in the study's time, and the agreement of two scale factors."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from analysis.scale_model import (
    ScaleError,
    TimeBaseError,
    add_study_columns,
    agreement,
    check,
    failed_points,
    in_study_time,
    rescaled_columns,
    scale_of,
    with_scale,
)


def test_study_columns_divide_throughput_and_multiply_times_by_the_scale() -> None:
    runs = pd.DataFrame(
        {"scale": [0.04, None], "throughput_ops": [400.0, 400.0],
         "response_us_mean": [250_000.0, 250_000.0]}
    )  # fmt: skip
    out = add_study_columns(runs.assign(scale=[0.04, 1.0]))
    assert out["throughput_study"].tolist() == pytest.approx([10000.0, 400.0])
    assert out["response_ms_study"].tolist() == pytest.approx([10.0, 250.0])
    points = pd.DataFrame(
        {"scale": [1.0], "throughput_ops_ci_low": [40.0], "response_us_mean_mean": [5e4]}
    )
    out = add_study_columns(points)  # a point without the scale model: s = 1 by its plan
    assert out["scale"].tolist() == [1.0]
    assert out["throughput_study_ci_low"].tolist() == [40.0]
    assert out["response_ms_study_mean"].tolist() == [50.0]
    with pytest.raises(ScaleError, match="run 1"):
        add_study_columns(runs.assign(run=["0", "1"]))  # the second run recorded none


def test_scale_of_refuses_a_missing_or_non_positive_scale_and_names_the_runs() -> None:
    runs = pd.DataFrame(
        {"run": ["f/a/rep1", "f/a/rep2", "f/b/rep1", "f/c/rep1"], "scale": [0.05, 0.05, 1, 1]}
    )
    assert scale_of(runs).tolist() == [0.05, 0.05, 1.0, 1.0]
    with pytest.raises(ScaleError, match="the table of runs has no `scale` column"):
        scale_of(runs.drop(columns=["scale"]), "table of runs")
    for bad in (0, -0.5, None, "n/a"):
        with pytest.raises(ScaleError, match=r"no positive scale factor for run f/b/rep1 \("):
            scale_of(runs.assign(scale=[0.05, 0.05, bad, 1]))
    # Without a run column the points, else the rows, are named; many are summed up.
    points = pd.DataFrame({"point": list("abcde"), "scale": [0.0] * 5})
    with pytest.raises(ScaleError, match="point a, b, c and 2 more"):
        scale_of(points)
    with pytest.raises(ScaleError, match="row 7"):
        scale_of(pd.DataFrame({"scale": [0.0]}, index=[7]))
    # The study-time tables read it the same way: an error, not a silent s = 1.
    with pytest.raises(ScaleError, match="run f/c/rep1"):
        in_study_time(runs.assign(scale=[0.05, 0.05, 1, 0], throughput_ops=1.0))


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
                _run("s", 0.04, 410, 245),
                _run("double", 0.08, 760, 130),
                _run("double", 0.08, 840, 120),
                _run("double", 0.08, 800, 125),
                _run("double", 0.08, 1, 1, status="failed"),
            ]
        )
    )
    table = agreement(runs)
    assert len(table) == 1
    row = table.iloc[0]
    assert row["other_scale"] == 0.08 and row["repetitions"] == 3
    assert row["throughput_study_reference"] == pytest.approx(10250.0)
    assert row["throughput_study_ratio"] == pytest.approx(10000.0 / 10250.0)
    assert row["response_ms_study_ratio"] == pytest.approx(10.0 / 9.8)
    assert row["throughput_study_ratio_ci_low"] < row["throughput_study_ratio"]
    assert row["throughput_study_ratio"] < row["throughput_study_ratio_ci_high"]


def test_agreement_carries_each_budgets_use_at_both_scales() -> None:
    # The server used up its budget at s and not at 2s: the check must be able to tell.
    rows = [
        _run("s", 0.04, 400, 250) | {"cpu_util_server": 0.98, "cpu_util_middleware": 0.5},
        _run("s", 0.04, 410, 245) | {"cpu_util_server": 0.96, "cpu_util_middleware": 0.7},
        _run("double", 0.08, 960, 110) | {"cpu_util_server": 0.7, "cpu_util_middleware": 0.4},
    ]
    row = agreement(add_study_columns(pd.DataFrame(rows))).iloc[0]
    assert row["cpu_util_server_reference"] == pytest.approx(0.97)
    assert row["cpu_util_server_other"] == pytest.approx(0.7)
    assert row["cpu_util_middleware_reference"] == pytest.approx(0.6)
    # Runs without CPU accounting give no such columns.
    plain = agreement(
        add_study_columns(pd.DataFrame([_run("s", 0.04, 1, 1), _run("double", 0.08, 2, 1)]))
    )
    assert not [c for c in plain.columns if c.startswith("cpu_util_")]


def test_agreement_without_repetitions_has_no_interval() -> None:
    runs = add_study_columns(
        pd.DataFrame([_run("s", 0.04, 400, 250), _run("double", 0.08, 400, 1000)])
    )
    row = agreement(runs).iloc[0]
    assert row["throughput_study_ratio"] == pytest.approx(0.5)
    assert math.isnan(row["throughput_study_ratio_ci_low"])
    # Two repetitions a side are still too few for an interval.
    two = pd.concat([runs, runs], ignore_index=True)
    assert math.isnan(agreement(two).iloc[0]["throughput_study_ratio_ci_low"])


def test_in_study_time_rescales_every_rate_and_per_request_time_by_its_rows_scale() -> None:
    table = pd.DataFrame(
        {"scale": [0.04, 0.5], "throughput_ops_mean": [400.0, 400.0],
         "throughput_std": [40.0, 40.0], "arrival_rate_ops": [100.0, 100.0],
         "queue_us_p90": [1000.0, 1000.0], "response_us_mean_ci_high": [500.0, 500.0],
         "server_us_var": [100.0, 100.0], "bucket_us": [200.0, 200.0],
         "throughput_cv": [0.1, 0.1], "queue_length_mean": [3.0, 3.0],
         "start_ms": [5000.0, 5000.0], "middleware.window_ms": [1000.0, 1000.0],
         "count": [7, 7]}
    )  # fmt: skip
    out = in_study_time(table)
    assert out["throughput_ops_mean"].tolist() == pytest.approx([10000.0, 800.0])
    assert out["throughput_std"].tolist() == pytest.approx([1000.0, 80.0])
    assert out["arrival_rate_ops"].tolist() == pytest.approx([2500.0, 200.0])
    assert out["queue_us_p90"].tolist() == pytest.approx([40.0, 500.0])
    assert out["response_us_mean_ci_high"].tolist() == pytest.approx([20.0, 250.0])
    assert out["server_us_var"].tolist() == pytest.approx([0.16, 25.0])
    assert out["bucket_us"].tolist() == pytest.approx([8.0, 100.0])
    # Dimensionless values, the run's clock and settings are not stretched.
    for column in ("throughput_cv", "queue_length_mean", "start_ms", "middleware.window_ms",
                   "count"):  # fmt: skip
        assert out[column].tolist() == table[column].tolist()
    assert (out["time_base"] == "study").all()
    assert table["throughput_ops_mean"].tolist() == [400.0, 400.0]  # the input is untouched


def test_in_study_time_agrees_with_the_study_columns_of_the_family_tables() -> None:
    table = {"scale": [0.04], "throughput_ops_mean": [400.0], "response_us_mean_mean": [2.5e5]}
    points = add_study_columns(pd.DataFrame(table))
    out = in_study_time(points)
    assert out["throughput_ops_mean"].iloc[0] == pytest.approx(points["throughput_study_mean"][0])
    assert out["response_us_mean_mean"].iloc[0] / 1e3 == pytest.approx(
        points["response_ms_study_mean"][0]
    )
    assert out["throughput_study_mean"].iloc[0] == points["throughput_study_mean"].iloc[0]


def test_in_study_time_refuses_a_second_rescaling_and_a_table_without_scale() -> None:
    table = pd.DataFrame({"scale": [0.04], "throughput_ops": [400.0]})
    with pytest.raises(TimeBaseError, match="already"):
        in_study_time(in_study_time(table))
    with pytest.raises(ScaleError, match="no `scale`"):
        in_study_time(pd.DataFrame({"throughput_ops": [400.0]}))


def test_with_scale_takes_each_runs_scale_and_refuses_rows_without_one() -> None:
    runs = pd.DataFrame({"run": ["a", "a", "b"], "scale": [0.04, 0.04, 1.0]})
    hist = pd.DataFrame({"run": ["a", "b"], "bucket_us": [100.0, 100.0]})
    out = in_study_time(with_scale(hist, runs))
    assert out["scale"].tolist() == [0.04, 1.0]
    assert out["bucket_us"].tolist() == pytest.approx([4.0, 100.0])
    with pytest.raises(TimeBaseError, match="'run'"):
        with_scale(hist.drop(columns=["run"]), runs)
    # A row of a run that `runs` does not hold, or holds without a scale, has no s.
    more = pd.concat([hist, pd.DataFrame({"run": ["c"], "bucket_us": [100.0]})])
    with pytest.raises(ScaleError, match="run c"):
        with_scale(more, runs)
    with pytest.raises(ScaleError, match="table of runs has no positive scale factor for run b"):
        with_scale(hist, runs.assign(scale=[0.04, 0.04, None]))


def test_rescaled_columns_names_the_power_of_the_scale() -> None:
    columns = ["throughput_ops", "response_us_var", "net_us_mean", "throughput_cv", "level_x"]
    assert rescaled_columns(pd.DataFrame(columns=columns)) == {
        "throughput_ops": -1,
        "response_us_var": 2,
        "net_us_mean": 1,
    }


def test_check_at_three_scales_tells_link_from_cpu_bound_points() -> None:
    rows = []
    for level, scale in (("s", 0.04), ("double", 0.08), ("triple", 0.12)):
        for rep in range(3):
            wobble = 1 + 0.002 * rep
            # Read-only: the link bounds it, and it scales; no budget is used up.
            rows.append(
                _run(level, scale, 400 * scale / 0.04 * wobble, 250 * 0.04 / scale)
                | {"level_workload": "read-only", "cpu_util_server": 0.4}
            )
            # Write-only: the server's budget bounds it at s only, and it gains 30 %.
            gain = 1.0 if level == "s" else 1.3
            rows.append(
                _run(level, scale, 400 * scale / 0.04 * gain * wobble, 250 * 0.04 / scale / gain)
                | {"cpu_util_server": 0.97 if level == "s" else 0.7}
            )
    table = check(add_study_columns(pd.DataFrame(rows)))
    assert len(table) == 4 and sorted(set(table["other_scale"])) == [0.08, 0.12]
    read = table[table["level_workload"] == "read-only"]
    write = table[table["level_workload"] == "write-only"]
    assert set(read["kind"]) == {"link"} and set(read["outcome"]) == {"holds"}
    assert set(write["bound_reference"]) == {"server"} and set(write["bound_other"]) == {"link"}
    assert set(write["kind"]) == {"cpu"} and set(write["outcome"]) == {"fails"}
    failed = failed_points(table)
    assert [(p["level_workload"], p["other_scale"], p["outcome"]) for p in failed] == [
        ("write-only", 0.08, "fails"),
        ("write-only", 0.12, "fails"),
    ]
    assert failed[0]["throughput_ratio"] == pytest.approx(1.3)
    # The response time's worst ratio is named too: either may be what fails.
    assert failed[0]["response_side"] == "client" and failed[0]["response_ratio"] < 1
    assert failed[0]["bound_reference"] == "server" and failed[0]["sides"] == ["client"]


def test_the_check_cannot_tell_where_an_interval_straddles_the_tolerance() -> None:
    rows = [_run("s", 0.04, 400, 250), _run("s", 0.04, 400, 250), _run("s", 0.04, 400, 250)]
    rows += [_run("double", 0.08, x, 125) for x in (700, 860, 1000)]
    (row,) = check(add_study_columns(pd.DataFrame(rows))).to_dict("records")
    assert row["outcome"] == "undecided" and row["kind"] == "link"  # no accounting: no budget
    # One run a side has no interval: the ratio itself decides.
    one = check(add_study_columns(pd.DataFrame([_run("s", 0.04, 400, 250),
                                                _run("double", 0.08, 804, 125)])))  # fmt: skip
    assert one.iloc[0]["outcome"] == "holds"
    assert failed_points(one) == [] and failed_points(pd.DataFrame()) == []
