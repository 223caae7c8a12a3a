"""The middleware's queue length per point: the time-weighted mean length of its measured
windows, per middleware.

queue.csv has a row for every window (also warm-up, cool-down and idle ones); the windows
kept for a run's statistics are its middleware rows in the trimmed windows table, so only
those count. With several middlewares the value is the mean over them: the length one
middleware's queue had, which is what a worker of that middleware sees.
"""

from __future__ import annotations

import pandas as pd

_QUEUE = ("run", "point", "source", "window", "queue_length_mean")
_WINDOWS = ("run", "side", "window")


def per_point(queue: pd.DataFrame, windows: pd.DataFrame) -> pd.DataFrame:
    """`point`, `queue_length` (mean over the measured windows of each middleware, then over
    the middlewares and over the repetitions) and `windows` (the windows counted)."""
    for name, table, columns in (("queue", queue, _QUEUE), ("windows", windows, _WINDOWS)):
        missing = [c for c in columns if c not in table.columns]
        if missing:
            raise ValueError(f"the {name} table lacks the columns {missing}")
    kept = windows.loc[windows["side"] == "middleware", ["run", "window"]].drop_duplicates()
    q = queue.merge(kept, on=["run", "window"])
    if q.empty:
        return pd.DataFrame(columns=["point", "queue_length", "windows"])
    per_source = (
        q.groupby(["point", "run", "source"])
        .agg(queue_length=("queue_length_mean", "mean"), windows=("window", "size"))
        .reset_index()
    )
    per_run = (
        per_source.groupby(["point", "run"])
        .agg(queue_length=("queue_length", "mean"), windows=("windows", "sum"))
        .reset_index()
    )
    return (
        per_run.groupby("point")
        .agg(queue_length=("queue_length", "mean"), windows=("windows", "sum"))
        .reset_index()
    )
