"""Numbers written into the report's sentences (analysis/report/figures.py)."""

from __future__ import annotations

from analysis.report import figures as fg


def test_a_count_takes_the_plural_unless_it_is_one() -> None:
    assert fg.counted(1, "repetition") == "1 repetition"
    assert fg.counted(4, "client count") == "4 client counts"
    assert fg.counted(0, "point") == "0 points"
    assert fg.counted(2, "analysis", "analyses") == "2 analyses"


def test_a_grouped_tabular_spans_and_rules_each_group_after_the_lead_columns() -> None:
    rows: list[list[str] | str] = [
        ["1", "a", "b", "c", "d"],
        r"\midrule",
        ["2", "e", "f", "g", "h"],
    ]
    text = fg.grouped_tabular(["N"], ["$S=1$", "$S=2$"], 2, ["", "x", "y", "x", "y"], rows, "lrrrr")
    lines = text.splitlines()
    assert lines[0] == r"\begin{tabular}{lrrrr}"
    assert lines[2] == r"N & \multicolumn{2}{c}{$S=1$} & \multicolumn{2}{c}{$S=2$} \\"
    assert lines[3] == r"\cmidrule(lr){2-3} \cmidrule(lr){4-5}"
    assert r"1 & a & b & c & d \\" in lines and r"\midrule" in lines[6:]
    # Every row has as many cells as the specification has columns.
    for line in lines:
        if line.endswith(r"\\") and "multicolumn" not in line:
            assert line.count("&") == 4, line


def test_a_grouped_tabular_takes_one_width_per_group() -> None:
    rows: list[list[str] | str] = [["1", "a", "b", "c"]]
    text = fg.grouped_tabular(["N"], ["$S=1$", "$S=2$"], [2, 1], ["", "x", "y", "z"], rows, "lrrr")
    assert r"N & \multicolumn{2}{c}{$S=1$} & \multicolumn{1}{c}{$S=2$} \\" in text
    assert r"\cmidrule(lr){2-3} \cmidrule(lr){4-4}" in text
