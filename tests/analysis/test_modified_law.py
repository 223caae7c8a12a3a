"""The interactive law with N counted inside the middleware (analysis.models.modified_law)."""

from __future__ import annotations

import pandas as pd
import pytest

from analysis.models import modified_law


def _point(point: str, middlewares: int, x: float, r: float, server: float, worker: float) -> dict:
    return {
        "point": point,
        "side": "middleware",
        "middlewares": middlewares,
        "throughput_ops_mean": x,
        "response_us_mean_mean": r,
        "server_us_mean_mean": server,
        "worker_us_mean_mean": worker,
    }


def test_law_holds_when_queue_and_workers_cover_the_response_time() -> None:
    # 1000 ops/s, 2 ms with a worker, 3 ms in the queue (Little: 3 waiting), 5 ms in all.
    table = modified_law.law_table(
        pd.DataFrame([_point("a", 1, 1000.0, 5000.0, 1900.0, 100.0)]), pd.Series({"a": 3.0})
    )
    row = table.iloc[0]
    assert row["jobs"] == pytest.approx(5.0)
    assert row["predicted_ops"] == pytest.approx(1000.0)
    assert row["relative_error"] == pytest.approx(0.0)


def test_time_before_the_queue_makes_the_prediction_fall_short() -> None:
    # 1 ms of the 6 ms is spent reading the request: neither queued nor with a worker.
    table = modified_law.law_table(
        pd.DataFrame([_point("a", 1, 1000.0, 6000.0, 2000.0, 0.0)]), pd.Series({"a": 3.0})
    )
    assert table.iloc[0]["relative_error"] == pytest.approx(5 / 6 - 1)


def test_each_middleware_adds_its_own_queue() -> None:
    # Two middlewares, 2000 ops/s together, 2 waiting in each queue: 2 + 2 * 2 = 6 inside.
    assert modified_law.jobs_in_middlewares(2000.0, 1000.0, 2.0, 2) == pytest.approx(6.0)


def test_points_without_a_queue_length_or_throughput_are_left_out() -> None:
    points = pd.DataFrame(
        [_point("a", 1, 1000.0, 5000.0, 2000.0, 0.0), _point("b", 1, 0.0, 5000.0, 2000.0, 0.0)]
    )
    table = modified_law.law_table(points, pd.Series({"b": 1.0}))
    assert table.empty


def test_bad_inputs_are_errors() -> None:
    with pytest.raises(ValueError, match="at least one middleware"):
        modified_law.jobs_in_middlewares(1.0, 1.0, 1.0, 0)
    with pytest.raises(ValueError, match="must not be negative"):
        modified_law.jobs_in_middlewares(1.0, -1.0, 1.0, 1)
    with pytest.raises(ValueError, match="must be positive"):
        modified_law.predicted_throughput(1.0, 0.0)
    with pytest.raises(ValueError, match="lacks the columns"):
        modified_law.law_table(pd.DataFrame({"point": []}), pd.Series(dtype=float))
