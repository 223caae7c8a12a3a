"""Response times as the clients and as the middleware measure them (the 2016 study's
Figures 1 and 2): per-run percentiles of each side's histograms and one point's pooled
histogram. The middleware's side keeps its stable windows; the clients record one
histogram per run (window -1), which is used whole."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from analysis.studies.s2016.tables import histogram_quantiles, run_percentiles

SIDES = ("client", "middleware")


def _side_rows(
    histograms: pd.DataFrame, windows: pd.DataFrame, side: str, types: Sequence[str] | None
) -> pd.DataFrame:
    if side not in SIDES:
        raise ValueError(f"side must be one of {SIDES}, got {side!r}")
    h = histograms[histograms["side"] == side]
    if types is not None:
        h = h[h["type"].isin(types)]
    if side == "middleware":
        h = h[h["window"] >= 0]
        stable = windows.loc[windows["side"] == "middleware", ["run", "window"]]
        h = h.merge(stable.drop_duplicates(), on=["run", "window"], how="inner")
    return h


def side_percentiles(
    histograms: pd.DataFrame,
    windows: pd.DataFrame,
    qs: Sequence[float] = (0.5, 0.9),
    types: Sequence[str] | None = None,
) -> pd.DataFrame:
    """Per run and side: response-time quantiles (µs). Columns run, point, side, p50, ..."""
    names = [f"p{round(100 * q):d}" for q in qs]
    mw = run_percentiles(histograms, windows, qs, types).assign(side="middleware")
    rows = []
    for (run, point), g in _side_rows(histograms, windows, "client", types).groupby(
        ["run", "point"], sort=True
    ):
        pooled = g.groupby("bucket_us")["count"].sum()
        values = histogram_quantiles(pooled.index.to_series(), pooled, qs)
        rows.append(
            {"run": run, "point": point, "side": "client", **dict(zip(names, values, strict=True))}
        )
    client = pd.DataFrame(rows, columns=["run", "point", "side", *names])
    return pd.concat([client, mw[["run", "point", "side", *names]]], ignore_index=True)


def point_histogram(
    histograms: pd.DataFrame,
    windows: pd.DataFrame,
    point: str,
    side: str,
    runs: Sequence[str] | None = None,
    types: Sequence[str] | None = None,
) -> pd.Series:
    """One point's histogram for one side, pooled over its runs (`runs`, default all):
    count per bucket lower bound (µs), sorted by bucket."""
    h = _side_rows(histograms, windows, side, types)
    h = h[h["point"] == point]
    if runs is not None:
        h = h[h["run"].isin(set(runs))]
    return h.groupby("bucket_us")["count"].sum().sort_index()
