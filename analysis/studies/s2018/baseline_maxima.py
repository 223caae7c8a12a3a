"""The baselines without and with middlewares: throughput and response time against the
clients, and each setup's maximum throughput, beside seeds 002 and 004 (seed 004's Tables 3
and 5)."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence

import matplotlib.pyplot as plt
import pandas as pd

from analysis.report import figures as fg
from analysis.scale_model import scale_of
from analysis.studies.s2018 import seed as seed2018
from analysis.studies.s2018.macros import camel
from analysis.studies.s2018.seed_tables import beside_rows, law_rows_tabular

SETUPS_D = ["one_server", "two_servers"]
SETUPS_M = ["one_middleware", "two_middlewares"]
WORKLOADS = ["read-only", "write-only"]


PANELS = [
    ("throughput_ops", 1, ("throughput", "ops/s"), "throughput"),
    ("response_us_mean", 1e-3, ("response time", "ms"), "response_ms"),
]
DIRECT_HEADER = [
    "setup",
    "workload",
    "clients",
    "X [ops/s]",
    "$\\pm$CI",
    "R [ms]",
    "$X/s$",
    "$R\\cdot s$ [ms]",
    "seed 004 X",
    "seed 002 X",
]
MIDDLEWARE_HEADER = [
    "setup",
    "workload",
    "N/WT",
    "X cl. raw",
    "X cl.",
    "X mw",
    "R cl. [ms]",
    "R mw [ms]",
    "queue [ms]",
    "study X cl.",
]


def panel_grid(
    data: pd.DataFrame,
    seeds: pd.DataFrame,
    series: str | None,
    title: str,
    path: str,
    colour_of: Callable[[object], str] | None = None,
) -> None:
    """Throughput and response time against the clients, per workload, in the study's time
    (`data` from in_study_time), with seed 004's values (`seeds`: rows of
    seed2018.baseline_figure_points with their legend `label` and `colour`); `colour_of`
    a series value's colour (fg.error_lines)."""
    fig, axes = fg.figure(ncols=2, nrows=2, height=4.6)
    for row, wl in enumerate(WORKLOADS):
        d = data[data["level_workload"] == wl]
        for col, (metric, scale, unit, seed_column) in enumerate(PANELS):
            ax = axes[row][col]
            if d.empty:
                ax.text(0.5, 0.5, "no points at this level", ha="center", transform=ax.transAxes)
            else:
                fg.error_lines(ax, d, "clients_total", metric, series, scale, colour_of=colour_of)
            theirs = seeds[seeds["workload"] == wl]
            for (label, side, colour), g in theirs.groupby(["label", "side", "colour"]):
                fg.seed_points(ax, g["clients"], g[seed_column], label, side, colour)
            ax.set(
                xlabel="clients (virtual)",
                ylabel=fg.study_label(f"{wl}: {unit[0]}", unit[1], wrap=True),
            )
            ax.set_ylim(bottom=0)
    fg.legend_right(fig, *axes.flat)
    fig.suptitle(title, fontsize=8)
    fg.save(fig, path)


def figures(
    direct: pd.DataFrame, mw: pd.DataFrame, ref: Mapping, direct_path: str, mw_paths: Sequence[str]
) -> None:
    """The direct baseline per setup (at `direct_path`); the middleware baseline per setup,
    workers as series (one figure per setup of SETUPS_M, at `mw_paths`); both in the study's
    time, beside seed 004's maxima (its Tables 3 and 5)."""
    seeds = seed2018.baseline_figure_points(ref)
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    direct = direct.assign(setup=direct["level_setup"].str.replace("_", " "))
    names = fg.levels_sorted(direct["setup"])
    # Without middleware each setup's maximum takes the colour of that setup's line.
    seeds_d = seeds[seeds["setup"].isin(SETUPS_D)].assign(
        label=lambda t: "seed 004 max., " + t["setup"].str.replace("_", " "),
        colour=lambda t: [
            colours[names.index(n) % len(colours)] if n in names else "k"
            for n in t["setup"].str.replace("_", " ")
        ],
    )
    title = "Baseline without middleware (client side)"
    panel_grid(direct, seeds_d, "setup", title, direct_path)
    mw = mw.assign(workers=mw["middleware.workers"].astype(int).astype(str) + " WT")
    for setup, path in zip(SETUPS_M, mw_paths, strict=True):
        d = mw[mw["level_setup"] == setup]
        s = seeds[seeds["setup"] == setup]
        s = s.assign(
            label=[
                f"seed 004, {int(w)} WT, {side}"
                for w, side in s[["workers", "side"]].itertuples(index=False)
            ],
            # In the colour of our series of the same worker count.
            colour=[fg.worker_colour(w) for w in s["workers"]],
        )
        title = f"Baseline with middleware: {setup.replace('_', ' ')}"
        panel_grid(d, s, "workers", title, path, colour_of=fg.worker_colour)


def study(row: pd.Series | None, column: str) -> float:
    """A point's value in the study's time (throughput / scale, time x scale); `row` is from
    a table whose `scale` scale_of has read (best)."""
    if row is None:
        return math.nan
    scale = float(row["scale"])
    if column == "throughput":
        return float(row.get("throughput_study_mean", row["throughput_ops_mean"] / scale))
    raw = row.get("response_us_mean_mean", math.nan) / 1e3
    return float(row.get("response_ms_study_mean", raw * scale))


def best(d: pd.DataFrame) -> pd.Series | None:
    """The client row of highest throughput, its `scale` as scale_of reads it; None without
    one."""
    c = d[d["side"] == "client"].dropna(subset=["throughput_ops_mean"])
    if c.empty:
        return None
    return c.assign(scale=scale_of(c, "table of points")).loc[c["throughput_ops_mean"].idxmax()]


def direct_table(direct: pd.DataFrame, ref: Mapping) -> tuple[str, list[str]]:
    """The maximum throughput without middleware (seed 004 Table 3 layout), ours beside
    theirs; its macros."""
    numbers: list[str] = []
    rows = []
    for setup in SETUPS_D:
        for wl in WORKLOADS:
            b = best(direct[(direct["level_setup"] == setup) & (direct["level_workload"] == wl)])
            theirs = ref["baselines_direct"][setup][wl]
            low, high = seed2018.direct_beside(ref, setup, wl)
            rows.append(
                [
                    setup.replace("_", " "),
                    wl,
                    fg.MISSING if b is None else str(int(b["clients_total"])),
                    fg.MISSING if b is None else fg.num(b["throughput_ops_mean"]),
                    fg.MISSING
                    if b is None
                    else fg.num(b["throughput_ops_ci_high"] - b["throughput_ops_mean"]),
                    fg.MISSING if b is None else fg.num(b["response_us_mean_mean"] / 1e3, 2),
                    fg.MISSING if b is None else fg.num(study(b, "throughput")),
                    fg.MISSING if b is None else fg.num(study(b, "response"), 2),
                    fg.num(theirs),
                    fg.num(low) if low == high else f"{fg.num(low)}/{fg.num(high)}",
                ]
            )
            key = camel("BaseDirect", setup, wl)
            # Beside the study: the value in the study's time (rescaled by the run's scale).
            numbers.append(
                fg.macro(f"{key}X", fg.MISSING if b is None else fg.num(study(b, "throughput")))
            )
            numbers.append(
                fg.macro(
                    f"{key}XRaw", fg.MISSING if b is None else fg.num(b["throughput_ops_mean"])
                )
            )
            numbers.append(fg.macro(f"{key}XStudy", fg.num(theirs)))
            numbers.append(
                fg.macro(
                    f"{key}XSeedTwo",
                    fg.num(low) if low == high else f"{fg.num(low)}/{fg.num(high)}",
                )
            )
    header = DIRECT_HEADER
    # Without repetitions no point has an interval: the column goes, and the caption says so.
    no_ci = all(r[4] == fg.MISSING for r in rows)
    if no_ci:
        rows = [r[:4] + r[5:] for r in rows]
        header = header[:4] + header[5:]
    numbers.append(
        fg.macro(
            "BaseDirectCiNote",
            "no CI: fewer than three repetitions" if no_ci else "CI half-width over repetitions",
        )
    )
    return fg.tabular(header, rows, "ll" + "r" * (len(header) - 2)), numbers


def middleware_table(mw: pd.DataFrame, ref: Mapping) -> tuple[str, list[str]]:
    """The maximum throughput with middlewares (seed 004 Table 5 layout); its macros."""
    numbers: list[str] = []
    rows = []
    for setup in SETUPS_M:
        for wl in WORKLOADS:
            d = mw[(mw["level_setup"] == setup) & (mw["level_workload"] == wl)]
            b = best(d)
            theirs = ref["baselines_middleware"][setup][wl]
            if b is None:
                ours = [fg.MISSING] * 7 + [fg.num(theirs["client_x"])]
            else:
                m = d[(d["point"] == b["point"]) & (d["side"] == "middleware")]
                m = m.iloc[0] if not m.empty else pd.Series(dtype=float)
                scale = float(b["scale"])
                # In the study's time (rescaled by the runs' scale), with the raw client X.
                ours = [
                    f"{int(b['clients_total'])}/{int(b['middleware.workers'])}",
                    fg.num(b["throughput_ops_mean"]),
                    fg.num(study(b, "throughput")),
                    fg.num(m.get("throughput_ops_mean", math.nan) / scale),
                    fg.num(study(b, "response"), 2),
                    fg.num(m.get("response_us_mean_mean", math.nan) / 1e3 * scale, 2),
                    fg.num(m.get("queue_us_mean_mean", math.nan) / 1e3 * scale, 2),
                    fg.num(theirs["client_x"]),
                ]
                numbers.append(
                    fg.macro(camel("BaseMw", setup, wl, "X"), fg.num(study(b, "throughput")))
                )
                numbers.append(
                    fg.macro(camel("BaseMw", setup, wl, "XRaw"), fg.num(b["throughput_ops_mean"]))
                )
            rows.append([setup.replace("_", " "), wl, *ours])
    return fg.tabular(MIDDLEWARE_HEADER, rows, "llrrrrrrrr"), numbers


def seeds_tables(mw_study: pd.DataFrame, ref: Mapping) -> tuple[str, str, list[str]]:
    """Beside the two 2018 reports: the maximum with middlewares, and the interactive law in
    seed 002's form (R_client - N/X_mw, ms); the two tabulars and their macros."""
    numbers: list[str] = []
    best_mw = seed2018.best_points(mw_study, ["level_setup", "level_workload"])
    beside = seed2018.max_throughput_beside(best_mw, ref)
    seeds_mw = fg.tabular(
        ["setup", "workload", "", "ours", "seed 002", "seed 004"],
        beside_rows(beside, ["setup", "workload"]),
        "lllrrr",
    )
    by_key = beside.set_index(["setup", "workload", "quantity"])
    law_base = seed2018.law_beside(seed2018.law_deviations_ms(mw_study), ref)
    seeds_law = law_rows_tabular(law_base)
    law_key = law_base.set_index(["setup", "workload"])
    for setup in SETUPS_M:
        for wl in WORKLOADS:
            for quantity, digits in (("client_x", 0), ("mw_queue", 1)):
                r = (
                    by_key.loc[(setup, wl, quantity)]
                    if (setup, wl, quantity) in by_key.index
                    else {}
                )
                key = camel("Seeds", setup, wl, quantity)
                numbers += [
                    fg.macro(f"{key}{who}", fg.num(r.get(col, math.nan), digits))
                    for who, col in (
                        ("Ours", "ours"),
                        ("SeedTwo", "seed002"),
                        ("SeedFour", "seed004"),
                    )
                ]
            r = law_key.loc[(setup, wl)] if (setup, wl) in law_key.index else {}
            key = camel("SeedsLaw", setup, wl)
            numbers += [
                fg.macro(f"{key}OursMax", fg.num(r.get("ours_max_abs_ms", math.nan), 1)),
                fg.macro(f"{key}SeedTwoMax", fg.num(r.get("seed002_max_abs_ms", math.nan), 1)),
            ]

    return seeds_mw, seeds_law, numbers
