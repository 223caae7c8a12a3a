"""The queueing-models section: M/M/1 and M/M/m of the write experiment per point
(analysis.studies.s2018.open_models) and the closed network of the baseline with one and two
middlewares (analysis.studies.s2018.mva_tables), each beside seed 004's Tables 12-14.

Every input is in the study's time first (throughputs / s, times * s by the runs' scale), so
the models are fitted, predict and are compared with the measurements in one time base."""

from __future__ import annotations

from collections.abc import Mapping
from typing import NamedTuple

import pandas as pd

from analysis.scale_model import in_study_time, with_scale
from analysis.studies.s2018 import mva_middleware, mva_tables, open_models


class Measurements(NamedTuple):
    """The tables the models are fitted to and compared with, as measured. `*_points`: the
    points the validation kept; `*_all`: every point of the family (their scales are the
    windows')."""

    write_points: pd.DataFrame
    write_all: pd.DataFrame
    write_windows: pd.DataFrame
    write_queue: pd.DataFrame
    base_points: pd.DataFrame
    base_all: pd.DataFrame
    base_windows: pd.DataFrame
    direct_points: pd.DataFrame


class QueueingModels(NamedTuple):
    """The section's LaTeX outputs, by the names of the rule's outputs."""

    table_mm1: str
    table_mmm: str
    table_mva: str
    table_util: str
    table_comp_one: str
    table_comp_two: str
    table_seeds: str
    numbers: str


def middleware_windows(windows: pd.DataFrame, points: pd.DataFrame) -> pd.DataFrame:
    """The middlewares' windows per request type, in the study's time (`points`: the
    family's points, whose scale each window takes)."""
    w = in_study_time(with_scale(windows, points, "point"))
    return w[(w["side"] == "middleware") & (w["type"] != "all") & (w["count"] > 0)]


def report(
    data: Measurements, full_ref: Mapping, fig_mm: str
) -> tuple[QueueingModels, pd.DataFrame]:
    """The section from the measurements and the reference file, and the network's
    throughput per point (mva_tables.DATA_COLUMNS); the M/M figure is saved at `fig_mm`."""
    open_ = open_models.report(
        in_study_time(data.write_points),
        middleware_windows(data.write_windows, data.write_all),
        data.write_queue,
        full_ref["models"],
        fig_mm,
    )
    raw_x = data.base_all.set_index(["point", "side", "type"])["throughput_ops_mean"]
    fitted = mva_middleware.fit(
        in_study_time(data.base_points),
        middleware_windows(data.base_windows, data.base_all),
        in_study_time(data.direct_points),
    )
    closed = mva_tables.tables(fitted, raw_x, full_ref)
    texts = QueueingModels(
        table_mm1=open_.mm1,
        table_mmm=open_.mmm,
        table_mva=closed.mva,
        table_util=closed.util,
        table_comp_one=closed.comp_one,
        table_comp_two=closed.comp_two,
        table_seeds=closed.seeds,
        numbers="".join(open_.numbers + closed.numbers),
    )
    return texts, closed.data
