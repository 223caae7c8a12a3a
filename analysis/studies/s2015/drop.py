"""Why the system's throughput falls when the clients outnumber the workers (Table 2, 60 to
140 clients), which the seed leaves unexplained: per cell the middleware's queue time and
its time at the database, and what the database's backends waited on, from the counters."""

from __future__ import annotations

import math

import pandas as pd

from analysis.report import figures as fg
from analysis.report.numbers import Report
from analysis.studies.s2015 import counters
from analysis.studies.s2015.common import THROUGHPUT, level, name, system
from analysis.studies.s2015.table2 import DROP_FROM, DROP_TO, signed_pct

COLUMNS = ["workers", "clients", "throughput", "outside_ms", "wait_ms", "server_ms",
           "share_lock", "share_wal", "share_cpu", "commits_per_s", "empty"]  # fmt: skip
# What each part of a request's time is, for the sentence that names the one that grows.
PARTS = {
    "outside": "the time before the middleware reads a request (unread while the distributor"
    " waits for an idle worker, and the network)",
    "wait": "the wait from the distributor's read to a worker's start",
    "server": "the database call",
}


def cells(points: pd.DataFrame, db: pd.DataFrame, runs: pd.DataFrame,
          windows: pd.DataFrame) -> pd.DataFrame:  # fmt: skip
    """Per Table 2 cell we measured: throughput, middleware times, the database's waits and
    the share of empty pops (NaN where a table lacks the point)."""
    rows = system(points)
    if rows.empty:
        return pd.DataFrame(columns=COLUMNS)
    out = pd.DataFrame(
        {
            "point": rows["point"],
            "workers": level(rows, "workers").astype(int),
            "clients": level(rows, "clients").astype(int),
            "throughput": rows[f"{THROUGHPUT}_mean"],
        }
    )
    out = out.merge(counters.middleware_times(points), on="point", how="left")
    out = out.merge(counters.per_point(db, runs), on="point", how="left")
    out = out.merge(counters.empty_pops(windows), on="point", how="left")
    for column in COLUMNS:
        if column not in out.columns:
            out[column] = math.nan
    return out.sort_values(["workers", "clients"])[COLUMNS].reset_index(drop=True)


def table(c: pd.DataFrame) -> str:
    rows = [
        [fg.num(r["workers"]), fg.num(r["clients"]), fg.num(r["throughput"]),
         fg.num(r["outside_ms"], 1), fg.num(r["wait_ms"], 1), fg.num(r["server_ms"], 1),
         fg.pct(r["share_lock"]),
         fg.pct(r["share_wal"]), fg.pct(r["share_cpu"]), fg.num(r["commits_per_s"]),
         fg.pct(r["empty"])]
        for _, r in c.iterrows()
    ]  # fmt: skip
    header = ["workers", "clients", "ops/s", "unread (ms)", "to a worker (ms)",
              "database (ms)", "lock", "WAL", "CPU", "commits/s", "empty pops"]  # fmt: skip
    return fg.tabular(header, rows, "rrrrrrrrrrr")


def _mean_at(c: pd.DataFrame, clients: int, column: str) -> float:
    values = c.loc[c["clients"] == clients, column].astype(float).dropna()
    return float(values.mean()) if len(values) else math.nan


def report(points: pd.DataFrame, db: pd.DataFrame, runs: pd.DataFrame,
           windows: pd.DataFrame) -> Report:  # fmt: skip
    """The explanation's table and its numbers: at 60 and at 140 clients, the mean over the
    worker counts of each quantity."""
    c = cells(points, db, runs, windows)
    n = {name("Why", "Measured"): "1" if c["share_wal"].notna().any() else "0"}
    for clients, label in ((DROP_FROM, "Low"), (DROP_TO, "High")):
        n[name("Why", "Outside", label)] = fg.num(_mean_at(c, clients, "outside_ms"), 1)
        n[name("Why", "Wait", label)] = fg.num(_mean_at(c, clients, "wait_ms"), 1)
        n[name("Why", "Server", label)] = fg.num(_mean_at(c, clients, "server_ms"), 1)
        n[name("Why", "Lock", label)] = fg.pct(_mean_at(c, clients, "share_lock"))
        n[name("Why", "Wal", label)] = fg.pct(_mean_at(c, clients, "share_wal"))
        n[name("Why", "Cpu", label)] = fg.pct(_mean_at(c, clients, "share_cpu"))
        n[name("Why", "Commits", label)] = fg.num(_mean_at(c, clients, "commits_per_s"))
        n[name("Why", "Empty", label)] = fg.pct(_mean_at(c, clients, "empty"))
    commits = _mean_at(c, DROP_TO, "commits_per_s") / _mean_at(c, DROP_FROM, "commits_per_s")
    n[name("Why", "Commits", "Change")] = signed_pct(commits - 1)
    # Which part of a request's time grew the most from 60 to 140 clients.
    growth = {
        part: _mean_at(c, DROP_TO, f"{part}_ms") - _mean_at(c, DROP_FROM, f"{part}_ms")
        for part in PARTS
    }
    known = {k: v for k, v in growth.items() if math.isfinite(v)}
    n[name("Why", "Grows")] = PARTS[max(known, key=known.get)] if known else "--"
    return Report(tex={"why_table": table(c)}, numbers=n)
