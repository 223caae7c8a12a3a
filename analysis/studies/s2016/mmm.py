"""M/M/m of the 2016 design, as seed 001 (§2) built it: every thread that serves a queue is
one server, m = S·(T+1) per middleware (T read threads and one write thread per memcached
server); μ is the inverse of the mean time a thread holds a part (dequeue to reply, server
time plus thread time) and λ the mean throughput over the middleware's windows."""

from __future__ import annotations

import math
from dataclasses import dataclass

import pandas as pd

from analysis import estimate
from analysis.models import queueing
from analysis.pools import part_times, thread_service_time_us


@dataclass(frozen=True)
class Inputs:
    servers: int  # m
    arrival_rate: float  # λ, requests/s
    service_time_us: float  # 1/μ

    @property
    def service_rate(self) -> float:
        return 1e6 / self.service_time_us


def servers(memcached: int, workers: int, middlewares: int = 1) -> int:
    """m = S·(T+1) per middleware, T = `workers` read threads per memcached server: every
    read thread and every write thread."""
    if min(memcached, workers, middlewares) < 1:
        raise ValueError("servers, threads and middlewares must be positive")
    return middlewares * memcached * (workers + 1)


def inputs(
    windows: pd.DataFrame,
    pool_requests: pd.DataFrame,
    memcached: int,
    workers: int,
    middlewares: int = 1,
) -> Inputs:
    """Model inputs from one configuration's stable middleware windows and pool records."""
    mw = windows[(windows["side"] == "middleware") & (windows["type"] != "all")]
    return Inputs(
        servers=servers(memcached, workers, middlewares),
        arrival_rate=estimate.arrival_rate(mw),
        service_time_us=thread_service_time_us(pool_requests, mw),
    )


def solve(i: Inputs) -> queueing.MMmResult:
    return queueing.mmm(i.arrival_rate, i.service_rate, i.servers)


def flat(result: queueing.MMmResult | queueing.MM1Result) -> dict[str, float]:
    """A model's numbers by name, its 50 % and 95 % response time quantiles included."""
    d = result.to_dict()
    out = {k: float(v) for k, v in d.items() if isinstance(v, (int, float))}
    out["response_time_q50"] = d["response_time_quantiles"]["0.5"]
    out["response_time_q95"] = d["response_time_quantiles"]["0.95"]
    return out


def _pooled(count: pd.Series, mean: pd.Series, var: pd.Series) -> tuple[float, float]:
    n = float(count.sum())
    if n == 0:
        return math.nan, math.nan
    m = float((count * mean).sum() / n)
    second = float((count * (var.fillna(0) + mean**2)).sum() / n)
    return m, math.sqrt(max(second - m * m, 0.0))


def measured(
    windows: pd.DataFrame, pool_requests: pd.DataFrame, queue: pd.DataFrame, arrival_rate: float
) -> dict[str, float]:
    """The measured counterparts of the model's rows, in seconds: response time (the
    middleware's, arrival to reply), waiting time (the parts' time in their queue), jobs in
    the system (Little's law, λ·R, as seed 001 computed them) and waiting jobs (the
    time-weighted length of all queues, summed over middlewares). `queue` rows must be
    those of the stable windows."""
    mw = windows[(windows["side"] == "middleware") & (windows["type"] != "all")]
    mw = mw.dropna(subset=["response_us_mean"])
    r_mean, r_std = _pooled(mw["count"], mw["response_us_mean"], mw["response_us_std"] ** 2)
    q = part_times(pool_requests, "queue", by=())
    w_mean = float((q["mean"] * q["count"]).sum() / q["count"].sum()) if len(q) else math.nan
    w_second = (
        float((q["count"] * (q["std"] ** 2 + q["mean"] ** 2)).sum() / q["count"].sum())
        if len(q)
        else math.nan
    )
    w_std = math.sqrt(max(w_second - w_mean**2, 0.0)) if len(q) else math.nan
    per_window = queue.groupby(["run", "window"])["queue_length_mean"].sum()
    waiting = float(per_window.mean()) if len(per_window) else math.nan
    return {
        "mean_response_time": r_mean / 1e6,
        "std_response_time": r_std / 1e6,
        "mean_waiting_time": w_mean / 1e6,
        "std_waiting_time": w_std / 1e6,
        "mean_jobs_in_system": arrival_rate * r_mean / 1e6,
        "mean_jobs_in_queue": waiting,
    }
