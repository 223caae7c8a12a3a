"""Computations behind the 2016 study's section: statistics of per-run values over
repetitions, the choice of the maximum-throughput configuration, the highest throughput per
pool size and throughput changes relative to a base case (the per-run response-time
percentiles are analysis.histograms.run_percentiles)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import pandas as pd

from analysis.aggregate import confidence_interval

# The maximum-throughput configuration is the cheapest whose throughput is within this share
# of the highest (the 2016 study's choice; the queueing models start from the same point).
MAX_TOLERANCE = 0.05
WORKERS = "middleware.workers"  # the points' worker count: read threads per pool (the study's T)


def point_statistics(per_run: pd.DataFrame, metrics: Sequence[str]) -> pd.DataFrame:
    """Mean and `CI_LEVEL` confidence interval over repetitions of each point (NaN bounds
    with fewer than `MIN_CI_N`)."""
    rows = []
    for point, g in per_run.groupby("point", sort=True):
        row: dict[str, object] = {"point": point, "repetitions": len(g)}
        for m in metrics:
            values = g[m].dropna().to_numpy(float)
            row[f"{m}_mean"] = float(values.mean()) if len(values) else math.nan
            lo, hi = confidence_interval(values)
            row[f"{m}_ci_low"], row[f"{m}_ci_high"] = lo, hi
        rows.append(row)
    return pd.DataFrame(rows)


def choose_max(
    points: pd.DataFrame,
    tolerance: float = MAX_TOLERANCE,
    x: str = "clients_total",
    w: str = "workers",
) -> pd.Series:
    """The maximum-throughput configuration: among points whose mean throughput is within
    `tolerance` of the highest, the one with the fewest workers, then the fewest clients."""
    if points.empty:
        raise ValueError("no points to choose from")
    best = points["throughput_ops_mean"].max()
    near = points[points["throughput_ops_mean"] >= (1 - tolerance) * best]
    return near.sort_values([w, x]).iloc[0]


def highest_per_pool(client: pd.DataFrame) -> pd.DataFrame:
    """Per pool size: the point with the highest mean client throughput (workers,
    clients_total, throughput_ops_mean), by pool size."""
    top = client.loc[client.groupby("workers")["throughput_ops_mean"].idxmax()]
    return top.set_index("workers")[["clients_total", "throughput_ops_mean", "point"]]


def at_original(best: pd.DataFrame, mx: Mapping) -> pd.Series | None:
    """Our highest throughput with the original's pool size (None where we did not run it)."""
    workers = mx["threads_per_pool"]
    return best.loc[workers] if workers in best.index else None


def relative_change(
    points: pd.DataFrame, value: str, keys: Sequence[str], base: Mapping[str, object]
) -> pd.Series:
    """(value − value at the base) / value at the base, in percent. Rows are matched to the
    base on `keys`; factors named in `base` take the base's level. NaN where no base row."""
    base_rows = points.copy()
    for k, v in base.items():
        base_rows = base_rows[base_rows[k].astype(str) == str(v)]
    other = [k for k in keys if k not in base]
    ref = base_rows.set_index(other)[value] if other else None
    out = []
    for _, row in points.iterrows():
        if ref is None:
            b = base_rows[value].iloc[0] if len(base_rows) else math.nan
        else:
            idx = tuple(row[k] for k in other) if len(other) > 1 else row[other[0]]
            b = ref.get(idx, math.nan)
        out.append(100 * (row[value] - b) / b if b and math.isfinite(b) else math.nan)
    return pd.Series(out, index=points.index, dtype=float)


# memaslap sets a window of keys per connection through the middleware before it starts
# timing. In a read-only family those SETs are the only ones the middleware sees, so its
# GETs are the timed load; these helpers keep the middleware's side to them.


def read_only_points(points: pd.DataFrame) -> pd.DataFrame:
    """A read-only family's points: the clients' (all requests) and the middleware's GETs."""
    client = points[(points["side"] == "client") & (points["type"] == "all")]
    middleware = points[(points["side"] == "middleware") & (points["type"] == "get")]
    return pd.concat([client, middleware], ignore_index=True)


def get_windows(windows: pd.DataFrame) -> pd.DataFrame:
    """The (run, window) pairs in which the middleware served GETs."""
    mw = windows[(windows["side"] == "middleware") & (windows["type"] == "get")]
    return mw.loc[mw["count"] > 0, ["run", "window"]].drop_duplicates()


def in_get_windows(frame: pd.DataFrame, windows: pd.DataFrame) -> pd.DataFrame:
    """Rows of a per-window middleware table (pools, queue) in windows with GETs."""
    return frame.merge(get_windows(windows), on=["run", "window"])
