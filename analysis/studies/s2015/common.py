"""What every part of the 2015 section reads the same way: a family's per-point table in the
study's time (analysis.scale_model), its system rows (every request type together, as the seed's
clients counted messages), the seed's level names, and the macro names."""

from __future__ import annotations

import math
from collections.abc import Mapping

import pandas as pd

from analysis.report.figures import num
from analysis.report.numbers import camel
from analysis.scale_model import TIME_BASE, in_study_time, with_scale

THROUGHPUT = "throughput_ops"
RESPONSE = "response_us_mean"
# Our client levels that stand for another of the seed's (the clients split evenly over three
# machines): Table 2's 100 and 140 clients.
SEED_LEVEL = {"99": 100, "141": 140}
# The database's cores: the study's M4 has two vCPUs (reference2015.yaml `machines`).
DEFAULT_CORES = 2


class StudyDataError(ValueError):
    """A table that lacks what the 2015 section needs of it."""


def name(*parts: object) -> str:
    """A macro name of the 2015 section: `MqBaseline` + parts in camel case."""
    return "Mq" + camel(*parts)


def study_points(points: pd.DataFrame) -> pd.DataFrame:
    """A family's points in the study's time (once: a table already rescaled stays as it is)."""
    if points.empty or (TIME_BASE in points.columns and (points[TIME_BASE] == "study").any()):
        return points
    return in_study_time(points)


def by_points(frame: pd.DataFrame, points: pd.DataFrame) -> pd.DataFrame:
    """A per-point table (windows, histograms) in the study's time, by its points' scale."""
    if frame.empty:
        return frame
    return in_study_time(with_scale(frame, points, "point"))


def system(points: pd.DataFrame, side: str = "client", kind: str = "all") -> pd.DataFrame:
    """The rows of one side and request type (default: the clients' count of every type),
    in the study's time; a table without them gives an empty frame."""
    if points.empty or "side" not in points.columns:
        return pd.DataFrame()
    p = study_points(points)
    return p[(p["side"] == side) & (p["type"] == kind)].copy()


def level(points: pd.DataFrame, factor: str) -> pd.Series:
    """A factor's levels as numbers (the seed's level where ours stands for another)."""
    column = f"level_{factor}"
    if column not in points.columns:
        raise StudyDataError(f"the points have no column {column}")
    return points[column].astype(str).map(lambda v: SEED_LEVEL.get(v, v)).astype(float)


def half_width(row: Mapping[str, object], metric: str = THROUGHPUT) -> float:
    """Half the confidence interval of a point's metric; NaN with one repetition."""
    lo, hi = float(row[f"{metric}_ci_low"]), float(row[f"{metric}_ci_high"])  # type: ignore[arg-type]
    return (hi - lo) / 2 if math.isfinite(lo) and math.isfinite(hi) else math.nan


def pm(mean: float, half: float, digits: int = 0) -> str:
    """`mean ± half` for LaTeX, the mean alone without an interval."""
    if not math.isfinite(half):
        return num(mean, digits)
    return f"{num(mean, digits)} $\\pm$ {num(half, digits)}"


def repetitions(points: pd.DataFrame) -> int:
    """The fewest repetitions of any point (0 for no points)."""
    if points.empty or "repetitions" not in points.columns:
        return 0
    return int(points["repetitions"].min())


def read_tables(paths: Mapping[str, object], names: tuple[str, ...]) -> dict[str, pd.DataFrame]:
    """The family tables a report script was given by name (`<family>_<table>`), an empty
    frame for each one the rule left out because the profile does not measure its family."""
    out = {}
    for key in names:
        path = paths.get(key) if hasattr(paths, "get") else None
        out[key] = pd.read_parquet(str(path)) if path else pd.DataFrame()
    return out
