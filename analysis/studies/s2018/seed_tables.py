"""The tables of analysis.studies.s2018.seed as LaTeX: our value beside seeds 002 and 004
per quantity, and the interactive-law deviations of the three."""

from __future__ import annotations

import pandas as pd

from analysis.report import figures as fg

# How the quantities of analysis.studies.s2018.seed's tables are shown: label and decimals.
QUANTITIES = {
    "clients": ("N", 0),
    "workers": ("WT", 0),
    "client_x": ("X cl. [ops/s]", 0),
    "mw_x": ("X mw [ops/s]", 0),
    "il_x": ("X IL [ops/s]", 0),
    "client_r": ("R cl. [ms]", 1),
    "mw_r": ("R mw [ms]", 1),
    "mw_queue": ("queue [ms]", 1),
    "queue_ms": ("queue [ms]", 1),
    "queue_len": ("queue len.", 1),
    "server_ms": ("memc. [ms]", 1),
}


def beside_rows(table: pd.DataFrame, keys: list[str]) -> list[list[str]]:
    """Rows of a `quantity, ours, seed002, seed004` table: the key columns (shown once per
    group), the quantity's label and the three values."""
    rows, last = [], None
    for _, r in table.iterrows():
        key = [str(r[k]).replace("_", " ") for k in keys]
        label, digits = QUANTITIES[r["quantity"]]
        shown = key if key != last else [""] * len(key)
        last = key
        rows.append(
            [*shown, label, *(fg.num(r[c], digits) for c in ("ours", "seed002", "seed004"))]
        )
    return rows


def law_rows_tabular(table: pd.DataFrame) -> str:
    """The interactive-law deviations (analysis.studies.s2018.seed.law_beside) as a tabular."""
    rows = [
        [
            str(r["setup"]).replace("_", " "),
            str(r["workload"]),
            str(int(r["ours_points"])),
            fg.num(r["ours_median_ms"], 2),
            fg.num(r["ours_max_abs_ms"], 2),
            fg.pct(r["ours_max_abs_share"]),
            str(int(r["seed002_cells"])),
            fg.num(r["seed002_median_ms"], 1),
            fg.num(r["seed002_max_abs_ms"], 1),
            str(int(r["common_cells"])),
        ]
        for _, r in table.iterrows()
    ]
    header = ["setup", "workload", "points", "median", "max $|\\cdot|$", "max / R"]
    header += ["cells", "median", "max $|\\cdot|$", "common"]
    return fg.tabular(header, rows, "llrrrrrrrr")
