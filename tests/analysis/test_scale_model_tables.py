"""The scale model's text follows the calibration's fits: the sign of each intercept and what
a larger budget gave in the calibration's own runs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd
import yaml

from analysis.calibration import with_validation
from analysis.report import scale_model_tables as scale_model
from common.scalemodel import load_machines


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


_VALIDATION = [
    {"name": "keys", "source": "seed 004", "value": 8634.0,
     "reference": "reference2018.yaml:multiget.keys_per_s.sharded.6"},
    {"name": "direct", "source": "seed 004", "value": 2000.0,
     "reference": "reference2018.yaml:baselines_direct.one_server.read-only"},
    {"name": "p50", "source": "seed 000", "value": 10.0,
     "reference": "reference2016.yaml:max_throughput.response_ms_p50"},
    {"name": "other number", "source": "seed 002", "value": 1.5, "reference": ""},
]  # fmt: skip


def test_the_validation_table_scores_ours_against_each_study_number() -> None:
    ours = {
        "keys": scale_model.Ours(8000.0, 0, 12, 12, "study", "tab:mget"),
        "p50": scale_model.Ours(11.5, 3, 250, 260, "nearest", "sec:sixteen-max"),
    }
    tex = scale_model.validation_table({"validation": _VALIDATION}, ours)
    assert "Study number & Source & Study & Ours & Unit & Clients & Error & Ours in" in tex
    # A measured row: ours as its table prints it, the clients of both and ours / study - 1.
    assert (
        r"multi-GET, keys per second, sharded, 6 keys & seed 004 & 8{,}634 & 8{,}000 & keys/s"
        r" & 12 / 12 & $-$7.3\,\% & \ScaleOursIn{tab:mget} \\"
    ) in tex
    # Ours at the study's 2016 configuration stands in a section, not a table; its clients
    # are the nearest measured, and marked so.
    assert (
        r"& 10 & 11.500 & ms & 260 / 250$^\dagger$ & +15.0\,\% & \S\ref{sec:sixteen-max} \\" in tex
    )
    # Rows without a measurement, with and without a table that would hold ours.
    assert (
        r"without middleware, one server, read-only & seed 004 & 2{,}000 & -- & ops/s & -- & --"
        r" & \ScaleOursIn{tab:base-direct-max} \\"
    ) in tex
    assert r"other number & seed 002 & 1.50 & -- & ops/s & -- & -- & -- \\" in tex
    assert "--" not in scale_model.validation_table({"validation": _VALIDATION[:1]}, ours)
    # Our maximum beside the study's maximum is marked; a value no other table prints: here.
    maximum = {"keys": scale_model.Ours(8000.0, 0, 24, 12, "maximum", None)}
    tex = scale_model.validation_table({"validation": _VALIDATION[:1]}, maximum)
    assert r"& 12 / 24$^\ast$ & $-$7.3\,\% & here \\" in tex
    assert "No scale model" in scale_model.validation_table(None)


def _family_point(point: str, side: str, x: float, r_us: float, **levels: object) -> dict:
    return {"point": point, "side": side, "type": "all", "scale": 0.05,
            "throughput_ops_mean": x, "response_us_mean_mean": r_us, **levels}  # fmt: skip


REFERENCE_2018 = yaml.safe_load(Path("workflows/reference2018.yaml").read_text())


def test_ours_is_computed_as_the_table_holding_it_computes_it() -> None:
    direct = pd.DataFrame(
        [
            _family_point("a", "client", 100.0, 2000.0, level_setup="one_server",
                          level_workload="read-only", clients_total=6),
            _family_point("b", "client", 110.0, 2500.0, level_setup="one_server",
                          level_workload="read-only", clients_total=12),
        ]
    )  # fmt: skip
    mget = pd.DataFrame(
        [
            {**_family_point("m", "middleware", 60.0, 1000.0), "type": "multiget",
             "level_sharding": "sharded", "level_size": 6, "clients_total": 12,
             "middleware.workers": 64},
        ]
    )  # fmt: skip
    sixteen = {"SixteenMaxWaitResponse": "19.330", "SixteenMaxWaitClients": "260",
               "SixteenOrigMaxClients": "260", "SixteenMaxWaitClientsCase": "same"}  # fmt: skip
    ours = scale_model.validation_ours(
        _VALIDATION, {"baseline_direct": direct, "multiget": mget}, sixteen,
        reference=REFERENCE_2018,
    )  # fmt: skip
    # Without middleware our maximum (110 ops/s over s, at 12 clients) beside the study's
    # maximum (at 6 clients, Table 3); the middlewares' GET rate times the keys at the
    # study's 12 clients; the 2016 section's median at the study's configuration.
    assert ours["direct"] == scale_model.Ours(2200.0, 0, 12, 6, "maximum", "tab:base-direct-max")
    assert ours["keys"] == scale_model.Ours(60.0 / 0.05 * 6, 0, 12, 12, "study", "tab:mget")
    assert ours["p50"] == scale_model.Ours(19.33, 3, 260, 260, "study", "sec:sixteen-max")
    assert "other number" not in ours
    # Neither the family nor the 2016 number: no entry, so the table prints a dash.
    assert scale_model.validation_ours(_VALIDATION, {}, {"SixteenMaxWaitResponse": "--"}) == {}


def _configured(workers: int, clients: int, x: float, r_us: float, **levels: object) -> list:
    """A point's client and middleware rows at `workers` per middleware and `clients`."""
    name = f"w{workers}n{clients}{''.join(map(str, levels.values()))}"
    config = {"clients_total": clients, "middleware.workers": workers, **levels}
    return [_family_point(name, side, x, r_us, **config) for side in ("client", "middleware")]


_AT_CONFIGURATION = [
    {"name": "table5_x", "source": "seed 004 Table 5", "value": 11549.70,
     "reference": "reference2018.yaml:baselines_middleware.one_middleware.write-only.client_x"},
    {"name": "table5_r", "source": "seed 004 Table 5", "value": 16.73,
     "reference": "reference2018.yaml:baselines_middleware.one_middleware.write-only.client_r"},
    {"name": "table7", "source": "seed 004 Table 7", "value": 6675.16,
     "reference": "reference2018.yaml:writes.8.client_x"},
]  # fmt: skip


def test_ours_is_read_at_the_studys_clients_and_workers_not_at_our_best() -> None:
    mw = {"level_setup": "one_middleware", "level_workload": "write-only"}
    baseline = pd.DataFrame(
        [
            # Our best (288 clients) and the study's configuration (192 clients, 64 workers).
            *_configured(64, 192, 611.0, 786.0, **mw),
            *_configured(64, 288, 617.0, 1174.0, **mw),
            *_configured(32, 192, 700.0, 500.0, **mw),
        ]
    )
    writes = pd.DataFrame(
        [*_configured(8, 48, 280.0, 8550.0 / 20), *_configured(8, 288, 300.0, 2400.0)]
    )
    points = {"baseline_middleware": baseline, "write_throughput": writes}
    ours = scale_model.validation_ours(_AT_CONFIGURATION, points, {}, reference=REFERENCE_2018)
    # Table 5 at its 192 clients and 64 workers: 611 / s, not our best 617 / s at 288 clients;
    # the MVA's table prints it (our largest worker count).
    assert ours["table5_x"] == scale_model.Ours(12220.0, 0, 192, 192, "study", "tab:mva")
    assert ours["table5_r"].value == 786.0 / 1e3 * 0.05 and ours["table5_r"].clients == 192
    # Table 7's 8 workers at its maximum's 48 clients, not at our best (288): no table prints it.
    assert ours["table7"] == scale_model.Ours(5600.0, 0, 48, 48, "study", None)
    tex = scale_model.validation_table({"validation": _AT_CONFIGURATION}, ours)
    assert r"& 6{,}675.16 & 5{,}600 & ops/s & 48 / 48 & $-$16.1\,\% & here \\" in tex
    # Where the study's configuration is our best of its worker count, the writes' table of
    # each worker count's best point prints it too.
    best_at_48 = {**points, "write_throughput": writes.assign(
        throughput_ops_mean=lambda t: 700.0 - t["clients_total"])}  # fmt: skip
    on = scale_model.validation_ours(_AT_CONFIGURATION, best_at_48, {}, reference=REFERENCE_2018)
    assert on["table7"].table == scale_model.WRITES_TABLE
    # Without the study's client count in the grid: the nearest measured one, marked.
    near = pd.DataFrame(
        [*_configured(64, 144, 600.0, 700.0, **mw), *_configured(64, 384, 620.0, 1e3, **mw)]
    )
    moved = scale_model.validation_ours(
        _AT_CONFIGURATION[:1], {"baseline_middleware": near}, {}, reference=REFERENCE_2018
    )["table5_x"]
    assert (moved.clients, moved.study_clients, moved.at) == (144, 192, "nearest")
    assert "192 / 144$^\\dagger$" in scale_model.validation_table(
        {"validation": _AT_CONFIGURATION[:1]}, {"table5_x": moved}
    )
    # At a worker count below our largest the MVA's table does not print ours.
    fewer = baseline.assign(
        **{"middleware.workers": baseline["middleware.workers"].replace(32, 128)}
    )
    assert (
        scale_model.validation_ours(
            _AT_CONFIGURATION[:1], {"baseline_middleware": fewer}, {}, reference=REFERENCE_2018
        )["table5_x"].table
        is None
    )
    # Without the study's configurations there is nothing to read ours at.
    assert scale_model.validation_ours(_AT_CONFIGURATION, points, {}) == {}


def test_the_2015_database_maximum_is_ours_as_its_section_prints_it() -> None:
    large = [{"name": "large", "source": "seed 003 \u00a71.1.4", "value": 1429.0,
              "reference": "reference2015.yaml:db_baseline.max.large.throughput"}]  # fmt: skip
    fifteen = {"MqBaselineMaxLargeValue": "2{,}199", "MqBaselineMaxLargeClients": "20",
               "MqBaselineSeedLargeClients": "60"}  # fmt: skip
    ours = scale_model.validation_ours(large, {}, {}, fifteen)
    assert ours["large"] == scale_model.Ours(2199.0, 0, 20, 60, "maximum", "sec:fifteen-baseline")
    tex = scale_model.validation_table({"validation": large}, ours)
    assert (
        r"2015 database baseline, maximum, large messages, throughput & seed 003 §1.1.4"
        r" & 1{,}429 & 2{,}199 & ops/s & 60 / 20$^\ast$ & +53.9\,\%"
        r" & \S\ref{sec:fifteen-baseline} \\"
    ) in tex
    assert scale_model.validation_ours(large, {}, {}, {"MqBaselineMaxLargeValue": "--"}) == {}


def test_the_table_lists_every_validation_number_of_the_machines_file() -> None:
    machines = load_machines()
    cal = {
        "targets": [{"name": n, "value": t.value} for n, t in machines.targets.items()],
        "validation": [{"name": "multiget_6_sharded_keys", "value": 8634.0, "source": "old",
                        "reference": "reference2018.yaml:multiget.keys_per_s.sharded.6"},
                       {"name": "gone", "value": 1.0, "source": "x", "reference": ""}],
    }  # fmt: skip
    listed = with_validation(cal, machines)["validation"]
    names = [v["name"] for v in listed]
    # The file's numbers in its order (the calibration's own entry as it lists it), then the
    # one only the calibration lists.
    assert names == [*machines.validation, "gone"]
    assert listed[names.index("multiget_6_sharded_keys")]["source"] == "old"
    # A calibration of other targets keeps its own list: the file's check does not hold for it.
    other = cal | {"targets": [{"name": "server_write_max", "value": 1.0}]}
    assert with_validation(other, machines)["validation"] == cal["validation"]


def test_the_validation_numbers_follow_the_captions_rule() -> None:
    """seed 004's client throughputs at its maxima (Tables 3, 5, 7) and keys per second
    (§5), seed 003's database maxima, all but the targets; where a maximum's throughput is a
    target, the response time the study prints beside it (Table 5's, seed 000's median)."""
    ref = REFERENCE_2018
    rule = set()
    for setup, entry in ref["baselines_direct"].items():
        if isinstance(entry, dict):
            rule |= {
                f"reference2018.yaml:baselines_direct.{setup}.{w}" for w in entry if w != "clients"
            }
    for setup, entry in ref["baselines_middleware"].items():
        if isinstance(entry, dict):
            rule |= {f"reference2018.yaml:baselines_middleware.{setup}.{w}.client_x" for w in entry}
    rule |= {f"reference2018.yaml:writes.{w}.client_x" for w in ref["writes"] if w != "source"}
    rule |= {
        f"reference2018.yaml:multiget.keys_per_s.{sharding}.{size}"
        for sharding, sizes in ref["multiget"]["keys_per_s"].items()
        for size in sizes
    }
    rule |= {f"reference2015.yaml:db_baseline.max.{size}.throughput" for size in ("small", "large")}
    rule |= {"reference2016.yaml:max_throughput.throughput_ops"}
    doc = yaml.safe_load(Path("workflows/machines.yaml").read_text())
    targets = {
        f"{t['reference']['file']}:{'.'.join(map(str, t['reference']['path']))}"
        for t in doc["calibration"]["targets"].values()
    }
    beside = {
        "reference2018.yaml:baselines_middleware.one_middleware.write-only.client_x":
            "reference2018.yaml:baselines_middleware.one_middleware.write-only.client_r",
        "reference2016.yaml:max_throughput.throughput_ops":
            "reference2016.yaml:max_throughput.response_ms_p50",
    }  # fmt: skip
    assert targets <= rule and set(beside) <= targets
    expected = (rule - targets) | set(beside.values())
    assert {v.where for v in load_machines().validation.values()} == expected


def test_the_texts_sentence_counts_the_errors_within_the_band() -> None:
    cal = {"validation": _VALIDATION}
    ours = {
        "keys": scale_model.Ours(8000.0, 0),
        "direct": scale_model.Ours(2100.0, 0),
        "p50": scale_model.Ours(20.0, 3),
    }
    sentence = scale_model.validation_sentence(cal, ours)
    assert sentence.startswith(r"Of the 3 (of 4) with a measurement of ours, 2 lie within 10\,\%")
    assert r"range from $-$7.3\,\% to +100.0\,\%" in sentence
    assert sentence.endswith(
        r"the largest being +100.0\,\% (2016 maximum-throughput configuration, median middleware"
        r" response time), $-$7.3\,\% (multi-GET, keys per second, sharded, 6 keys) and +5.0\,\%"
        r" (without middleware, one server, read-only)."
    )
    assert scale_model.validation_sentence(cal, {}).startswith("None of them")
    macros = _macros(scale_model.numbers(None, pd.DataFrame(), 0.05))
    assert macros["ScaleValidationErrors"] == "--"


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
    row = (
        "read-only & client & 0.1 & link / link & 10{,}000 & 10{,}400 & 1.04 [1.02, 1.06]"
        " & 2.00 & 1.94 & 0.97 & undecided"
    )
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
    # Below the lowest speed measured is as much an extrapolation, and said so.
    database["fit"]["speed"] = 0.3
    macros = _macros(scale_model.numbers(cal, pd.DataFrame(), 0.05))
    assert "(0.300, 25\\,\\% below the speeds measured)" in macros["ScaleExtrapolated"]
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


def test_the_check_at_three_scales_names_where_the_model_fails() -> None:
    cpu = {"cpu_util_server_reference": 0.97, "cpu_util_server_other": 0.7}
    rows = [
        _check_row("read-only", "client", 1.0, 1.0),
        _check_row("read-only", "client", 1.0, 1.0) | {"other_scale": 0.15},
        _check_row("write-only", "client", 1.22, 0.81) | cpu,
        _check_row("write-only", "client", 1.3, 0.8) | cpu | {"other_scale": 0.15},
    ]
    table = pd.DataFrame(rows)
    macros = _macros(scale_model.numbers(None, table, 0.05))
    assert macros["ScaleCheckOther"] == "0.1 and 0.15" and macros["ScaleCheckScales"] == "3"
    assert macros["ScaleCheckOutcomeCase"] == "fails"
    assert macros["ScaleCheckLinkOutcomes"] == "the model holds in both of its rows"
    assert macros["ScaleCheckCpuOutcomes"] == "the model fails in both of its rows"
    mixed = scale_model.classify(table).assign(outcome=["holds", "undecided", "fails", "fails"])
    assert scale_model.outcome_counts(mixed) == (
        "the model holds in 1 of its 4 rows, the check cannot tell in 1 and the model fails in 2"
    )
    assert macros["ScaleCheckFailed"] == (
        "write-only at $s'=0.1$ (fails; bound by the server's CPU budget at $s$ and a link at"
        " $s'$, throughput ratio 1.22, client's response-time ratio 0.81); write-only at"
        " $s'=0.15$ (fails; bound by the server's CPU budget at $s$ and a link at $s'$,"
        " throughput ratio 1.30, client's response-time ratio 0.80)"
    )
    # Each other scale's bound points are named with their scale.
    assert "74" not in macros["ScaleCheckBound"] and "at $s'=0.15$" in macros["ScaleCheckBound"]
    tex = scale_model.check_table(table)
    assert "write-only & client & 0.15 & server CPU / link" in tex and tex.count("fails") == 2
    agreeing = _macros(scale_model.numbers(None, table.iloc[:2], 0.05))
    assert agreeing["ScaleCheckOutcomeCase"] == "holds" and agreeing["ScaleCheckFailed"] == "--"


def _validated_row(error: float | None, extrapolated: bool, cpu: float = 0.94) -> dict[str, Any]:
    family = None if error is None else {
        "family": "mq_db_baseline", "point": "size=small,clients=80",
        "value": 1950.0 * (1 + error), "repetitions": 3, "best_point": "size=small,clients=20",
        "best_value": 2433.0, "role_cpu": cpu,
    }  # fmt: skip
    return {
        "name": "database_baseline_2015", "role": "server", "studies": ["2015"],
        "value": 1950.0, "speed": 0.417, "clamped": False, "prediction": 1950.0,
        "prediction_error": 0.0, "family": family, "error": error,
        "best_error": None if error is None else 2433.0 / 1950.0 - 1,
        "speeds": [0.5, 1.0], "extrapolation": 0.166 if extrapolated else 0.0,
        "extrapolated": extrapolated,
    }  # fmt: skip


def test_the_fits_table_and_its_macros() -> None:
    rows = [_validated_row(-0.163, True)]
    tex = scale_model.fit_check_table(rows)
    assert (
        r"database baseline 2015 (server; 2015) & 1{,}950 & 0.417$^\dagger$ & 0.5, 1 & 1{,}950"
        in tex
    )
    family = (
        r"2015 database baseline:\newline small, 80 clients}"
        r" & 1{,}632 & 94\,\% & $-$16\,\% & 2{,}433"
    )
    assert family + r" (+25\,\%)" in tex
    macros = scale_model.fit_check_numbers(rows, None)
    # Its role used 94 % of its budget at the target's point: the budget bounds it there.
    assert macros["ScaleFitLeastCpu"] == "94" and macros["ScaleFitUnpinned"] == "--"
    idle = scale_model.fit_check_numbers([_validated_row(-0.163, True, cpu=0.83)], None)
    assert idle["ScaleFitUnpinned"] == r"database baseline 2015 (server CPU 83\,\%)"
    assert macros["ScaleFitCase"] == "measured"
    assert macros["ScaleFitErrors"] == r"database baseline 2015 $-$16\,\%"
    assert macros["ScaleFitWorstPercent"] == "16"
    assert macros["ScaleFitExtrapolated"] == (
        r"database baseline 2015 (0.417, 17\,\% below the speeds measured: 0.5, 1)"
    )
    unmeasured = scale_model.fit_check_numbers([_validated_row(None, False)], None)
    assert unmeasured["ScaleFitCase"] == "unmeasured"
    assert unmeasured["ScaleFitExtrapolatedCase"] == "none"
    assert scale_model.fit_check_numbers(None, None)["ScaleFitCase"] == "none"
    assert "No scale model" in scale_model.fit_check_table(None)


def test_every_fitted_or_assumed_parameter_is_listed_with_its_origin() -> None:
    machines = yaml.safe_load(Path("workflows/machines.yaml").read_text())
    target = _database_target_for_parameters()
    cal = {
        "scale": 0.05, "settings": {"studies": {"2015": 0.2}}, "speed_bounds": [0.03, 1.0],
        "client_rule": {"same_as": "unbudgeted", "why": "not the study's generator"},
        "speed_factors": {"2015": {"client": None, "middleware": 1.0, "server": 0.417}},
        "targets": [target],
    }  # fmt: skip
    rows = {(r["parameter"], r["studies"]): r for r in scale_model.parameter_rows(cal, machines)}
    assert rows[("scale $s$", "2016, 2018")]["value"] == "0.05"
    assert rows[("scale $s$", "2015")]["value"] == "0.2"
    server = rows[("speed factor, server", "2015")]
    assert server["origin"] == "fitted" and "extrapolated 17 % below them" in server["source"]
    assert rows[("speed factor, middleware", "2015")]["origin"] == "assumed"
    assert rows[("speed factor, client", "2015")]["value"] == "unbudgeted"
    # The 2016 design's own middleware-server delay, fitted to one of its study's numbers.
    own = rows[("delay, middleware--server", "2016")]
    assert own["origin"] == "fitted" and own["value"] == "2.5 ms"
    assert "Little's law" in own["source"]
    # 2015 measured no delays: the 2018 study's, assumed.
    assert rows[("delay, client--middleware", "2015")]["origin"] == "assumed"
    assert rows[("delay, client--middleware", "2016, 2018")]["origin"] == "seed"
    commit = rows[("commit delay", "2015")]
    assert commit["origin"] == "assumed" and commit["value"] == "1 ms"
    tex = scale_model.parameter_table(cal, machines)
    assert r"commit delay & 2015 & 1 ms & assumed" in tex
    assert "No scale model" in scale_model.parameter_table(None, machines)


def _database_target_for_parameters() -> dict[str, Any]:
    return {
        "name": "database_baseline_2015", "role": "server", "study": "2015",
        "studies": ["2015"], "value": 1950.0,
        "fit": {"model": "affine", "speed": 0.4175, "clamped": False},
        "runs": [{"speed": 0.5, "status": "ok"}, {"speed": 1.0, "status": "ok"}],
    }  # fmt: skip


def test_the_sessions_variation_table_and_macros() -> None:
    cal = {
        "targets": [],
        "refits": [
            {"name": "server_write_max", "role": "server", "studies": ["2018", "2016"],
             "kept": 0.2419, "other": 0.2878, "speed": 0.2, "throughput_ratio": 1.206},
        ],
    }  # fmt: skip
    tex = scale_model.variation_table(cal)
    assert "one server's write maximum & server & 2018, 2016 & 0.242 & 0.288 & 1.21 (0.2)" in tex
    # Not kept here, the factors' ratio stands in at the factor: 0.84 deviates less than 1.21.
    assert "& 0.84 & 13.2\\,\\% \\\\" in tex
    macros = scale_model.fit_check_numbers(None, cal)
    assert macros["ScaleSessionVariation"] == ("2016 server 13.2\\,\\%; 2018 server 13.2\\,\\%")
    assert macros["ScaleSessionWorst"] == "the 2016 server"
    assert "One measurement session" in scale_model.variation_table({"refits": []})


def test_the_validation_table_groups_numbers_by_what_bounds_ours() -> None:
    validation = [
        {"name": "link", "source": "seed 004", "value": 1000.0,
         "reference": "reference2018.yaml:baselines_direct.two_servers.read-only"},
        {"name": "cpu", "source": "seed 004", "value": 1000.0,
         "reference": "reference2018.yaml:writes.8.client_x"},
        {"name": "cpu2", "source": "seed 004", "value": 1000.0,
         "reference": "reference2018.yaml:writes.16.client_x"},
        {"name": "law", "source": "seed 004", "value": 10.0, "follows": "plateau",
         "reference": "reference2018.yaml:baselines_middleware.one_middleware.write-only.client_r"},
    ]  # fmt: skip
    ours = {
        "link": scale_model.Ours(1010.0, 0, 8, 8, "maximum", None, "link"),
        "cpu": scale_model.Ours(1300.0, 0, 48, 48, "study", None, "server"),
        "cpu2": scale_model.Ours(950.0, 0, 96, 96, "study", None, "server"),
        "law": scale_model.Ours(9.0, 2, 192, 192, "study", None, "middleware"),
    }
    cal = {"validation": validation}
    tex = scale_model.validation_table(cal, ours)
    link = tex.index("No CPU budget used up")
    cpu = tex.index("Bounded by the server's CPU budget")
    law = tex.index("Set by a fitted throughput")
    # Link-bound first, then the CPU-bound, then what a fitted throughput sets, each under
    # its heading with its rows.
    assert link < tex.index("two servers, read-only") < cpu < tex.index("8 workers") < law
    assert law < tex.index("one middleware, write-only")
    # The counts leave out the number a fitted throughput sets, and are split by bound.
    sentence = scale_model.validation_sentence(cal, ours)
    assert sentence.startswith("Of the 3 with a measurement of ours, 2 lie within")
    assert "Not counted: the 1 number a fitted throughput sets" in sentence
    bounds = scale_model.bound_sentence(cal, ours)
    assert "the one budget-free number lies within 10\\,\\% (+1.0\\,\\%)" in bounds
    assert "1 of the 2 server-CPU-bound numbers lie within" in bounds
    assert "$-$5.0\\,\\% to +30.0\\,\\%" in bounds


def test_what_bounds_a_point_comes_from_its_runs_cpu() -> None:
    rows = pd.DataFrame(
        [{"side": "client", "cpu_util_server_mean": 0.97, "cpu_util_middleware_mean": 0.5},
         {"side": "middleware", "cpu_util_server_mean": 0.97, "cpu_util_middleware_mean": 0.5}]
    )  # fmt: skip
    assert scale_model.bound_of(rows) == "server"
    assert scale_model.bound_of(rows.assign(cpu_util_server_mean=0.6)) == "link"
    # Without CPU accounting nothing says what bounds it.
    assert (
        scale_model.bound_of(
            rows.assign(cpu_util_server_mean=float("nan"), cpu_util_middleware_mean=float("nan"))
        )
        is None
    )
