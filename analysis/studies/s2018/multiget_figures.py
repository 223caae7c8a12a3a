"""The multi-GET section's figures: client response-time mean and percentiles against the
multi-GET size, where the middleware's time goes, and the six-key histograms on common
buckets with what lies above them. Times in the study's time."""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
import pandas as pd

from analysis.histograms import common_edges, rebin
from analysis.report import figures as fg
from analysis.studies.s2018 import multiget as mg
from analysis.studies.s2018.multiget_percentiles import METRICS

SIDES = ("client", "middleware")
HIST_BUCKETS = 60
# One colour and marker per series, the same in every figure.
STYLE = {
    "mean": ("k", "o"),
    "p25": ("C0", "v"),
    "p50": ("C1", "s"),
    "p75": ("C2", "D"),
    "p90": ("C3", "^"),
    "p99": ("C4", "P"),
}
# Colour, marker and line style of the time split's series. The whole request is drawn
# first, wide and pale, so the part that makes up most of it stays visible on top.
SPLIT_STYLE = {
    "total_us": ("k", "o", "-"),
    "server_us_mean": ("C3", "s", "--"),
    "queue_us_mean": ("C0", "v", ":"),
    "worker_us_mean": ("C2", "D", "-."),
    "net_us_mean": ("C1", "^", "-"),
}
WHOLE_STYLE = {"lw": 4.0, "alpha": 0.3, "ms": 7.0, "zorder": 1}
PART_STYLE = {"lw": 1.0, "ms": 3.5, "zorder": 3}
SIDE_COLOUR = {"client": "C9", "middleware": "C8"}
YLABEL = fg.study_label("response time", "ms")
# The percentile figure's series, each moved by its own step along the keys: the mean lies
# near the median and the 75th percentile and would hide behind them.
PERCENTILE_DODGE = 0.12
XLABEL = "keys per multi-GET"


class Histograms(NamedTuple):
    """What the histogram figure shows: its bucket edges (µs), their width, and the share of
    requests above the last edge per (sharding, side)."""

    edges: np.ndarray
    width: float
    overflow: dict[tuple[str, str], float]


def percentile_figure(
    mean_rt: pd.DataFrame, agg: pd.DataFrame, sizes: list[int], path: str
) -> None:
    """Per sharding, the client's mean response time (`mean_rt`: mg.get_rows) and its
    percentiles (`agg`: multiget_percentiles.mean_percentiles) against the size; the series
    are set apart along the size (PERCENTILE_DODGE), the mean drawn on top."""
    fig, axes = fg.figure(ncols=2, nrows=1, height=2.9)
    order = ["mean", *METRICS]
    shift = {q: (i - (len(order) - 1) / 2) * PERCENTILE_DODGE for i, q in enumerate(order)}
    axes[0][1].sharey(axes[0][0])
    for ax, sharding in zip(axes[0], mg.SHARDING, strict=True):
        m = mean_rt[mean_rt["sharding"] == sharding]
        if m.empty:
            ax.text(0.5, 0.5, "no points at this level", ha="center", transform=ax.transAxes)
        else:
            y = m["response_us_mean_mean"].to_numpy(float) / 1e3
            lo = np.nan_to_num(y - m["response_us_mean_ci_low"].to_numpy(float) / 1e3)
            hi = np.nan_to_num(m["response_us_mean_ci_high"].to_numpy(float) / 1e3 - y)
            colour, marker = STYLE["mean"]
            ax.errorbar(
                m["size"].to_numpy(float) + shift["mean"],
                y,
                yerr=[lo, hi],
                capsize=2,
                marker=marker,
                ms=4,
                color=colour,
                label="mean",
                zorder=4,
            )
            a = agg[(agg["sharding"] == sharding) & (agg["side"] == "client")]
            a = a.sort_values("size")
            for q in METRICS:
                yq = a[f"{q}_mean"].to_numpy(float) / 1e3
                ql = np.nan_to_num(yq - a[f"{q}_ci_low"].to_numpy(float) / 1e3)
                qh = np.nan_to_num(a[f"{q}_ci_high"].to_numpy(float) / 1e3 - yq)
                colour, marker = STYLE[q]
                ax.errorbar(
                    a["size"].to_numpy(float) + shift[q],
                    yq,
                    yerr=[ql, qh],
                    capsize=2,
                    marker=marker,
                    ms=3.5,
                    lw=0.8,
                    linestyle=":",
                    color=colour,
                    label=f"{q[1:]}th percentile",
                )
        ax.set(xlabel=XLABEL, ylabel=YLABEL, title=sharding)
        ax.set_xticks(sizes)
        ax.set_ylim(bottom=0)
    axes[0][1].set_ylabel("")
    fg.legend_right(fig, *axes[0])
    fg.save(fig, path)


def split_figure(split: pd.DataFrame, sizes: list[int], path: str) -> None:
    """Per sharding, the middleware's mean time per component and the whole request
    (`split`: mg.time_split) against the size, on a logarithmic axis."""
    fig, axes = fg.figure(ncols=2, nrows=1, height=2.7)
    axes[0][1].sharey(axes[0][0])
    names = {**{c: f"time {w}" for c, w in mg.COMPONENTS.items()}, "total_us": "whole request"}
    for ax, sharding in zip(axes[0], mg.SHARDING, strict=True):
        s = split[split["sharding"] == sharding].sort_values("size")
        if s.empty:
            ax.text(0.5, 0.5, "no points at this level", ha="center", transform=ax.transAxes)
        for col, (colour, marker, linestyle) in SPLIT_STYLE.items():
            y = s[col].to_numpy(float) / 1e3
            ok = y > 0  # a logarithmic axis cannot show zero
            err = None
            if f"{col}_ci_low" in s:
                lo = s[f"{col}_ci_low"].to_numpy(float)[ok] / 1e3
                hi = s[f"{col}_ci_high"].to_numpy(float)[ok] / 1e3
                # Bars stay above zero on the logarithmic axis.
                err = np.vstack([np.nan_to_num(np.minimum(y[ok] - lo, 0.99 * y[ok])),
                                 np.nan_to_num(hi - y[ok])])  # fmt: skip
            ax.errorbar(
                s["size"].to_numpy()[ok],
                y[ok],
                yerr=err,
                capsize=2,
                marker=marker,
                color=colour,
                linestyle=linestyle,
                label=names[col],
                **(WHOLE_STYLE if col == "total_us" else PART_STYLE),  # type: ignore[arg-type]
            )
        ax.set_yscale("log")
        ax.set(xlabel=XLABEL, ylabel=fg.study_label("mean time per request", "ms", wrap=True),
               title=sharding)  # fmt: skip
        ax.set_xticks(sizes)
    axes[0][1].set_ylabel("")
    fg.legend_right(fig, axes[0][0])
    fg.save(fig, path)


def histogram_figure(six: pd.DataFrame, pct: pd.DataFrame, unit_us: float, path: str) -> Histograms:
    """Size-6 histograms on common buckets up to the largest 99th percentile of the four
    panels; what lies above is one separate, labelled bar. Returns the figure's numbers."""
    top = float(pct["p99"].max()) if not pct.empty else math.nan
    edges = common_edges(1.05 * top, unit_us, HIST_BUCKETS)
    width = float(edges[1] - edges[0])
    gap = 2 * width
    over_w = 4 * width
    over_x = edges[-1] + gap
    fig, axes = fg.figure(ncols=2, nrows=2, height=4.6)
    ref_ax = axes[0][0]
    for ax in axes.flat[1:]:
        ax.sharex(ref_ax)
        ax.sharey(ref_ax)
    overflow: dict[tuple[str, str], float] = {}
    for r, sharding in enumerate(mg.SHARDING):
        for c, side in enumerate(SIDES):
            ax = axes[r][c]
            g = six[(six["sharding"] == sharding) & (six["side"] == side)]
            ax.set_title(f"{sharding}, {side}")
            if g.empty:
                ax.text(0.5, 0.5, "no six-key histogram", ha="center", transform=ax.transAxes)
                continue
            pooled = g.groupby("bucket_us")["count"].sum()
            b = rebin(pooled.index.to_numpy(float), pooled.to_numpy(float), edges)
            frac, over = b.fractions()
            overflow[(sharding, side)] = over
            ax.stairs(
                frac,
                edges / 1e3,
                fill=True,
                color=SIDE_COLOUR[side],
                alpha=0.8,
                label=f"requests, {side}",
            )
            ax.bar(
                (over_x + over_w / 2) / 1e3,
                over,
                width=over_w / 1e3,
                color="0.6",
                hatch="///",
                edgecolor="0.3",
                lw=0.5,
                label=f"all above {edges[-1] / 1e3:.2f} ms",
            )
            ax.annotate(
                f"{100 * over:.1f} %",
                ((over_x + over_w / 2) / 1e3, over),
                xytext=(0, 2),
                textcoords="offset points",
                ha="center",
                va="bottom",
                fontsize=6,
            )
            p = pct[(pct["sharding"] == sharding) & (pct["side"] == side)]
            for q, ls in (("p50", "-"), ("p99", "--")):
                if not p.empty and math.isfinite(p[q].iloc[0]):
                    colour, marker = STYLE[q]
                    x = min(float(p[q].iloc[0]), edges[-1]) / 1e3
                    ax.axvline(x, color=colour, ls=ls, lw=0.9)
                    ax.plot(
                        [x],
                        [1.0],
                        marker=marker,
                        color=colour,
                        ms=4,
                        clip_on=False,
                        transform=ax.get_xaxis_transform(),
                        label=f"{q[1:]}th percentile",
                    )
    # A tick close to the overflow bar's would print its number into "above".
    over_mid, span = (over_x + over_w / 2) / 1e3, (over_x + over_w + width) / 1e3
    ticks = [t for t in ref_ax.get_xticks() if 0 <= t <= edges[-1] / 1e3]
    ticks = [t for t in ticks if over_mid - t > 0.1 * span]
    for ax in axes.flat:
        ax.set_xlim(0, (over_x + over_w + width) / 1e3)
        ax.set_xticks([*ticks, over_mid])
        ax.set_xticklabels([f"{t:g}" for t in ticks] + ["above"])
        ax.set_ylim(bottom=0)
    ref_ax.set_ylim(top=ref_ax.get_ylim()[1] * 1.12)  # room for the overflow's label
    for ax in axes[1]:
        ax.set_xlabel(YLABEL)
    for ax in axes[:, 0]:
        ax.set_ylabel("share of requests")
    labels: dict[str, object] = {}
    for ax in axes.flat:
        for h, lab in zip(*ax.get_legend_handles_labels(), strict=True):
            labels.setdefault(lab, h)
    fg.figure_legend(fig, list(labels.values()), list(labels), ncols=5,
                     loc="outside lower center", fontsize=6)  # fmt: skip
    fg.save(fig, path)
    return Histograms(edges, width, overflow)
