"""Formats the 2016 families share: ms from µs, the ends of ranges, the original's design."""

from __future__ import annotations

import pandas as pd

from analysis.report import figures as fg
from analysis.studies.s2016.formats import bounds, design_numbers, ms


def test_microseconds_print_as_milliseconds_and_a_missing_value_as_a_dash() -> None:
    assert ms(2500) == "2.500"
    assert ms(None) == fg.MISSING
    assert ms(float("nan")) == fg.MISSING


def test_a_range_gives_its_ends_formatted() -> None:
    shares = pd.Series([0.9, 0.2, float("nan"), 0.5])
    assert bounds("X", shares, fg.pct, 0) == {"XLow": r"20\,\%", "XHigh": r"90\,\%"}
    assert bounds("Y", pd.Series([3.0, 7.0]), fg.num) == {"YLow": "3", "YHigh": "7"}
    assert bounds("Z", pd.Series([], dtype=float), fg.num) == {"ZLow": "--", "ZHigh": "--"}


def test_design_numbers_name_every_setting_under_the_prefix(ref: dict) -> None:
    writes = design_numbers("SixteenOrigWrites", ref["design"]["writes"])
    assert writes == {
        "SixteenOrigWritesServers": "3, 5, 7",
        "SixteenOrigWritesWrites": "1, 5, 10",
        "SixteenOrigWritesClients": "261",
        "SixteenOrigWritesThreads": "24",
    }
    # One share of writes (not a list) prints as it is.
    assert design_numbers("X", ref["design"]["replication"])["XWrites"] == "5"
