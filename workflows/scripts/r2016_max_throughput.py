"""Snakemake script: the 2016 maximum-throughput family. Throughput against clients per
worker-pool size, middleware response-time percentiles, the breakdown of the middleware's
response time, and the chosen maximum-throughput configuration beside the original's."""

import json
from pathlib import Path

import pandas as pd
import yaml

from analysis.report import figures as fg
from analysis.report.tables2016 import choose_max, point_statistics, run_percentiles

TOLERANCE = 0.05
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
    fg.error_lines(ax, points, "clients_total", "throughput_ops", series=W, label="W=")
    ax.set_xlabel("total clients")
    ax.set_ylabel("throughput (ops/s)")
    ax.legend(fontsize=6, ncols=2)
    fg.save(fig, path)


def percentile_figure(pct: pd.DataFrame, path: str) -> None:
    fig, axes = fg.figure(ncols=2)
    for ax, q in zip(axes[0], ("p50", "p90"), strict=True):
        fg.error_lines(ax, pct, "clients_total", q, series=W, scale=1e-3, label="W=")
        ax.set_xlabel("total clients")
        ax.set_ylabel(f"response time {q} (ms)")
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
    ax.set_ylabel("mean time (ms)")
    ax.legend(fontsize=6, ncols=2)
    fg.save(fig, path)


def ms(us: object) -> str:
    return fg.num(float(us) / 1e3, 3)  # type: ignore[arg-type]


def main(sm) -> None:  # noqa: ANN001
    ref = yaml.safe_load(Path(sm.input.reference).read_text())
    points = pd.read_parquet(sm.input.points)
    points = points[points["type"] == "all"].copy()
    windows = pd.read_parquet(sm.input.windows)
    hist = pd.read_parquet(sm.input.histograms)
    throughput_figure(points, sm.output.throughput)

    per_run = run_percentiles(hist, windows, qs=(0.5, 0.9))
    pct = point_statistics(per_run, ["p50", "p90"])
    info = points.drop_duplicates("point")[["point", "clients_total", W]]
    pct = pct.merge(info, on="point", how="left").assign(side="middleware")
    percentile_figure(pct, sm.output.percentiles)

    client = points[points["side"] == "client"].rename(columns={W: "workers"})
    chosen = choose_max(client, TOLERANCE)
    mw = points[(points["side"] == "middleware") & (points[W] == chosen["workers"])]
    breakdown_figure(mw, sm.output.breakdown)

    mw_point = points[(points["side"] == "middleware") & (points["point"] == chosen["point"])]
    mwr = mw_point.iloc[0] if len(mw_point) else pd.Series(dtype=float)
    p = pct.set_index("point").reindex([chosen["point"]]).iloc[0]
    mx, b = ref["max_throughput"], ref["breakdown"]
    sec = mx["section"]
    rows = [
        [
            "Throughput (ops/s)",
            fg.num(chosen["throughput_ops_mean"]),
            fg.num(mx["throughput_ops"]),
            sec,
        ],
        ["Total clients", fg.num(chosen["clients_total"]), fg.num(mx["clients"]), sec],
        [
            "Workers (orig.: threads per server pool)",
            fg.num(chosen["workers"]),
            fg.num(mx["threads_per_pool"]),
            sec,
        ],
        [
            "Middleware response, p50 (ms)",
            ms(p.get("p50_mean")),
            fg.num(b["response"][0], 3),
            b["table"],
        ],
        [
            "Middleware response, p90 (ms)",
            ms(p.get("p90_mean")),
            fg.num(b["response"][1], 3),
            b["table"],
        ],
        [
            "Queue time: ours mean, orig.\\ p50/p90 (ms)",
            ms(mwr.get("queue_us_mean_mean")),
            f"{fg.num(b['queue'][0], 3)} / {fg.num(b['queue'][1], 3)}",
            b["table"],
        ],
        [
            "Server time: ours mean, orig.\\ p50/p90 (ms)",
            ms(mwr.get("server_us_mean_mean")),
            f"{fg.num(b['server'][0], 3)} / {fg.num(b['server'][1], 3)}",
            b["table"],
        ],
    ]
    plateau = client.groupby("workers")["throughput_ops_mean"].max()
    for w, x in plateau.items():
        orig = mx["plateau_ops"].get(int(w))
        rows.append(
            [
                f"Highest throughput, {int(w)} workers (ops/s)",
                fg.num(x),
                fg.num(orig) if orig else fg.MISSING,
                mx["plateau_section"],
            ]
        )
    fg.write(
        sm.output.table,
        fg.table(
            ["Metric", "Ours", "Original", "Seed"],
            rows,
            "p{6.2cm}rrl",
            "The maximum-throughput configuration: ours (client-measured throughput, "
            "middleware-measured times, means over repetitions) beside the original study's.",
            "tab:sixteen-max",
        ),
    )
    resp = float(mwr.get("response_us_mean_mean", float("nan")))
    numbers = {
        "SixteenMaxThroughput": fg.num(chosen["throughput_ops_mean"]),
        "SixteenMaxClients": fg.num(chosen["clients_total"]),
        "SixteenMaxWorkers": fg.num(chosen["workers"]),
        "SixteenMaxTolerance": fg.num(100 * TOLERANCE),
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
        "SixteenMaxPoints": fg.num(client["point"].nunique()),
        "SixteenMaxWorkerLevels": fg.num(client["workers"].nunique()),
    }
    Path(sm.output.numbers).write_text(json.dumps(numbers, indent=1))


main(snakemake)  # type: ignore[name-defined]  # noqa: F821
