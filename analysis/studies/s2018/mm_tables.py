"""M/M/1 and M/M/m of the write experiment, per measured point, beside seed 004's Tables 12
and 13.

One row per point and model with the columns seed 004 prints: service rate μ (the whole
system's for M/M/1, one server's for M/M/m), arrival rate λ, traffic intensity ρ, the
probability p0 of an empty system, utilisation U, probability of queueing ϱ, mean jobs in the
system E[n] and in the queue E[n_q], mean waiting time E[w] and response time E[r] (ms), and
the measured queue length, waiting and response time beside them. Rates are in ops/s.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import pandas as pd

from analysis import estimate
from analysis.models import queueing

MODELS = ("mm1", "mmm")
# Columns of a model table, in the order seed 004 prints them (Tables 12 and 13).
COLUMNS = [
    "mu",
    "lam",
    "rho",
    "nq",
    "nq_act",
    "w_ms",
    "w_act_ms",
    "r_ms",
    "r_act_ms",
    "n",
    "prob_queueing",
    "p0",
    "utilization",
]
KEYS = ["workers", "clients"]
INPUT_COLUMNS = [*KEYS, "servers", "lam", "mu", "nq_act", "w_act_ms", "r_act_ms"]


def system_queue_length(queue: pd.DataFrame, windows: pd.DataFrame) -> pd.Series:
    """Mean queue length of the whole system per point: the middlewares' time-weighted queue
    lengths summed per window (only the windows in `windows`), averaged over windows and runs.

    `queue`: point, run, window, middleware, queue_length_mean; `windows`: run, window."""
    keep = windows[["run", "window"]].drop_duplicates()
    q = queue.merge(keep, on=["run", "window"])
    per_window = q.groupby(["point", "run", "window"])["queue_length_mean"].sum()
    return per_window.groupby(level="point").mean()


def model_inputs(
    points: pd.DataFrame, windows: pd.DataFrame, queue_length: pd.Series
) -> pd.DataFrame:
    """λ, μ and the measurements of every point of the write experiment.

    `points`: one row per point and side (every request type together) with point, side,
    middleware.workers, middlewares, clients_total, response_us_mean_mean and
    queue_us_mean_mean; `windows`: the middlewares' windows (point, run, window,
    throughput_ops). λ is the point's middleware throughput as every table prints it
    (throughput_ops_mean; without a middleware row, its mean window throughput), μ the
    highest window throughput of its worker count (estimate.service_rate_max_window), m =
    workers of all middlewares."""
    meta = points.drop_duplicates("point").set_index("point")
    mw = points[points["side"] == "middleware"].set_index("point")
    rows = []
    for workers, group in meta.groupby("middleware.workers"):
        win = windows[windows["point"].isin(group.index)]
        if win.empty:
            continue
        mu = estimate.service_rate_max_window(win)
        for point, p in group.iterrows():
            pwin = win[win["point"] == point]
            if pwin.empty:
                continue
            m = mw.loc[point] if point in mw.index else None
            rows.append(
                {
                    "workers": int(workers),
                    "clients": int(p["clients_total"]),
                    "servers": int(workers) * int(p["middlewares"]),
                    "lam": float(m["throughput_ops_mean"])
                    if m is not None and "throughput_ops_mean" in m
                    else estimate.arrival_rate(pwin),
                    "mu": mu,
                    "nq_act": float(queue_length.get(point, math.nan)),
                    "w_act_ms": m["queue_us_mean_mean"] / 1e3 if m is not None else math.nan,
                    "r_act_ms": m["response_us_mean_mean"] / 1e3 if m is not None else math.nan,
                }
            )
    out = pd.DataFrame(rows, columns=INPUT_COLUMNS)
    return out.sort_values(KEYS, ignore_index=True)


def predict_point(lam: float, mu: float, servers: int, model: str) -> dict[str, float]:
    """One row of a model table. `mu` is the whole system's rate; M/M/m gives each of its
    `servers` servers μ/m. Where ρ ≥ 1 the model has no steady state: ρ is kept, the rest NaN."""
    if model not in MODELS:
        raise ValueError(f"model must be one of {MODELS}, got {model!r}")
    m = 1 if model == "mm1" else int(servers)
    rate = mu / m
    row = {"mu": rate, "lam": lam, "rho": lam / mu}
    try:
        if m == 1:
            r = queueing.mm1(lam, rate)
            p0, pq = 1 - r.utilization, r.prob_queueing
        else:
            r = queueing.mmm(lam, rate, m)
            p0, pq = r.p0, r.prob_queueing
    except queueing.UnstableQueueError:
        nan = math.nan
        return (
            row
            | dict.fromkeys(("nq", "w_ms", "r_ms", "n", "prob_queueing", "p0"), nan)
            | {"utilization": nan}
        )
    return row | {
        "nq": r.mean_jobs_in_queue,
        "w_ms": r.mean_waiting_time * 1e3,
        "r_ms": r.mean_response_time * 1e3,
        "n": r.mean_jobs_in_system,
        "prob_queueing": pq,
        "p0": p0,
        "utilization": r.utilization,
    }


def predict(inputs: pd.DataFrame, model: str) -> pd.DataFrame:
    """The model's table over `inputs` (model_inputs): KEYS then COLUMNS."""
    rows = []
    for r in inputs.itertuples(index=False):
        pred = predict_point(float(r.lam), float(r.mu), int(r.servers), model)
        rows.append(
            {"workers": r.workers, "clients": r.clients}
            | pred
            | {"nq_act": r.nq_act, "w_act_ms": r.w_act_ms, "r_act_ms": r.r_act_ms}
        )
    return pd.DataFrame(rows, columns=[*KEYS, *COLUMNS])


def seed_table(table: Mapping) -> pd.DataFrame:
    """A seed table of the reference file (`columns`, and `rows`: clients -> workers ->
    values in `columns` order) in the layout of `predict`; columns it does not print are NaN."""
    try:
        names, body = list(table["columns"]), table["rows"]
    except (KeyError, TypeError):
        raise ValueError("a seed model table needs `columns` and `rows`") from None
    unknown = set(names) - set(COLUMNS)
    if unknown:
        raise ValueError(f"unknown seed table columns {sorted(unknown)}")
    rows = []
    for clients, per_workers in body.items():
        for workers, values in per_workers.items():
            if len(values) != len(names):
                raise ValueError(
                    f"seed row clients={clients} workers={workers}: {len(values)} values "
                    f"for {len(names)} columns"
                )
            rows.append(
                {"workers": int(workers), "clients": int(clients)}
                | dict(zip(names, map(float, values), strict=True))
            )
    out = pd.DataFrame(rows, columns=[*KEYS, *COLUMNS])
    return out.sort_values(KEYS, ignore_index=True)


def beside(ours: pd.DataFrame, seed: pd.DataFrame) -> pd.DataFrame:
    """Every point of either table, the seed's row first then ours, with a `source` column
    (`seed 004` or `ours`); a point only one of them has appears once."""
    both = pd.concat(
        [seed.assign(source="seed 004", order=0), ours.assign(source="ours", order=1)],
        ignore_index=True,
    )
    both = both.sort_values([*KEYS, "order"], ignore_index=True).drop(columns="order")
    return both[[*KEYS, "source", *COLUMNS]]
