"""Per-pool statistics of the middleware: how busy each pool's threads are, and the queue and
server times of the parts that passed through it.

Input tables are the tidy `pools` and `pool_requests` (analysis.parse), usually restricted to
the stable windows. A pool is `shared` (design 2018) or `read`/`write` of one memcached server
(design 2016). Percentiles of a run are the count-weighted means of the per-window, per-pool
percentiles the middleware wrote: the middleware keeps no histogram of queue and server
times across windows, and over stable windows the per-window percentiles differ little.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pandas as pd

RUN = ["run", "point", "repetition"]
QUANTILES = ("p50", "p90", "p99")
METRICS = ("queue", "server", "response")
KINDS = ("read", "write", "shared")


def pool_name(pool: str, server: object) -> str:
    """`read 2`, `write 0`, `shared`: a pool as the report names it (servers from 0)."""
    return str(pool) if str(pool) == "shared" else f"{pool} {int(server)}"  # type: ignore[call-overload]


def pool_load(pools: pd.DataFrame) -> pd.DataFrame:
    """Per run × pool (middlewares summed window by window, then averaged over windows):
    threads, busy fraction, busy threads, waiting and in-flight parts, and parts completed
    per second."""
    columns = [
        *RUN,
        "pool",
        "server",
        "threads",
        "busy_fraction",
        "busy_threads_mean",
        "queue_length_mean",
        "in_flight_mean",
        "completed_per_s",
        "windows",
    ]
    if pools.empty:
        return pd.DataFrame(columns=columns)
    p = pools.assign(_s=(pools["end_ms"] - pools["start_ms"]) / 1000.0)
    keys = [*RUN, "pool", "server", "window"]
    per_window = (
        p.groupby(keys, sort=True)
        .agg(
            threads=("threads", "sum"),
            busy_threads_mean=("busy_threads_mean", "sum"),
            queue_length_mean=("queue_length_mean", "sum"),
            in_flight_mean=("in_flight_mean", "sum"),
            completed=("completed", "sum"),
            seconds=("_s", "max"),
        )
        .reset_index()
    )
    per_window["busy_fraction"] = per_window["busy_threads_mean"] / per_window["threads"]
    per_window["completed_per_s"] = per_window["completed"] / per_window["seconds"]
    out = (
        per_window.groupby([*RUN, "pool", "server"], sort=True)
        .agg(
            threads=("threads", "max"),
            busy_fraction=("busy_fraction", "mean"),
            busy_threads_mean=("busy_threads_mean", "mean"),
            queue_length_mean=("queue_length_mean", "mean"),
            in_flight_mean=("in_flight_mean", "mean"),
            completed_per_s=("completed_per_s", "mean"),
            windows=("window", "nunique"),
        )
        .reset_index()
    )
    return out[columns]


def busiest_pools(pools: pd.DataFrame) -> pd.DataFrame:
    """Per run: the pool with the highest mean busy fraction (`busiest`, `busiest_fraction`)
    and the highest busy fraction of each pool kind (`busy_read`, `busy_write`,
    `busy_shared`; NaN for a kind the design does not have)."""
    load = pool_load(pools)
    columns = [*RUN, "busiest", "busiest_fraction", "busy_read", "busy_write", "busy_shared"]
    if load.empty:
        return pd.DataFrame(columns=columns)
    rows = []
    for key, g in load.groupby(RUN, sort=True):
        top = g.loc[g["busy_fraction"].idxmax()]
        by_kind = g.groupby("pool")["busy_fraction"].max()
        rows.append(
            {
                **dict(zip(RUN, key, strict=True)),
                "busiest": pool_name(top["pool"], top["server"]),
                "busiest_fraction": float(top["busy_fraction"]),
                **{f"busy_{k}": float(by_kind.get(k, math.nan)) for k in KINDS},
            }
        )
    return pd.DataFrame(rows, columns=columns)


def part_times(
    pool_requests: pd.DataFrame,
    metric: str = "queue",
    by: Sequence[str] = ("type",),
    pools: Sequence[str] | None = None,
) -> pd.DataFrame:
    """Per run × `by`: the parts' `metric` time (queue, server or response), count-weighted
    over windows and pools: `count` (parts), `mean`, `std` (pooled), `p50`, `p90`, `p99`
    (µs). `pools` restricts to pool kinds (e.g. `("read",)`)."""
    if metric not in METRICS:
        raise ValueError(f"metric must be one of {METRICS}, got {metric!r}")
    by = list(by)
    columns = [*RUN, *by, "count", "mean", "std", *QUANTILES]
    r = pool_requests if pools is None else pool_requests[pool_requests["pool"].isin(pools)]
    r = r[r["count"] > 0]
    if r.empty:
        return pd.DataFrame(columns=columns)
    n = r["count"].astype(float)
    mean = r[f"{metric}_us_mean"].astype(float)
    var = r[f"{metric}_us_var"].astype(float).fillna(0.0)
    frame = r[[*RUN, *by]].assign(
        _n=n,
        _s=n * mean,
        _sq=n * (var + mean**2),
        **{f"_{q}": n * r[f"{metric}_us_{q}"].astype(float) for q in QUANTILES},
    )
    g = frame.groupby([*RUN, *by], sort=True).sum(numeric_only=True).reset_index()
    g["count"] = g["_n"]
    g["mean"] = g["_s"] / g["_n"]
    g["std"] = np.sqrt((g["_sq"] / g["_n"] - g["mean"] ** 2).clip(lower=0))
    for q in QUANTILES:
        g[q] = g[f"_{q}"] / g["_n"]
    return g[columns]


def thread_service_time_us(pool_requests: pd.DataFrame, windows: pd.DataFrame) -> float:
    """Mean time a pool thread holds a part, dequeue to reply written: the part's server time
    plus its request type's worker time (windows.csv's `worker_us_mean`, which is the time
    from dequeue to sending plus from the last reply to the reply written), weighted by parts.
    `windows` are the middleware's windows with `run`, `window`, `type`, `keys`."""
    mw = windows[windows["side"] == "middleware"] if "side" in windows.columns else windows
    worker = mw.groupby(["run", "window", "type", "keys"])["worker_us_mean"].mean()
    r = pool_requests[pool_requests["count"] > 0].join(
        worker, on=["run", "window", "type", "keys"], how="inner"
    )
    r = r.dropna(subset=["server_us_mean", "worker_us_mean"])
    n = r["count"].sum()
    if n == 0:
        raise ValueError("no parts with both a server time and a worker time")
    return float(((r["server_us_mean"] + r["worker_us_mean"]) * r["count"]).sum() / n)


def write_thread_time_us(pools: pd.DataFrame) -> float:
    """Busy time of a write thread per SET it completed: busy fraction × window length over
    completed parts, summed over the write pools (NaN without writes)."""
    w = pools[(pools["pool"] == "write") & (pools["completed"] > 0)]
    if w.empty:
        return math.nan
    busy_us = (w["busy_threads_mean"] * (w["end_ms"] - w["start_ms"]) * 1000.0).sum()
    return float(busy_us / w["completed"].sum())
