"""Response-time percentiles of the multi-GET family from its histograms: the client's
whole-run histograms and the middleware's over its stable windows, in the study's time,
per run, then mean and interval over the repetitions."""

from __future__ import annotations

import pandas as pd

from analysis.aggregate import aggregate_points
from analysis.histograms import Bound, grouped_quantiles
from analysis.scale_model import in_study_time, with_scale

QUANTILES = (0.25, 0.5, 0.75, 0.9, 0.99)
METRICS = ("p25", "p50", "p75", "p90", "p99")
# The client's histograms are HdrHistogram's (highest value per bucket), the middleware's
# 100 µs buckets by lower bound.
BOUNDS: dict[str, Bound] = {"client": "upper", "middleware": "lower"}


def stable_histograms(hist: pd.DataFrame, windows: pd.DataFrame) -> pd.DataFrame:
    """Client whole-run histograms, and the middleware's over its stable windows only."""
    client = hist[(hist["side"] == "client") & (hist["window"] < 0)]
    stable = windows.loc[windows["side"] == "middleware", ["run", "window"]].drop_duplicates()
    mw = hist[hist["side"] == "middleware"].merge(stable, on=["run", "window"], how="inner")
    return pd.concat([client, mw], ignore_index=True)


def study_histograms(
    hist: pd.DataFrame, windows: pd.DataFrame, points: pd.DataFrame, level: pd.DataFrame
) -> pd.DataFrame:
    """The GET and multi-GET histograms (stable_histograms) in the study's time, with each
    point's `sharding` and `size` (`level`, by point); histograms of points without a level
    are left out. `points`: the family's points as measured, whose scale each takes."""
    # Only points with a level: those the validation kept, each with its scale in `points`.
    hist = hist[hist["type"].isin(["get", "multiget"]) & hist["point"].isin(level.index)]
    hist = stable_histograms(hist, windows)
    hist = in_study_time(with_scale(hist, points, on="point")).join(level, on="point")
    return hist.dropna(subset=["sharding"])


def mean_percentiles(hist: pd.DataFrame) -> pd.DataFrame:
    """Percentiles per run from its histograms, then mean and interval over repetitions, per
    side, sharding and size (`<p>_mean`, `_ci_low`, `_ci_high` for each of METRICS)."""
    per_run = grouped_quantiles(hist, ["run", "side", "sharding", "size"], QUANTILES, BOUNDS)
    per_run["repetition"] = per_run["run"]
    return (
        aggregate_points(per_run, by=("side", "sharding", "size"), metrics=METRICS)
        if not per_run.empty
        else pd.DataFrame(columns=["side", "sharding", "size"])
    )
