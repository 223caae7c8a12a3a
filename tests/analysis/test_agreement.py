"""The ratio of a new measurement to a reference dataset (analysis/agreement.py)."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from analysis import agreement


def _points(mean: float, std: float, reps: int, response: float = 1000.0) -> pd.DataFrame:
    rows = [
        {"point": p, "side": side, "type": kind, "repetitions": reps,
         "throughput_ops_mean": mean * k, "throughput_ops_std": std * k,
         "response_us_mean_mean": response, "response_us_mean_std": 10.0}
        for k, p in ((1, "vc=8"), (2, "vc=16"))
        for side in ("client", "middleware")
        for kind in ("all", "get")
    ]  # fmt: skip
    return pd.DataFrame(rows)


def test_equal_measurements_agree_and_a_shift_does_not() -> None:
    same = agreement.ratios(_points(1000, 20, 3), _points(1000, 20, 3), "f")
    assert list(same["point"]) == ["vc=8", "vc=16"]  # the clients' view of all requests only
    assert same["throughput_ratio"].tolist() == pytest.approx([1.0, 1.0])
    assert (same["throughput_low"] < 1).all() and (same["throughput_high"] > 1).all()
    shifted = agreement.ratios(_points(1200, 20, 3), _points(1000, 20, 3), "f")
    assert shifted["throughput_ratio"].tolist() == pytest.approx([1.2, 1.2])
    assert (shifted["throughput_low"] > 1).all()
    summary = agreement.summary(pd.concat([same, shifted.assign(family="g")]))
    assert summary.set_index("family")["throughput_agree"].to_dict() == {"f": 2, "g": 0}
    assert "\\texttt{f} & 2 & 1.000" in agreement.table(summary)


def test_one_repetition_gives_a_ratio_without_an_interval() -> None:
    rows = agreement.ratios(_points(900, math.nan, 1), _points(1000, 20, 3), "f")
    assert rows["throughput_ratio"].tolist() == pytest.approx([0.9, 0.9])
    assert rows["throughput_low"].isna().all()
    summary = agreement.summary(rows)
    assert summary.loc[0, "throughput_with_ci"] == 0
    assert "--" in agreement.table(summary)
