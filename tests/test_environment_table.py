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
