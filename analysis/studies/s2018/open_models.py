"""M/M/1 and M/M/m of the write experiment as the report shows them (analysis.studies.s2018.
mm_tables): the two tables beside seed 004's Tables 12 and 13, the response-time figure and
the numbers on μ and ρ."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import NamedTuple

import matplotlib.pyplot as plt
import pandas as pd

from analysis import estimate
from analysis.report import figures as fg
from analysis.studies.s2018 import mm_tables

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


class OpenModels(NamedTuple):
    """The two model tables (LaTeX) and their macros."""

    mm1: str
    mmm: str
    numbers: list[str]


def mm_tabular(table: pd.DataFrame) -> str:
    """A model table beside the seed's (mm_tables.beside), the point's keys shown once."""
    rows, last = [], None
    for _, r in table.iterrows():
        key = (int(r["workers"]), int(r["clients"]))
        shown = [str(key[0]), str(key[1])] if key != last else ["", ""]
        last = key
        rows.append([*shown, r["source"], *(fg.num(r[c], d) for c, _, d in MM_SHOWN)])
    return fg.tabular(["WT", "N", "", *(h for _, h, _ in MM_SHOWN)], rows, "rrl" + "r" * 13)


def mm_figure(tables: dict[str, pd.DataFrame], seeds: dict[str, pd.DataFrame], path: str) -> None:
    """Response time per worker count (one panel each, shared axes): both models and the
    middlewares' measurement, each series its own colour and marker; seed 004's values of
    the same series at the same worker count (`seeds`: its Tables 12 and 13 by
    mm_tables.seed_table) in the series' colour, unfilled markers on thin lines."""
    mm1 = tables["mm1"]
    counts = sorted(mm1["workers"].unique()) or [0]
    fig, axes = fg.figure(ncols=len(counts), width=6.4, height=2.6)
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
        ax.set(title=f"{workers} workers", xlabel="clients (virtual)")
        ax.set_yscale("log")
    axes[0][0].set_ylabel(fg.study_label("response time", "ms", wrap=True))
    fg.figure_legend(fig, *axes[0][0].get_legend_handles_labels(), ncols=2,
                     loc="outside lower center", fontsize=7)  # fmt: skip
    fg.save(fig, path)
    plt.close("all")


def report(
    points: pd.DataFrame, windows: pd.DataFrame, queue: pd.DataFrame, ref: Mapping, fig_path: str
) -> OpenModels:
    """The M/M/1 and M/M/m tables and figure (saved at `fig_path`) with their macros, from
    the write experiment's points and its middlewares' windows per request type (both in the
    study's time), its queue table and the reference file's `models` section."""
    points = points[points["type"] == "all"]
    windows = windows[windows["point"].isin(points["point"])]
    qlen = mm_tables.system_queue_length(queue, windows)
    inputs = mm_tables.model_inputs(points, windows, qlen)
    ours = {model: mm_tables.predict(inputs, model) for model in mm_tables.MODELS}
    seeds = {"mm1": ref["mm1_table"], "mmm": ref["mmm_table"]}
    mm1_tex, mmm_tex = (
        mm_tabular(mm_tables.beside(ours[model], mm_tables.seed_table(seeds[model])))
        for model in ("mm1", "mmm")
    )
    mm_figure(ours, {m: mm_tables.seed_table(t) for m, t in seeds.items()}, fig_path)
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
    return OpenModels(
        mm1_tex,
        mmm_tex,
        [
            fg.macro("ModelMMPoints", str(len(inputs))),
            fg.macro("ModelMMWorkerCounts", str(inputs["workers"].nunique())),
            fg.macro("ModelMMSeedPoints", str(seed_points)),
            fg.macro("ModelMMCommonPoints", str(len(common))),
            fg.macro("ModelMMRhoMax", fg.num(mm1_rho.max(), 2)),
            fg.macro("ModelMMRhoMin", fg.num(mm1_rho.min(), 2)),
            fg.macro("ModelMuWorkers", fg.MISSING if top is None else str(top)),
            fg.macro("ModelMuWindow", fg.num(mu_window)),
            fg.macro("ModelMuRun", fg.num(mu_run)),
            fg.macro(
                "ModelMuRunBelowWindow",
                fg.pct(1 - mu_run / mu_window if mu_window > 0 else math.nan),
            ),
            fg.macro("ModelMuStudy", fg.num(ref["mm1_mu"].get(top, math.nan))),
        ],
    )
