"""The environment table is valid LaTeX for any version string."""

from __future__ import annotations

from analysis.environment_table import render
from analysis.latex import escape


def test_escape_special_characters() -> None:
    assert escape("a_b & 100% #1 {x} ~ ^ $ \\") == (
        r"a\_b \& 100\% \#1 \{x\} \textasciitilde{} \textasciicircum{} \$ \textbackslash{}"
    )


def test_render_marks_missing_tools() -> None:
    tex = render({"memcached": "memcached 1.6.18", "memtier_benchmark": None})
    assert r"memtier\_benchmark & not installed \\" in tex
    assert r"memcached & memcached 1.6.18 \\" in tex
    assert tex.count(r"\toprule") == 1


def test_the_build_machine_is_named_where_it_differs() -> None:
    measured = {"memcached": "memcached 1.6.18", "snakemake": "9.13.7"}
    tex = render(measured, {"memcached": "memcached 1.6.18", "snakemake": "9.17.3"})
    assert r"Tool & Measured with & This report built with (where it differs) \\" in tex
    assert r"memcached & memcached 1.6.18 &  \\" in tex
    assert r"snakemake & 9.13.7 & 9.17.3 \\" in tex
    # A machine that only rebuilds the report lacks the systems.
    assert r"memcached & memcached 1.6.18 & not installed \\" in render(measured, {})
    # The same tools: one column, as without a build record.
    assert render(measured, dict(measured)) == render(measured)
