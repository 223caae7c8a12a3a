"""Client- and middleware-side percentiles and histograms: the middleware keeps only its
stable windows, the clients' whole-run histogram is used whole."""

from __future__ import annotations

import pandas as pd
import pytest

from analysis.studies.s2016.sides import point_histogram, side_percentiles


def tables() -> tuple[pd.DataFrame, pd.DataFrame]:
    rows = [
        # client: whole run, exact values
        *({"side": "client", "window": -1, "bucket_us": b, "count": 1} for b in (10, 20, 30, 40)),
        # middleware: a stable window with 100 µs buckets, and an unstable one far away
        {"side": "middleware", "window": 1, "bucket_us": 0, "count": 2},
        {"side": "middleware", "window": 1, "bucket_us": 100, "count": 2},
        {"side": "middleware", "window": 2, "bucket_us": 9000, "count": 100},
    ]
    h = pd.DataFrame(rows).assign(run="f/p/rep1", point="p", type="get")
    w = pd.DataFrame([{"run": "f/p/rep1", "side": "middleware", "window": 1}])
    return h, w


def test_middleware_keeps_stable_windows_only() -> None:
    h, w = tables()
    out = side_percentiles(h, w, (0.5,), ["get"]).set_index("side")
    assert out.loc["middleware", "p50"] == pytest.approx(100.0)
    assert out.loc["client", "p50"] < 40


def test_point_histogram_per_side() -> None:
    h, w = tables()
    mw = point_histogram(h, w, "p", "middleware")
    assert dict(mw) == {0: 2, 100: 2}
    assert point_histogram(h, w, "p", "client").sum() == 4
    with pytest.raises(ValueError, match="side"):
        point_histogram(h, w, "p", "server")
