"""The multi-GET figures (analysis.studies.s2018.multiget_figures) on the small multiget
family of conftest.py (measured at s = 0.5)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from analysis.scale_model import in_study_time
from analysis.studies.s2018 import multiget as mg
from analysis.studies.s2018 import multiget_figures as mf
from analysis.studies.s2018 import multiget_percentiles as mp

Family = dict[str, pd.DataFrame]


@pytest.fixture
def study(multiget_family: Family) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The points in the study's time and the histograms of six-key requests."""
    points = multiget_family["points"]
    pts = in_study_time(points)
    level = mg.get_rows(pts, "client").set_index("point")[["sharding", "size"]]
    hist = mp.study_histograms(
        multiget_family["histograms"], multiget_family["windows"], points, level
    )
    return pts, hist[hist["size"] == 6]


def test_histogram_figure_keeps_what_lies_above_the_buckets_apart(
    study: tuple[pd.DataFrame, pd.DataFrame], tmp_path: Path
) -> None:
    _, six = study
    # Buckets up to 1.05 x 1500 µs, 50 µs wide (the middleware's 100 µs at s = 0.5).
    pct = pd.DataFrame({"side": ["client"], "sharding": ["sharded"], "p50": [500.0],
                        "p99": [1500.0]})  # fmt: skip
    fig = tmp_path / "hist.pdf"
    h = mf.histogram_figure(six, pct, 50.0, str(fig))
    assert fig.stat().st_size > 0
    assert h.width == 50.0 and h.edges[-1] == 1600.0 and len(h.edges) == 33
    # 5 of 100 client requests at 2 (4) ms in the study's time lie above 1.6 ms.
    assert h.overflow[("sharded", "client")] == pytest.approx(0.05)
    assert h.overflow[("non-sharded", "client")] == pytest.approx(0.05)
    assert h.overflow[("sharded", "middleware")] == 0.0


def test_histogram_figure_without_percentiles_still_has_buckets(
    study: tuple[pd.DataFrame, pd.DataFrame], tmp_path: Path
) -> None:
    _, six = study
    empty = pd.DataFrame(columns=["side", "sharding", "p50", "p99"])
    h = mf.histogram_figure(six.iloc[0:0], empty, 50.0, str(tmp_path / "hist.pdf"))
    assert len(h.edges) == mf.HIST_BUCKETS + 1 and h.overflow == {}


def test_percentile_and_split_figures(
    study: tuple[pd.DataFrame, pd.DataFrame], tmp_path: Path
) -> None:
    pts, six = study
    agg = mp.mean_percentiles(six)
    paths = [tmp_path / "percentiles.pdf", tmp_path / "split.pdf"]
    mf.percentile_figure(mg.get_rows(pts, "client"), agg, [1, 6], str(paths[0]))
    # A sharding level without points gets a note instead of lines.
    split = mg.time_split(pts)
    mf.split_figure(split[split["sharding"] == "sharded"], [1, 6], str(paths[1]))
    assert all(p.stat().st_size > 0 for p in paths)
