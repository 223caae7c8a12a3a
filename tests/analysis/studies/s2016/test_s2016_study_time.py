"""A family's tables in the study's time, each row by the scale of its point."""

from __future__ import annotations

import pandas as pd
import pytest

from analysis.studies.s2016.study_time import by_points, family_tables

POINTS = pd.DataFrame(
    {"point": ["p", "q"], "scale": [0.5, 0.25], "throughput_ops_mean": [100.0, 100.0]}
)
WINDOWS = pd.DataFrame(
    {"run": ["f/p/rep1", "f/q/rep1"], "point": ["p", "q"], "response_us_mean": [1000.0, 1000.0]}
)


def test_a_per_point_table_takes_its_points_scale() -> None:
    out = by_points(WINDOWS, POINTS)
    # Times * s: the scaled system runs 1/s times slower than the study's.
    assert out["response_us_mean"].tolist() == [500.0, 250.0]
    assert (out["time_base"] == "study").all()


def test_family_tables_rescale_points_and_per_point_tables_and_keep_the_others() -> None:
    other = pd.DataFrame({"run": ["f/p/rep1"], "status": ["ok"]})
    out = family_tables({"points": POINTS, "windows": WINDOWS, "other": other})
    assert out["points"]["throughput_ops_mean"].tolist() == [200.0, 400.0]  # throughput / s
    assert out["windows"]["response_us_mean"].tolist() == [500.0, 250.0]
    assert out["other"] is other
    with pytest.raises(KeyError):
        family_tables({"windows": WINDOWS})
