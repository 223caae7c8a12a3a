"""The 2016 maximum-throughput family's report: the chosen maximum-throughput configuration
beside the original's (with the percentiles of its Table 1), the grid of throughput and
read-pool load per pool size, and the family's numbers, its figures drawn on the way.
Throughputs and times in the study's time (throughput / s, times * s by the runs' scale),
the chosen configuration's raw values beside."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import pandas as pd

from analysis import pools
from analysis.histograms import run_percentiles
from analysis.report import figures as fg
from analysis.scale_model import in_study_time
from analysis.studies.s2016 import gamma, max_figures, sides
from analysis.studies.s2016.formats import ms
from analysis.studies.s2016.max_findings import (
    cpu_numbers,
    like_numbers,
    split_numbers,
    threads_numbers,
    wait_numbers,
)
from analysis.studies.s2016.study_time import by_points
from analysis.studies.s2016.tables import (
    MAX_TOLERANCE,
    WORKERS,
    at_original,
    choose_max,
    highest_per_pool,
    in_get_windows,
    point_statistics,
    read_only_points,
)
from analysis.studies.s2016.times import averaged_runs, get_part_times

TABLES = ("points", "windows", "histograms", "runs", "pools", "pool_requests")
FIGURES = ("throughput", "percentiles", "breakdown", "gamma", "sides")


def grid_table(client: pd.DataFrame, load: pd.DataFrame, mx: dict) -> str:
    """Throughput (clients) and the busiest read pool's busy fraction per total clients and
    pool size, the highest throughput per pool size, and the original's value per pool size
    (a plateau or a peak, as its text states) with its kind."""
    nan = float("nan")
    plateau = mx["plateau_ops"]
    kinds = mx.get("plateau_kind", {})
    # Pool sizes these runs did not measure keep only the original's value, in a line of
    # their own below, instead of columns of dashes.
    sizes = sorted({int(w) for w in client["workers"]}) or sorted(int(w) for w in plateau)
    unmeasured = [int(workers) for workers in sorted(plateau) if int(workers) not in sizes]
    clients = sorted({int(c) for c in client["clients_total"]})
    x = client.set_index(["clients_total", "workers"])["throughput_ops_mean"]
    busy = client.merge(load, on="point", how="left").set_index(["clients_total", "workers"])[
        "busy_read"
    ]
    sub = [""] + ["$X$ (ops/s)", "busy"] * len(sizes)
    rows: list[list[str] | str] = []
    for c in clients:
        row = [str(c)]
        for workers in sizes:
            row += [fg.num(x.get((c, workers), nan)), fg.pct(busy.get((c, workers), nan), 0)]
        rows.append(row)
    best = client.groupby("workers")["throughput_ops_mean"].max()
    rows.append(r"\midrule")
    rows.append(["Highest"] + [_span(fg.num(best.get(workers, nan))) for workers in sizes])
    rows.append(
        [f"Original ({fg.escape(mx['section'])})"]
        + [
            _span(fg.num(plateau[workers]) if workers in plateau else fg.MISSING)
            for workers in sizes
        ]
    )
    rows.append(
        ["its kind"]
        + [_span(_kind(kinds.get(workers)) if workers in plateau else "") for workers in sizes]
    )
    # One row per pool size not run here, its value across the measured columns: a single
    # row naming them all is wider than the table and stretches its last column.
    for workers in unmeasured:
        value = f"{fg.num(plateau[workers])} ({_kind(kinds.get(workers))}; not run here)"
        rows.append(
            [f"Original, $T={workers}$", rf"\multicolumn{{{2 * len(sizes)}}}{{l}}{{{value}}}"]
        )
    groups = [f"$T={workers}$" for workers in sizes]
    return fg.grouped_tabular(["Clients"], groups, 2, sub, rows, f"r{'rr' * len(sizes)}")


def _kind(kind: dict | None) -> str:
    """`plateau`, or `peak at N` with the clients of a peak."""
    if not kind:
        return "plateau"
    return f"{kind['kind']} at {kind['clients']}" if "clients" in kind else str(kind["kind"])


def _span(cell: str) -> str:
    """A cell across both columns of a pool size."""
    return rf"\multicolumn{{2}}{{c}}{{{cell}}}"


def read_load(pool_table: pd.DataFrame, ok: set[str]) -> pd.DataFrame:
    """Per point: the busiest read pool's busy fraction, mean over its ok runs."""
    busiest = pools.busiest_pools(pool_table[pool_table["run"].isin(ok)])
    if busiest.empty:
        return pd.DataFrame(columns=["point", "busy_read"])
    return busiest.groupby("point", as_index=False)["busy_read"].mean()


def percentiles(hist: pd.DataFrame, windows: pd.DataFrame, points: pd.DataFrame) -> pd.DataFrame:
    """Per point: the middleware's GET response-time p50 and p90 (µs) over repetitions."""
    per_run = run_percentiles(hist, windows, qs=(0.5, 0.9), types=["get"])
    pct = point_statistics(per_run, ["p50", "p90"])
    info = points.drop_duplicates("point")[["point", "clients_total", WORKERS]]
    return pct.merge(info, on="point", how="left").assign(side="middleware")


def config_tabular(
    chosen: pd.Series,
    x_raw: float,
    p: pd.Series,
    p_raw: pd.Series,
    part: Mapping[str, pd.Series],
    part_raw: Mapping[str, pd.Series],
    mx: Mapping,
    b: Mapping,
) -> str:
    """The chosen configuration beside the original's: throughput (ours in the study's time
    and raw), clients and pool size, then the p50 and p90 of the middleware's response time,
    the read queue's time and the wait for memcached against its Table 1."""
    sec = mx["section"]
    rows = [
        [
            "Throughput (ops/s)",
            fg.num(chosen["throughput_ops_mean"]),
            fg.num(x_raw),
            fg.num(mx["throughput_ops"]),
            sec,
        ],
        [
            "Total clients",
            fg.num(chosen["clients_total"]),
            "",
            fg.num(mx["clients"]),
            sec,
        ],
        [
            "Threads per read pool",
            fg.num(chosen["workers"]),
            "",
            fg.num(mx["threads_per_pool"]),
            sec,
        ],
    ]
    for name, ours, raw, orig in (
        ("$t_\\mathrm{MW}$, middleware response", p, p_raw, b["response"]),
        (
            "$t_\\mathrm{Queue}$, time in the read queue",
            part["queue"],
            part_raw["queue"],
            b["queue"],
        ),
        (
            "$t_\\mathrm{Server}$, time waiting for memcached",
            part["server"],
            part_raw["server"],
            b["server"],
        ),
    ):
        for i, q in enumerate(("p50", "p90")):
            value = ours.get(f"{q}_mean", ours.get(q))
            value_raw = raw.get(f"{q}_mean", raw.get(q))
            rows.append(
                [f"{name}, {q} (ms)", ms(value), ms(value_raw), fg.num(orig[i], 3), b["table"]]
            )
    return fg.tabular(["Metric", "Ours", "Ours raw", "Original", "Seed"], rows, "p{5.4cm}rrrl")


@dataclass(frozen=True)
class Report:
    config: str  # the chosen configuration beside the original's
    grid: str  # throughput and read-pool load per clients and pool size
    numbers: dict[str, str]


def report(tables: Mapping[str, pd.DataFrame], ref: Mapping, figures: Mapping[str, str]) -> Report:
    """The family's report from its raw `tables` (TABLES) and reference2016.yaml (`ref`);
    draws the figures (FIGURES) at the paths in `figures`."""
    # Read-only: the middleware's side is its GETs (its SETs are memaslap's untimed pre-set).
    raw_points = read_only_points(tables["points"])
    raw_windows = tables["windows"]
    raw_hist = tables["histograms"]
    raw_pool_requests = tables["pool_requests"]
    # The same tables in the study's time (each row by its runs' scale); raw ones beside.
    points = in_study_time(raw_points)
    windows = by_points(raw_windows, raw_points)
    hist = by_points(raw_hist, raw_points)
    pool_requests = by_points(raw_pool_requests, raw_points)
    mx, b = ref["max_throughput"], ref["breakdown"]
    client = points[points["side"] == "client"].rename(columns={WORKERS: "workers"})
    chosen = choose_max(client, MAX_TOLERANCE)
    max_figures.throughput_figure(points, figures["throughput"], mx, chosen["point"])

    pct = percentiles(hist, windows, points)
    max_figures.percentile_figure(pct, figures["percentiles"], mx)

    mw = points[(points["side"] == "middleware") & (points[WORKERS] == chosen["workers"])]
    max_figures.breakdown_figure(mw, figures["breakdown"])
    ok = averaged_runs(tables["runs"])
    # The original's Figures 1 and 2 on our runs: the chosen point's distributions with
    # fitted gammas, and both sides' response times at the chosen pool size.
    hists, widths = gamma.point_histograms(hist, windows, ok, chosen["point"])
    fits = gamma.gamma_figure(hists, widths, figures["gamma"])
    side_pct, means = sides.at_pool_size(points, hist, windows, ok, chosen["workers"])
    sides.sides_figure(side_pct, means, figures["sides"])
    side_numbers = sides.sides_numbers(side_pct, means, chosen)

    mw_point = points[(points["side"] == "middleware") & (points["point"] == chosen["point"])]
    mwr = mw_point.iloc[0] if len(mw_point) else pd.Series(dtype=float)
    p = pct.set_index("point").reindex([chosen["point"]]).iloc[0]
    p_raw = (
        percentiles(raw_hist, raw_windows, raw_points)
        .set_index("point")
        .reindex([chosen["point"]])
        .iloc[0]
    )
    part = get_part_times(pool_requests, ok, chosen["point"])
    part_raw = get_part_times(raw_pool_requests, ok, chosen["point"])
    raw_client = raw_points[(raw_points["side"] == "client")].set_index("point")
    x_raw = raw_client["throughput_ops_mean"].get(chosen["point"], float("nan"))
    load = read_load(in_get_windows(tables["pools"], windows), ok)
    grid = grid_table(client, load, mx)
    best = highest_per_pool(client)
    at_ref = at_original(best, mx)
    peak = best.loc[best["throughput_ops_mean"].idxmax()]
    peak_t = int(best["throughput_ops_mean"].idxmax())
    config = config_tabular(chosen, x_raw, p, p_raw, part, part_raw, mx, b)
    resp = float(mwr.get("response_us_mean_mean", float("nan")))
    numbers = {
        "SixteenMaxThroughput": fg.num(chosen["throughput_ops_mean"]),
        "SixteenMaxThroughputRaw": fg.num(x_raw),
        "SixteenMaxClients": fg.num(chosen["clients_total"]),
        "SixteenMaxWorkers": fg.num(chosen["workers"]),
        "SixteenMaxTolerance": fg.num(100 * MAX_TOLERANCE),
        "SixteenMaxResponseMedian": ms(p.get("p50_mean")),
        "SixteenMaxResponseNinety": ms(p.get("p90_mean")),
        "SixteenMaxQueueShare": fg.pct(float(mwr.get("queue_us_mean_mean", "nan")) / resp),
        "SixteenMaxServerShare": fg.pct(float(mwr.get("server_us_mean_mean", "nan")) / resp),
        # Like with like: our highest at the original's pool size against its maximum there.
        "SixteenMaxRatio": fg.pct(
            float(at_ref["throughput_ops_mean"]) / mx["throughput_ops"]
            if at_ref is not None
            else math.nan
        ),
        **like_numbers(best, mx),
        "SixteenMaxPeakWorkers": fg.num(peak_t),
        "SixteenMaxPeakThroughput": fg.num(peak["throughput_ops_mean"]),
        "SixteenMaxPeakClients": fg.num(peak["clients_total"]),
        "SixteenMaxPeakRatio": fg.pct(peak["throughput_ops_mean"] / mx["throughput_ops"]),
        **threads_numbers(best, mx, MAX_TOLERANCE),
        **cpu_numbers(raw_points),
        **wait_numbers(pct, pool_requests, ok, client, mx, b),
        "SixteenOrigMaxThroughput": fg.num(mx["throughput_ops"]),
        "SixteenOrigMaxClients": fg.num(mx["clients"]),
        "SixteenOrigMaxThreads": fg.num(mx["threads_per_pool"]),
        "SixteenOrigServers": fg.num(mx["servers"]),
        "SixteenOrigReadThreads": fg.num(mx["servers"] * mx["threads_per_pool"]),
        "SixteenMaxQueueMedian": ms(part["queue"].get("p50")),
        "SixteenMaxQueueNinety": ms(part["queue"].get("p90")),
        "SixteenMaxServerMedian": ms(part["server"].get("p50")),
        "SixteenMaxServerNinety": ms(part["server"].get("p90")),
        **split_numbers(part),
        "SixteenMaxPoolSizes": str(client["workers"].nunique()),
        "SixteenMaxClientCounts": str(client["clients_total"].nunique()),
        "SixteenMaxPoints": str(client["point"].nunique()),
        **gamma.gamma_numbers(fits, ref["figures"]),
        **side_numbers,
    }
    return Report(config, grid, numbers)
