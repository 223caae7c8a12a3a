"""The write-throughput experiment: figures per worker count and the summary table at each
worker count's maximum-throughput point (seed 004's Table 7 layout), beside seeds 002 and
004, in the study's time (throughputs / s, times * s) with the raw client throughput beside."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import NamedTuple

import pandas as pd

from analysis.report import figures as fg
from analysis.scale_model import in_study_time
from analysis.studies.s2018 import seed as seed2018
from analysis.studies.s2018.macros import camel
from analysis.studies.s2018.seed_tables import beside_rows, law_rows_tabular

# The figure's panels: our metric, its unit factor, axis label, the side drawn (None: both)
# and seed 004's columns of its Table 7 with the side that measured each.
PANELS = [
    (
        "throughput_ops",
        1,
        fg.study_label("throughput", "ops/s", wrap=True),
        None,
        [("client_x", "client"), ("mw_x", "middleware")],
    ),
    ("response_us_mean", 1e-3, fg.study_label("response time", "ms", wrap=True), None, []),
    (
        "queue_us_mean",
        1e-3,
        fg.study_label("time in queue", "ms", wrap=True),
        "middleware",
        [("queue_ms", "middleware")],
    ),
    (
        "server_us_mean",
        1e-3,
        fg.study_label("waiting for memcached", "ms", wrap=True),
        "middleware",
        [("server_ms", "middleware")],
    ),
]
MAX_HEADER = [
    "WT",
    "N",
    "X mw",
    "X IL",
    "X cl.",
    "X cl. raw",
    "queue [ms]",
    "queue len.",
    "memc. [ms]",
    "study X mw",
    "study len.",
]


class Writes(NamedTuple):
    """The section's LaTeX outputs, by the names of the rule's outputs."""

    table: str
    tab_seeds: str
    tab_seeds_law: str
    numbers: str


def writes_figure(pts: pd.DataFrame, seeds: pd.DataFrame, path: str) -> None:
    """Throughput, response time, time in queue and waiting for memcached per worker count
    against the clients (`pts` in the study's time), with seed 004's maximum of each worker
    count (`seeds`: seed2018.writes_figure_points) in that count's colour, each also
    labelled with its workers per middleware."""
    fig, axes = fg.figure(ncols=2, nrows=2, height=4.6)
    for ax, (metric, scale, label, side, seed_columns) in zip(
        [a for row in axes for a in row], PANELS, strict=True
    ):
        d = pts if side is None else pts[pts["side"] == side]
        if d.empty:
            ax.text(0.5, 0.5, "no points", ha="center", transform=ax.transAxes)
        else:
            fg.error_lines(
                ax, d, "clients_total", metric, "series", scale, colour_of=fg.worker_colour
            )
        for column, seed_side in seed_columns:
            # Each worker count's maximum in the colour of our series of that count.
            for workers, g in seeds.groupby("workers"):
                name = f"seed 004 max., {int(workers)} WT, {seed_side}"
                colour = fg.worker_colour(workers)
                fg.seed_points(ax, g["clients"], g[column], name, seed_side, colour)
        for column, _ in seed_columns[:1]:
            for _, r in seeds.dropna(subset=[column]).iterrows():
                ax.annotate(
                    str(int(r["workers"])),
                    (r["clients"], r[column]),
                    xytext=(4, -8),
                    textcoords="offset points",
                    fontsize=5.5,
                )
        ax.set(xlabel="clients (virtual)", ylabel=label)
        ax.set_ylim(bottom=0)
        # Room on the right for the label of a seed marker at the highest client count.
        low, high = ax.get_xlim()
        ax.set_xlim(low, high + 0.06 * (high - low))
    fg.legend_right(fig, *axes.flat)
    fg.save(fig, path)


def queue_per_point(queue: pd.DataFrame, windows: pd.DataFrame) -> tuple[pd.Series, pd.Series]:
    """Queue length and busy workers per point: the mean over the middlewares' stable
    windows (`windows`: the trimmed windows table) per run, then over the runs."""
    stable = windows[["run", "side", "window"]]
    stable = stable[stable["side"] == "middleware"].drop_duplicates()
    queue = queue.merge(stable, on=["run", "side", "window"])
    qlen = queue.groupby(["point", "run"])["queue_length_mean"].mean().groupby("point").mean()
    busy = queue.groupby(["point", "run"])["workers_busy_mean"].mean().groupby("point").mean()
    return qlen, busy


def max_table(
    pts: pd.DataFrame,
    raw_x: pd.Series,
    qlen: pd.Series,
    busy: pd.Series,
    ref: Mapping,
) -> tuple[str, list[str]]:
    """Per worker count, the point of highest client throughput with the middleware's values
    and the interactive law's throughput beside seed 004's (`ref`: its `writes` table); its
    macros. `raw_x`: the measured client throughput by point."""
    numbers: list[str] = []
    rows = []
    client = pts[pts["side"] == "client"]
    mw = pts[pts["side"] == "middleware"].set_index("point")
    for workers, g in client.groupby("workers"):
        g = g.dropna(subset=["throughput_ops_mean"]).sort_values("clients_total")
        if g.empty:
            continue
        b = g.loc[g["throughput_ops_mean"].idxmax()]
        m = mw.loc[b["point"]] if b["point"] in mw.index else pd.Series(dtype=float)
        # Think time from the experiment: what the clients see beyond the middleware's response
        # time at the lightest load of this worker count (network and client processing).
        low = g.iloc[0]
        z_us = (
            low["response_us_mean_mean"] - mw.loc[low["point"], "response_us_mean_mean"]
            if (low["point"] in mw.index)
            else math.nan
        )
        r_mw = m.get("response_us_mean_mean", math.nan)
        x_law = b["clients_total"] / ((r_mw + max(z_us, 0.0)) / 1e6) if r_mw > 0 else math.nan
        theirs = ref.get(int(workers), {})
        rows.append(
            [
                str(int(workers)),
                str(int(b["clients_total"])),
                fg.num(m.get("throughput_ops_mean", math.nan)),
                fg.num(x_law),
                fg.num(b["throughput_ops_mean"]),
                fg.num(raw_x.get(b["point"], math.nan)),
                fg.num(m.get("queue_us_mean_mean", math.nan) / 1e3, 2),
                fg.num(qlen.get(b["point"], math.nan), 1),
                fg.num(m.get("server_us_mean_mean", math.nan) / 1e3, 2),
                fg.num(theirs.get("mw_x", math.nan)),
                fg.num(theirs.get("queue_len", math.nan), 1),
            ]
        )
        key = camel("Writes", int(workers))
        numbers += [
            fg.macro(f"{key}X", fg.num(b["throughput_ops_mean"])),
            fg.macro(f"{key}XRaw", fg.num(raw_x.get(b["point"], math.nan))),
            fg.macro(f"{key}Clients", str(int(b["clients_total"]))),
            fg.macro(f"{key}Busy", fg.num(busy.get(b["point"], math.nan), 1)),
        ]
    return fg.tabular(MAX_HEADER, rows, "rrrrrrrrrrr"), numbers


def maximum_macros(client: pd.DataFrame, raw_x: pd.Series) -> list[str]:
    """The highest client throughput over every worker count, and where it was reached."""
    best = client.dropna(subset=["throughput_ops_mean"])
    if best.empty:
        return [
            fg.macro("WritesMaxX", fg.MISSING),
            fg.macro("WritesMaxXRaw", fg.MISSING),
            fg.macro("WritesMaxWorkers", fg.MISSING),
        ]
    top = best.loc[best["throughput_ops_mean"].idxmax()]
    return [
        fg.macro("WritesMaxX", fg.num(top["throughput_ops_mean"])),
        fg.macro("WritesMaxXRaw", fg.num(raw_x.get(top["point"], math.nan))),
        fg.macro("WritesMaxWorkers", str(int(top["workers"]))),
        fg.macro("WritesMaxClients", str(int(top["clients_total"]))),
    ]


def seeds_tables(
    pts: pd.DataFrame, qlen: pd.Series, full_ref: Mapping
) -> tuple[str, str, list[str]]:
    """Beside the two 2018 reports: each worker count's maximum, and the interactive law in
    seed 002's form (R_client - N/X_mw, ms); the two tabulars and their macros."""
    numbers: list[str] = []
    best_full = seed2018.best_points(pts, ["middleware.workers"], queue_length=qlen)
    beside = seed2018.full_system_beside(best_full, full_ref)
    seeds = fg.tabular(
        ["WT", "", "ours", "seed 002", "seed 004"], beside_rows(beside, ["workers"]), "rlrrr"
    )
    for _, r in beside[beside["quantity"].isin(["mw_x", "queue_ms", "server_ms"])].iterrows():
        key = camel("SeedsFull", int(r["workers"]), r["quantity"])
        digits = 0 if r["quantity"] == "mw_x" else 1
        numbers += [
            fg.macro(f"{key}Ours", fg.num(r["ours"], digits)),
            fg.macro(f"{key}SeedTwo", fg.num(r["seed002"], digits)),
            fg.macro(f"{key}SeedFour", fg.num(r["seed004"], digits)),
        ]
    law_full = seed2018.law_beside(
        seed2018.law_deviations_ms(pts, "full_system", "write-only"), full_ref
    )
    seeds_law = law_rows_tabular(law_full)
    law_top = law_full.iloc[0] if len(law_full) else pd.Series(dtype=float)
    numbers += [
        fg.macro("SeedsLawFullSystemOursMax", fg.num(law_top.get("ours_max_abs_ms", math.nan), 1)),
        fg.macro(
            "SeedsLawFullSystemSeedTwoMax", fg.num(law_top.get("seed002_max_abs_ms", math.nan), 1)
        ),
    ]
    return seeds, seeds_law, numbers


def report(
    raw: pd.DataFrame,
    queue: pd.DataFrame,
    windows: pd.DataFrame,
    full_ref: Mapping,
    fig_path: str,
) -> Writes:
    """The figure (saved at `fig_path`), tables and macros from the family's points as
    measured (`raw`), its queue table and trimmed windows, and the reference file."""
    ref = full_ref["writes"]
    # Every throughput and time below in the study's time; `raw` keeps the measured values.
    pts = in_study_time(raw)
    pts["workers"] = pts["middleware.workers"].astype(int)
    pts["series"] = pts["workers"].astype(str) + " WT"
    numbers = [fg.macro("WritesMaxStudySource", fg.escape(ref["source"]))]
    qlen, busy = queue_per_point(queue, windows)

    writes_figure(pts, seed2018.writes_figure_points(full_ref), fig_path)

    client = pts[pts["side"] == "client"]
    raw_x = raw[raw["side"] == "client"].set_index("point")["throughput_ops_mean"]
    table, max_numbers = max_table(pts, raw_x, qlen, busy, ref)
    numbers += max_numbers
    numbers += maximum_macros(client, raw_x)
    seeds, seeds_law, seeds_numbers = seeds_tables(pts, qlen, full_ref)
    numbers += seeds_numbers
    levels = sorted(client["workers"].unique())
    numbers.append(fg.macro("WritesWorkerLevels", ", ".join(str(int(w)) for w in levels)))
    numbers.append(fg.macro("WritesStudyMaxX", fg.num(ref[64]["client_x"])))
    return Writes(table, seeds, seeds_law, "".join(numbers))
