"""The reproduction appendix's table and numbers (analysis.report.reproduction) on a small
table of family times."""

from __future__ import annotations

import pandas as pd

from analysis.protocol import Prediction
from analysis.report.reproduction import memaslap_macros, prediction_macros, render


def families() -> pd.DataFrame:
    return pd.DataFrame(
        {"family": ["baseline_direct", "factorial_2016"], "runs": [10, 4], "series": [2, 1],
         "reruns": [1, 0], "failed": [0, 1], "measured_min": [5.0, 2.0],
         "wall_min": [30.0, 10.0], "speed_us": [731.4, float("nan")]}
    )  # fmt: skip


def test_the_table_totals_every_family_and_the_numbers_name_the_protocol() -> None:
    runs = pd.DataFrame({"wall_s": [100.0, 200.0], "speed_us": [1450.0, 731.0]})
    stages = pd.Series({"layout": 1.234, "clients": 20.0})
    table, numbers = render(families(), stages, runs, "quick", 2, 1.5)
    assert r"Total & & 14 & 3 & 1 & 1 & 7.0 & 40.0 & 1{,}090 \\" in table  # the runs' median
    assert r"\texttt{baseline\_direct} & 10 & 2 & 1 & 0 & 5.0 & 30.0 & 731 \\" in table
    assert r"\texttt{factorial\_2016} & 4 & 1 & 0 & 1 & 2.0 & 10.0 & -- \\" in table  # unprobed
    assert r"\newcommand{\JobSecondsPerPoint}{150.0}" in numbers
    assert r"\newcommand{\StageSecondsPerPoint}{layout 1.23, clients 20.00}" in numbers
    assert r"\newcommand{\RerunLongest}{1.5}" in numbers


def test_the_memaslap_families_share_of_the_job_time() -> None:
    text = memaslap_macros(families(), {"factorial_2016", "not_measured"})
    assert r"\newcommand{\MemaslapFamilies}{1}" in text
    assert r"\newcommand{\MemaslapJobMinutes}{10.0}" in text
    assert r"\newcommand{\MemaslapJobShare}{25\,\%}" in text


def test_a_prediction_becomes_macros() -> None:
    text = prediction_macros("default", Prediction(987, 120, 4.96, 30.04, 2.5))
    assert r"\newcommand{\PredictHours}{5.0}" in text
    assert r"\newcommand{\PredictSeriesOverheadS}{30.0}" in text
