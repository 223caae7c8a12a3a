"""Shared pieces of the 2018 sections' scripts: reading points, naming macros."""

import re
import sys
from pathlib import Path

import pandas as pd
import yaml

from analysis.report import figures as rf
from analysis.validate import usable_points


def log_to(path: str) -> None:
    sys.stderr = Path(path).open("w")  # noqa: SIM115 - the script's lifetime


def reference(path: str) -> dict:
    return yaml.safe_load(Path(path).read_text())


def points(path: str, kind: str = "all", validation: str | None = None) -> pd.DataFrame:
    """Per-point rows of one request type (`all` = every type together); with the
    validation table, only the points it keeps (analysis.validate.usable_points)."""
    df = usable(pd.read_parquet(path), path, validation)
    return df[df["type"] == kind].copy()


def usable(table: pd.DataFrame, path: str, validation: str | None) -> pd.DataFrame:
    """The rows of a family's table (data/<family>/<table>.parquet at `path`) whose point
    has a run the validation kept; all rows without a validation table."""
    if validation is None:
        return table
    family = Path(path).parent.name
    return usable_points(table, pd.read_parquet(validation), family)


def camel(*parts: object) -> str:
    """Letters-only macro name part: `one_server`, `read-only`, 8 -> OneServerReadOnlyEight."""
    words = []
    for p in parts:
        for w in re.split(r"[^A-Za-z0-9]+", str(p)):
            if w:
                words.append(_number_word(w) if w.isdigit() else w[0].upper() + w[1:])
    return "".join(words)


_DIGITS = ["Zero", "One", "Two", "Three", "Four", "Five", "Six", "Seven", "Eight", "Nine"]


def _number_word(digits: str) -> str:
    return "".join(_DIGITS[int(d)] for d in digits)


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
            [*shown, label, *(rf.num(r[c], digits) for c in ("ours", "seed002", "seed004"))]
        )
    return rows


def law_rows_tabular(table: pd.DataFrame) -> str:
    """The interactive-law deviations (analysis.studies.s2018.seed.law_beside) as a tabular."""
    rows = [
        [
            str(r["setup"]).replace("_", " "),
            str(r["workload"]),
            str(int(r["ours_points"])),
            rf.num(r["ours_median_ms"], 2),
            rf.num(r["ours_max_abs_ms"], 2),
            rf.pct(r["ours_max_abs_share"]),
            str(int(r["seed002_cells"])),
            rf.num(r["seed002_median_ms"], 1),
            rf.num(r["seed002_max_abs_ms"], 1),
            str(int(r["common_cells"])),
        ]
        for _, r in table.iterrows()
    ]
    header = ["setup", "workload", "points", "median", "max $|\\cdot|$", "max / R"]
    header += ["cells", "median", "max $|\\cdot|$", "common"]
    return rf.tabular(header, rows, "llrrrrrrrr")
