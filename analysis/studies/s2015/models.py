"""SimpleMQ's queueing models, which seed 003 announces and leaves empty: per point the
interactive response-time law, an M/M/m with m the workers of every middleware, and a closed
network (exact MVA) whose database demand comes from the database baseline, which predicts
the knee. Every model is analysis.models'; this module only maps the study's points onto them.

A point here is one row of a family's per-point table of all request types: `clients_total`,
`middlewares`, `queue.workers`, and the client's mean `throughput_ops_mean` (ops/s) and
`response_us_mean_mean` (µs), in one time base."""

from __future__ import annotations

import math
from dataclasses import dataclass

import pandas as pd

from analysis import validate
from analysis.models import factorial as factorial_model
from analysis.models import mva
from analysis.models.queueing import UnstableQueueError, mmm

CLIENTS = "clients_total"
THROUGHPUT = "throughput_ops_mean"
RESPONSE_US = "response_us_mean_mean"


def workers_total(points: pd.DataFrame) -> pd.Series:
    """m per point: the workers of all its middlewares (each holds one database connection);
    a database baseline (no middleware) has its clients' own connections instead."""
    middlewares = points["middlewares"].astype(int)
    return (middlewares * points["queue.workers"].astype(int)).where(
        middlewares > 0, points[CLIENTS].astype(int)
    )


def interactive_law(points: pd.DataFrame) -> pd.DataFrame:
    """Per point the law X = N/(R+Z) with Z = 0 (SimpleMQ's clients send their next request
    as soon as the reply arrives): the predicted throughput, its relative error and the think
    time that would make the law exact."""
    return validate.interactive_law_table(points, CLIENTS, THROUGHPUT, RESPONSE_US)


def service_rate(points: pd.DataFrame) -> float:
    """μ per worker (ops/s), as seed 004 estimates it for its M/M/m: the highest throughput
    any point of the family reached over its m. The family's fastest worker pool bounds what
    one worker can do, whatever queued in front of it."""
    rates = points[THROUGHPUT] / workers_total(points)
    if rates.empty or not (rates > 0).any():
        raise ValueError("no point with a positive throughput to estimate μ from")
    return float(rates.max())


def mmm_table(points: pd.DataFrame, mu: float) -> pd.DataFrame:
    """Per point the M/M/m of its measured arrival rate (λ = X), m workers and μ per worker:
    utilisation, the predicted mean response time beside the measured one. A point at or
    beyond ρ = 1 has no steady state: its prediction is NaN and `stable` False."""
    rows = []
    for (_, p), m in zip(points.iterrows(), workers_total(points), strict=True):
        lam = float(p[THROUGHPUT])
        row = {"point": p.get("point"), "m": int(m), "lambda": lam, "mu": mu}
        try:
            r = mmm(lam, mu, int(m))
            row |= {"rho": r.utilization, "predicted_us": r.mean_response_time * 1e6}
            row["stable"] = True
        except UnstableQueueError:
            row |= {"rho": lam / (m * mu), "predicted_us": math.nan, "stable": False}
        row["measured_us"] = float(p[RESPONSE_US])
        rows.append(row)
    out = pd.DataFrame(rows)
    out["relative_error"] = (out["predicted_us"] - out["measured_us"]) / out["measured_us"]
    return out


def database_demand(baseline: pd.DataFrame, cores: int) -> float:
    """The database's service demand per operation (s), from the database baseline (clients
    straight to PostgreSQL): at its highest throughput X_max the database is the bottleneck,
    so D = cores / X_max for a station of `cores` servers."""
    x_max = float(baseline[THROUGHPUT].max()) if len(baseline) else 0.0
    if not x_max > 0:
        raise ValueError("the database baseline has no positive throughput")
    return cores / x_max


@dataclass(frozen=True)
class Demands:
    """What one request costs each station, seconds: the round trip between client and
    middleware (a delay), the middleware's distributor (one thread) and the database (a
    station of its cores)."""

    network: float
    distributor: float
    database: float
    database_cores: int

    def network_model(self) -> mva.Network:
        return mva.Network(
            (
                mva.Station("network", "delay", self.network),
                mva.Station("distributor", "queue", self.distributor),
                mva.Station("database", "queue", self.database, servers=self.database_cores),
            )
        )


def predict(demands: Demands, clients: int, workers: int) -> mva.MVAResult:
    """The closed network's throughput and response time at `clients`. At most `workers`
    requests are inside the middleware's workers and the database at once; the other clients
    wait in the middleware's queue, so the network is solved at min(clients, workers) and the
    waiting clients' time is added by the response-time law."""
    inside = max(1, min(clients, workers))
    result = mva.solve(demands.network_model(), inside)
    if clients <= workers:
        return result
    response = clients / result.throughput  # R = N/X - Z, Z = 0
    return mva.MVAResult(
        clients=clients,
        think_time=0.0,
        throughput=result.throughput,
        response_time=response,
        stations=result.stations,
        unstable=result.unstable,
    )


def knee(demands: Demands) -> float:
    """The clients beyond which the network cannot grow its throughput (Lazowska's N*):
    (ΣD + Z) / D_max with Z = 0, D_max the bottleneck's demand per server."""
    per_server = [
        demands.distributor,
        demands.database / demands.database_cores,
    ]
    total = demands.network + demands.distributor + demands.database
    return total / max(per_server)


def mva_table(points: pd.DataFrame, demands: Demands) -> pd.DataFrame:
    """Per point the network's predicted throughput and response time beside the measured
    ones, with the bottleneck it names."""
    rows = []
    for (_, p), m in zip(points.iterrows(), workers_total(points), strict=True):
        r = predict(demands, int(p[CLIENTS]), int(m))
        rows.append(
            {
                "point": p.get("point"),
                "clients": int(p[CLIENTS]),
                "m": int(m),
                "predicted_ops": r.throughput,
                "measured_ops": float(p[THROUGHPUT]),
                "predicted_us": r.response_time * 1e6,
                "measured_us": float(p[RESPONSE_US]),
                "bottleneck": r.bottleneck(),
            }
        )
    out = pd.DataFrame(rows)
    out["relative_error"] = (out["predicted_ops"] - out["measured_ops"]) / out["measured_ops"]
    return out


# The 2^4·r design of seed 003 §5 (family mq_factorial): each factor's column in the points.
FACTORS = ("queue.workers", "middlewares", "clients_total", "queue.message_size")


def factorial(
    runs: pd.DataFrame, response: str = THROUGHPUT, factors: tuple[str, ...] = FACTORS
) -> factorial_model.FactorialResult:
    """The allocation of variation of the 2^4·r design over its runs (one row per run with
    the factors' columns and `response`), with each effect's confidence interval; `factors`
    a subset where a profile measured only some of them at two levels."""
    return factorial_model.analyse(runs, response, list(factors))
