"""A family's tables in the study's time (analysis.scale_model): the points by their own scale,
every other table with a `point` column by the scale of its point's runs."""

from __future__ import annotations

from collections.abc import Mapping

import pandas as pd

from analysis.scale_model import in_study_time, with_scale


def by_points(frame: pd.DataFrame, points: pd.DataFrame) -> pd.DataFrame:
    """A per-point table (windows, histograms, pool records) in the study's time, each row by
    the scale of its point in the raw `points`."""
    return in_study_time(with_scale(frame, points, "point"))


def family_tables(raw: Mapping[str, pd.DataFrame]) -> dict[str, pd.DataFrame]:
    """A family's raw tables (`points` among them) in the study's time; a table without a
    `point` column as it is."""
    points = raw["points"]
    return {
        t: (in_study_time(f) if t == "points" else by_points(f, points))
        if "point" in f.columns
        else f
        for t, f in raw.items()
    }
