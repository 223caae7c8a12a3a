"""Snakemake script: queueing models of the 2016 design. An M/M/1 of the system as one unit
and an M/M/m with one server per read and write thread at the maximum-throughput
configuration; the M/M/m per number of servers of the replication family without
replication; the MVA network of read pools, write threads and memcached servers over the
maximum-throughput family's client counts and at one replication point. Seed 001's values
(Tables 1-3) stand beside ours.

Every table is in the study's time first (throughputs / s, times * s by its runs' scale), so
the models are fitted, predict and are compared with the measurements and the seed's values
in one time base; utilisations, queue lengths and relative errors do not depend on s."""

import contextlib
import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import yaml

from analysis import busy_period, estimate, mmm2016, mva2016, pools, queueing
from analysis.report import figures as fg
from analysis.report.tables2016 import (
    MAX_TOLERANCE,
    choose_max,
    in_get_windows,
    read_only_points,
    run_percentiles,
)
from analysis.report.times2016 import ok_runs
from analysis.scaling import in_study_time, with_scale

W = "middleware.workers"
CURVE_POINTS = 25  # populations at which the MVA curves are drawn
BUSY_PERIODS = 200_000  # simulated busy periods of the seed's M/M/1 (about a second)
BUSY_SEED = 2016

ROWS = [  # key, label, scale of our value (s to ms), digits
    ("servers", "Servers $m$", 1, 0),
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
TIME_KEYS = {k for k, _, scale, _ in ROWS if scale == 1e3}


def load(sm, family: str, *tables: str) -> dict[str, pd.DataFrame]:  # noqa: ANN001
    raw = {t: pd.read_parquet(sm.input[f"{family}_{t}"]) for t in tables}
    points = raw["points"] if "points" in raw else pd.read_parquet(sm.input[f"{family}_points"])
    frames = {
        t: in_study_time(f if t == "points" else with_scale(f, points, "point"))
        if "point" in f.columns
        else f
        for t, f in raw.items()
    }
    if family == "max":
        frames = timed_reads(frames)
    return frames


def timed_reads(d: dict[str, pd.DataFrame]) -> dict[str, pd.DataFrame]:
    """The read-only family's timed load: memaslap first sets keys through the middleware
    without timing them, so the middleware's side keeps its GETs and the windows that
    have some."""
    out = dict(d)
    if "windows" in d:
        w = d["windows"]
        for name in ("pools", "queue"):
            if name in d:
                out[name] = in_get_windows(d[name], w)
        out["windows"] = w[(w["side"] == "client") | (w["type"] == "get")]
    if "points" in d:
        out["points"] = read_only_points(d["points"]).assign(type="all")
    for name in ("pool_requests", "histograms"):
        if name in d:
            out[name] = d[name][d[name]["type"] == "get"]
    return out


def flat(result: object) -> dict[str, float]:
    d = result.to_dict()  # type: ignore[attr-defined]
    out = {k: float(v) for k, v in d.items() if isinstance(v, (int, float))}
    out["response_time_q50"] = d["response_time_quantiles"]["0.5"]
    out["response_time_q95"] = d["response_time_quantiles"]["0.95"]
    return out


def of_point(frame: pd.DataFrame, point: str, ok: set[str]) -> pd.DataFrame:
    return frame[(frame["point"] == point) & frame["run"].isin(ok)]


def stable_queue(queue: pd.DataFrame, windows: pd.DataFrame, point: str) -> pd.DataFrame:
    mw = windows[(windows["side"] == "middleware") & (windows["point"] == point)]
    return queue[queue["point"] == point].merge(
        mw[["run", "window"]].drop_duplicates(), on=["run", "window"]
    )


def open_models(sm, ref: dict, numbers: dict) -> None:  # noqa: ANN001
    d = load(sm, "max", "points", "windows", "histograms", "queue", "pool_requests", "runs")
    ok = ok_runs(d["runs"])
    points, windows = d["points"], d["windows"]
    client = points[(points["side"] == "client") & (points["type"] == "all")]
    chosen = choose_max(client.rename(columns={W: "workers"}), MAX_TOLERANCE)
    point = chosen["point"]
    mw_win = windows[(windows["side"] == "middleware") & (windows["type"] != "all")]
    at = mw_win[mw_win["point"] == point]
    lam = estimate.arrival_rate(at)
    mu1 = estimate.service_rate_max_window(mw_win)
    servers, threads = int(chosen["servers"]), int(chosen["workers"])
    inputs = mmm2016.inputs(
        windows[windows["point"] == point],
        of_point(d["pool_requests"], point, ok),
        servers,
        threads,
        int(chosen["middlewares"]),
    )
    measured = mmm2016.measured(
        windows[windows["point"] == point],
        of_point(d["pool_requests"], point, ok),
        stable_queue(d["queue"], windows, point),
        lam,
    )
    pct = run_percentiles(d["histograms"][d["histograms"]["point"] == point], windows, (0.5, 0.95))
    measured.update(
        arrival_rate=lam,
        response_time_q50=float(pct["p50"].mean()) / 1e6 if len(pct) else math.nan,
        response_time_q95=float(pct["p95"].mean()) / 1e6 if len(pct) else math.nan,
    )
    results, notes = {}, []
    for name, solve in (
        ("mm1", lambda: queueing.mm1(lam, mu1)),
        ("mmm", lambda: mmm2016.solve(inputs)),
    ):
        try:
            results[name] = flat(solve())
        except queueing.UnstableQueueError as err:
            results[name] = {}
            notes.append(f"{'M/M/1' if name == 'mm1' else f'M/M/{inputs.servers}'}: {err}")
    results["mm1"]["servers"] = 1
    results["mmm"]["servers"] = inputs.servers
    seed = ref["models"]["mm1"]
    seed_busy_std = queueing.mm1(seed["arrival_rate"], seed["service_rate"]).std_busy_period
    seed_pred = {**seed["predicted"], "arrival_rate": seed["arrival_rate"], "servers": 1,
                 "service_rate": seed["service_rate"]}  # fmt: skip
    rows = []
    for key, label, scale, digits in ROWS:
        cells = [label]
        for name in ("mm1", "mmm"):
            cells.append(fg.num(results[name].get(key, math.nan) * scale, digits))
        cells.append(fg.num(measured.get(key, math.nan) * scale, digits))
        cells.append(fg.num(seed_pred.get(key, math.nan), digits))
        if key in seed.get("printed_errors", []):
            cells[-1] += "$^\\dagger$"
        cells.append(fg.num(seed["actual"].get(key, math.nan), digits))
        rows.append(cells)
    fg.write(
        sm.output.open_table,
        fg.table(
            ["Metric", "M/M/1", f"M/M/{inputs.servers}", "Measured", "Seed M/M/1", "Seed meas."],
            rows,
            "p{5.6cm}rrrrr",
            "M/M/1 and M/M/$m$ ($m = S(T+1)$) models of the maximum-throughput configuration "
            "beside the middleware's measurements (rates and times in the study's time: "
            "measured rates $/s$, times $\\cdot s$, $s$ the runs' scale factor), and seed "
            "001's M/M/1 of its own trace "
            f"experiment ({seed['table']}; its configuration is not given, so only the kind "
            "of agreement compares). Measured jobs in the system follow from Little's law "
            "($N = \\lambda R$); jobs in the queue are the time-weighted length of all "
            "queues; the waiting time is the parts' time in their queue. $^\\dagger$: the "
            "seed's value does not follow from its $\\lambda$ and $\\mu$ (the formula gives "
            f"{fg.num(seed_busy_std * 1e3, 2)}"
            "\\,ms). A dash marks a quantity a model does not give or nobody measured."
            + ("" if not notes else " Unstable: " + fg.escape("; ".join(notes)) + "."),
            "tab:sixteen-open",
        ),
    )
    mm1r, mmmr = results["mm1"], results["mmm"]

    def error(r: dict) -> float:
        m = measured["mean_response_time"]
        return (r.get("mean_response_time", math.nan) - m) / m

    numbers.update(
        SixteenMMOneLambda=fg.num(lam),
        SixteenMMOneMu=fg.num(mu1),
        SixteenMMOneRho=fg.num(mm1r.get("utilization", math.nan), 3),
        SixteenMMOneResponse=fg.num(mm1r.get("mean_response_time", math.nan) * 1e3, 3),
        SixteenMMOneResponseError=fg.pct(error(mm1r)),
        SixteenMMmServers=fg.num(inputs.servers),
        SixteenMMmMu=fg.num(inputs.service_rate),
        SixteenMMmServiceTime=fg.num(inputs.service_time_us / 1e3, 3),
        SixteenMMmRho=fg.num(mmmr.get("utilization", math.nan), 3),
        SixteenMMmResponse=fg.num(mmmr.get("mean_response_time", math.nan) * 1e3, 3),
        SixteenMMmResponseError=fg.pct(error(mmmr)),
        SixteenMMmQueueing=fg.num(mmmr.get("prob_queueing", math.nan), 3),
        SixteenMeasuredResponse=fg.num(measured["mean_response_time"] * 1e3, 3),
        SixteenMeasuredWaiting=fg.num(measured["mean_waiting_time"] * 1e3, 3),
        SixteenOpenUnstable=fg.num(len(notes)),
        SixteenSeedMMOneRatio=fg.num(
            seed["actual"]["mean_response_time"] / seed["predicted"]["mean_response_time"], 0
        ),
        SixteenMMOneRatio=fg.num(
            measured["mean_response_time"] / mm1r.get("mean_response_time", math.nan), 0
        ),
        SixteenSeedMMOneRho=fg.num(seed["arrival_rate"] / seed["service_rate"], 3),
        SixteenSeedMMOneMeasuredRho=fg.num(seed["actual"]["utilization"], 2),
    )
    numbers.update(seed_busy_period(seed))


def seed_busy_period(seed: dict) -> dict[str, str]:
    """The busy period of seed 001's M/M/1 (its λ and μ per s, times in ms): the value it
    printed, the formula's and a simulation's."""
    lam, mu = seed["arrival_rate"] / 1e3, seed["service_rate"] / 1e3  # per ms
    formula = busy_period.mm1(lam, mu)
    sim = busy_period.simulate(lam, mu, BUSY_PERIODS, BUSY_SEED).summary()
    printed = seed["predicted"]
    return {
        "SixteenSeedBusyStdPrinted": fg.num(printed["std_busy_period"], 2),
        "SixteenSeedBusyStdFormula": fg.num(formula.std_length, 3),
        "SixteenSeedBusyStdSimulated": fg.num(sim.std_length, 3),
        "SixteenSeedBusyMeanPrinted": fg.num(printed["mean_busy_period"], 2),
        "SixteenSeedBusyMeanFormula": fg.num(formula.mean_length, 3),
        "SixteenSeedBusyMeanSimulated": fg.num(sim.mean_length, 3),
        "SixteenSeedBusyJobsStdPrinted": fg.num(printed["std_jobs_per_busy_period"], 2),
        "SixteenSeedBusyJobsStdFormula": fg.num(formula.std_jobs, 2),
        "SixteenSeedBusyJobsStdSimulated": fg.num(sim.std_jobs, 2),
        "SixteenSeedBusyPeriods": fg.num(BUSY_PERIODS),
        "SixteenSeedBusyStdRatio": fg.num(formula.std_length / printed["std_busy_period"], 2),
    }


# The rows of seed 001's Table 2, with the inputs and the utilisation.
MMM_ROWS = {
    "servers",
    "arrival_rate",
    "service_rate",
    "utilization",
    "mean_response_time",
    "std_response_time",
    "mean_waiting_time",
    "std_waiting_time",
    "mean_jobs_in_system",
    "std_jobs_in_system",
    "mean_jobs_in_queue",
    "std_jobs_in_queue",
}


def mmm_by_servers(sm, ref: dict, numbers: dict) -> None:  # noqa: ANN001
    """M/M/m per number of servers, replication family without replication, beside seed
    001's Table 2 (its own experiment: R = 1, 5 % writes)."""
    d = load(sm, "repl", "points", "windows", "queue", "pool_requests", "runs")
    ok = ok_runs(d["runs"])
    points, windows = d["points"], d["windows"]
    seed = ref["models"]["mmm"]
    mine = points[(points["level_replication"] == "none") & (points["side"] == "middleware")]
    mine = mine.drop_duplicates("point")
    ours: dict[int, tuple[dict, dict]] = {}
    for _, p in mine.iterrows():
        s, point = int(p["servers"]), p["point"]
        w = windows[windows["point"] == point]
        req = of_point(d["pool_requests"], point, ok)
        try:
            i = mmm2016.inputs(w, req, s, int(p[W]), int(p["middlewares"]))
        except ValueError:
            continue
        model: dict = {"servers": i.servers, "arrival_rate": i.arrival_rate,
                       "service_rate": i.service_rate}  # fmt: skip
        with contextlib.suppress(queueing.UnstableQueueError):  # the table shows dashes
            model.update(flat(mmm2016.solve(i)))
        meas = mmm2016.measured(w, req, stable_queue(d["queue"], windows, point), i.arrival_rate)
        meas.update(servers=i.servers, arrival_rate=i.arrival_rate)
        ours[s] = (model, meas)
    servers = sorted(set(ours) | {int(s) for s in seed["servers"]})
    head = ["Metric"] + [rf"\multicolumn{{4}}{{c}}{{$S={s}$}}" for s in servers]
    rules = " ".join(rf"\cmidrule(lr){{{2 + 4 * i}-{5 + 4 * i}}}" for i in range(len(servers)))
    sub = [""] + ["model", "meas.", "seed", "s.\\ meas."] * len(servers)
    rows = []
    for key, label, scale, digits in ROWS:
        if key not in MMM_ROWS:
            continue
        cells = [label]
        for s in servers:
            model, meas = ours.get(s, ({}, {}))
            sd = seed["servers"].get(s, {})
            seed_model = {**sd.get("predicted", {}), "servers": sd.get("m", math.nan),
                          "arrival_rate": sd.get("arrival_rate", math.nan),
                          "service_rate": sd.get("service_rate", math.nan)}  # fmt: skip
            if sd:
                rate = sd["arrival_rate"] / (sd["m"] * sd["service_rate"])
                seed_model["utilization"] = rate
            cells += [
                fg.num(model.get(key, math.nan) * scale, digits),
                fg.num(meas.get(key, math.nan) * scale, digits),
                fg.num(seed_model.get(key, math.nan), digits),
                fg.num(sd.get("actual", {}).get(key, math.nan), digits),
            ]
        rows.append(" & ".join(cells) + r" \\")
    cfg = seed["config"]
    lines = [
        r"\begin{table}[htbp]",
        r"\centering\small",
        r"\caption{M/M/$m$ with one server per read and write thread ($m = S(T+1)$) per number "
        r"of servers $S$, on the replication family without replication: our model and "
        r"measurements (in the study's time: rates $/s$, times $\cdot s$) beside seed 001's ("
        + seed["table"]
        + r"; its own experiment, "
        rf"{cfg['clients']} clients, $T = {cfg['threads_per_pool']}$, "
        rf"{cfg['writes_percent']}\,\% writes; its utilisation is computed here from its "
        r"$\lambda$, $\mu$ and $m$). Waiting time: the parts' time in their queue; jobs in "
        r"the system: $\lambda R$ (as the seed); jobs in the queue: the time-weighted length "
        r"of all queues (the seed: $\lambda W$).}\label{tab:sixteen-mmm}",
        r"\resizebox{\ifdim\width>\linewidth\linewidth\else\width\fi}{!}{%",
        rf"\begin{{tabular}}{{l{'rrrr' * len(servers)}}}",
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
    fg.write(sm.output.mmm_table, "\n".join(lines))
    errors = [
        (m["mean_response_time"] - meas["mean_response_time"]) / meas["mean_response_time"]
        for m, meas in ours.values()
        if "mean_response_time" in m and meas.get("mean_response_time", 0) > 0
    ]
    shares = [
        meas["mean_waiting_time"] / meas["mean_response_time"]
        for _, meas in ours.values()
        if meas.get("mean_response_time", 0) > 0
    ]
    seed_shares = [
        v["actual"]["mean_waiting_time"] / v["actual"]["mean_response_time"]
        for v in seed["servers"].values()
    ]
    numbers.update(
        SixteenMMmWaitShare=fg.pct(float(np.mean(shares)) if shares else math.nan),
        SixteenSeedMMmWaitShare=fg.pct(float(np.mean(seed_shares))),
        SixteenMMmServerLevels=", ".join(str(s) for s in sorted(ours)) or fg.MISSING,
        SixteenMMmMeanError=fg.pct(float(np.mean(errors)) if errors else math.nan),
        SixteenSeedMMmError=fg.pct(
            float(
                np.mean(
                    [
                        (v["predicted"]["mean_response_time"] - v["actual"]["mean_response_time"])
                        / v["actual"]["mean_response_time"]
                        for v in seed["servers"].values()
                    ]
                )
            )
        ),
    )


def write_share(ratio: str) -> float:
    sets, gets = (float(v) for v in str(ratio).split(":"))
    return sets / (sets + gets)


def design_of(row: pd.Series) -> mva2016.Design:
    replication = row.get("middleware.replication")
    servers = int(row["servers"])
    r = servers if replication is None or pd.isna(replication) else int(replication)
    return mva2016.Design(servers, int(row[W]), r, write_share(row["workload.ratio"]))


def times_at(d: dict[str, pd.DataFrame], point: str, ok: set[str]) -> mva2016.ServiceTimes:
    w = d["windows"]
    return mva2016.service_times(
        w[(w["point"] == point) & w["run"].isin(ok)],
        of_point(d["pools"], point, ok),
        of_point(d["pool_requests"], point, ok),
    )


def measured_busy(pool_table: pd.DataFrame, point: str, ok: set[str]) -> dict[str, float]:
    load = pools.pool_load(of_point(pool_table, point, ok))
    return {k: float(load.loc[load["pool"] == k, "busy_fraction"].mean()) for k in pools.KINDS}


def mva_models(sm, numbers: dict) -> None:  # noqa: ANN001
    d = load(sm, "max", "points", "windows", "pools", "pool_requests", "runs")
    ok = ok_runs(d["runs"])
    pts = d["points"][d["points"]["type"] == "all"]
    fig, axes = fg.figure(ncols=2)
    colours = fg.plt.rcParams["axes.prop_cycle"].by_key()["color"]
    rows, errs, bottlenecks = [], [], set()
    for i, (t, level) in enumerate(pts.groupby(W, sort=True)):
        client = level[level["side"] == "client"].sort_values("clients_total")
        low = client.iloc[0]
        design = design_of(low)
        times = times_at(d, low["point"], ok)
        n_max = int(client["clients_total"].max())
        ns = sorted({int(n) for n in np.linspace(1, n_max, CURVE_POINTS)})
        curve = [mva2016.predict(design, times, n) for n in ns]
        for ax, pred in (
            (axes[0][0], [c.throughput for c in curve]),
            (axes[0][1], [c.response_time * 1e3 for c in curve]),
        ):
            ax.plot(
                ns, pred, color=colours[i % len(colours)], lw=1, ls=":", label=f"T={int(t)}, MVA"
            )
        for ax, metric, scale in (
            (axes[0][0], "throughput_ops", 1),
            (axes[0][1], "response_us_mean", 1e-3),
        ):
            fg.error_lines(ax, client.assign(T=f"{int(t)}"), "clients_total", metric,
                           series="T", scale=scale, label="T=")  # fmt: skip
        for _, c in client.iterrows():
            p = mva2016.predict(design, times, int(c["clients_total"]))
            busy = measured_busy(d["pools"], c["point"], ok)
            ex = (p.throughput - c["throughput_ops_mean"]) / c["throughput_ops_mean"]
            er = (p.response_time * 1e6 - c["response_us_mean_mean"]) / c["response_us_mean_mean"]
            errs.append(abs(ex))
            bottlenecks.add(p.bottleneck)
            rows.append(
                [
                    fg.num(t),
                    fg.num(c["clients_total"]),
                    fg.num(c["throughput_ops_mean"]),
                    fg.num(p.throughput),
                    fg.pct(ex),
                    fg.num(c["response_us_mean_mean"] / 1e3, 2),
                    fg.num(p.response_time * 1e3, 2),
                    fg.pct(er),
                    fg.pct(busy["read"], 0),
                    fg.pct(p.read_busy, 0),
                    fg.escape(p.bottleneck),
                ]
            )
    labels = ("throughput (ops/s), study time", "response time (ms), study time")
    for ax, label in zip(axes[0], labels, strict=True):
        ax.set_xlabel("total clients")
        ax.set_ylabel(label)
        ax.legend(fontsize=6)
    fg.save(fig, sm.output.mva_figure)
    fg.write(
        sm.output.mva_table,
        fg.table(
            ["$T$", "$N$", "$X$", "$X_\\mathrm{MVA}$", "err.", "$R$ (ms)",
             "$R_\\mathrm{MVA}$", "err.", "busy", "busy$_\\mathrm{MVA}$", "Bottleneck"],
            rows,
            "rrrrrrrrrrl",
            "MVA of the 2016 design (client delay, net-thread, per server a read pool of $T$ "
            "threads, a write thread and memcached) against the client-side measurements of "
            "the maximum-throughput family, in the study's time (throughput $/s$, times "
            "$\\cdot s$); service times from the lightest load of each "
            "pool size. busy: the busiest read pool's busy fraction measured (dequeue to "
            "reply) and predicted (the thread's own time and its wait at memcached); "
            "bottleneck: the station kind with the highest utilisation in the model.",
            "tab:sixteen-mva",
        ),
    )  # fmt: skip
    numbers.update(
        SixteenMVAMeanError=fg.pct(float(np.mean(errs)) if errs else math.nan),
        SixteenMVAMaxError=fg.pct(float(np.max(errs)) if errs else math.nan),
        SixteenMVABottlenecks=fg.escape(", ".join(sorted(bottlenecks))) or fg.MISSING,
    )


SEED_MVA_ROWS = [  # key, label, digits
    ("throughput", "Throughput (ops/s)", 0),
    ("throughput_get", "Throughput, GETs (ops/s)", 0),
    ("throughput_set", "Throughput, SETs (ops/s)", 0),
    ("response", "Response time at the clients (ms)", 2),
    ("response_get", "Response time, GETs (ms)", 2),
    ("response_set", "Response time, SETs (ms)", 2),
    ("read_response", "Read pool: queue and thread time per GET (ms)", 2),
    ("write_response", "Write thread: queue and thread time per SET (ms)", 2),
    ("util_read", "Read thread busy (holding included)", 2),
    ("util_write", "Write thread busy", 2),
]


def mva_seed(sm, ref: dict, numbers: dict) -> None:  # noqa: ANN001
    """The MVA at one point of the replication family beside seed 001's Table 3."""
    seed = ref["models"]["mva"]
    d = load(sm, "repl", "points", "windows", "pools", "pool_requests", "runs")
    ok = ok_runs(d["runs"])
    pts = d["points"]
    client = pts[(pts["side"] == "client") & (pts["level_replication"] == "none")]
    model: dict[str, float] = {}
    meas: dict[str, float] = {}
    chosen_s, busiest = None, None
    if len(client):
        target = seed["config"]["servers"]
        row = client.loc[(client["servers"] - target).abs().sort_values(kind="stable").index[0]]
        point, chosen_s = row["point"], int(row["servers"])
        at = client[client["point"] == point].set_index("type")
        design = design_of(at.loc["all"])
        times = times_at(d, point, ok)
        p = mva2016.predict(design, times, int(at.loc["all", "clients_total"]))
        busiest = (p.bottleneck, p.utilization[p.bottleneck])
        w = design.write_share
        st = p.result.stations
        model = {
            "throughput": p.throughput,
            "throughput_get": p.throughput * (1 - w),
            "throughput_set": p.throughput * w,
            "response": p.response_time * 1e3,
            "response_get": (times.client + p.middleware_response_get) * 1e3,
            "response_set": (times.client + p.middleware_response_set) * 1e3,
            "read_response": st["read0"].response_time * 1e3 if "read0" in st else math.nan,
            "write_response": st["write0"].response_time * 1e3 if "write0" in st else math.nan,
            "util_read": p.read_busy,
            "util_write": p.utilization["write"],
        }
        req = of_point(d["pool_requests"], point, ok)
        queue = pools.part_times(req, "queue", by=("pool",))
        q = {k: float(np.average(g["mean"], weights=g["count"])) for k, g in queue.groupby("pool")}
        busy = measured_busy(d["pools"], point, ok)

        def typed(kind: str, col: str) -> float:
            return float(at.loc[kind, col]) if kind in at.index else math.nan

        meas = {
            "throughput": typed("all", "throughput_ops_mean"),
            "throughput_get": typed("get", "throughput_ops_mean"),
            "throughput_set": typed("set", "throughput_ops_mean"),
            "response": typed("all", "response_us_mean_mean") / 1e3,
            "response_get": typed("get", "response_us_mean_mean") / 1e3,
            "response_set": typed("set", "response_us_mean_mean") / 1e3,
            "read_response": (q.get("read", math.nan) / 1e6 + times.read) * 1e3,
            "write_response": (q.get("write", math.nan) / 1e6 + times.write) * 1e3,
            "util_read": busy["read"],
            "util_write": busy["write"],
        }
    rows = [
        [
            label,
            fg.num(model.get(key, math.nan), digits),
            fg.num(meas.get(key, math.nan), digits),
            fg.num(seed["predicted"].get(key, math.nan), digits),
            fg.num(seed["actual"].get(key, math.nan), digits),
        ]
        for key, label, digits in SEED_MVA_ROWS
    ]
    cfg = seed["config"]
    fg.write(
        sm.output.mva_seed_table,
        fg.table(
            ["Metric", "MVA", "Measured", "Seed MVA", "Seed meas."],
            rows,
            "p{6.2cm}rrrr",
            f"MVA of the 2016 design at the replication family's point with $S = "
            f"{chosen_s if chosen_s is not None else fg.MISSING}$ servers and no replication, "
            "service times measured at that point (in the study's time: rates $/s$, times "
            "$\\cdot s$), beside seed 001's network "
            f"({seed['table']}: $S = {cfg['servers']}$, $R = 1$, {cfg['writes_percent']}\\,\\% "
            f"writes, {cfg['clients']} clients, a class each of GET and SET clients and no "
            "memcached station). Pool times are per visit: the wait in the queue and the "
            "thread's own time, without the wait for memcached.",
            "tab:sixteen-mva-seed",
        ),
    )
    numbers.update(
        SixteenMVASeedServers=fg.num(chosen_s) if chosen_s is not None else fg.MISSING,
        SixteenMVASeedError=fg.pct(
            (model.get("throughput", math.nan) - meas.get("throughput", math.nan))
            / meas.get("throughput", math.nan)
            if meas.get("throughput")
            else math.nan
        ),
        SixteenMVASeedBottleneck=fg.escape(busiest[0]) if busiest else fg.MISSING,
        SixteenMVASeedBottleneckUtil=fg.num(busiest[1], 2) if busiest else fg.MISSING,
        SixteenSeedMVASetShare=fg.pct(
            seed["predicted"]["throughput_set"] / seed["predicted"]["throughput"]
        ),
        SixteenSeedMVAError=fg.pct(
            (seed["predicted"]["throughput"] - seed["actual"]["throughput"])
            / seed["actual"]["throughput"]
        ),
    )


def main(sm) -> None:  # noqa: ANN001
    ref = yaml.safe_load(Path(sm.input.reference).read_text())
    numbers: dict[str, str] = {}
    open_models(sm, ref, numbers)
    mmm_by_servers(sm, ref, numbers)
    mva_models(sm, numbers)
    mva_seed(sm, ref, numbers)
    Path(sm.output.numbers).write_text(json.dumps(numbers, indent=1))


if __name__ == "__main__":
    main(snakemake)  # type: ignore[name-defined]  # noqa: F821
