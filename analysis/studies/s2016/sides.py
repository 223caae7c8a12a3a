"""Response times as the clients and as the middleware measure them (the 2016 study's
Figures 1 and 2): per-run percentiles of each side's histograms and one point's pooled
histogram; both sides' percentiles and means at the chosen pool size, their figure, and the
gap between the sides against the round trip between clients and middleware. The
middleware's side keeps its stable windows; the clients record one histogram per run
(window -1), which is used whole."""

from __future__ import annotations

import math
from collections.abc import Sequence

import pandas as pd

from analysis.histograms import histogram_quantiles, run_percentiles
from analysis.report import figures as fg
from analysis.report import series_plot as sp
from analysis.scale_model import scale_of
from analysis.studies.s2016.tables import (
    WORKERS,
    point_statistics,
)

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


def side_statistics(hist: pd.DataFrame, windows: pd.DataFrame, ok: set[str]) -> pd.DataFrame:
    """Per point and side: the GET response-time p50 and p90 (µs) over the ok runs."""
    per_run = side_percentiles(hist, windows, (0.5, 0.9), ["get"])
    per_run = per_run[per_run["run"].isin(ok)]
    parts = [
        point_statistics(g, ["p50", "p90"]).assign(side=side)
        for side, g in per_run.groupby("side", sort=True)
    ]
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()


def at_pool_size(
    points: pd.DataFrame,
    hist: pd.DataFrame,
    windows: pd.DataFrame,
    ok: set[str],
    workers: object,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """At one pool size: each point's GET percentiles per side over its ok runs, and its
    points with the mean response time as `mean_*` and the round trip between clients and
    middleware (`round_trip_ms`, in the study's time)."""
    at = points[points[WORKERS] == workers]
    info = at.drop_duplicates("point")[["point", "clients_total"]]
    pct = side_statistics(hist, windows, ok)
    pct = pct.merge(info, on="point", how="inner") if len(pct) else pct
    means = at.rename(
        columns={
            "response_us_mean_mean": "mean_mean",
            "response_us_mean_ci_low": "mean_ci_low",
            "response_us_mean_ci_high": "mean_ci_high",
        }
    ).assign(
        # One-way delays are set per run (already divided by s); back in the study's time.
        round_trip_ms=lambda f: 2 * f["delays_ms.client_middleware"].astype(float) * scale_of(f)
    )
    return pct, means


def sides_figure(side_pct: pd.DataFrame, means: pd.DataFrame, path: str) -> None:
    """At the chosen pool size: percentiles (left) and means (right) of the response time as
    the clients and as the middleware measure it, and the middleware's mean plus the
    network's round trip between clients and middleware."""
    fig, axes = fg.figure(ncols=2)
    ax = axes[0][0]
    long = []
    for q, name in (("p50", "median"), ("p90", "90th pct."), ("mean", "mean")):
        d = side_pct if q != "mean" else means
        if q not in {c.removesuffix("_mean") for c in d.columns if c.endswith("_mean")}:
            continue
        long.append(
            d.rename(
                columns={
                    f"{q}_mean": "v_mean",
                    f"{q}_ci_low": "v_ci_low",
                    f"{q}_ci_high": "v_ci_high",
                }
            )
            .assign(series=lambda f, n=name: n + ", " + f["side"])
            .loc[:, ["clients_total", "side", "series", "v_mean", "v_ci_low", "v_ci_high"]]
        )
    data = pd.concat(long, ignore_index=True)
    pct = data[~data["series"].str.startswith("mean")]
    sp.series_lines(ax, pct, "clients_total", "v", "series", scale=1e-3, side_in_label=False)
    ax.set_xlabel("total clients")
    ax.set_ylabel(fg.study_label("response time", "ms"))
    ax.set_title("percentiles", fontsize=8)
    ax2 = axes[0][1]
    mean = data[data["series"].str.startswith("mean")]
    offset = len(fg.levels_sorted(pct["series"]))
    for i, (side, g) in enumerate(mean.groupby("side", sort=True)):
        fg.errorbar_line(
            ax2,
            g,
            "clients_total",
            "v",
            1e-3,
            linestyle=sp.SIDE_LINESTYLE.get(str(side), ":"),
            markersize=3.5,
            label=f"mean, {side}",
            **sp.style(offset + i),
        )
    mw = means[means["side"] == "middleware"].sort_values("clients_total")
    if len(mw):
        ax2.plot(
            mw["clients_total"],
            mw["mean_mean"] / 1e3 + mw["round_trip_ms"],
            linestyle=":",
            # Larger, hollow and on top: it lies on the clients' mean where the sum holds.
            markersize=6,
            markerfacecolor="none",
            zorder=4,
            linewidth=1.2,
            label="mean, middleware + round trip",
            **sp.style(offset + 2),
        )
    ax2.set_xlabel("total clients")
    ax2.set_ylabel(fg.study_label("response time", "ms"))
    ax2.set_title("means", fontsize=8)
    ax2.sharey(ax)
    fg.legend_right(fig, ax, ax2)
    fg.save(fig, path)


def sides_numbers(pct: pd.DataFrame, means: pd.DataFrame, chosen: pd.Series) -> dict[str, str]:
    """At the chosen point: the gap between the sides' means against the round trip and both
    sides' percentiles (ms). `SixteenSidesCase`: `outside` (the round trip leaves a rest of
    the gap outside the middleware's clock), `short` (the gap is shorter than the round
    trip) or `untested` (a side's mean is missing); `SixteenSidesDelayCase`: `fails` where at
    some client counts of the chosen pool size the gap is below the configured round trip,
    else `holds`."""
    here = means[means["point"] == chosen["point"]].set_index("side")
    gap = (
        here["mean_mean"].get("client", math.nan) - here["mean_mean"].get("middleware", math.nan)
    ) / 1e3
    rtt = float(here["round_trip_ms"].iloc[0]) if len(here) else math.nan
    rest = gap - rtt
    by_side = means.pivot_table(index="clients_total", columns="side", values="mean_mean")
    per_clients = (
        (by_side.get("client") - by_side.get("middleware")) / 1e3
        if len(by_side.columns) == 2
        else pd.Series(dtype=float)
    )
    below = int((per_clients < means["round_trip_ms"].max()).sum())
    if not (math.isfinite(gap) and math.isfinite(rtt)):
        case = "untested"
    else:
        case = "outside" if rest >= 0 else "short"
    q = pct[pct["point"] == chosen["point"]].set_index("side") if len(pct) else pd.DataFrame()

    def p(side: str, name: str) -> float:
        return float(q[f"{name}_mean"].get(side, math.nan)) / 1e3 if len(q) else math.nan

    return {
        "SixteenSidesGap": fg.num(gap, 3),
        "SixteenSidesRoundTrip": fg.num(rtt, 3),
        "SixteenSidesCase": case,
        "SixteenSidesRoundTripOfGap": fg.pct(rtt / gap if gap else math.nan, 0),
        "SixteenSidesRest": fg.num(rest, 3),
        "SixteenSidesShortfall": fg.num(-rest, 3),
        "SixteenSidesDelayCase": "fails" if below else "holds",
        "SixteenSidesBelow": str(below),
        "SixteenSidesClientCounts": str(len(per_clients)),
        "SixteenSidesClientMedian": fg.num(p("client", "p50"), 3),
        "SixteenSidesClientNinety": fg.num(p("client", "p90"), 3),
        "SixteenSidesMiddlewareMedian": fg.num(p("middleware", "p50"), 3),
        "SixteenSidesMiddlewareNinety": fg.num(p("middleware", "p90"), 3),
    }
