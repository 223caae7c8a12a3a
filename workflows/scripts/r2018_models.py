"""Snakemake script: the queueing-models section. M/M/1 and M/M/m of the write experiment per
point (analysis.studies.s2018.mm_tables) and the closed network of the baseline with one and two
middlewares (analysis.studies.s2018.mva_middleware), each beside seed 004's Tables 12-14.

Every input is in the study's time first (throughputs / s, times * s by the runs' scale), so
the models are fitted, predict and are compared with the measurements in one time base."""

import math
from typing import Any

import matplotlib.pyplot as plt
import pandas as pd
from r2018_common import camel, log_to, reference, usable

from analysis import estimate
from analysis.models import mva
from analysis.report import figures as rf
from analysis.scaling import in_study_time, with_scale
from analysis.studies.s2018 import mm_tables
from analysis.studies.s2018 import mva_middleware as mw
from analysis.studies.s2018 import seed as seed2018

SETUPS = ("one_middleware", "two_middlewares")
WORKLOADS = ("read-only", "write-only")
# How a model table's columns are shown: header and decimals (rates, probabilities, jobs, ms).
MM_SHOWN = [
    ("mu", "$\\mu$", 0),
    ("lam", "$\\lambda$", 0),
    ("rho", "$\\rho$", 2),
    ("p0", "$p_0$", 2),
    ("utilization", "$U$", 2),
    ("prob_queueing", "$\\varrho$", 2),
    ("n", "$E[n]$", 2),
    ("nq", "$E[n_q]$", 2),
    ("nq_act", "meas.", 2),
    ("w_ms", "$E[w]$", 2),
    ("w_act_ms", "meas.", 2),
    ("r_ms", "$E[r]$", 2),
    ("r_act_ms", "meas.", 2),
]


def middleware_windows(path: str, points_path: str) -> pd.DataFrame:
    """The middlewares' windows per request type, in the study's time."""
    w = in_study_time(with_scale(pd.read_parquet(path), pd.read_parquet(points_path), "point"))
    return w[(w["side"] == "middleware") & (w["type"] != "all") & (w["count"] > 0)]


def mm_tabular(table: pd.DataFrame) -> str:
    rows, last = [], None
    for _, r in table.iterrows():
        key = (int(r["workers"]), int(r["clients"]))
        shown = [str(key[0]), str(key[1])] if key != last else ["", ""]
        last = key
        rows.append([*shown, r["source"], *(rf.num(r[c], d) for c, _, d in MM_SHOWN)])
    return rf.tabular(["WT", "N", "", *(h for _, h, _ in MM_SHOWN)], rows, "rrl" + "r" * 13)


def mm_figure(tables: dict[str, pd.DataFrame], seeds: dict[str, pd.DataFrame], path: str) -> None:
    """Response time per worker count (one panel each, shared axes): both models and the
    middlewares' measurement, each series its own colour and marker; seed 004's values of
    the same series at the same worker count (`seeds`: its Tables 12 and 13 by
    mm_tables.seed_table) in the series' colour, unfilled markers on thin lines."""
    mm1 = tables["mm1"]
    counts = sorted(mm1["workers"].unique()) or [0]
    fig, axes = rf.figure(ncols=len(counts), width=6.4, height=2.6)
    # Shared before plotting, so that the common limits hold every panel's data.
    for ax in axes[0][1:]:
        ax.sharey(axes[0][0])
        ax.sharex(axes[0][0])
    series = [
        ("mm1", "r_ms", "M/M/1", "C0", "x", ":"),
        ("mmm", "r_ms", "M/M/m", "C1", "^", "-."),
        ("mm1", "r_act_ms", "measured (middlewares)", "C2", "s", "--"),
    ]
    for ax, workers in zip(axes[0], counts, strict=True):
        for model, col, label, colour, marker, ls in series:
            g = tables[model][tables[model]["workers"] == workers].sort_values("clients")
            ax.plot(g["clients"], g[col], ls, marker=marker, ms=3, color=colour, label=label)
        for model, col, label, colour, marker, _ in series:
            g = seeds[model][seeds[model]["workers"] == workers].sort_values("clients")
            ax.plot(
                g["clients"],
                g[col],
                color=colour,
                marker="o" if marker == "x" else marker,  # an x has no inside to leave open
                ms=4,
                mfc="none",
                lw=0.6,
                alpha=0.8,
                label=f"seed 004: {label}",
            )
        ax.set(title=f"{workers} workers per middleware", xlabel="clients (virtual)")
        ax.set_yscale("log")
    axes[0][0].set_ylabel("response time [ms], study time")
    handles, labels = axes[0][0].get_legend_handles_labels()
    if handles:
        fig.legend(handles, labels, loc="outside lower center", ncols=2, fontsize=7)
    rf.save(fig, path)
    plt.close("all")


def write_models(sm: Any, ref: dict) -> list[str]:
    """The M/M/1 and M/M/m tables and figure; returns their macros."""
    points = in_study_time(
        usable(pd.read_parquet(sm.input.write_points), sm.input.write_points, sm.input.validation)
    )
    points = points[points["type"] == "all"]
    windows = middleware_windows(sm.input.write_windows, sm.input.write_points)
    windows = windows[windows["point"].isin(points["point"])]
    qlen = mm_tables.system_queue_length(pd.read_parquet(sm.input.write_queue), windows)
    inputs = mm_tables.model_inputs(points, windows, qlen)
    ours = {model: mm_tables.predict(inputs, model) for model in mm_tables.MODELS}
    seeds = {"mm1": ref["mm1_table"], "mmm": ref["mmm_table"]}
    for model, out in (("mm1", sm.output.table_mm1), ("mmm", sm.output.table_mmm)):
        table = mm_tables.beside(ours[model], mm_tables.seed_table(seeds[model]))
        rf.write(out, mm_tabular(table))
    mm_figure(ours, {m: mm_tables.seed_table(t) for m, t in seeds.items()}, sm.output.fig_mm)
    # μ by our estimator and by seed 004's (the best run's average), at the largest worker count.
    top = int(inputs["workers"].max()) if not inputs.empty else None
    mu_window = mu_run = math.nan
    if top is not None:
        pts = points.drop_duplicates("point")
        win = windows[windows["point"].isin(pts[pts["middleware.workers"] == top]["point"])]
        mu_window = estimate.service_rate_max_window(win)
        mu_run = estimate.service_rate_max_run(win)
    seed_points = len(mm_tables.seed_table(seeds["mm1"]))
    common = inputs.merge(mm_tables.seed_table(seeds["mm1"])[mm_tables.KEYS])
    mm1_rho = ours["mm1"]["rho"]
    return [
        rf.macro("ModelMMPoints", str(len(inputs))),
        rf.macro("ModelMMWorkerCounts", str(inputs["workers"].nunique())),
        rf.macro("ModelMMSeedPoints", str(seed_points)),
        rf.macro("ModelMMCommonPoints", str(len(common))),
        rf.macro("ModelMMRhoMax", rf.num(mm1_rho.max(), 2)),
        rf.macro("ModelMMRhoMin", rf.num(mm1_rho.min(), 2)),
        rf.macro("ModelMuWorkers", rf.MISSING if top is None else str(top)),
        rf.macro("ModelMuWindow", rf.num(mu_window)),
        rf.macro("ModelMuRun", rf.num(mu_run)),
        rf.macro(
            "ModelMuRunBelowWindow", rf.pct(1 - mu_run / mu_window if mu_window > 0 else math.nan)
        ),
        rf.macro("ModelMuStudy", rf.num(ref["mm1_mu"].get(top, math.nan))),
    ]


def fit_networks(sm: Any) -> dict[tuple[str, str], dict]:
    """Per setup and workload of the baseline: the network at the largest worker count, its
    service times (measured at that count's lightest load), and the client points it is
    compared with."""
    bpts = in_study_time(
        usable(pd.read_parquet(sm.input.base_points), sm.input.base_points, sm.input.validation)
    )
    bpts = bpts[bpts["type"] == "all"]
    bwin = middleware_windows(sm.input.base_windows, sm.input.base_points)
    dpts = in_study_time(
        usable(pd.read_parquet(sm.input.direct_points), sm.input.direct_points, sm.input.validation)
    )
    dpts = dpts[(dpts["type"] == "all") & (dpts["level_setup"] == "one_server")]
    fitted = {}
    for (setup, workload), g in bpts.groupby(["level_setup", "level_workload"]):
        client = g[g["side"] == "client"].sort_values("clients_total")
        mwside = g[g["side"] == "middleware"].set_index("point")
        workers = int(client["middleware.workers"].max())
        client = client[client["middleware.workers"] == workers]
        win = bwin[bwin["point"].isin(client["point"])]
        if client.empty or win.empty:
            continue
        low = client.iloc[0]
        direct = dpts[dpts["level_workload"] == workload]["throughput_ops_mean"]
        # Service times at the lightest load, as the network's: under load a budgeted
        # middleware's per-request times include the waits of its throttled CPU (a queue,
        # not a service), and the heavy points' counts would dominate a mean over all.
        lightest = win[win["point"] == low["point"]]
        times = mw.service_times(
            estimate.component_service_times_us(lightest if not lightest.empty else win),
            float(low["response_us_mean_mean"]),
            float(mwside.loc[low["point"], "response_us_mean_mean"]),
            float(direct.max()) if not direct.empty else None,
        )
        middlewares = int(low["middlewares"])
        fitted[(setup, workload)] = {
            "network": mw.network(times, workers, middlewares),
            "times": times,
            "workers": workers,
            "middlewares": middlewares,
            "client": client,
        }
    return fitted


def write_networks(sm: Any, full_ref: dict) -> list[str]:
    """The MVA tables (service times and capacities, predictions, components beside seed
    004's Table 14, the two reports' errors and bottlenecks); returns their macros."""
    ref = full_ref["models"]
    raw_x = pd.read_parquet(sm.input.base_points).set_index(["point", "side", "type"])
    raw_x = raw_x["throughput_ops_mean"]
    fitted = fit_networks(sm)
    seed_comp = ref["mva_components"]
    targets = [int(c) for c in seed_comp["clients"]]
    all_clients = {int(n) for f in fitted.values() for n in f["client"]["clients_total"]}
    chosen = mw.nearest_clients(all_clients, targets)
    numbers = [
        rf.macro(camel("ModelCompClients", t), str(chosen[i]) if i < len(chosen) else rf.MISSING)
        for i, t in enumerate(targets)
    ]
    mva_rows, param_rows, mva_data = [], [], []
    comp_tables: dict[str, list[list[str]]] = {s: [] for s in SETUPS}
    macros: dict[str, str] = {}
    for setup in SETUPS:
        for workload in WORKLOADS:
            key = camel("Model", setup, workload)
            macros[f"{key}Bottleneck"] = "n/a (no points)"
            macros[f"{key}X"] = rf.MISSING
            for part in ("NetThread", "Workers", "Memcached"):
                macros[f"{key}Capacity{part}"] = rf.MISSING
    for (setup, workload), f in sorted(fitted.items()):
        key = camel("Model", setup, workload)
        net, times = f["network"], f["times"]
        label = [setup.replace("_", " "), workload]
        comp = []
        for _, c in f["client"].iterrows():
            n = int(c["clients_total"])
            res = mva.solve(net, n)
            comp.append(mw.components(res).assign(clients=n))
            mva_data.append(
                {
                    "setup": setup,
                    "workload": workload,
                    "point": c["point"],
                    "clients": n,
                    "x_model": res.throughput,
                    "x_measured": float(c["throughput_ops_mean"]),
                    "x_measured_raw": float(raw_x.get((c["point"], "client", "all"), math.nan)),
                    "scale": float(c["scale"]),
                    "bottleneck": mw.bottleneck(res),
                }
            )
            mva_rows.append(
                [
                    *label,
                    str(n),
                    rf.num(res.throughput),
                    rf.num(c["throughput_ops_mean"]),
                    rf.num(raw_x.get((c["point"], "client", "all"), math.nan)),
                    rf.num(res.response_time * 1e3, 2),
                    rf.num(c["response_us_mean_mean"] / 1e3, 2),
                    rf.escape(mw.bottleneck(res)),
                ]
            )
        cap = times.capacities(f["workers"], f["middlewares"])
        param_rows.append(
            [
                *label,
                str(f["workers"]),
                *(rf.num(t * 1e6, 1) for t in (times.network, times.netthread, times.worker)),
                rf.num(times.server * 1e6, 1),
                *(rf.num(cap[c]) for c in ("net-thread", "workers", "memcached")),
                rf.escape(mw.bottleneck(res)),
            ]
        )
        macros[f"{key}Bottleneck"] = rf.escape(mw.bottleneck(res))
        macros[f"{key}X"] = rf.num(res.throughput)
        for part, c in (
            ("NetThread", "net-thread"),
            ("Workers", "workers"),
            ("Memcached", "memcached"),
        ):
            macros[f"{key}Capacity{part}"] = rf.num(cap[c])
        side = mw.beside_seed(pd.concat(comp), seed_comp[setup][workload], targets, chosen)
        side = side[side["component"] != "clients"]  # Z = 0: it holds no job; not in Table 14
        last = None
        for _, r in side.iterrows():
            head = (workload, r["clients"])
            shown = (
                [workload, f"{r['clients']} ({r['seed_clients']})"] if head != last else ["", ""]
            )
            last = head
            comp_tables[setup].append(
                [
                    *shown,
                    r["component"],
                    *(rf.num(r[m + s], 2) for m in mw.METRICS for s in ("", "_seed")),
                ]
            )
    for setup in SETUPS:
        read, write = (macros[f"{camel('Model', setup, w)}Bottleneck"] for w in WORKLOADS)
        macros[f"{camel('Model', setup)}BottleneckPhrase"] = mw.bottleneck_phrase(read, write)
    numbers += [rf.macro(k, v) for k, v in macros.items()]
    mva_header = ["setup", "workload", "N", "X MVA", "X meas.", "raw"]
    mva_header += ["R MVA [ms]", "R meas. [ms]", "bottleneck"]
    rf.write(sm.output.table_mva, rf.tabular(mva_header, mva_rows, "llrrrrrrl"))
    param_header = ["setup", "workload", "WT", "S network", "S net-thr.", "S worker", "S memc."]
    param_header += ["cap. net-thr.", "cap. workers", "cap. memc.", "bottleneck"]
    rf.write(sm.output.table_util, rf.tabular(param_header, param_rows, "llr" + "r" * 7 + "l"))
    comp_header = ["workload", "N (seed)", "component", "U", "seed", "R [ms]", "seed", "Q", "seed"]
    for setup, out in zip(
        SETUPS, (sm.output.table_comp_one, sm.output.table_comp_two), strict=True
    ):
        rf.write(out, rf.tabular(comp_header, comp_tables[setup], "lll" + "r" * 6))
    numbers += seeds_beside(sm, full_ref, mva_data)
    frame = pd.DataFrame(
        mva_data,
        columns=[
            "setup",
            "workload",
            "point",
            "clients",
            "x_model",
            "x_measured",
            "x_measured_raw",
            "scale",
            "bottleneck",
        ],
    )
    frame.to_parquet(sm.output.mva_data)
    numbers.append(rf.macro("ModelMvaCases", str(len(param_rows))))
    return numbers


def seeds_beside(sm: Any, full_ref: dict, mva_data: list[dict]) -> list[str]:
    """Our MVA's throughput error and bottleneck at the largest N beside seed 004's (Table 14,
    §7.3) and the bottleneck seed 002 states; returns their macros."""
    ref = full_ref["models"]
    cols = ["setup", "workload", "clients", "x_model", "x_measured", "bottleneck"]
    seeds_mva = seed2018.mva_beside(pd.DataFrame(mva_data, columns=cols), full_ref)
    header = ["setup", "workload", "N", "ours: error", "bottleneck", "seed 004: error"]
    header += ["bottleneck", "seed 002: bottleneck"]
    rows = [
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
    ]
    rf.write(sm.output.table_seeds, rf.tabular(header, rows, "llrrlrll"))
    by_key = seeds_mva.set_index(["setup", "workload"])
    numbers = []
    for setup in SETUPS:
        for workload in WORKLOADS:
            key = camel("Model", setup, workload)
            r = by_key.loc[(setup, workload)] if (setup, workload) in by_key.index else {}
            t4 = ref["mva"][setup][workload]
            numbers += [
                rf.macro(f"{key}StudyX", rf.num(t4["mva_x"])),
                rf.macro(f"{key}StudyMeasX", rf.num(t4["measured_x"])),
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
    return numbers


def main(sm: Any) -> None:
    log_to(sm.log[0])
    full_ref = reference(sm.input.reference)
    numbers = write_models(sm, full_ref["models"])
    numbers += write_networks(sm, full_ref)
    rf.write(sm.output.numbers, "".join(numbers))


if __name__ == "__main__":
    main(snakemake)  # type: ignore[name-defined]  # noqa: F821
