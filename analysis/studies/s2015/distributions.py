"""§3.4, which the seed asks for and leaves empty: how the response time is distributed, and
how that changes with the message size, the clients and the middlewares. Read from the
clients' whole-run histograms (HdrHistogram buckets, study µs) of the 2^4 design's points,
every request type pooled, and of the client-scaling family."""

from __future__ import annotations

import pandas as pd

from analysis.histograms import grouped_quantiles
from analysis.report import figures as fg
from analysis.report.numbers import Report
from analysis.studies.s2015.common import by_points, name

QUANTILES = (0.5, 0.9, 0.99)
# The design's factors, as their levels' columns in the points.
FACTOR_COLUMNS = {"level_workers": "workers", "level_middlewares": "middlewares",
                  "level_clients": "clients", "level_size": "size"}  # fmt: skip


def percentiles(hist: pd.DataFrame, points: pd.DataFrame) -> pd.DataFrame:
    """Per point the clients' p50, p90 and p99 over every request type (study ms) with the
    point's levels."""
    levels = [c for c in points.columns if c.startswith("level_")]
    columns = ["point", *levels, "p50", "p90", "p99"]
    if hist.empty or points.empty:
        return pd.DataFrame(columns=columns)
    h = by_points(hist[(hist["side"] == "client") & (hist["window"] < 0)], points)
    if h.empty:
        return pd.DataFrame(columns=columns)
    q = grouped_quantiles(h, ["point", "side"], QUANTILES, "upper")
    for c in ("p50", "p90", "p99"):
        q[c] = q[c] * 1e-3
    info = points.drop_duplicates("point")[["point", *levels]]
    return q.drop(columns=["side"]).merge(info, on="point", how="left")[columns]


def table(q: pd.DataFrame) -> str:
    levels = [c for c in q.columns if c.startswith("level_")]
    # Levels in their numeric order (as text, 120 would sort before 30).
    order = q.assign(**{c: pd.to_numeric(q[c], errors="coerce") for c in levels})
    rows = [
        [*(fg.escape(str(q.at[i, c])) for c in levels), fg.num(q.at[i, "p50"], 1),
         fg.num(q.at[i, "p90"], 1), fg.num(q.at[i, "p99"], 1)]
        for i in order.sort_values(levels).index
    ]  # fmt: skip
    header = [FACTOR_COLUMNS.get(c, c.removeprefix("level_")) for c in levels]
    header += ["p50 (ms)", "p90 (ms)", "p99 (ms)"]
    return fg.tabular(header, rows, "r" * len(levels) + "rrr")


def _spread(q: pd.DataFrame, column: str) -> str:
    """The ratio of the p99s at a factor's two levels, averaged over the other factors (the
    levels sorted as numbers)."""
    if column not in q.columns or q[column].nunique() != 2:
        return "--"
    low, high = sorted(q[column].unique(), key=float)
    a = q[q[column] == low]["p99"].mean()
    b = q[q[column] == high]["p99"].mean()
    return fg.num(b / a, 2) if a > 0 else "--"


def report(hist: pd.DataFrame, points: pd.DataFrame) -> Report:
    q = percentiles(hist, points)
    n = {name("Distribution", "Measured"): "1" if not q.empty else "0"}
    for column, label in FACTOR_COLUMNS.items():
        n[name("Distribution", label, "Ratio")] = _spread(q, column)
    tail = (q["p99"] / q["p50"]).median() if len(q) else float("nan")
    n[name("Distribution", "TailRatio")] = fg.num(tail, 1)
    return Report(tex={"table": table(q)}, numbers=n)
