"""Per-run component times are count-weighted like the response time, so a nearly empty
window with extreme times (a stall at the edge of the stable interval) cannot make the
components exceed the response time they are part of."""

from __future__ import annotations

import pandas as pd
import pytest

from analysis import aggregate


def test_components_are_weighted_by_requests() -> None:
    base = {"run": "r", "point": "p", "repetition": 1, "side": "middleware", "type": "get",
            "keys": 1}  # fmt: skip
    windows = pd.DataFrame(
        [
            {**base, "window": 1, "count": 1000, "throughput_ops": 1000.0, "net_us_mean": 10.0,
             "queue_us_mean": 100.0, "worker_us_mean": 40.0, "server_us_mean": 350.0,
             "response_us_mean": 500.0},
            {**base, "window": 2, "count": 2, "throughput_ops": 2.0, "net_us_mean": 10.0,
             "queue_us_mean": 90_000.0, "worker_us_mean": 40.0, "server_us_mean": 9_950.0,
             "response_us_mean": 100_000.0},
        ]
    )  # fmt: skip
    run = aggregate.summarise_runs(windows).iloc[0]
    assert run["queue_us_mean"] == pytest.approx((1000 * 100 + 2 * 90_000) / 1002)
    assert run["server_us_mean"] == pytest.approx((1000 * 350 + 2 * 9_950) / 1002)
    parts = run[["net_us_mean", "queue_us_mean", "worker_us_mean", "server_us_mean"]].sum()
    assert parts == pytest.approx(run["response_us_mean"])
    assert run["throughput_ops"] == pytest.approx(501.0)  # windows, not requests, average
