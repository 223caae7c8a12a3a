"""What the database and the middleware did at each point, from the family tables: the wait
events PostgreSQL's active backends were sampled in (shares of the samples: lock waits, WAL
and commit waits, CPU), the commits per second in study units, and the middleware's time per
request in its queue and at the database, and the share of its pops that found no message.
The numbers that explain where the time goes when the clients outnumber the workers (the
drop of Table 2) and why the pops differ (naive against SKIP LOCKED)."""

from __future__ import annotations

import pandas as pd

from analysis.parse.counters import WAIT_GROUPS
from analysis.scale_model import scale_of
from analysis.studies.s2015.common import study_points

SHARES = tuple(f"share_{g}" for g in WAIT_GROUPS)


def per_point(db: pd.DataFrame, runs: pd.DataFrame) -> pd.DataFrame:
    """Per point the mean over its runs of each wait group's share of the samples, the dead
    tuples and autovacuums, and the commits per second in study units (a run's commits over
    its measured duration, divided by its scale factor). Empty without counters."""
    columns = ["point", "runs", "wait_samples", *SHARES, "commits_per_s",
               "dead_tuples", "autovacuums"]  # fmt: skip
    if db.empty:
        return pd.DataFrame(columns=columns)
    d = db.copy()
    total = d["wait_samples"].where(d["wait_samples"] > 0)
    for g in WAIT_GROUPS:
        d[f"share_{g}"] = d[f"wait_{g}"] / total
    info = runs.drop_duplicates("run")[["run", "duration_s", "scale"]]
    d = d.merge(info, on="run", how="left")
    d["commits_per_s"] = d["database.xact_commit"] / d["duration_s"] / scale_of(d, "counters")
    d["dead_tuples"] = d["after.messages.n_dead_tup"]
    d["autovacuums"] = d["messages.autovacuum_count"]
    out = d.groupby("point").agg(
        runs=("run", "nunique"),
        wait_samples=("wait_samples", "sum"),
        **{s: (s, "mean") for s in SHARES},
        commits_per_s=("commits_per_s", "mean"),
        dead_tuples=("dead_tuples", "mean"),
        autovacuums=("autovacuums", "mean"),
    )
    return out.reset_index()[columns]


def middleware_times(points: pd.DataFrame) -> pd.DataFrame:
    """Per point where a request's time goes (study ms, means over requests of every type):
    `outside_ms`, the client's response time minus the middleware's, which holds the network
    and the time a request lies unread while the distributor waits for an idle worker (it
    reads no connection meanwhile); `wait_ms`, from the distributor's read to a worker's start
    (SimpleMQ's net and queue stages); `server_ms`, the worker's database call; and
    `middleware_ms`, the middleware's whole time. Empty where the middleware was not measured
    (the database baseline)."""
    columns = ["point", "outside_ms", "wait_ms", "server_ms", "middleware_ms"]
    if points.empty:
        return pd.DataFrame(columns=columns)
    p = study_points(points)
    mw = p[(p["side"] == "middleware") & (p["type"] == "all")].set_index("point")
    client = p[(p["side"] == "client") & (p["type"] == "all")].set_index("point")
    out = pd.DataFrame(
        {
            "wait_ms": (mw["net_us_mean_mean"] + mw["queue_us_mean_mean"]) * 1e-3,
            "server_ms": mw["server_us_mean_mean"] * 1e-3,
            "middleware_ms": mw["response_us_mean_mean"] * 1e-3,
        }
    )
    out["outside_ms"] = (
        client["response_us_mean_mean"].reindex(out.index) * 1e-3 - out["middleware_ms"]
    )
    return out.rename_axis("point").reset_index()[columns]


def empty_pops(windows: pd.DataFrame) -> pd.DataFrame:
    """Per point the share of the middleware's pops that found no message (its windows'
    misses): an empty pop is answered and costs the database a statement, but the clients
    count only the pops that deliver. Empty without windows."""
    if windows.empty:
        return pd.DataFrame(columns=["point", "empty"])
    w = windows[(windows["side"] == "middleware") & (windows["type"] == "pop_queue")]
    sums = w.groupby("point")[["misses", "count"]].sum()
    return (sums["misses"] / sums["count"].where(sums["count"] > 0)).rename("empty").reset_index()
