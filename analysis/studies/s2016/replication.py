"""The 2016 replication family: throughput and response time of sets and gets against the
number of servers, one line per replication level and side, and a table; queue and server
times of sets and gets in the layout of the original's Tables 2 and 3. Throughputs and times
in the study's time (throughput / s, times * s by the runs' scale). Tables are tabulars:
their captions are in paper/sections/study2016.tex."""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping

import pandas as pd

from analysis.report import figures as fg
from analysis.studies.s2016.formats import bounds, design_numbers
from analysis.studies.s2016.macros import Report
from analysis.studies.s2016.study_time import family_tables
from analysis.studies.s2016.times import averaged_runs, grid_tabular, point_times
from analysis.validate import set_share

# The raw tables report() reads, by their rule input names.
TABLES = ("points", "runs", "pool_requests")

ORDER = {"none": 0, "half": 1, "full": 2}
REPLICAS = {"none": "1", "half": r"$\lceil S/2 \rceil$", "full": "$S$"}


def replicas(level: str, servers: int) -> int:
    """Servers that hold a key at a replication level."""
    return {"none": 1, "half": math.ceil(servers / 2), "full": servers}[level]


def figure(points: pd.DataFrame, path: str) -> None:
    """Sets (left) and gets (right), throughput (top) and response time (bottom); every
    replication level and side its own colour and marker, one legend under the panels, and
    the response times of sets and gets on one scale (their throughputs differ by the write
    share, so each has its own); the lines are set slightly apart along S, so that the two
    sides' nearly equal throughputs both show."""
    fig, axes = fg.figure(ncols=2, nrows=2, height=4.8)
    for j, kind in enumerate(("set", "get")):
        d = points[points["type"] == kind]
        for i, (metric, scale, label) in enumerate(
            (
                ("throughput_ops", 1.0, fg.study_label("throughput", "ops/s", wrap=True)),
                ("response_us_mean", 1e-3, fg.study_label("mean response time", "ms", wrap=True)),
            )
        ):
            ax = axes[i][j]
            fg.error_lines(
                ax, d, "servers", metric, series="level_replication", scale=scale,
                label="replication ", distinct=True, dodge=0.08,
            )  # fmt: skip
            ax.set_title(f"{kind} requests", fontsize=8)
            ax.set_xlabel("servers $S$")
            ax.set_ylabel(label)
            ax.set_xticks(sorted(points["servers"].unique()))
            ax.set_ylim(bottom=0)
            if j and metric == "response_us_mean":
                ax.sharey(axes[i][0])
    fg.legend_below(fig, axes[0][0], ncols=2)
    fg.save(fig, path)


def times_tables(
    points: pd.DataFrame, runs: pd.DataFrame, pool_requests: pd.DataFrame, ref: dict
) -> dict[str, str]:
    """Per request type, a tabular of queue and server time percentiles per replication
    level and servers, with the original's queue-time medians (Tables 2 and 3)."""
    info = points.drop_duplicates("point")[["point", "servers", "level_replication"]]
    ok = averaged_runs(runs)
    cells: dict = {}
    for metric in ("queue", "server"):
        t = point_times(pool_requests, ok, metric).merge(info, on="point")
        for _, r in t.iterrows():
            key = (r["type"], metric, r["level_replication"], str(int(r["servers"])))
            cells[key] = {q: r[q] for q in ("p50", "p90")}
    orig = ref["replication_queue_median_ms"]
    servers = sorted({int(s) for s in points["servers"]} | {int(s) for s in orig["set"]["values"]})
    levels = sorted(
        set(points["level_replication"]) | {r for v in orig["set"]["values"].values() for r in v},
        key=lambda r: ORDER.get(r, 9),
    )
    out = {}
    for kind in ("set", "get"):

        def reference(key: tuple[str, str, str], kind: str = kind) -> float | None:
            metric, level, s = key
            if metric != "queue":
                return None
            return orig[kind]["values"].get(int(s), {}).get(level)

        out[kind] = grid_tabular(
            {k[1:]: v for k, v in cells.items() if k[0] == kind},
            [("queue", "time in the queue"), ("server", "time waiting for the servers")],
            [(r, f"{r} ({REPLICAS.get(r, '?')})") for r in levels],
            [(str(s), f"$S={s}$") for s in servers],
            reference,
            "replication",
            "",
        )
    return out


def set_queue_numbers(
    points: pd.DataFrame, runs: pd.DataFrame, pool_requests: pd.DataFrame, ref: dict
) -> dict[str, str]:
    """The sets' median time in the write queue over our points against the original's
    (its Table 2), and how much of its CPU budget our middleware used meanwhile, each range
    as its `Low` and `High`. `SixteenReplSetQueueCase`: `timed`, or `untimed` where no set
    was timed; `SixteenReplCpuCase`: `known`, or `unknown` where no run accounted CPU."""
    t = point_times(pool_requests, averaged_runs(runs), "queue")
    ours = t.loc[t["type"] == "set", "p50"].astype(float) / 1e3
    orig = ref["replication_queue_median_ms"]["set"]
    theirs = pd.Series([float(v) for row in orig["values"].values() for v in row.values()])
    cpu = 100 * points.drop_duplicates("point")["cpu_util_middleware_mean"].astype(float)
    return {
        "SixteenReplSetQueueCase": "untimed" if ours.empty else "timed",
        "SixteenReplCpuCase": "known" if cpu.notna().any() else "unknown",
        **bounds("SixteenReplSetQueue", ours, fg.num, 3),
        **bounds("SixteenOrigReplSetQueue", theirs, fg.num, 3),
        **bounds("SixteenReplCpu", cpu, fg.num, 0),
    }


def tabular(points: pd.DataFrame) -> str:
    """Per servers and replication level: throughput and response time of sets and gets at
    the clients, their response time in the middleware and the sets' time at the servers."""

    def cell(side: str, kind: str, metric: str, scale: float, digits: int, row: pd.Series) -> str:
        m = points[
            (points["point"] == row["point"]) & (points["side"] == side) & (points["type"] == kind)
        ]
        return fg.num(m[f"{metric}_mean"].iloc[0] * scale, digits) if len(m) else fg.MISSING

    keys = points.drop_duplicates("point")[["point", "servers", "level_replication"]].copy()
    keys["order"] = keys["level_replication"].map(ORDER)
    keys = keys.sort_values(["servers", "order"])
    rows = []
    for _, k in keys.iterrows():
        s = int(k["servers"])
        rows.append(
            [
                str(s),
                f"{k['level_replication']} ({replicas(k['level_replication'], s)})",
                cell("client", "set", "throughput_ops", 1, 0, k),
                cell("client", "get", "throughput_ops", 1, 0, k),
                cell("client", "set", "response_us_mean", 1e-3, 2, k),
                cell("client", "get", "response_us_mean", 1e-3, 2, k),
                cell("middleware", "set", "response_us_mean", 1e-3, 2, k),
                cell("middleware", "get", "response_us_mean", 1e-3, 2, k),
                cell("middleware", "set", "server_us_mean", 1e-3, 2, k),
            ]
        )
    return fg.tabular(
        [
            "$S$",
            "Replication",
            "$X_\\mathrm{set}$",
            "$X_\\mathrm{get}$",
            "$R_\\mathrm{set}$",
            "$R_\\mathrm{get}$",
            "$R^{mw}_\\mathrm{set}$",
            "$R^{mw}_\\mathrm{get}$",
            "$T^{mw}_\\mathrm{server,set}$",
        ],
        rows,
        "rlrrrrrrr",
    )


def servers_shape(points: pd.DataFrame) -> dict[str, str]:
    """How the clients' throughput moves with the servers (mean over the replication levels,
    in the study's time) and how much of its CPU budget the middleware used at each count:
    `SixteenReplThroughputList` ("X at S, ..."), the fewest servers' CPU use and read threads
    (`SixteenReplFew...`), the least CPU use at more servers (`SixteenReplManyCpu`), and
    `SixteenReplShapeCase`: `peak` where the throughput is highest between the ends, `fall`
    where it falls at every step, `other` else, or `none` without two server counts."""
    cl = points[(points["side"] == "client") & (points["type"] == "all")].drop_duplicates("point")
    if cl["servers"].nunique() < 2:
        return {"SixteenReplShapeCase": "none"}
    per = cl.groupby("servers").agg(
        x=("throughput_ops_mean", "mean"), cpu=("cpu_util_middleware_mean", "mean")
    )
    xs, few = per["x"].tolist(), int(per.index.min())
    top = int(per["x"].idxmax())
    case = "other"
    if top not in (few, int(per.index.max())):
        case = "peak"
    elif all(b < a for a, b in itertools.pairwise(xs)):
        case = "fall"
    listed = [f"{fg.num(x)} at {s}" for s, x in per["x"].items()]
    return {
        "SixteenReplShapeCase": case,
        "SixteenReplThroughputList": ", ".join(listed[:-1]) + " and " + listed[-1],
        "SixteenReplPeakServers": fg.num(top),
        "SixteenReplFewServers": fg.num(few),
        "SixteenReplFewThreads": fg.num(few * int(cl["middleware.workers"].iloc[0])),
        "SixteenReplFewCpu": fg.num(100 * per["cpu"].loc[few], 0),
        "SixteenReplManyCpu": fg.num(100 * per["cpu"].drop(few).min(), 0),
    }


def numbers(
    points: pd.DataFrame, runs: pd.DataFrame, pool_requests: pd.DataFrame, reference: Mapping
) -> dict[str, str]:
    """The family's numbers beside the original's design and tables."""
    design = reference["design"]["replication"]
    cl = points[points["side"] == "client"]
    sets = cl[cl["type"] == "set"].set_index("point")
    by_level = sets.groupby("level_replication")["response_us_mean_mean"].mean()
    orig = reference["replication_queue_median_ms"]
    return {
        **set_queue_numbers(points, runs, pool_requests, reference),
        "SixteenOrigReplTableSet": fg.escape(orig["set"]["table"]),
        "SixteenOrigReplTableGet": fg.escape(orig["get"]["table"]),
        **design_numbers("SixteenOrigRepl", design),
        "SixteenReplPoints": fg.num(points["point"].nunique()),
        "SixteenReplServerLevels": fg.num(points["servers"].nunique()),
        "SixteenReplLevels": fg.num(points["level_replication"].nunique()),
        "SixteenReplSetResponseNone": fg.num(by_level.get("none", math.nan) / 1e3, 2),
        "SixteenReplSetResponseFull": fg.num(by_level.get("full", math.nan) / 1e3, 2),
        "SixteenReplServers": ", ".join(str(v) for v in fg.levels_sorted(points["servers"])),
        "SixteenReplWorkers": fg.num(points["middleware.workers"].iloc[0]),
        "SixteenReplClients": fg.num(points["clients_total"].iloc[0]),
        "SixteenReplWrites": fg.num(100 * set_share(points["workload.ratio"].iloc[0]), 0),
    }


def report(tables: Mapping[str, pd.DataFrame], reference: Mapping, figure_path: str) -> Report:
    """The family's tables and numbers from its raw `tables` (TABLES) and reference2016.yaml;
    draws its figure at `figure_path`."""
    # Every throughput and time in the study's time, each row by its runs' scale.
    study = family_tables({t: tables[t] for t in ("points", "pool_requests")})
    every, pool_requests, runs = study["points"], study["pool_requests"], tables["runs"]
    points = every[every["type"].isin(["set", "get"])].copy()
    figure(points, figure_path)
    times = times_tables(points, runs, pool_requests, reference)
    return Report(
        {"table": tabular(points), "times_set": times["set"], "times_get": times["get"]},
        {**numbers(points, runs, pool_requests, reference), **servers_shape(every)},
    )
