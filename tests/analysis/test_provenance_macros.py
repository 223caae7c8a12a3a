"""The report's `\\Data...` macros (analysis/provenance.py): a share of the machine that rounds
to zero says how small it is instead of printing 0.0 %."""

from __future__ import annotations

from analysis import provenance


def _macro(tex: str, name: str) -> str:
    head = rf"\newcommand{{\{name}}}{{"
    start = tex.index(head) + len(head)
    return tex[start : tex.index("}\n", start)]


def test_steal_that_rounds_to_zero_is_not_printed_as_zero_point_zero() -> None:
    doc = {"steal_share": {"median": 0.0002, "max": 0.192}, "busy_share": {"median": 0.0}}
    tex = provenance.macros(doc, "data/default/x")
    assert _macro(tex, "DataStealMedian") == r"under 0.1\,\%"
    assert _macro(tex, "DataStealMax") == r"19.2\,\%"
    assert _macro(tex, "DataBusyMedian") == r"0\,\%"
