"""The scale model's text follows the calibration's fits: the sign of each intercept and what
a larger budget gave in the calibration's own runs."""

from __future__ import annotations

from typing import Any

import pandas as pd

from analysis.report import scale_model_tables as scale_model


def _target(role: str, intercept: float, low: float, high: float) -> dict[str, Any]:
    runs = [
        {"speed": 0.1, "status": "ok", "throughput_study": low},
        {"speed": 0.2, "status": "ok", "throughput_study": high},
    ]
    return {"role": role, "fit": {"model": "affine", "intercept": intercept}, "runs": runs}


def test_items_follow_the_sign_of_each_roles_intercepts() -> None:
    cal = {
        "targets": [
            _target("server", 148.3, 2957.0, 5766.0),
            _target("middleware", -3035.6, 3225.0, 9485.0),
            _target("middleware", -3684.0, 2281.0, 8246.0),
        ]
    }
    middleware, server = scale_model.intercept_items(cal)
    # Twice the budget (speed 0.2 against 0.1) gave 2.94 and 3.62 times the throughput.
    assert middleware == (
        r"\ScaleIntercept{middleware}{many}{negative}{$-$3{,}036 and $-$3{,}684}{twice}{}"
        "{2.94 and 3.62}{more}"
    )
    assert server == r"\ScaleIntercept{server}{one}{positive}{+148}{twice}{}{1.95}{less}"


def test_intercepts_of_both_signs_and_other_budgets() -> None:
    cal = {
        "targets": [
            _target("middleware", -10.0, 100.0, 210.0),
            _target("middleware", 5.0, 100.0, 190.0),
        ]
    }
    (item,) = scale_model.intercept_items(cal)
    assert item == (
        r"\ScaleIntercept{middleware}{many}{mixed}{$-$10 and +5}{twice}{}{2.10 and 1.90}{mixed}"
    )
    # Three times the budget, and budgets that differ between the fits.
    three = _target("server", -1.0, 100.0, 250.0)
    three["runs"][1]["speed"] = 0.3
    (item,) = scale_model.intercept_items({"targets": [three]})
    assert item == r"\ScaleIntercept{server}{one}{negative}{$-$1}{times}{3}{2.50}{less}"
    both = [three, _target("server", 2.0, 100.0, 150.0)]
    (item,) = scale_model.intercept_items({"targets": both})
    assert "{mixed}{$-$1 and +2}{larger}{}{2.50 and 1.50}{less}" in item
    # A fit without two completed speeds has nothing to compare.
    failed = _target("server", 2.0, 100.0, 150.0)
    failed["runs"][1]["status"] = "failed"
    (item,) = scale_model.intercept_items({"targets": [failed]})
    assert item == r"\ScaleIntercept{server}{one}{positive}{+2}{none}{}{}{mixed}"


def _calibration(targets: list[dict[str, Any]], warnings: int) -> dict[str, Any]:
    return {
        "scale": 0.05, "speed_factors": {"2018": {"server": 0.5, "middleware": None}},
        "targets": targets, "validation": [], "warnings": ["steal"] * warnings,
    }  # fmt: skip


def _macros(numbers: str) -> dict[str, str]:
    return dict(
        line.removeprefix("\\newcommand{\\").removesuffix("}").split("}{", 1)
        for line in numbers.splitlines()
    )


def test_numbers_give_the_texts_cases() -> None:
    empty = pd.DataFrame()
    cal = _calibration([_target("server", 1.0, 1.0, 2.0)], 0)
    fits = _macros(scale_model.numbers(cal, empty, 0.05))
    assert fits["ScaleInterceptCase"] == "fits" and fits["ScaleCalibrationCase"] == "quiet"
    assert fits["ScaleIntercepts"].startswith(r"\ScaleIntercept{server}{one}{positive}")
    assert fits["ScaleSpeedMiddlewareEighteen"] == "none (unbudgeted)"
    linear = {"role": "server", "fit": {"model": "linear"}, "runs": []}
    none = _macros(scale_model.numbers(_calibration([linear], 2), empty, 0.05))
    assert none["ScaleInterceptCase"] == "nofit" and none["ScaleIntercepts"] == "--"
    assert none["ScaleCalibrationCase"] == "disturbed" and none["ScaleCalibrationDisturbed"] == "2"
    without = _macros(scale_model.numbers(None, empty, 0.05))
    assert without["ScaleInterceptCase"] == "none" and without["ScaleCalibrationCase"] == "none"


def test_a_target_two_merged_measurements_fitted_is_stated_with_both_factors() -> None:
    cal = _calibration([_target("server", 1.0, 1.0, 2.0)], 0)
    assert _macros(scale_model.numbers(cal, pd.DataFrame(), 0.05))["ScaleRefitCase"] == "none"
    cal["refits"] = [
        {"name": "server_write_max", "role": "server", "studies": ["2018", "2016"],
         "kept": 0.2419, "other": 0.2878, "speed": 0.2, "throughput_ratio": 1.206},
        {"name": "database_baseline_2015", "role": "server", "studies": ["2015"],
         "kept": 0.4175, "other": 0.4569, "speed": None, "throughput_ratio": None},
    ]  # fmt: skip
    macros = _macros(scale_model.numbers(cal, pd.DataFrame(), 0.05))
    assert macros["ScaleRefitCase"] == "some"
    assert macros["ScaleRefits"] == (
        "one server's write maximum (server): 0.242 kept against 0.288 (0.84 times), and at"
        " speed 0.2 the kept runs gave 1.21 times the other's throughput; database baseline"
        " 2015 (server): 0.417 kept against 0.457 (0.91 times)"
    )


def test_the_validation_table_names_the_table_holding_ours() -> None:
    cal = {
        "validation": [
            {"name": "x", "source": "seed 004", "value": 8634.0,
             "reference": "reference2018.yaml:multiget.keys_per_s.sharded.6"},
            {"name": "other number", "source": "seed 002", "value": 1.5, "reference": ""},
        ]
    }  # fmt: skip
    tex = scale_model.validation_table(cal)
    assert r"multi-GET, keys per second, sharded, 6 keys & seed 004 & 8{,}634 & keys/s" in tex
    assert r"& \ScaleOursIn{tab:mget} \\" in tex
    assert r"other number & seed 002 & 1.50 & ops/s & -- \\" in tex


def _check_row(workload: str, side: str, x_ratio: float, r_ratio: float) -> dict[str, Any]:
    return {
        "level_workload": workload, "side": side, "other_scale": 0.1,
        "throughput_study_reference": 10000.0, "throughput_study_other": 10000.0 * x_ratio,
        "throughput_study_ratio": x_ratio, "throughput_study_ratio_ci_low": x_ratio - 0.02,
        "throughput_study_ratio_ci_high": x_ratio + 0.02,
        "response_ms_study_reference": 2.0, "response_ms_study_other": 2.0 * r_ratio,
        "response_ms_study_ratio": r_ratio, "response_ms_study_ratio_ci_low": float("nan"),
        "response_ms_study_ratio_ci_high": float("nan"),
    }  # fmt: skip


def test_the_scale_check_table_and_its_worst_deviations() -> None:
    table = pd.DataFrame(
        [
            _check_row("read-only", "client", 1.04, 0.97),
            _check_row("write-only", "client", 0.9, 1.2),
        ]
    )
    tex = scale_model.check_table(table)
    row = "read-only & client & 10{,}000 & 10{,}400 & 1.04 [1.02, 1.06] & 2.00 & 1.94 & 0.97"
    assert row in tex
    numbers = scale_model.numbers(None, table, 0.05)
    assert r"\newcommand{\ScaleCheckWorstThroughputPercent}{10.0}" in numbers
    assert r"\newcommand{\ScaleCheckWorstResponsePercent}{20.0}" in numbers
    assert r"\newcommand{\ScaleModelUsed}{no}" in numbers and r"{\ScaleCheckOther}{0.1}" in numbers
    # A profile without the check says so instead of an empty table.
    assert "did not run" in scale_model.check_table(pd.DataFrame())


def test_the_check_tells_points_a_budget_bounds_at_s_from_the_others() -> None:
    link = {"cpu_util_server_reference": 0.4, "cpu_util_server_other": 0.25}
    cpu = {"cpu_util_server_reference": 0.975, "cpu_util_server_other": 0.735,
           "cpu_util_middleware_reference": 0.74, "cpu_util_middleware_other": 0.6}  # fmt: skip
    rows = [
        _check_row("read-only", "client", 1.002, 1.0) | link,
        _check_row("read-only", "middleware", 0.999, 0.995) | link,
        _check_row("write-only", "client", 1.22, 0.81) | cpu,
        _check_row("write-only", "middleware", 1.22, 0.44) | cpu,
    ]
    macros = _macros(scale_model.numbers(None, pd.DataFrame(rows), 0.05))
    assert macros["ScaleCheckWorstThroughputPercent"] == "22.0"
    assert macros["ScaleCheckUnboundThroughputPercent"] == "0.2"
    assert macros["ScaleCheckUnboundResponsePercent"] == "0.5"
    assert macros["ScaleCheckBoundThroughputPercent"] == "22.0"
    # The budget used up at s was not at s': the deviation is the budget's, not the scale's.
    assert macros["ScaleCheckCase"] == "released"
    assert macros["ScaleCheckBound"] == (
        r"write-only, where the server used 98\,\% of its CPU budget at $s$ and 74\,\% at $s'$"
        " (throughput ratio 1.22)"
    )
    # Still used up at s': the budget bounds the point at both scales.
    rows[2] |= {"cpu_util_server_other": 0.95}
    rows[3] |= {"cpu_util_server_other": 0.95}
    assert _macros(scale_model.numbers(None, pd.DataFrame(rows), 0.05))["ScaleCheckCase"] == "bound"
    # No budget used up at s (or no accounting): every point must agree.
    plain = [_check_row("read-only", "client", 1.04, 0.97)]
    macros = _macros(scale_model.numbers(None, pd.DataFrame(plain), 0.05))
    assert macros["ScaleCheckCase"] == "unbound" and macros["ScaleCheckBound"] == "--"
    assert macros["ScaleCheckUnboundThroughputPercent"] == "4.0"
    assert _macros(scale_model.numbers(None, pd.DataFrame(), 0.05))["ScaleCheckCase"] == "none"


def test_factors_beyond_the_speeds_measured_are_marked_and_named() -> None:
    database = {
        "name": "database_baseline_2015", "role": "server", "study": "2015", "value": 1950.0,
        "source": "seed 003", "studies": ["2015"],
        "fit": {"model": "affine", "intercept": -750.0, "speed": 0.773, "clamped": False},
        "runs": [{"speed": 0.4, "status": "ok", "throughput_study": 648.0},
                 {"speed": 0.5, "status": "ok", "throughput_study": 997.0}],
    }  # fmt: skip
    cal = _calibration([database], 0) | {
        "client_rule": {"same_as": "unbudgeted", "why": "x"},
        "speed_factors": {"2015": {"server": 0.773, "middleware": 1.0, "client": None}},
    }
    table = scale_model.calibration_table(cal)
    assert r"0.773$^\dagger$ (affine)" in table
    macros = _macros(scale_model.numbers(cal, pd.DataFrame(), 0.05))
    assert macros["ScaleExtrapolatedCase"] == "some"
    assert "(0.773, 55\\,\\% beyond the speeds measured)" in macros["ScaleExtrapolated"]
    # Within its speeds a factor is interpolated: no mark.
    database["fit"]["speed"] = 0.45
    assert r"$^\dagger$" not in scale_model.calibration_table(cal)
    macros = _macros(scale_model.numbers(cal, pd.DataFrame(), 0.05))
    assert macros["ScaleExtrapolatedCase"] == "none" and macros["ScaleExtrapolated"] == "--"


def _design_2016(runs: list[tuple[float, float]], factor_2018: float | None) -> dict[str, Any]:
    target = {
        "name": "middleware_max_2016",
        "role": "middleware",
        "study": "2016",
        "studies": ["2016"],
        "value": 13467.0,
        "fit": {"model": "linear"},
        "runs": [{"speed": s, "status": "ok", "throughput_study": x} for s, x in runs],
    }
    return {"speed_factors": {"2018": {"middleware": factor_2018}}, "targets": [target]}


def test_the_2016_design_at_the_2018_factor_is_read_from_its_own_runs() -> None:
    # Every run at 0.16, above the 2018 factor, served less than the study: below it.
    runs = [(0.16, 13165.7), (0.16, 11632.7), (0.19, 17490.0), (0.19, 16796.7)]
    below = scale_model.other_factor_numbers(_design_2016(runs, 0.1458))
    assert below == {
        "ScaleSixteenAtEighteenCase": "below",
        "ScaleSixteenAtEighteenSpeed": "0.16",
        "ScaleSixteenAtEighteenServed": "13{,}166",
        "ScaleSixteenAtEighteenStudy": "13{,}467",
    }
    # Runs at or below the factor that all served more: above it (the lowest such run).
    above = scale_model.other_factor_numbers(_design_2016(runs, 0.2))
    assert above["ScaleSixteenAtEighteenCase"] == "above"
    assert above["ScaleSixteenAtEighteenSpeed"] == "0.19"
    assert above["ScaleSixteenAtEighteenServed"] == "16{,}797"
    # Runs on both sides of the study's value at every speed say nothing.
    mixed = [(0.16, 13600.0), (0.16, 12000.0)]
    unknown = scale_model.other_factor_numbers(_design_2016(mixed, 0.1458))
    assert unknown["ScaleSixteenAtEighteenCase"] == "unknown"
    assert unknown["ScaleSixteenAtEighteenServed"] == "--"
    # A failed run is no evidence; without the 2018 factor there is nothing to compare.
    failed = _design_2016([(0.16, 9000.0)], 0.1458)
    failed["targets"][0]["runs"][0]["status"] = "failed"
    assert scale_model.other_factor_numbers(failed)["ScaleSixteenAtEighteenCase"] == "unknown"
    for cal in (None, _design_2016(runs, None)):
        none = scale_model.other_factor_numbers(cal)
        assert none["ScaleSixteenAtEighteenCase"] == "none"
    cal = _calibration([_target("server", 1.0, 1.0, 2.0)], 0)
    cal["speed_factors"]["2018"]["middleware"] = 0.1458
    cal["targets"] += _design_2016(runs, 0.1458)["targets"]
    macros = _macros(scale_model.numbers(cal, pd.DataFrame(), 0.1))
    assert macros["ScaleSixteenAtEighteenCase"] == "below"
