"""The 2016 section's computations: histogram quantiles, the maximum-throughput choice and
relative throughput changes."""

import math

import numpy as np
import pandas as pd
import pytest

from analysis.histograms import histogram_quantiles, run_percentiles
from analysis.studies.s2016.tables import (
    choose_max,
    point_statistics,
    relative_change,
)


def test_histogram_quantiles_match_samples_to_bucket_width() -> None:
    rng = np.random.default_rng(7)
    samples = rng.exponential(2000.0, 200_000)
    buckets = (samples // 100) * 100
    counts = pd.Series(buckets).value_counts().sort_index()
    qs = (0.5, 0.9, 0.99)
    got = histogram_quantiles(counts.index.to_series(), counts, qs)
    for q, g in zip(qs, got, strict=True):
        assert g == pytest.approx(np.quantile(samples, q), abs=100)


def test_histogram_quantiles_of_empty_histogram_are_nan() -> None:
    got = histogram_quantiles(pd.Series([0.0]), pd.Series([0]), (0.5,))
    assert math.isnan(got[0])


def test_run_percentiles_use_only_stable_middleware_windows() -> None:
    hist = pd.DataFrame(
        {
            "run": ["r"] * 3,
            "point": ["p"] * 3,
            "side": ["middleware"] * 3,
            "window": [0, 1, 1],
            "type": ["get"] * 3,
            "bucket_us": [50_000, 100, 100],
            "count": [1000, 10, 10],
        }
    )
    # Window 0 (the warm-up, with its slow requests) is not among the stable windows.
    windows = pd.DataFrame({"run": ["r"], "side": ["middleware"], "window": [1]})
    got = run_percentiles(hist, windows, qs=(0.5, 0.9))
    assert got["p90"].iloc[0] < 200


def test_point_statistics_give_an_interval_from_three_repetitions_only() -> None:
    per_run = pd.DataFrame({"point": ["a", "a", "a", "b", "b"], "x": [1.0, 2.0, 3.0, 5.0, 7.0]})
    got = point_statistics(per_run, ["x"]).set_index("point")
    assert got.loc["a", "x_mean"] == 2.0
    assert got.loc["a", "x_ci_low"] < 2.0 < got.loc["a", "x_ci_high"]
    assert got.loc["b", "x_mean"] == 6.0
    assert math.isnan(got.loc["b", "x_ci_low"])


def test_choose_max_prefers_fewest_workers_then_clients_within_tolerance() -> None:
    points = pd.DataFrame(
        {
            "workers": [8, 24, 24, 32],
            "clients_total": [100, 260, 300, 200],
            "throughput_ops_mean": [9000.0, 13400.0, 13500.0, 13300.0],
        }
    )
    chosen = choose_max(points, tolerance=0.05)
    assert (chosen["workers"], chosen["clients_total"]) == (24, 260)
    assert choose_max(points, tolerance=0.0)["clients_total"] == 300


def test_relative_change_against_same_configuration_and_single_base() -> None:
    points = pd.DataFrame(
        {
            "servers": [3, 3, 5, 5],
            "writes": ["1", "10", "1", "10"],
            "x": [100.0, 90.0, 80.0, 60.0],
        }
    )
    same = relative_change(points, "x", ["servers", "writes"], {"writes": "1"})
    assert same.tolist() == pytest.approx([0.0, -10.0, 0.0, -25.0])
    single = relative_change(points, "x", ["servers", "writes"], {"servers": 3, "writes": "1"})
    assert single.tolist() == pytest.approx([0.0, -10.0, -20.0, -40.0])
    missing = relative_change(points, "x", ["servers", "writes"], {"servers": 7, "writes": "1"})
    assert missing.isna().all()
