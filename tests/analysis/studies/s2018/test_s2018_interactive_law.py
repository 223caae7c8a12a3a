"""The baselines' interactive-law checks (analysis.studies.s2018.interactive_law) on the small
baselines of conftest.py."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from analysis.scale_model import in_study_time
from analysis.studies.s2018 import interactive_law, mw_statistics

Baselines = tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame, pd.DataFrame]


def test_interactive_law_finds_the_point_that_breaks_it(
    baselines: Baselines, tmp_path: Path
) -> None:
    direct, mw = baselines[:2]
    fig = tmp_path / "law.pdf"
    text = "".join(interactive_law.interactive_law(direct, mw, str(fig)))
    assert fig.stat().st_size > 0
    # Every client point of both families; one is 10 % slower than N / X: (X - X/1.1) / X.
    assert "\\newcommand{\\BaseLawPoints}{24}" in text
    assert "\\newcommand{\\BaseLawMaxDev}{9.1\\,\\%}" in text
    assert "\\newcommand{\\BaseLawMaxDevPoint}{one server, read-only, 24 clients}" in text
    assert "\\newcommand{\\BaseLawMaxDevTimeouts}{0}" in text
    assert "\\newcommand{\\BaseLawMedianDev}{0.0\\,\\%}" in text


def test_modified_law_predicts_from_the_requests_inside_the_middleware(
    baselines: Baselines, tmp_path: Path
) -> None:
    _, mw, queue, windows = baselines
    m = mw_statistics.statistics_points(in_study_time(mw), queue, windows)
    fig = tmp_path / "law-mod.pdf"
    text = "".join(interactive_law.modified_interactive_law(m, str(fig)))
    assert fig.stat().st_size > 0
    assert "\\newcommand{\\ModLawPoints}{16}" in text
    assert "\\newcommand{\\ModLawFewClients}{6}" in text
    assert "\\newcommand{\\ModLawManyClients}{48}" in text
    # One middleware, 8 workers, 48 clients (study time): X = 4000, R_mw = 11.9 ms, of which
    # 60 % held by a worker, and 6 requests queued: (X T_w + Q) / R_mw.
    x, r_mw = 4000.0, 11.9e-3
    predicted = (x * 0.6 * r_mw + 6) / r_mw
    law = interactive_law.modified_law.law_table(m, m.set_index("point")["queue_len_mean"])
    row = law.set_index("point").loc["one_middleware-read-only-8-48"]
    assert row["predicted_ops"] == pytest.approx(predicted)
    assert interactive_law.LAW_SERIES[0] == ("one_middleware", "read-only", "o")
