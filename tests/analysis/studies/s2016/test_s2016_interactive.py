"""The interactive response time law on the runs of every 2016 family."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from analysis.studies.s2016 import interactive
from tests.analysis.studies.s2016.conftest import legend_texts


def runs(*rows: tuple) -> pd.DataFrame:
    columns = ["side", "type", "status", "clients_total", "throughput_ops", "response_us_mean"]
    return pd.DataFrame(rows, columns=columns)


def law() -> pd.DataFrame:
    return interactive.law_table(
        {
            # N/R = 10 / 10 ms = 1000/s: the law holds exactly.
            "max_throughput_2016": runs(
                ("client", "all", "ok", 10, 1000.0, 10_000.0),
                ("middleware", "all", "ok", 10, 1000.0, 1.0),
                ("client", "all", "failed", 10, 1000.0, 1.0),
                ("client", "get", "ok", 10, 1000.0, 1.0),
            ),
            # 800/s measured against 1000/s predicted: 25 % off, Z = 10/800 - 0.01 s.
            "writes_2016": runs(
                ("client", "all", "ok", 10, 800.0, 10_000.0),
                ("client", "all", "ok", 10, 0.0, 10_000.0),
                ("client", "all", "ok", 10, 900.0, math.nan),
            ),
        }
    )


def test_the_law_on_the_ok_client_runs_of_every_family() -> None:
    table = law()
    assert table["family"].tolist() == ["max_throughput_2016", "writes_2016"]
    assert table["relative_error"].tolist() == pytest.approx([0.0, -0.25])
    assert table["fitted_think_us"].tolist() == pytest.approx([0.0, 2500.0])


def test_the_table_and_numbers_per_family() -> None:
    table = law()
    text = interactive.tabular(table)
    assert r"2016 max. throughput & 1 & 0.0\,\% & 0.0\,\% & 0.000 & 0.000 \\" in text
    assert r"2016 writes & 1 & 25.0\,\% & 25.0\,\% & 2.500 & 2.500 \\" in text
    assert interactive.numbers(table) == {
        "SixteenLawRuns": "2",
        "SixteenLawMeanError": r"12.5\,\%",
        "SixteenLawMaxError": r"25.0\,\%",
        "SixteenLawWithin": "1",  # within 10 %
        "SixteenLawTolerance": "10",
    }


def test_the_figure_puts_the_families_one_after_the_other(saved: dict) -> None:
    interactive.figure(law(), "law.pdf")
    fig = saved["law.pdf"]
    assert legend_texts(fig) == ["2016 max. throughput", "2016 writes"]
    errors = [c.get_offsets().tolist() for c in fig.axes[0].collections]
    assert errors == [[[0.0, 0.0]], [[1.0, -25.0]]]  # run index, error in %
