"""Percentiles of bucketed distributions and re-bucketing with an overflow."""

import math

import numpy as np
import pandas as pd
import pytest

from analysis.histograms import (
    HistogramError,
    common_edges,
    grouped_quantiles,
    histogram_quantiles,
    percentile_name,
    rebin,
)


def test_lower_bound_buckets_interpolate_inside_the_bucket() -> None:
    # 10 requests in [0, 100), 10 in [100, 200): the median is the boundary, the 75th
    # percentile halfway through the second bucket.
    got = histogram_quantiles(np.array([0.0, 100.0]), np.array([10, 10]), [0.5, 0.75])
    assert got == pytest.approx([100.0, 150.0])


def test_upper_bound_buckets_report_the_bucket_value_like_hdrhistogram() -> None:
    # Buckets keyed by their highest value, widths uneven: a percentile is a bucket's value.
    buckets = np.array([1000.0, 110.0, 520.0])
    counts = np.array([1, 5, 4])
    got = histogram_quantiles(buckets, counts, [0.5, 0.9, 1.0], bound="upper")
    assert got == [110.0, 520.0, 1000.0]


def test_empty_histogram_has_nan_percentiles() -> None:
    got = histogram_quantiles(np.array([0.0]), np.array([0]), [0.5], bound="upper")
    assert math.isnan(got[0])


@pytest.mark.parametrize(
    ("buckets", "counts", "qs", "bound"),
    [
        ([0.0], [1], [0.0], "lower"),
        ([0.0], [1], [1.5], "lower"),
        ([0.0, 1.0], [1], [0.5], "lower"),
        ([0.0], [-1], [0.5], "lower"),
        ([0.0], [1], [0.5], "middle"),
    ],
)
def test_bad_input_is_a_clear_error(buckets, counts, qs, bound) -> None:
    with pytest.raises(HistogramError):
        histogram_quantiles(np.array(buckets), np.array(counts), qs, bound=bound)


def test_grouped_quantiles_pools_rows_and_uses_each_sides_convention() -> None:
    hist = pd.DataFrame(
        {
            "side": ["client", "client", "middleware", "middleware", "middleware"],
            "bucket_us": [300.0, 300.0, 0.0, 100.0, 100.0],
            "count": [1, 1, 2, 1, 1],
        }
    )
    got = grouped_quantiles(hist, ["side"], [0.5], {"client": "upper", "middleware": "lower"})
    assert got.set_index("side")["p50"].to_dict() == pytest.approx(
        {"client": 300.0, "middleware": 100.0}
    )


def test_percentile_names() -> None:
    assert [percentile_name(q) for q in (0.25, 0.5, 0.99, 0.999)] == [
        "p25",
        "p50",
        "p99",
        "p99.9",
    ]


def test_rebin_keeps_the_overflow_apart() -> None:
    b = rebin(
        np.array([10.0, 150.0, 250.0, 900.0]), np.array([1, 2, 3, 4]), np.array([0, 100, 200])
    )
    assert b.counts.tolist() == [1, 2]
    assert b.overflow == 7
    frac, over = b.fractions()
    assert frac.tolist() == pytest.approx([0.1, 0.2])
    assert over == pytest.approx(0.7)


def test_common_edges_are_whole_multiples_of_the_measured_bucket() -> None:
    edges = common_edges(top_us=10_000.0, unit_us=5.0, max_buckets=60)
    width = edges[1] - edges[0]
    assert width % 5.0 == 0
    assert len(edges) - 1 <= 60
    assert edges[-1] >= 10_000.0
    with pytest.raises(HistogramError):
        common_edges(100.0, 0.0, 10)
