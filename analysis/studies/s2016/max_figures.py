"""Figures of the 2016 maximum-throughput family, in the study's time: throughput against
clients per read-pool size with the original's values marked, the middleware's GET
response-time percentiles, and the breakdown of its response time into its parts."""

from __future__ import annotations

import numpy as np
import pandas as pd

from analysis.report import figures as fg
from analysis.report import series_plot as sp
from analysis.studies.s2016.tables import WORKERS

COMPONENTS = {
    "net_us": "net-thread",
    "queue_us": "queue",
    "worker_us": "worker",
    "server_us": "server",
    "response_us": "response",
}


def throughput_figure(points: pd.DataFrame, path: str, mx: dict, chosen: str | None = None) -> None:
    """Throughput against total clients, a line per pool size and side, with the original's
    value per pool size (`mx`: max_throughput of reference2016.yaml) and its maximum. The
    sides' throughputs are nearly equal: the lines are set apart along x and the
    middleware's markers are rings around the clients' dots. The chosen configuration
    (`chosen`, its point) has its interval also from two repetitions (fg.t_errors)."""
    fig, axes = fg.figure(height=4.0)
    ax = axes[0][0]
    shifts = sp.series_lines(ax, points, "clients_total", "throughput_ops", series=WORKERS,
                             label="T=", style_of=fg.worker_style, dodge=2.0,
                             open_side="middleware")  # fmt: skip
    if chosen is not None:
        headline_interval(ax, points[points["point"] == chosen], shifts)
    original_marks(ax, mx)
    if "throughput_ops" in mx:
        fg.seed_points(ax, [mx["clients"]], [mx["throughput_ops"]],
                       f"seed 000, T={mx['threads_per_pool']}, maximum ({mx['section']})",
                       color=fg.worker_colour(mx["threads_per_pool"]))  # fmt: skip
    ax.set_xlabel("total clients")
    ax.set_ylabel(fg.study_label("throughput", "ops/s"))
    # Thirteen entries beside the axes would leave the data a third of the width.
    fg.legend_below(fig, ax, ncols=3)
    fg.save(fig, path)


def headline_interval(
    ax: fg.plt.Axes, rows: pd.DataFrame, shifts: dict[tuple[object, str], float]
) -> None:
    """Error bars of the chosen point (`rows`, one per side) where it has no interval of
    three repetitions: the Student-t interval of its two, dashed, at the x its line was
    moved to (`shifts`, as series_lines returns them)."""
    for _, r in rows.iterrows():
        if pd.notna(r["throughput_ops_ci_low"]) or r["repetitions"] < 2:
            continue
        x = float(r["clients_total"]) + shifts.get((r[WORKERS], str(r["side"])), 0.0)
        err = fg.t_errors(pd.DataFrame([r]), "throughput_ops")
        bars = ax.errorbar([x], [r["throughput_ops_mean"]], yerr=err, fmt="none", capsize=3,
                           linewidth=0.8, color=fg.worker_colour(r[WORKERS]), zorder=3)  # fmt: skip
        bars[2][0].set_linestyle("--")


def original_marks(ax: fg.plt.Axes, mx: dict) -> None:
    """The original's value per pool size (its text on its Figure 3) as a dotted horizontal
    line in the colour of that pool size (fg.worker_colour, the colour of our series of the
    size, run or not); a peak also as a hollow marker at its clients."""
    for workers in fg.levels_sorted(mx["plateau_ops"]):
        style = fg.worker_style(workers)
        value = float(mx["plateau_ops"][workers])
        kind = mx.get("plateau_kind", {}).get(workers, {"kind": "plateau"})
        label = f"seed 000, T={workers}, {kind['kind']}"
        if "clients" in kind:
            label += f" ({kind['clients']} clients)"
            ax.plot([kind["clients"]], [value], linestyle="none", markersize=5,
                    markerfacecolor="none", **style)  # fmt: skip
        ax.axhline(value, color=style["color"], linestyle=":", linewidth=1, label=label)


def percentile_figure(pct: pd.DataFrame, path: str, mx: dict | None = None) -> None:
    """The middleware's GET median (left) and 90th percentile (right) per pool size, with
    the original's at its maximum (`mx`: max_throughput of reference2016.yaml, its Table 1
    response percentiles at 260 clients and 24 threads)."""
    fig, axes = fg.figure(ncols=2)
    for ax, q, name in zip(axes[0], ("p50", "p90"), ("median", "90th percentile"), strict=True):
        sp.series_lines(ax, pct, "clients_total", q, series=WORKERS, scale=1e-3, label="T=",
                        style_of=fg.worker_style)  # fmt: skip
        if mx is not None and f"response_ms_{q}" in mx:
            t = mx["threads_per_pool"]
            fg.seed_points(ax, [mx["clients"]], [mx[f"response_ms_{q}"]],
                           f"seed 000, T={t}, middleware", side="middleware",
                           color=fg.worker_colour(t))  # fmt: skip
        ax.set_xlabel("total clients")
        ax.set_title(name, fontsize=8)
    # One scale for both panels, named once: a label per panel is cut at the axis height.
    axes[0][0].set_ylabel(fg.study_label("get response time", "ms"))
    fg.shared_ylim(axes[0])
    sp.legend_outside(fig, axes[0][0])
    fg.save(fig, path)


def breakdown_figure(mw: pd.DataFrame, path: str) -> None:
    """Mean time of each part of a GET's path through the middleware (its points at one pool
    size), with the confidence intervals."""
    fig, axes = fg.figure()
    ax = axes[0][0]
    g = mw.sort_values("clients_total")
    for i, (col, name) in enumerate(COMPONENTS.items()):
        y = g[f"{col}_mean_mean"].to_numpy(float) / 1e3
        lo = g[f"{col}_mean_ci_low"].to_numpy(float) / 1e3
        hi = g[f"{col}_mean_ci_high"].to_numpy(float) / 1e3
        err = [np.nan_to_num(y - lo), np.nan_to_num(hi - y)]
        ax.errorbar(
            g["clients_total"],
            y,
            yerr=err,
            capsize=2,
            linewidth=1,
            linestyle=sp.SIDE_LINESTYLE["middleware"],
            # Hollow, each larger than the next: parts near zero lie on one another.
            markerfacecolor="none",
            markersize=3.0 + 1.2 * (len(COMPONENTS) - i),
            label=name,
            **sp.style(i),
        )
    ax.set_xlabel("total clients")
    ax.set_ylabel(fg.study_label("mean time", "ms"))
    sp.legend_outside(fig, ax)
    fg.save(fig, path)
