"""Snakemake script: the queueing-models section: M/M/1 and M/M/m of the write experiment
per worker count (λ, μ estimated as the study did), and a closed MVA network of the baseline
with one and two middlewares, predictions beside measurements.

Every input is in the study's time first (each family's throughputs / s, times * s by its
runs' scale), so the models are fitted, predict and are compared with the measurements in
one time base, the one the study's values are in."""

import math

import pandas as pd
from r2018_common import camel, log_to, reference

from analysis import estimate, mva, queueing, seed2018
from analysis.report import figures as rf
from analysis.scaling import in_study_time, with_scale

sm = snakemake  # type: ignore[name-defined]  # noqa: F821
log_to(sm.log[0])
full_ref = reference(sm.input.reference)
ref = full_ref["models"]
out = sm.output
numbers = []


def study_points(path: str) -> pd.DataFrame:
    return in_study_time(pd.read_parquet(path))


def middleware_windows(path: str, points_path: str) -> pd.DataFrame:
    """The middlewares' windows per request type, in the study's time (the scale of the
    family's points)."""
    w = in_study_time(with_scale(pd.read_parquet(path), pd.read_parquet(points_path), "point"))
    return w[(w["side"] == "middleware") & (w["type"] != "all") & (w["count"] > 0)]


# --- M/M/1 and M/M/m of the write experiment -------------------------------------------
wpts = study_points(sm.input.write_points)
wpts = wpts[wpts["type"] == "all"].set_index(["point", "side"])
wwin = middleware_windows(sm.input.write_windows, sm.input.write_points)
wq = pd.read_parquet(sm.input.write_queue)
wq = wq.merge(wwin[["run", "window"]].drop_duplicates(), on=["run", "window"])
# Queue length of the whole system: the middlewares' queues summed per window.
qlen = wq.groupby(["point", "run", "window"])["queue_length_mean"].sum().groupby("point").mean()


def predict(lam: float, mu: float, m: int, measured: dict) -> pd.Series:
    """Predicted metrics (M/M/1 for m = 1, else M/M/m with μ/m per server); empty if ρ ≥ 1."""
    try:
        if m == 1:
            t = estimate.mm1_vs_measured(lam, mu, measured)
        else:
            t = estimate.mmm_vs_measured(lam, mu / m, m, measured)
    except queueing.UnstableQueueError:
        return pd.Series(dtype=float)
    return t.set_index("metric")["predicted"]


meta = wpts.reset_index().drop_duplicates("point").set_index("point")
rows, plot_rows = [], []
mus: dict[int, tuple[float, float]] = {}  # per worker count: highest window, best run
for workers, pw in meta.groupby("middleware.workers"):
    win = wwin[wwin["point"].isin(pw.index)]
    if win.empty:
        continue
    mu = estimate.service_rate_max_window(win)
    mus[int(workers)] = (mu, estimate.service_rate_max_run(win))
    m = int(workers) * int(pw["middlewares"].iloc[0])
    for point, p in pw.sort_values("clients_total").iterrows():
        pwin = win[win["point"] == point]
        if pwin.empty:
            continue
        lam = estimate.arrival_rate(pwin)
        mwp = wpts.loc[(point, "middleware")] if (point, "middleware") in wpts.index else None
        measured = {
            "mean_response_time": mwp["response_us_mean_mean"] / 1e6 if mwp is not None else None,
            "mean_waiting_time": mwp["queue_us_mean_mean"] / 1e6 if mwp is not None else None,
            "mean_jobs_in_queue": qlen.get(point, math.nan),
        }
        res = {"mm1": predict(lam, mu, 1, measured), "mmm": predict(lam, mu, m, measured)}
        get = lambda s, k: float(s.get(k, math.nan))  # noqa: E731
        n = int(p["clients_total"])
        rows.append(
            [
                str(int(workers)),
                str(n),
                rf.num(lam),
                rf.num(mu),
                rf.num(lam / mu, 2),
                rf.num(get(res["mm1"], "mean_response_time") * 1e3, 2),
                rf.num(get(res["mmm"], "mean_response_time") * 1e3, 2),
                rf.num((measured["mean_response_time"] or math.nan) * 1e3, 2),
                rf.num(get(res["mm1"], "mean_waiting_time") * 1e3, 2),
                rf.num(get(res["mmm"], "mean_waiting_time") * 1e3, 2),
                rf.num((measured["mean_waiting_time"] or math.nan) * 1e3, 2),
                rf.num(get(res["mm1"], "mean_jobs_in_queue"), 1),
                rf.num(get(res["mmm"], "mean_jobs_in_queue"), 1),
                rf.num(measured["mean_jobs_in_queue"], 1),
            ]
        )
        plot_rows.append(
            {
                "workers": int(workers),
                "clients": n,
                "M/M/1": get(res["mm1"], "mean_response_time") * 1e3,
                "M/M/m": get(res["mmm"], "mean_response_time") * 1e3,
                "measured (middleware)": (measured["mean_response_time"] or math.nan) * 1e3,
            }
        )
rf.write(
    out.table_mm,
    rf.table(
        [
            "WT",
            "N",
            "$\\lambda$",
            "$\\mu$",
            "$\\rho$",
            "R$_1$",
            "R$_m$",
            "R",
            "W$_1$",
            "W$_m$",
            "W",
            "$n_{q,1}$",
            "$n_{q,m}$",
            "$n_q$",
        ],
        rows,
        "rr" + "r" * 12,
        "M/M/1 and M/M/m ($m$ = workers of both middlewares) of the write experiment: "
        "$\\lambda$ the mean window throughput of the middlewares, $\\mu$ the highest window "
        "throughput of the worker count ($\\mu/m$ per server for M/M/m); response time R, "
        "waiting time W (ms) and queue length $n_q$ measured at the middlewares, beside the "
        "M/M/1 (subscript 1) and M/M/m (subscript $m$) predictions (-- where $\\rho \\ge 1$). "
        "Rates and times in the study's time: fitted to the measurements rescaled by the runs' "
        "scale factor $s$ (rates $/s$, times $\\cdot s$). The study's tables: "
        f"{rf.escape(ref['source'])}.",
        "tab:mm",
    ),
)
fig, axes = rf.figure(ncols=1, width=4.6, height=2.8)
ax = axes[0][0]
pr = pd.DataFrame(plot_rows)
styles = {"M/M/1": ":", "M/M/m": "-.", "measured (middleware)": "--"}
for i, (workers, g) in enumerate(pr.groupby("workers") if not pr.empty else []):
    for col, ls in styles.items():
        ax.plot(
            g["clients"],
            g[col],
            ls,
            marker="s" if col.startswith("meas") else "x",
            ms=3,
            color=f"C{i}",
            label=f"{workers} WT, {col}",
        )
ax.set(xlabel="clients (virtual)", ylabel="response time [ms], study time", yscale="log")
if not pr.empty:
    ax.legend(fontsize=5, ncols=2)
rf.save(fig, out.fig_mm)
numbers.append(rf.macro("ModelMMPoints", str(len(rows))))
# μ by our estimator and by seed 004's (the best run's average), at the largest worker count.
top_wt = max(mus, default=None)
mu_window, mu_run = mus.get(top_wt, (math.nan, math.nan)) if top_wt else (math.nan, math.nan)
numbers += [
    rf.macro("ModelMuWorkers", rf.MISSING if top_wt is None else str(top_wt)),
    rf.macro("ModelMuWindow", rf.num(mu_window)),
    rf.macro("ModelMuRun", rf.num(mu_run)),
    rf.macro(
        "ModelMuRunBelowWindow", rf.pct(1 - mu_run / mu_window if mu_window > 0 else math.nan)
    ),
    rf.macro("ModelMuStudy", rf.num(ref["mm1_mu"].get(top_wt, math.nan))),
]

# --- MVA of the baseline with middlewares ------------------------------------------------
raw_bpts = pd.read_parquet(sm.input.base_points)
raw_x = raw_bpts.set_index(["point", "side", "type"])["throughput_ops_mean"]
bpts = in_study_time(raw_bpts)
bpts = bpts[bpts["type"] == "all"]
bwin = middleware_windows(sm.input.base_windows, sm.input.base_points)
dpts = study_points(sm.input.direct_points)
dpts = dpts[(dpts["type"] == "all") & (dpts["level_setup"] == "one_server")]
mva_rows, util_rows = [], []
mva_data: list[dict] = []  # the same rows as numbers, for the findings
mva_numbers: dict[str, str] = {}
for setup in ("one_middleware", "two_middlewares"):
    for workload in ("read-only", "write-only"):
        key = camel("Model", setup, workload)
        theirs = ref["mva"][setup][workload]
        mva_numbers[f"{key}Bottleneck"] = "n/a (no points)"
        mva_numbers[f"{key}X"] = rf.MISSING
        mva_numbers[f"{key}StudyX"] = rf.num(theirs["mva_x"])
        mva_numbers[f"{key}StudyMeasX"] = rf.num(theirs["measured_x"])
for (setup, workload), g in bpts.groupby(["level_setup", "level_workload"]):
    client = g[g["side"] == "client"].sort_values("clients_total")
    mwside = g[g["side"] == "middleware"].set_index("point")
    workers = int(client["middleware.workers"].max())
    client = client[client["middleware.workers"] == workers]
    win = bwin[bwin["point"].isin(client["point"])]
    if client.empty or win.empty:
        continue
    comp = estimate.component_service_times_us(win)
    low = client.iloc[0]
    # The network (both directions) is what the clients see beyond the middleware.
    net = max(low["response_us_mean_mean"] - mwside.loc[low["point"], "response_us_mean_mean"], 0)
    direct = dpts[dpts["level_workload"] == workload]["throughput_ops_mean"]
    # memcached: the inverse of the highest direct throughput of one server, as the study did.
    s_server = 1 / direct.max() if not direct.empty else comp["server"] / 1e6
    mws = int(low["middlewares"])
    stations = [
        {"name": "network", "kind": "delay", "service_time": net / 1e6},
        *[
            st
            for i in range(mws)
            for st in (
                {
                    "name": f"netthread{i + 1}",
                    "service_time": comp["netthread"] / 1e6,
                    "visits": 1 / mws,
                },
                {
                    "name": f"workers{i + 1}",
                    "service_time": comp["worker"] / 1e6,
                    "visits": 1 / mws,
                    "servers": workers,
                },
            )
        ],
        {"name": "memcached", "service_time": s_server},
    ]
    net_model = mva.Network.from_mapping({"stations": stations}, f"{setup} {workload}")
    key = camel("Model", setup, workload)
    for _, c in client.iterrows():
        n = int(c["clients_total"])
        res = mva.solve(net_model, n)
        mva_data.append(
            {
                "setup": setup,
                "workload": workload,
                "clients": n,
                "x_model": res.throughput,
                "x_measured": float(c["throughput_ops_mean"]),
                "x_measured_raw": float(raw_x.get((c["point"], "client", "all"), math.nan)),
                "scale": float(c["scale"]),
                "bottleneck": res.bottleneck(),
            }
        )
        mva_rows.append(
            [
                setup.replace("_", " "),
                workload,
                str(n),
                rf.num(res.throughput),
                rf.num(c["throughput_ops_mean"]),
                rf.num(raw_x.get((c["point"], "client", "all"), math.nan)),
                rf.num(res.response_time * 1e3, 2),
                rf.num(c["response_us_mean_mean"] / 1e3, 2),
                rf.escape(res.bottleneck()),
            ]
        )
    st = res.stations
    util_rows.append(
        [
            setup.replace("_", " "),
            workload,
            str(n),
            str(workers),
            rf.num(net / 1e3, 3),
            rf.num(comp["netthread"] / 1e3, 3),
            rf.num(comp["worker"] / 1e3, 3),
            rf.num(s_server * 1e3, 3),
            rf.num(st["netthread1"].utilization, 2),
            rf.num(st["workers1"].utilization, 2),
            rf.num(st["memcached"].utilization, 2),
        ]
    )
    mva_numbers[f"{key}Bottleneck"] = rf.escape(res.bottleneck())
    mva_numbers[f"{key}X"] = rf.num(res.throughput)
numbers += [rf.macro(k, v) for k, v in mva_numbers.items()]
rf.write(
    out.table_mva,
    rf.table(
        [
            "setup",
            "workload",
            "N",
            "X MVA",
            "X meas.",
            "raw",
            "R MVA [ms]",
            "R meas. [ms]",
            "bottleneck",
        ],
        mva_rows,
        "llrrrrrrl",
        "Closed MVA network of the baseline with middlewares (largest worker count of the "
        "profile), predicted beside the clients' measurements; think time 0. Fitted to and "
        "compared with the measurements in the study's time (throughput $/s$, times "
        "$\\cdot s$, $s$ the runs' scale factor); raw: the measured throughput as is.",
        "tab:mva",
    ),
)
rf.write(
    out.table_util,
    rf.table(
        [
            "setup",
            "workload",
            "N",
            "WT",
            "S net",
            "S net-thr.",
            "S worker",
            "S memc.",
            "U net-thr.",
            "U workers",
            "U memc.",
        ],
        util_rows,
        "llrrrrrrrrr",
        "MVA service times (ms in the study's time, measured $\\cdot s$; the network delay "
        "centre from the client--middleware gap at the lightest load, net-thread and worker "
        "from the middleware's component times, "
        "memcached from the highest one-server throughput without middleware) and predicted "
        "utilisations (per server, first middleware) at the largest N.",
        "tab:mva-util",
    ),
)
numbers.append(rf.macro("ModelMvaCases", str(len(util_rows))))
# Beside the two 2018 reports: our MVA's throughput error and bottleneck at the largest N,
# seed 004's (Table 14, Section 7.3) and the bottleneck seed 002 states.
mva_frame = pd.DataFrame(
    mva_data, columns=["setup", "workload", "clients", "x_model", "x_measured", "bottleneck"]
)
seeds_mva = seed2018.mva_beside(mva_frame, full_ref)
rf.write(
    out.table_seeds,
    rf.tabular(
        [
            "setup",
            "workload",
            "N",
            "ours: error",
            "bottleneck",
            "seed 004: error",
            "bottleneck",
            "seed 002: bottleneck",
        ],
        [
            [
                r["setup"].replace("_", " "),
                r["workload"],
                str(r["clients"]),
                rf.pct(r["ours_error"]),
                rf.escape(r["ours_bottleneck"]),
                rf.pct(r["seed004_error"]),
                rf.escape(r["seed004_bottleneck"]),
                rf.escape(r["seed002_bottleneck"]),
            ]
            for _, r in seeds_mva.iterrows()
        ],
        "llrrlrll",
    ),
)
seeds_key = seeds_mva.set_index(["setup", "workload"])
for setup in ("one_middleware", "two_middlewares"):
    for workload in ("read-only", "write-only"):
        key = camel("Model", setup, workload)
        r = seeds_key.loc[(setup, workload)] if (setup, workload) in seeds_key.index else {}
        t4 = ref["mva"][setup][workload]
        numbers += [
            rf.macro(f"{key}Error", rf.pct(r.get("ours_error", math.nan))),
            rf.macro(
                f"{key}StudyError",
                rf.pct(seed2018.relative_error(t4["mva_x"], t4["measured_x"])),
            ),
            rf.macro(f"{key}StudyBottleneck", rf.escape(ref["mva_bottleneck"][workload])),
            rf.macro(
                f"{key}SeedTwoBottleneck",
                rf.escape(full_ref["seed002"]["bottleneck"][setup][workload]),
            ),
        ]
pd.DataFrame(
    mva_data,
    columns=[
        "setup",
        "workload",
        "clients",
        "x_model",
        "x_measured",
        "x_measured_raw",
        "scale",
        "bottleneck",
    ],
).to_parquet(out.mva_data)
rf.write(out.numbers, "".join(numbers))
