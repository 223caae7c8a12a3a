"""The middlewares' statistics per worker count (analysis.studies.s2018.mw_statistics) on the
small baselines of conftest.py."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from analysis.report import figures as fg
from analysis.scale_model import in_study_time
from analysis.studies.s2018 import mw_statistics

Baselines = tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame, pd.DataFrame]


@pytest.fixture
def stats(baselines: Baselines) -> pd.DataFrame:
    _, mw, queue, windows = baselines
    return mw_statistics.statistics_points(in_study_time(mw), queue, windows)


def test_statistics_points_add_the_queue_length_per_middleware(stats: pd.DataFrame) -> None:
    assert set(stats["side"]) == {"middleware"} and len(stats) == 16
    row = stats.set_index("point").loc["two_middlewares-write-only-32-48"]
    # N / 8 in each of the two middlewares: the mean over them, not their sum.
    assert row["queue_len_mean"] == 6.0 and row["workers"] == 32
    assert np.isnan(row["queue_len_ci_low"])


def test_statistics_macros_at_the_most_clients(stats: pd.DataFrame, tmp_path: Path) -> None:
    fig = tmp_path / "stats.pdf"
    text = "".join(mw_statistics.middleware_statistics(stats, str(fig)))
    assert fig.stat().st_size > 0
    assert "\\newcommand{\\MwStatsWorkersLow}{8}" in text
    assert "\\newcommand{\\MwStatsWorkersHigh}{32}" in text
    # One middleware, 8 workers, 48 clients: X 4000/s in the study's time, R_mw 11.9 ms of
    # which 30 % waiting for memcached; Little: 8 workers / 4000 per s = 2 ms.
    assert "\\newcommand{\\MwStatsReadOnlyServerLow}{3.6}" in text
    assert "\\newcommand{\\MwStatsReadOnlyLittleLow}{2.0}" in text
    assert "\\newcommand{\\MwStatsReadOnlyQueueLenLow}{6.0}" in text
    assert "\\newcommand{\\MwStatsWriteOnlyClientsHigh}{48}" in text
    # Two middlewares over one: the same queue per middleware, and half the server time.
    assert "\\newcommand{\\MwStatsQueueTwoOverOne}{1.00}" in text
    ratios = [(48 / 4000 * 1e6 - 200) / (48 / 2000 * 1e6 - 200),
              (48 / 6000 * 1e6 - 200) / (48 / 3000 * 1e6 - 200)]  # fmt: skip
    expected = fg.num(np.median(ratios * 2), 2)
    assert f"\\newcommand{{\\MwStatsServerTwoOverOne}}{{{expected}}}" in text
