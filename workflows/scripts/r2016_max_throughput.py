"""Snakemake script: the 2016 maximum-throughput family. Throughput against clients per
read-pool size, middleware response-time percentiles, the breakdown of the middleware's
response time, the chosen maximum-throughput configuration beside the original's (with the
percentiles of its Table 1), and the grid of throughput and read-pool load per pool size.
Throughputs and times in the study's time (throughput / s, times * s by the runs' scale),
the chosen configuration's raw values beside."""

import json
from pathlib import Path

import pandas as pd
import yaml

from analysis import pools
from analysis.report import figures as fg
from analysis.report.tables2016 import (
    MAX_TOLERANCE,
    choose_max,
    in_get_windows,
    point_statistics,
    read_only_points,
    run_percentiles,
)
from analysis.report.times2016 import ok_runs, point_times
from analysis.scaling import in_study_time, with_scale

W = "middleware.workers"
COMPONENTS = {
    "net_us": "net-thread",
    "queue_us": "queue",
    "worker_us": "worker",
    "server_us": "server",
    "response_us": "response",
}


def throughput_figure(points: pd.DataFrame, path: str) -> None:
    fig, axes = fg.figure()
    ax = axes[0][0]
    fg.error_lines(ax, points, "clients_total", "throughput_ops", series=W, label="T=")
    ax.set_xlabel("total clients")
    ax.set_ylabel("throughput (ops/s), study time")
    ax.legend(fontsize=6, ncols=2)
    fg.save(fig, path)


def percentile_figure(pct: pd.DataFrame, path: str) -> None:
    fig, axes = fg.figure(ncols=2)
    for ax, q in zip(axes[0], ("p50", "p90"), strict=True):
        fg.error_lines(ax, pct, "clients_total", q, series=W, scale=1e-3, label="T=")
        ax.set_xlabel("total clients")
        ax.set_ylabel(f"response time {q} (ms), study time")
        ax.legend(fontsize=6)
    fg.save(fig, path)


def breakdown_figure(mw: pd.DataFrame, path: str) -> None:
    fig, axes = fg.figure()
    ax = axes[0][0]
    colours = fg.plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for i, (col, name) in enumerate(COMPONENTS.items()):
        g = mw.sort_values("clients_total")
        y = g[f"{col}_mean_mean"].to_numpy(float) / 1e3
        lo = g[f"{col}_mean_ci_low"].to_numpy(float) / 1e3
        hi = g[f"{col}_mean_ci_high"].to_numpy(float) / 1e3
        err = [fg.np.nan_to_num(y - lo), fg.np.nan_to_num(hi - y)]
        ax.errorbar(
            g["clients_total"],
            y,
            yerr=err,
            capsize=2,
            markersize=3,
            linewidth=1,
            color=colours[i],
            label=f"{name}, middleware",
            **fg.SIDE_STYLE["middleware"],
        )
    ax.set_xlabel("total clients")
    ax.set_ylabel("mean time (ms), study time")
    ax.legend(fontsize=6, ncols=2)
    fg.save(fig, path)


def ms(us: object) -> str:
    """Microseconds as milliseconds; None (no such value) as a dash."""
    return fg.num(float(us) / 1e3 if us is not None else float("nan"), 3)  # type: ignore[arg-type]


def grid_table(client: pd.DataFrame, load: pd.DataFrame, plateau: dict) -> str:
    """Throughput (clients) and the read pools' busy fraction per total clients and pool
    size, the highest throughput per pool size, and the original's plateau per pool size."""
    nan = float("nan")
    sizes = sorted({int(w) for w in client["workers"]} | {int(w) for w in plateau})
    clients = sorted({int(c) for c in client["clients_total"]})
    x = client.set_index(["clients_total", "workers"])["throughput_ops_mean"]
    busy = client.merge(load, on="point", how="left").set_index(["clients_total", "workers"])[
        "busy_read"
    ]
    head = ["Clients"] + [rf"\multicolumn{{2}}{{c}}{{$T={t}$}}" for t in sizes]
    rules = " ".join(rf"\cmidrule(lr){{{2 + 2 * i}-{3 + 2 * i}}}" for i in range(len(sizes)))
    sub = [""] + ["$X$ (ops/s)", "busy"] * len(sizes)
    rows = []
    for c in clients:
        row = [str(c)]
        for t in sizes:
            row += [fg.num(x.get((c, t), nan)), fg.pct(busy.get((c, t), nan), 0)]
        rows.append(" & ".join(row) + r" \\")
    best = client.groupby("workers")["throughput_ops_mean"].max()
    rows.append(r"\midrule")
    rows.append(
        " & ".join(
            ["Highest"] + [rf"\multicolumn{{2}}{{c}}{{{fg.num(best.get(t, nan))}}}" for t in sizes]
        )
        + r" \\"
    )
    rows.append(
        " & ".join(
            ["Original"]
            + [
                rf"\multicolumn{{2}}{{c}}{{{fg.num(plateau[t]) if t in plateau else fg.MISSING}}}"
                for t in sizes
            ]
        )
        + r" \\"
    )
    return "\n".join(
        [
            r"\begin{table}[htbp]",
            r"\centering\small",
            r"\caption{The maximum-throughput grid: throughput measured at the clients ($X$, "
            r"mean over repetitions, in the study's time: measured $/s$) and the mean busy "
            r"fraction of the busiest read pool "
            r"(busy: dequeue to reply, measured at the middleware) per total clients and "
            r"threads per read pool $T$; the highest throughput per pool size, and the "
            r"original's plateau per pool size (\S 1.2 of the 2016 study, read off its "
            r"Figure~3).}\label{tab:sixteen-max-grid}",
            r"\resizebox{\ifdim\width>\linewidth\linewidth\else\width\fi}{!}{%",
            rf"\begin{{tabular}}{{r{'rr' * len(sizes)}}}",
            r"\toprule",
            " & ".join(head) + r" \\",
            rules,
            " & ".join(sub) + r" \\",
            r"\midrule",
            *rows,
            r"\bottomrule",
            r"\end{tabular}}",
            r"\end{table}",
            "",
        ]
    )


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
    info = points.drop_duplicates("point")[["point", "clients_total", W]]
    return pct.merge(info, on="point", how="left").assign(side="middleware")


def part_times(pool_requests: pd.DataFrame, ok: set[str], point: str) -> dict[str, pd.Series]:
    """Queue and server time percentiles of the GET parts at one point."""
    part = {}
    for metric in ("queue", "server"):
        t = point_times(pool_requests, ok, metric)
        t = t[(t["point"] == point) & (t["type"] == "get")]
        part[metric] = t.iloc[0] if len(t) else pd.Series(dtype=float)
    return part


def main(sm) -> None:  # noqa: ANN001
    ref = yaml.safe_load(Path(sm.input.reference).read_text())
    raw_points = pd.read_parquet(sm.input.points)
    # Read-only: the middleware's side is its GETs (its SETs are memaslap's untimed pre-set).
    raw_points = read_only_points(raw_points)
    raw_windows = pd.read_parquet(sm.input.windows)
    raw_hist = pd.read_parquet(sm.input.histograms)
    raw_pool_requests = pd.read_parquet(sm.input.pool_requests)
    # The same tables in the study's time (each row by its runs' scale); raw ones beside.
    points = in_study_time(raw_points)
    windows = in_study_time(with_scale(raw_windows, raw_points, "point"))
    hist = in_study_time(with_scale(raw_hist, raw_points, "point"))
    pool_requests = in_study_time(with_scale(raw_pool_requests, raw_points, "point"))
    throughput_figure(points, sm.output.throughput)

    pct = percentiles(hist, windows, points)
    percentile_figure(pct, sm.output.percentiles)

    client = points[points["side"] == "client"].rename(columns={W: "workers"})
    chosen = choose_max(client, MAX_TOLERANCE)
    mw = points[(points["side"] == "middleware") & (points[W] == chosen["workers"])]
    breakdown_figure(mw, sm.output.breakdown)

    mw_point = points[(points["side"] == "middleware") & (points["point"] == chosen["point"])]
    mwr = mw_point.iloc[0] if len(mw_point) else pd.Series(dtype=float)
    p = pct.set_index("point").reindex([chosen["point"]]).iloc[0]
    p_raw = (
        percentiles(raw_hist, raw_windows, raw_points)
        .set_index("point")
        .reindex([chosen["point"]])
        .iloc[0]
    )
    mx, b = ref["max_throughput"], ref["breakdown"]
    sec = mx["section"]
    ok = ok_runs(pd.read_parquet(sm.input.runs))
    part = part_times(pool_requests, ok, chosen["point"])
    part_raw = part_times(raw_pool_requests, ok, chosen["point"])
    raw_client = raw_points[(raw_points["side"] == "client")].set_index("point")
    x_raw = raw_client["throughput_ops_mean"].get(chosen["point"], float("nan"))
    load = read_load(in_get_windows(pd.read_parquet(sm.input.pools), windows), ok)
    fg.write(sm.output.grid, grid_table(client, load, mx["plateau_ops"]))
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
    fg.write(
        sm.output.table,
        fg.table(
            ["Metric", "Ours", "Ours raw", "Original", "Seed"],
            rows,
            "p{5.4cm}rrrl",
            "The maximum-throughput configuration: ours (client-measured throughput, "
            "middleware-measured times, means over repetitions) in the study's time "
            "(throughput $/s$, times $\\cdot s$, $s$ the runs' scale factor) and as measured "
            "(raw), beside the original study's. "
            "Time percentiles: the middleware's response time from its 0.1\\,ms histograms "
            "of the stable windows; queue and server times of the GET parts, per run the "
            "count-weighted mean of the windows' percentiles.",
            "tab:sixteen-max",
        ),
    )
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
        "SixteenMaxRatio": fg.pct(chosen["throughput_ops_mean"] / mx["throughput_ops"]),
        "SixteenOrigMaxThroughput": fg.num(mx["throughput_ops"]),
        "SixteenOrigMaxClients": fg.num(mx["clients"]),
        "SixteenOrigMaxThreads": fg.num(mx["threads_per_pool"]),
        "SixteenOrigServers": fg.num(mx["servers"]),
        "SixteenOrigReadThreads": fg.num(mx["servers"] * mx["threads_per_pool"]),
        "SixteenMaxQueueMedian": ms(part["queue"].get("p50")),
        "SixteenMaxQueueNinety": ms(part["queue"].get("p90")),
        "SixteenMaxServerMedian": ms(part["server"].get("p50")),
        "SixteenMaxServerNinety": ms(part["server"].get("p90")),
        "SixteenMaxPoints": fg.num(client["point"].nunique()),
        "SixteenMaxWorkerLevels": fg.num(client["workers"].nunique()),
    }
    Path(sm.output.numbers).write_text(json.dumps(numbers, indent=1))


if __name__ == "__main__":
    main(snakemake)  # type: ignore[name-defined]  # noqa: F821
