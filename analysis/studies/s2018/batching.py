"""Batching workers beside the study's one request per worker turn, at the same points:
throughput, and the middleware's time in queue, in the worker and waiting for memcached, as
a figure, a table and number macros, in the study's time (throughput / s, times * s) with the
raw throughput beside."""

from __future__ import annotations

import math
from typing import NamedTuple

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from analysis.report import figures as fg
from analysis.scale_model import in_study_time
from analysis.studies.s2018.macros import camel

WORKLOADS = ["read-only", "write-only"]
TABLE_HEADER = [
    "load",
    "batch",
    "clients",
    "X [ops/s]",
    "X raw",
    "queue [\\textmu s]",
    "worker [\\textmu s]",
    "memcached [\\textmu s]",
    "response [\\textmu s]",
]


class Batching(NamedTuple):
    """The section's LaTeX outputs, by the names of the rule's outputs."""

    table: str
    numbers: str


def at_most_clients(d: pd.DataFrame) -> pd.DataFrame:
    """The rows of the largest client count, where the queue is longest."""
    return d[d["clients"] == d["clients"].max()] if not d.empty else d


def batch_bars(ax: plt.Axes, d: pd.DataFrame, batches: list[int]) -> list[str]:
    """Client throughput (`d`: client rows with `clients` and `batch`) as bars: a group per
    client count, a bar per batch size, each labelled with its value, with its confidence
    interval where there is one. Bars, not lines: a profile may measure a single client
    count, and a line through one point is not drawn. Returns the bars' labels."""
    counts = sorted(d["clients"].unique())
    width = 0.8 / max(len(batches), 1)
    shown: list[str] = []
    for i, batch in enumerate(batches):
        g = d[d["batch"] == batch].set_index("clients").reindex(counts)
        x = np.arange(len(counts)) + (i - (len(batches) - 1) / 2) * width
        y = g["throughput_ops_mean"].to_numpy(float)
        bars = ax.bar(
            x,
            np.nan_to_num(y),
            width,
            yerr=fg.ci_errors(g, "throughput_ops"),
            capsize=2,
            label=f"batch {batch}",
        )
        labels = ["" if math.isnan(v) else f"{v:,.0f}" for v in y]
        ax.bar_label(bars, labels=labels, fontsize=6, padding=1, rotation=90)
        shown += labels
    ax.set_xticks(np.arange(len(counts)), [str(c) for c in counts])
    top = np.nanmax(d["throughput_ops_ci_high"].fillna(d["throughput_ops_mean"]).to_numpy(float))
    ax.set_ylim(0, top * 1.3 if np.isfinite(top) and top > 0 else 1)  # room for the labels
    return shown


def figure(client: pd.DataFrame, batches: list[int], path: str) -> None:
    """Client throughput per batch size against the clients, one panel per workload."""
    fig, grid = fg.figure(ncols=2, height=2.4)
    axes = list(np.ravel(grid))
    for ax, wl in zip(axes, WORKLOADS, strict=True):
        d = client[client["level_workload"] == wl]
        if d.empty:
            ax.text(0.5, 0.5, "no points", ha="center", transform=ax.transAxes)
        else:
            batch_bars(ax, d, batches)
        ax.set(xlabel="clients (virtual)", ylabel=fg.study_label("throughput", "ops/s"), title=wl)
    fg.legend_right(fig, axes[0])
    fg.save(fig, path)


def at_top_load(
    client: pd.DataFrame, mw: pd.DataFrame, raw_x: pd.Series, workloads: list[str]
) -> tuple[list[list[str]], dict[tuple[str, int], dict[str, float]]]:
    """Per workload and batch size, at the largest client count: the table's rows, and the
    values by (workload, batch): client throughput `x` (study time) and `x_raw`, and the
    middleware's `queue`, `worker`, `server` and `response` times (µs). `mw`: middleware rows
    by point; `raw_x`: measured throughput by (point, side)."""
    rows = []
    summary: dict[tuple[str, int], dict[str, float]] = {}
    for wl in workloads:
        d = at_most_clients(client[client["level_workload"] == wl])
        for _, p in d.sort_values("batch").iterrows():
            m = mw.loc[p["point"]] if p["point"] in mw.index else pd.Series(dtype=float)
            v = {
                "x": p["throughput_ops_mean"],
                "x_raw": raw_x.get((p["point"], "client"), math.nan),
                "queue": m.get("queue_us_mean_mean", math.nan),
                "worker": m.get("worker_us_mean_mean", math.nan),
                "server": m.get("server_us_mean_mean", math.nan),
                "response": m.get("response_us_mean_mean", math.nan),
            }
            summary[(wl, int(p["batch"]))] = v
            rows.append(
                [
                    wl,
                    str(int(p["batch"])),
                    str(int(p["clients"])),
                    fg.num(v["x"]),
                    fg.num(v["x_raw"]),
                    fg.num(v["queue"], 1),
                    fg.num(v["worker"], 1),
                    fg.num(v["server"], 1),
                    fg.num(v["response"], 1),
                ]
            )
    return rows, summary


def speedup_macros(summary: dict[tuple[str, int], dict[str, float]], top: int) -> list[str]:
    """Per workload: the values at batch 1 and at the largest batch `top`, and the throughput
    ratio of the two."""
    numbers = [fg.macro("BatchTop", str(top))]
    for wl in WORKLOADS:
        one = summary.get((wl, 1), {})
        big = summary.get((wl, top), {})
        key = camel("Batch", wl)
        fields = [("X", "x"), ("XRaw", "x_raw"), ("Queue", "queue"), ("Worker", "worker")]
        for name, field in [*fields, ("Server", "server")]:
            numbers.append(fg.macro(f"{key}One{name}", fg.num(one.get(field, math.nan))))
            numbers.append(fg.macro(f"{key}Top{name}", fg.num(big.get(field, math.nan))))
        ratio = big.get("x", math.nan) / one.get("x", math.nan) if one.get("x") else math.nan
        numbers.append(fg.macro(f"{key}Speedup", fg.num(ratio, 2)))
    return numbers


def report(raw: pd.DataFrame, fig_path: str) -> Batching:
    """The figure (saved at `fig_path`), table and macros from the family's points as
    measured (`raw`: one row per point and side, every request type together)."""
    raw_x = raw.set_index(["point", "side"])["throughput_ops_mean"]
    pts = in_study_time(raw)
    pts["batch"] = pts["middleware.max_batch"].astype(int)
    pts["clients"] = pts["clients_total"].astype(int)
    client = pts[pts["side"] == "client"]
    mw = pts[pts["side"] == "middleware"].set_index("point")
    batches = sorted(client["batch"].unique()) if not client.empty else []
    top = max(batches) if batches else 1
    workloads = fg.levels_sorted(client["level_workload"]) if not client.empty else []

    figure(client, batches, fig_path)
    counts = [str(c) for c in sorted(client["clients"].unique())]
    numbers = [fg.macro("BatchClientCounts", ", ".join(counts) or fg.MISSING)]
    rows, summary = at_top_load(client, mw, raw_x, workloads)
    table = fg.tabular(TABLE_HEADER, rows, "lrrrrrrrr")
    numbers += speedup_macros(summary, top)
    return Batching(table, "".join(numbers))
