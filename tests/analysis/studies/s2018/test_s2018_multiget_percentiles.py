"""Multi-GET percentiles from histograms (analysis.studies.s2018.multiget_percentiles) on the
small multiget family of conftest.py (measured at s = 0.5)."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from analysis.scale_model import in_study_time
from analysis.studies.s2018 import multiget as mg
from analysis.studies.s2018 import multiget_percentiles as mp

Family = dict[str, pd.DataFrame]


@pytest.fixture
def hist(multiget_family: Family) -> pd.DataFrame:
    points = multiget_family["points"]
    level = mg.get_rows(in_study_time(points), "client").set_index("point")[["sharding", "size"]]
    return mp.study_histograms(
        multiget_family["histograms"], multiget_family["windows"], points, level
    )


def test_stable_histograms_keep_the_clients_run_and_the_middlewares_stable_windows(
    multiget_family: Family,
) -> None:
    h = mp.stable_histograms(multiget_family["histograms"], multiget_family["windows"])
    assert set(h.loc[h["side"] == "client", "window"]) == {-1}
    assert set(h.loc[h["side"] == "middleware", "window"]) == {0}


def test_study_histograms_are_in_the_study_time_with_their_level(
    multiget_family: Family, hist: pd.DataFrame
) -> None:
    assert hist["bucket_us"].max() == 4000.0  # 8 ms as measured, halved
    assert set(hist["sharding"]) == set(mg.SHARDING) and set(hist["size"]) == {1, 6}
    # A SET histogram, or one of a point without a level, is left out.
    extra = multiget_family["histograms"].iloc[[0]].assign(point="other")
    sets = multiget_family["histograms"].iloc[[0]].assign(type="set")
    more = pd.concat([multiget_family["histograms"], extra, sets], ignore_index=True)
    level = hist.drop_duplicates("point").set_index("point")[["sharding", "size"]]
    again = mp.study_histograms(more, multiget_family["windows"], multiget_family["points"], level)
    assert len(again) == len(hist)


def test_mean_percentiles_per_side_sharding_and_size(hist: pd.DataFrame) -> None:
    agg = mp.mean_percentiles(hist).set_index(["side", "sharding", "size"])
    sharded = agg.loc[("client", "sharded", 6)]
    # HdrHistogram's upper bounds: the median in the 1 ms bucket, the 99th in the tail's.
    assert sharded["p50_mean"] == 500.0 and sharded["p99_mean"] == 2000.0
    assert agg.loc[("client", "non-sharded", 6), "p99_mean"] == 4000.0
    # The middleware's buckets by lower bound: interpolated inside the bucket (450 µs, and
    # one bucket alone is 100 µs wide).
    assert agg.loc[("middleware", "sharded", 1), "p50_mean"] == pytest.approx(500.0)
    assert math.isnan(sharded["p50_ci_low"])  # one repetition: no interval


def test_mean_percentiles_of_no_histograms_keep_their_keys() -> None:
    empty = pd.DataFrame(columns=["run", "side", "sharding", "size", "bucket_us", "count"])
    assert list(mp.mean_percentiles(empty).columns) == ["side", "sharding", "size"]
