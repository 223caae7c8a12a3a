"""The middlewares' statistics per worker count (seed 004's Figs 4-5): queue length, time in
queue and waiting for memcached against the clients, per workload and number of
middlewares, with the numbers the seed describes in its text."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from analysis.report import figures as fg
from analysis.studies.s2018 import queue_length
from analysis.studies.s2018.baseline_maxima import SETUPS_M, WORKLOADS
from analysis.studies.s2018.macros import camel

# Rows of the middleware statistics figure: compared panels (one and two middlewares of a
# workload) are adjacent and share their y scale.
STATS_ROWS = [(wl, setup) for wl in WORKLOADS for setup in SETUPS_M]
STATS_METRICS = [
    ("queue_len", 1.0, "queue length [requests]"),
    ("queue_us_mean", 1e-3, fg.study_label("time in queue", "ms", wrap=True)),
    ("server_us_mean", 1e-3, fg.study_label("waiting for memcached", "ms", wrap=True)),
]
QUEUE_SEED_COLUMNS = ["setup", "workload", "clients", "workers", "queue_ms"]


def statistics_points(
    mw_study: pd.DataFrame, queue: pd.DataFrame, windows: pd.DataFrame
) -> pd.DataFrame:
    """Middleware rows in the study's time with the queue length per middleware."""
    lengths = queue_length.per_point(queue, windows).set_index("point")["queue_length"]
    m = mw_study[mw_study["side"] == "middleware"].copy()
    m["queue_len_mean"] = m["point"].map(lengths)
    m["queue_len_ci_low"] = m["queue_len_ci_high"] = math.nan
    m["workers"] = m["middleware.workers"].astype(int)
    return m


def middleware_statistics(
    m: pd.DataFrame, path: str, seeds: pd.DataFrame | None = None
) -> list[str]:
    """Seed 004's Figs 4-5: queue length, time in queue and waiting for memcached per worker
    count against the clients, per workload and number of middlewares (`m`: from
    `statistics_points`; figure at `path`), with the seed's time in queue where it prints
    one (`seeds`: seed2018.baseline_queue_points); its macros."""
    workers = fg.levels_sorted(m["workers"])
    seeds = seeds if seeds is not None else pd.DataFrame(columns=QUEUE_SEED_COLUMNS)
    fig, axes = fg.figure(ncols=3, nrows=len(STATS_ROWS), width=6.4, height=7.2)
    for col, (metric, scale, label) in enumerate(STATS_METRICS):
        for wl in WORKLOADS:
            top = (m[m["level_workload"] == wl][f"{metric}_mean"] * scale).max()
            for row, (wl_row, setup) in enumerate(STATS_ROWS):
                if wl_row != wl:
                    continue
                ax = axes[row][col]
                d = m[(m["level_workload"] == wl) & (m["level_setup"] == setup)]
                for w in workers:
                    fg.errorbar_line(
                        ax,
                        d[d["workers"] == w],
                        "clients_total",
                        metric,
                        scale,
                        markersize=3,
                        label=f"{w} WT",
                        **fg.worker_style(w),
                    )
                if metric == "queue_us_mean":
                    s = seeds[(seeds["workload"] == wl) & (seeds["setup"] == setup)]
                    for w, g in s.groupby("workers"):
                        seed_label = f"seed 004 (Table 5), {int(w)} WT"
                        fg.seed_points(ax, g["clients"], g["queue_ms"], seed_label, "middleware",
                                       fg.worker_colour(w))  # fmt: skip
                if d.empty:
                    ax.text(0.5, 0.5, "no points", ha="center", transform=ax.transAxes)
                ax.set_ylim(0, top * 1.08 if np.isfinite(top) and top > 0 else 1)
                ax.set_title(f"{wl}, {setup.replace('_', ' ')}", fontsize=7)
                ax.set(ylabel=label)
                if row == len(STATS_ROWS) - 1:
                    ax.set_xlabel("clients (virtual)")
    fg.legend_below(fig, *axes.flat, ncols=5)
    fg.save(fig, path)
    return statistics_macros(m, workers)


def statistics_macros(m: pd.DataFrame, workers: list) -> list[str]:
    """Numbers at the most clients of each setup: the levels the seed describes in its text
    (the fewest and most workers), and the two middlewares' queue length and server time over
    one middleware's."""
    nums = []
    low, high = (workers[0], workers[-1]) if workers else (math.nan, math.nan)
    nums += [
        fg.macro("MwStatsWorkersLow", str(low)),
        fg.macro("MwStatsWorkersHigh", str(high)),
    ]
    ratios, server_ratios = [], []
    for wl in WORKLOADS:
        d = m[m["level_workload"] == wl]
        most = d.loc[d.groupby(["level_setup", "workers"])["clients_total"].idxmax()]
        at = most.set_index(["level_setup", "workers"])
        has_one = "one_middleware" in at.index.get_level_values("level_setup")
        one = at.xs("one_middleware", level="level_setup") if has_one else at.iloc[0:0]
        key = camel("MwStats", wl)
        for tag, w in (("Low", low), ("High", high)):
            r = one.loc[w] if w in one.index else pd.Series(dtype=float)
            x_each = r.get("throughput_ops_mean", math.nan) / max(r.get("middlewares", 1), 1)
            nums += [
                fg.macro(
                    f"{key}Server{tag}", fg.num(r.get("server_us_mean_mean", math.nan) / 1e3, 1)
                ),
                # Little's law when every worker waits on the server: WT / X per middleware.
                fg.macro(
                    f"{key}Little{tag}", fg.num(w / x_each * 1e3 if x_each > 0 else math.nan, 1)
                ),
                fg.macro(f"{key}QueueLen{tag}", fg.num(r.get("queue_len_mean", math.nan), 1)),
                fg.macro(f"{key}Clients{tag}", fg.num(r.get("clients_total", math.nan))),
            ]
        for w in workers:
            if ("one_middleware", w) in at.index and ("two_middlewares", w) in at.index:
                a = at.loc[("one_middleware", w), "queue_len_mean"]
                b = at.loc[("two_middlewares", w), "queue_len_mean"]
                if a > 0 and np.isfinite(b):
                    ratios.append(b / a)
                a = at.loc[("one_middleware", w), "server_us_mean_mean"]
                b = at.loc[("two_middlewares", w), "server_us_mean_mean"]
                if a > 0 and np.isfinite(b):
                    server_ratios.append(b / a)
    nums.append(
        fg.macro("MwStatsQueueTwoOverOne", fg.num(np.median(ratios) if ratios else math.nan, 2))
    )
    nums.append(
        fg.macro(
            "MwStatsServerTwoOverOne",
            fg.num(np.median(server_ratios) if server_ratios else math.nan, 2),
        )
    )
    return nums
