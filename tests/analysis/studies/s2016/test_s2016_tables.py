"""The highest throughput per pool size, and ours at the original's pool size."""

from __future__ import annotations

import pandas as pd

from analysis.studies.s2016.tables import at_original, highest_per_pool

CLIENT = pd.DataFrame(
    {
        "workers": [8, 8, 24, 24],
        "clients_total": [20, 200, 20, 200],
        "throughput_ops_mean": [1000.0, 3000.0, 3100.0, 2000.0],
        "point": ["a", "b", "c", "d"],
    }
)


def test_the_highest_point_of_each_pool_size() -> None:
    best = highest_per_pool(CLIENT)
    assert best.index.tolist() == [8, 24]
    assert best["point"].tolist() == ["b", "c"]
    assert best.loc[24, "clients_total"] == 20


def test_ours_at_the_original_pool_size_or_none() -> None:
    best = highest_per_pool(CLIENT)
    assert at_original(best, {"threads_per_pool": 24})["throughput_ops_mean"] == 3100.0
    assert at_original(best, {"threads_per_pool": 32}) is None
