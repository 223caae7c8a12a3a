"""The interactive law with a modified N, as the 2018 study applies it to the middleware
(seed 004, Section 3.3 and Fig. 6).

The middleware does not see the clients' whole cycle, so N/(R + Z) with the clients' N and
the middleware's response time fails. The study counts instead only the requests inside the
middleware: those waiting in its queue (the measured queue length) and those held by workers
(throughput times the time a worker holds a request). Dividing by the middleware's response
time predicts its throughput:

    X_pred = (X * T_worker + Q) / R_mw

By Little's law X * R_mw requests are in the middleware; X_pred falls short of X by the
share of R_mw that is spent neither in the queue nor with a worker (before the queue: reading
and parsing the request), and wherever the measured queue length and time in the queue
disagree.
"""

from __future__ import annotations

import math

import pandas as pd

# A worker holds a request from dequeue to its reply: waiting for memcached plus its own
# processing (analysis.parse.middleware: worker = written - dequeue - server).
HELD_COLUMNS = ("server_us_mean_mean", "worker_us_mean_mean")


def jobs_in_middlewares(
    throughput_ops: float, held_us: float, queue_length: float, middlewares: int
) -> float:
    """Requests inside the middlewares: X * T_worker (held by workers, X summed over the
    middlewares) plus the queue length of each of the `middlewares`."""
    if middlewares < 1:
        raise ValueError(f"need at least one middleware, not {middlewares}")
    if min(throughput_ops, held_us, queue_length) < 0:
        raise ValueError("throughput, worker time and queue length must not be negative")
    return throughput_ops * held_us / 1e6 + middlewares * queue_length


def predicted_throughput(jobs: float, response_us: float) -> float:
    """X = N / R with N the requests inside the middlewares and R their response time."""
    if not response_us > 0:
        raise ValueError(f"the middleware response time must be positive: {response_us}")
    return jobs / (response_us / 1e6)


def law_table(points: pd.DataFrame, queue_length: pd.Series) -> pd.DataFrame:
    """For the middleware rows of a points table (one request type, times in µs) and the
    queue length per middleware indexed by point: the modified N (`jobs`), the predicted
    throughput and its error relative to the measured middleware throughput. Points without
    a queue length, a positive response time or a throughput are left out."""
    need = ["point", "middlewares", "throughput_ops_mean", "response_us_mean_mean", *HELD_COLUMNS]
    missing = [c for c in need if c not in points.columns]
    if missing:
        raise ValueError(f"the points table lacks the columns {missing}")
    mw = points[points["side"] == "middleware"] if "side" in points.columns else points
    rows = []
    for _, p in mw.iterrows():
        held = sum(float(p[c]) for c in HELD_COLUMNS)
        x, r = float(p["throughput_ops_mean"]), float(p["response_us_mean_mean"])
        q = float(queue_length.get(p["point"], math.nan))
        if not all(math.isfinite(v) for v in (held, x, r, q)) or r <= 0 or x <= 0:
            continue
        jobs = jobs_in_middlewares(x, held, q, int(p["middlewares"]))
        pred = predicted_throughput(jobs, r)
        rows.append(
            {**p.to_dict(), "jobs": jobs, "predicted_ops": pred, "relative_error": pred / x - 1}
        )
    columns = [*mw.columns, "jobs", "predicted_ops", "relative_error"]
    return pd.DataFrame(rows, columns=columns)
