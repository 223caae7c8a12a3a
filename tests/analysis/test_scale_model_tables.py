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


def test_words_follow_the_sign_of_each_roles_intercepts() -> None:
    cal = {
        "targets": [
            _target("server", 148.3, 2957.0, 5766.0),
            _target("middleware", -3035.6, 3225.0, 9485.0),
            _target("middleware", -3684.0, 2281.0, 8246.0),
        ]
    }
    words = scale_model.intercept_words(cal)
    middleware, server = words.split("; ")
    assert middleware.startswith("the middleware's fits have a negative intercept")
    assert "$-$3{,}036 and $-$3{,}684" in middleware and "fixed cost" in middleware
    assert "twice the budget gave 2.94 and 3.62 times the throughput, more than" in middleware
    assert server.startswith("the server's fit has a positive intercept (+148~ops/s)")
    assert "fixed cost" not in server
    assert server.endswith("1.95 times the throughput, less than in proportion")


def test_intercepts_of_both_signs_are_named_so() -> None:
    cal = {
        "targets": [
            _target("middleware", -10.0, 100.0, 210.0),
            _target("middleware", 5.0, 100.0, 190.0),
        ]
    }
    words = scale_model.intercept_words(cal)
    assert "intercepts of both signs" in words and "fixed cost" not in words
    assert words.endswith("2.10 and 1.90 times the throughput")


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
