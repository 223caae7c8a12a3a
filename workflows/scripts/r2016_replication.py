"""Snakemake script: the 2016 replication family. Throughput and response time of set and
get requests against the number of servers, one line per replication level, and a table;
queue and server times of sets and gets in the layout of the original's Tables 2 and 3.
Throughputs and times in the study's time (throughput / s, times * s by the runs' scale)."""

import json
import math
from pathlib import Path

import pandas as pd
import yaml

from analysis.report import figures as fg
from analysis.report.times2016 import grid_table, ok_runs, point_times
from analysis.scaling import in_study_time, with_scale

ORDER = {"none": 0, "half": 1, "full": 2}
REPLICAS = {"none": "1", "half": r"$\lceil S/2 \rceil$", "full": "$S$"}


def write_share(ratio: str) -> float:
    """Percentage of writes of a memtier-style "S:G" ratio."""
    sets, gets = (float(v) for v in str(ratio).split(":"))
    return 100 * sets / (sets + gets)


def replicas(level: str, servers: int) -> int:
    return {"none": 1, "half": math.ceil(servers / 2), "full": servers}[level]


def figure(points: pd.DataFrame, path: str) -> None:
    fig, axes = fg.figure(ncols=2, nrows=2, height=4.4)
    for j, kind in enumerate(("set", "get")):
        d = points[points["type"] == kind]
        for i, (metric, scale, label) in enumerate(
            (
                ("throughput_ops", 1.0, "throughput (ops/s), study time"),
                ("response_us_mean", 1e-3, "mean response time (ms), study time"),
            )
        ):
            ax = axes[i][j]
            fg.error_lines(
                ax, d, "servers", metric, series="level_replication", scale=scale, label="R="
            )
            ax.set_title(f"{kind} requests", fontsize=8)
            ax.set_xlabel("servers")
            ax.set_ylabel(label)
            ax.set_xticks(sorted(points["servers"].unique()))
            ax.legend(fontsize=6)
    fg.save(fig, path)


def times_tables(
    points: pd.DataFrame, runs: pd.DataFrame, pool_requests: pd.DataFrame, ref: dict
) -> str:
    """Queue and server time percentiles per type, replication level and servers, with the
    original's queue-time medians (Tables 2 and 3)."""
    info = points.drop_duplicates("point")[["point", "servers", "level_replication"]]
    ok = ok_runs(runs)
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
    out = []
    for kind in ("set", "get"):
        table = orig[kind]["table"]

        def reference(key: tuple[str, str, str], kind: str = kind) -> float | None:
            metric, level, s = key
            if metric != "queue":
                return None
            return orig[kind]["values"].get(int(s), {}).get(level)

        out.append(
            grid_table(
                {k[1:]: v for k, v in cells.items() if k[0] == kind},
                [("queue", "time in the queue"), ("server", "time waiting for the servers")],
                [(r, f"{r} ({REPLICAS.get(r, '?')})") for r in levels],
                [(str(s), f"$S={s}$") for s in servers],
                reference,
                "$R$",
                "",
                f"Effect of replication on {kind}s: time in the "
                f"{'write' if kind == 'set' else 'read'} queue and time waiting for the servers "
                "per part, median (p50) and 90th percentile (p90) in ms in the study's time "
                "(measured $\\cdot s$, $s$ the runs' scale factor), measured at the "
                "middleware (per run the count-weighted mean of its stable windows' "
                f"percentiles, then the mean over repetitions); orig.: the original's "
                f"medians ({table} of the 2016 study; it prints no server-time table).",
                f"tab:sixteen-replication-times-{kind}",
            )
        )
    return "\n".join(out)


def main(sm) -> None:  # noqa: ANN001
    reference = yaml.safe_load(Path(sm.input.reference).read_text())
    design = reference["design"]["replication"]
    raw_points = pd.read_parquet(sm.input.points)
    # Every throughput and time in the study's time, each row by its runs' scale.
    points = in_study_time(raw_points)
    points = points[points["type"].isin(["set", "get"])].copy()
    pool_requests = pd.read_parquet(sm.input.pool_requests)
    pool_requests = in_study_time(with_scale(pool_requests, raw_points, "point"))
    figure(points, sm.output.figure)
    fg.write(
        sm.output.times,
        times_tables(points, pd.read_parquet(sm.input.runs), pool_requests, reference),
    )

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
    fg.write(
        sm.output.table,
        fg.table(
            [
                "$S$",
                "$R$",
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
            "Effect of replication (means over repetitions, in the study's time: throughput "
            "$/s$, times $\\cdot s$, $s$ the runs' scale factor). $X$: throughput in ops/s "
            "and $R$: mean response time in ms, both measured at the clients; $R^{mw}$ and "
            "$T^{mw}_\\mathrm{server}$: the middleware's response time and its time waiting "
            "for the servers, in ms. $R$ column: replication level (replicas per key).",
            "tab:sixteen-replication",
        ),
    )
    cl = points[points["side"] == "client"]
    sets = cl[cl["type"] == "set"].set_index("point")
    by_level = sets.groupby("level_replication")["response_us_mean_mean"].mean()
    numbers = {
        "SixteenOrigReplServers": ", ".join(str(v) for v in design["servers"]),
        "SixteenOrigReplWrites": (
            ", ".join(str(v) for v in design["writes_percent"])
            if isinstance(design["writes_percent"], list)
            else str(design["writes_percent"])
        ),
        "SixteenOrigReplClients": fg.num(design["clients"]),
        "SixteenOrigReplThreads": fg.num(design["threads_per_pool"]),
        "SixteenReplPoints": fg.num(points["point"].nunique()),
        "SixteenReplServerLevels": fg.num(points["servers"].nunique()),
        "SixteenReplLevels": fg.num(points["level_replication"].nunique()),
        "SixteenReplSetResponseNone": fg.num(by_level.get("none", math.nan) / 1e3, 2),
        "SixteenReplSetResponseFull": fg.num(by_level.get("full", math.nan) / 1e3, 2),
        "SixteenReplServers": ", ".join(str(v) for v in fg.levels_sorted(points["servers"])),
        "SixteenReplWorkers": fg.num(points["middleware.workers"].iloc[0]),
        "SixteenReplClients": fg.num(points["clients_total"].iloc[0]),
        "SixteenReplWrites": fg.num(write_share(points["workload.ratio"].iloc[0]), 0),
    }
    Path(sm.output.numbers).write_text(json.dumps(numbers, indent=1))


if __name__ == "__main__":
    main(snakemake)  # type: ignore[name-defined]  # noqa: F821
