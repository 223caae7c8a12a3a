"""Formats the 2016 families share: ms from µs, ranges, the original's design."""

from __future__ import annotations

from analysis.report import figures as fg
from analysis.studies.s2016.formats import design_numbers, ms, value_range


def test_microseconds_print_as_milliseconds_and_a_missing_value_as_a_dash() -> None:
    assert ms(2500) == "2.500"
    assert ms(None) == fg.MISSING
    assert ms(float("nan")) == fg.MISSING


def test_a_range_prints_once_where_both_ends_print_alike() -> None:
    assert value_range(0.501, 0.504, fg.pct, 0) == r"50\,\%"
    assert value_range(0.2, 0.9, fg.pct, 0) == r"20\,\% to 90\,\%"
    assert value_range(3, 7, str) == "3 to 7"


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
