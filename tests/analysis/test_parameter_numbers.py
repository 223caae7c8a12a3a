"""The macros the report cites from the scale model's parameter table
(analysis.report.scale_model_tables.parameter_numbers): how many parameters are assumed and
the 2015 database's commit delay in the study's time."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import yaml

from analysis.report import scale_model_tables as scale_model


def _calibration() -> dict[str, object]:
    target = {
        "name": "database_baseline_2015", "role": "server", "study": "2015",
        "studies": ["2015"], "value": 1950.0,
        "fit": {"model": "affine", "speed": 0.4175, "clamped": False},
        "runs": [{"speed": 0.5, "status": "ok"}, {"speed": 1.0, "status": "ok"}],
    }  # fmt: skip
    return {
        "scale": 0.05, "settings": {"studies": {"2015": 0.2}}, "speed_bounds": [0.03, 1.0],
        "client_rule": {"same_as": "unbudgeted", "why": "not the study's generator"},
        "speed_factors": {"2015": {"client": None, "middleware": 1.0, "server": 0.417}},
        "targets": [target],
    }  # fmt: skip


def test_the_commit_delay_and_the_assumed_parameters_are_macros() -> None:
    machines = yaml.safe_load(Path("workflows/machines.yaml").read_text())
    cal = _calibration()
    out = scale_model.parameter_numbers(cal, machines)
    # workflows/machines.yaml assumes 1 ms for the 2015 database's disk write.
    assert out["ScaleCommitDelayFifteen"] == "1"
    assert out["ScaleCommitDelayOriginFifteen"] == "assumed"
    # The other studies have no database.
    assert out["ScaleCommitDelayEighteen"] == "--" and out["ScaleCommitDelaySixteen"] == "--"
    rows = scale_model.parameter_rows(cal, machines)
    assert out["ScaleParameters"] == str(len(rows))
    assumed = [r for r in rows if r["origin"] == "assumed"]
    assert out["ScaleParametersAssumed"] == str(len(assumed))
    # The client's and the middleware's speed factors are among the assumed ones.
    assert {("speed factor, client", "2015"), ("speed factor, middleware", "2015")} <= {
        (r["parameter"], r["studies"]) for r in assumed
    }


def test_without_a_scale_model_the_parameter_macros_are_dashes_and_still_defined() -> None:
    out = scale_model.parameter_numbers(None, None)
    assert set(out.values()) == {"--"}
    text = scale_model.numbers(None, pd.DataFrame(), 1.0)
    assert r"\newcommand{\ScaleCommitDelayFifteen}{--}" in text
    assert r"\newcommand{\ScaleParametersAssumed}{--}" in text
