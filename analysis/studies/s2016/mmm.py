"""M/M/m of the 2016 design's GETs: m = S·T per middleware, the read threads.

Seed 001 (§2) counted every thread, m = S·(T+1), as if all of them took jobs from one queue.
In this design a GET waits in its primary's read queue and only that server's T read
threads serve it; the write thread of each server takes only SETs, and it does not hold a
SET while memcached answers (it is asynchronous, a Selector over its connections), so it is
no server of the M/M/m's kind. The model is therefore one of the GETs: m the read threads,
λ the GETs' mean throughput over the middleware's windows, 1/μ the mean time a read thread
holds a GET part (dequeue to reply: server time plus thread time). The writes (none or a
few per cent of the requests here) are left out, and so are the write threads. One queue
for all m threads is still an idealisation (the design has one per server)."""

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
    """m = S·T per middleware, T = `workers` read threads per memcached server: the threads
    that serve GETs (write threads serve only SETs)."""
    if min(memcached, workers, middlewares) < 1:
        raise ValueError("servers, threads and middlewares must be positive")
    return middlewares * memcached * workers


def gets(windows: pd.DataFrame, pool_requests: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The middleware's GET windows and the read pools' parts: what the M/M/m models."""
    mw = windows[(windows["side"] == "middleware") & windows["type"].isin(["get", "multiget"])]
    return mw, pool_requests[pool_requests["pool"] == "read"]


def inputs(
    windows: pd.DataFrame,
    pool_requests: pd.DataFrame,
    memcached: int,
    workers: int,
    middlewares: int = 1,
) -> Inputs:
    """Model inputs from one configuration's stable middleware windows and pool records
    (their GETs and read parts)."""
    mw, pool_requests = gets(windows, pool_requests)
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
    """The measured counterparts of the model's rows, in seconds, of the GETs: response time
    (the middleware's, arrival to reply), waiting time (the read parts' time in their queue),
    jobs in the system (Little's law, λ·R, as seed 001 computed them) and waiting jobs (the
    time-weighted length of all queues, summed over middlewares: the few SETs' included).
    `queue` rows must be those of the stable windows."""
    mw, pool_requests = gets(windows, pool_requests)
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
