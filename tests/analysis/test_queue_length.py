"""Queue length per point over the measured windows (analysis.studies.s2018.queue_length)."""

from __future__ import annotations

import pandas as pd
import pytest

from analysis.studies.s2018 import queue_length


def _queue(rows: list[tuple[str, str, str, int, float]]) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=["run", "point", "source", "window", "queue_length_mean"])


def test_only_measured_windows_count_and_middlewares_are_averaged() -> None:
    queue = _queue(
        [
            ("p/rep1", "p", "mw1", 0, 100.0),  # warm-up: not a measured window
            ("p/rep1", "p", "mw1", 1, 2.0),
            ("p/rep1", "p", "mw1", 2, 4.0),
            ("p/rep1", "p", "mw2", 1, 6.0),
            ("p/rep1", "p", "mw2", 2, 8.0),
        ]
    )
    windows = pd.DataFrame(
        {
            "run": ["p/rep1"] * 3,
            "side": ["middleware", "middleware", "client"],
            "window": [1, 2, 0],  # the client's window 0 does not make window 0 measured
        }
    )
    out = queue_length.per_point(queue, windows).set_index("point")
    assert out.loc["p", "queue_length"] == pytest.approx(5.0)  # (3 + 7) / 2
    assert out.loc["p", "windows"] == 4


def test_repetitions_are_averaged() -> None:
    queue = _queue([("p/rep1", "p", "mw1", 1, 2.0), ("p/rep2", "p", "mw1", 1, 4.0)])
    windows = pd.DataFrame({"run": ["p/rep1", "p/rep2"], "side": "middleware", "window": 1})
    assert queue_length.per_point(queue, windows)["queue_length"].item() == pytest.approx(3.0)


def test_a_table_without_its_columns_is_an_error() -> None:
    with pytest.raises(ValueError, match="queue table lacks"):
        queue_length.per_point(pd.DataFrame({"run": []}), pd.DataFrame())
