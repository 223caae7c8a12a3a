"""Numbers written into the report's sentences (analysis/report/figures.py)."""

from __future__ import annotations

from analysis.report import figures as fg


def test_a_count_takes_the_plural_unless_it_is_one() -> None:
    assert fg.counted(1, "repetition") == "1 repetition"
    assert fg.counted(4, "client count") == "4 client counts"
    assert fg.counted(0, "point") == "0 points"
    assert fg.counted(2, "analysis", "analyses") == "2 analyses"
