"""Snakemake script: queueing models on the 2016 maximum-throughput family. An M/M/1 of the
system as one unit and an M/M/m with one server per worker, at the maximum-throughput
configuration, beside the measurements; and an MVA network per worker-pool size over the
family's client counts."""

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd

from analysis import estimate, mva, queueing
from analysis.report import figures as fg
from analysis.report.tables2016 import choose_max, run_percentiles

W = "middleware.workers"
TOLERANCE = 0.05  # as in the choice of the maximum-throughput configuration


def pooled_std_us(win: pd.DataFrame) -> float:
    """Standard deviation of the response time over the windows and types given (from their
    counts, means and standard deviations)."""
    w = win.dropna(subset=["response_us_mean", "response_us_std"])
    n = w["count"].sum()
    if n == 0:
        return math.nan
    mean = (w["count"] * w["response_us_mean"]).sum() / n
    second = (w["count"] * (w["response_us_std"] ** 2 + w["response_us_mean"] ** 2)).sum() / n
    return float(math.sqrt(max(second - mean**2, 0.0)))


def measured_metrics(
    point: str,
    points: pd.DataFrame,
    mw_win: pd.DataFrame,
    queue: pd.DataFrame,
    hist: pd.DataFrame,
    windows: pd.DataFrame,
) -> dict[str, float]:
    row = points[(points["point"] == point) & (points["side"] == "middleware")].iloc[0]
    x = float(row["throughput_ops_mean"])
    r = float(row["response_us_mean_mean"]) / 1e6
    pct = run_percentiles(hist[hist["point"] == point], windows, qs=(0.5, 0.95))
    stable_q = queue[queue["point"] == point].merge(
        mw_win[mw_win["point"] == point][["run", "window"]].drop_duplicates(), on=["run", "window"]
    )
    return {
        "mean_response_time": r,
        "std_response_time": pooled_std_us(mw_win[mw_win["point"] == point]) / 1e6,
        "mean_waiting_time": float(row["queue_us_mean_mean"]) / 1e6,
        "mean_jobs_in_system": x * r,  # Little's law on the measured X and R
        "mean_jobs_in_queue": float(stable_q["queue_length_mean"].mean())
        if len(stable_q)
        else math.nan,
        "response_time_q50": float(pct["p50"].mean()) / 1e6 if len(pct) else math.nan,
        "response_time_q95": float(pct["p95"].mean()) / 1e6 if len(pct) else math.nan,
    }


ROWS = [  # key, label, unit scale (times to ms)
    ("arrival_rate", "Arrival rate $\\lambda$ (ops/s)", 1, 0),
    ("service_rate", "Service rate $\\mu$ (ops/s, per server)", 1, 0),
    ("utilization", "Utilisation $\\rho$", 1, 3),
    ("mean_response_time", "Response time, mean (ms)", 1e3, 3),
    ("std_response_time", "Response time, std (ms)", 1e3, 3),
    ("response_time_q50", "Response time, 50\\,\\% quantile (ms)", 1e3, 3),
    ("response_time_q95", "Response time, 95\\,\\% quantile (ms)", 1e3, 3),
    ("mean_waiting_time", "Waiting time, mean (ms)", 1e3, 3),
    ("std_waiting_time", "Waiting time, std (ms)", 1e3, 3),
    ("mean_jobs_in_system", "Jobs in system, mean", 1, 2),
    ("std_jobs_in_system", "Jobs in system, std", 1, 2),
    ("mean_jobs_in_queue", "Jobs in queue, mean", 1, 2),
    ("std_jobs_in_queue", "Jobs in queue, std", 1, 2),
    ("prob_queueing", "Share of jobs that queue", 1, 3),
    ("mean_busy_period", "Busy period, mean (ms)", 1e3, 3),
    ("std_busy_period", "Busy period, std (ms)", 1e3, 3),
    ("mean_jobs_per_busy_period", "Jobs per busy period, mean", 1, 1),
    ("std_jobs_per_busy_period", "Jobs per busy period, std", 1, 1),
]


def flat(result: object) -> dict[str, float]:
    d = result.to_dict()  # type: ignore[attr-defined]
    out = {k: float(v) for k, v in d.items() if isinstance(v, (int, float))}
    out["response_time_q50"] = d["response_time_quantiles"]["0.5"]
    out["response_time_q95"] = d["response_time_quantiles"]["0.95"]
    return out


def open_models(sm, points, windows, queue, hist, numbers):  # noqa: ANN001, ANN201
    client = points[(points["side"] == "client") & (points["type"] == "all")]
    chosen = choose_max(client.rename(columns={W: "workers"}), TOLERANCE)
    mw_win = windows[(windows["side"] == "middleware") & (windows["type"] != "all")]
    at = mw_win[mw_win["point"] == chosen["point"]]
    lam = estimate.arrival_rate(at)
    mu1 = estimate.service_rate_max_window(mw_win)
    m = int(chosen["workers"]) * int(chosen["middlewares"])
    mu_m = 1e6 / estimate.service_time_per_worker_us(at)
    measured = measured_metrics(
        chosen["point"], points[points["type"] == "all"], mw_win, queue, hist, windows
    )
    measured.update(arrival_rate=lam)
    results, notes = {}, []
    for name, solve in (
        ("mm1", lambda: queueing.mm1(lam, mu1)),
        ("mmm", lambda: queueing.mmm(lam, mu_m, m)),
    ):
        try:
            results[name] = flat(solve())
        except queueing.UnstableQueueError as err:
            results[name] = {}
            notes.append(f"{'M/M/1' if name == 'mm1' else f'M/M/{m}'}: {err}")
    # The library's predicted-against-measured rows, for their relative errors.
    errors = {}
    for name, fn in (
        ("mm1", lambda: estimate.mm1_vs_measured(lam, mu1, measured)),
        ("mmm", lambda: estimate.mmm_vs_measured(lam, mu_m, m, measured)),
    ):
        try:
            errors[name] = fn().set_index("metric")["relative_error"]
        except queueing.UnstableQueueError:
            errors[name] = pd.Series(dtype=float)
    rows = []
    for key, label, scale, digits in ROWS:
        cells = [label]
        for name in ("mm1", "mmm"):
            v = results[name].get(key, math.nan)
            cells.append(fg.num(v * scale, digits))
        cells.append(fg.num(measured.get(key, math.nan) * scale, digits))
        rows.append(cells)
    fg.write(
        sm.output.open_table,
        fg.table(
            ["Metric", "M/M/1", f"M/M/{m}", "Measured"],
            rows,
            "p{6.4cm}rrr",
            "M/M/1 and M/M/$m$ models of the maximum-throughput configuration beside the "
            "middleware's measurements. Measured jobs in the system follow from Little's law "
            "($N = XR$); jobs in the queue are the middleware's time-weighted queue length; "
            "a dash marks a quantity the model does not give or the system does not measure."
            + ("" if not notes else " Unstable: " + fg.escape("; ".join(notes)) + "."),
            "tab:sixteen-open",
        ),
    )
    mm1r = results["mm1"]
    numbers.update(
        SixteenMMOneLambda=fg.num(lam),
        SixteenMMOneMu=fg.num(mu1),
        SixteenMMOneRho=fg.num(mm1r.get("utilization", math.nan), 3),
        SixteenMMOneResponse=fg.num(mm1r.get("mean_response_time", math.nan) * 1e3, 3),
        SixteenMMOneResponseError=fg.pct(errors["mm1"].get("mean_response_time", math.nan)),
        SixteenMMmServers=fg.num(m),
        SixteenMMmMu=fg.num(mu_m),
        SixteenMMmRho=fg.num(results["mmm"].get("utilization", math.nan), 3),
        SixteenMMmResponse=fg.num(results["mmm"].get("mean_response_time", math.nan) * 1e3, 3),
        SixteenMMmResponseError=fg.pct(errors["mmm"].get("mean_response_time", math.nan)),
        SixteenMeasuredResponse=fg.num(measured["mean_response_time"] * 1e3, 3),
        SixteenOpenUnstable=fg.num(len(notes)),
    )


def network_for(level: pd.DataFrame, workers: int, servers: int) -> mva.Network:
    """Service times from the lightest-loaded point of one worker-pool size."""
    low = level["clients_total"].min()
    mw = level[(level["side"] == "middleware") & (level["clients_total"] == low)].iloc[0]
    cl = level[(level["side"] == "client") & (level["clients_total"] == low)].iloc[0]
    delay = max(float(cl["response_us_mean_mean"]) - float(mw["response_us_mean_mean"]), 0.0)
    stations = [
        {"name": "network", "kind": "delay", "service_time": delay / 1e6},
        {"name": "net-thread", "kind": "queue", "service_time": mw["net_us_mean_mean"] / 1e6},
        {
            "name": "workers",
            "kind": "queue",
            "service_time": mw["worker_us_mean_mean"] / 1e6,
            "servers": workers,
        },
    ] + [
        {
            "name": f"memcached{i + 1}",
            "kind": "queue",
            "visits": 1 / servers,
            "service_time": mw["server_us_mean_mean"] / 1e6,
        }
        for i in range(servers)
    ]
    return mva.Network.from_mapping({"stations": stations}, "2016 network")


def mva_models(sm, points, numbers):  # noqa: ANN001, ANN201
    pts = points[points["type"] == "all"]
    fig, axes = fg.figure(ncols=2)
    colours = fg.plt.rcParams["axes.prop_cycle"].by_key()["color"]
    rows, errs = [], []
    for i, (w, level) in enumerate(pts.groupby(W, sort=True)):
        net = network_for(level, int(w), int(level["servers"].iloc[0]))
        client = level[level["side"] == "client"].sort_values("clients_total")
        n_max = int(client["clients_total"].max())
        curve = mva.solve_all(net, n_max)
        ns = np.arange(1, n_max + 1)
        for ax, metric, scale, pred in (
            (axes[0][0], "throughput_ops", 1, [r.throughput for r in curve]),
            (axes[0][1], "response_us_mean", 1e-3, [r.response_time * 1e3 for r in curve]),
        ):
            ax.plot(
                ns, pred, color=colours[i % len(colours)], lw=1, ls=":", label=f"W={int(w)}, MVA"
            )
            fg.error_lines(
                ax,
                client.assign(W=f"{int(w)}"),
                "clients_total",
                metric,
                series="W",
                scale=scale,
                label="W=",
            )
        for _, c in client.iterrows():
            res = mva.solve(net, int(c["clients_total"]))
            ex = (res.throughput - c["throughput_ops_mean"]) / c["throughput_ops_mean"]
            er = (res.response_time * 1e6 - c["response_us_mean_mean"]) / c["response_us_mean_mean"]
            errs.append(abs(ex))
            rows.append(
                [
                    fg.num(w),
                    fg.num(c["clients_total"]),
                    fg.num(c["throughput_ops_mean"]),
                    fg.num(res.throughput),
                    fg.pct(ex),
                    fg.num(c["response_us_mean_mean"] / 1e3, 2),
                    fg.num(res.response_time * 1e3, 2),
                    fg.pct(er),
                    fg.escape(res.bottleneck()),
                ]
            )
    for ax, label in zip(axes[0], ("throughput (ops/s)", "response time (ms)"), strict=True):
        ax.set_xlabel("total clients")
        ax.set_ylabel(label)
        ax.legend(fontsize=6)
    fg.save(fig, sm.output.mva_figure)
    fg.write(
        sm.output.mva_table,
        fg.table(
            [
                "$W$",
                "$N$",
                "$X$",
                "$X_\\mathrm{MVA}$",
                "err.",
                "$R$ (ms)",
                "$R_\\mathrm{MVA}$",
                "err.",
                "Bottleneck",
            ],
            rows,
            "rrrrrrrrl",
            "MVA of the closed network (network and client delay, net-thread, worker pool "
            "as a $W$-server station, one station per memcached server) against the "
            "client-side measurements of the maximum-throughput family; service times from "
            "the lightest load of each pool size.",
            "tab:sixteen-mva",
        ),
    )
    numbers.update(
        SixteenMVAMeanError=fg.pct(float(np.mean(errs)) if errs else math.nan),
        SixteenMVAMaxError=fg.pct(float(np.max(errs)) if errs else math.nan),
    )


def main(sm) -> None:  # noqa: ANN001
    points = pd.read_parquet(sm.input.points)
    windows = pd.read_parquet(sm.input.windows)
    queue = pd.read_parquet(sm.input.queue)
    hist = pd.read_parquet(sm.input.histograms)
    numbers: dict[str, str] = {}
    open_models(sm, points, windows, queue, hist, numbers)
    mva_models(sm, points, numbers)
    Path(sm.output.numbers).write_text(json.dumps(numbers, indent=1))


main(snakemake)  # type: ignore[name-defined]  # noqa: F821
