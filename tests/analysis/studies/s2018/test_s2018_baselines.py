"""The baselines section (analysis.studies.s2018.baselines) from the small baselines of
conftest.py: every output, and the macros in the order the section defines them."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from analysis.studies.s2018 import baseline_maxima
from analysis.studies.s2018 import baselines as section_module

Baselines = tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame, pd.DataFrame]


def test_sources_name_each_tables_seed(reference2018: dict) -> None:
    text = "".join(section_module.sources(reference2018))
    assert "\\newcommand{\\BaseDirectSourceSeedFour}{seed 004, Table 3}" in text
    assert "\\newcommand{\\BaseMwSource}{" in text


def test_report_writes_every_figure_and_table(
    baselines: Baselines, reference2018: dict, tmp_path: Path
) -> None:
    figures = section_module.Figures(
        *(str(tmp_path / f"{f}.pdf") for f in section_module.Figures._fields)
    )
    section = section_module.report(*baselines, reference2018, figures)
    assert all(Path(p).stat().st_size > 0 for p in figures)
    assert section._fields == (
        "tab_direct", "tab_mw", "tab_seeds_mw", "tab_seeds_law", "tab_linkcap", "numbers",
    )  # fmt: skip
    direct, mw = baselines[:2]
    assert section.tab_direct == baseline_maxima.direct_table(direct, reference2018)[0]
    assert section.tab_mw == baseline_maxima.middleware_table(mw, reference2018)[0]
    names = [line.split("}")[0] for line in section.numbers.splitlines()]
    assert names[0] == "\\newcommand{\\BaseDirectSourceSeedFour"
    assert names[-1] == "\\newcommand{\\ModLawNetShare"
    order = ["BaseDirectCiNote", "BaseMwOneMiddlewareReadOnlyX", "SeedsLaw", "BaseLawPoints",
             "BaseBoundCase", "LinkScale", "MwStatsWorkersLow", "ModLawPoints"]  # fmt: skip
    at = [section.numbers.index(name) for name in order]
    assert at == sorted(at)
