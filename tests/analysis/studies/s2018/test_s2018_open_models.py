"""M/M/1 and M/M/m of the write experiment as the report shows them (analysis.studies.s2018.
open_models), on the small write experiment of conftest.py beside seed 004."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from analysis.scale_model import in_study_time, with_scale
from analysis.studies.s2018 import mm_tables, open_models
from analysis.studies.s2018.queueing_models import middleware_windows

Experiment = tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]


def test_mm_tabular_shows_each_points_keys_once() -> None:
    ours = pd.DataFrame([{"workers": 8, "clients": 6, "mu": 1800.0, "lam": 400.0, "rho": 0.2222}])
    seed = pd.DataFrame([{"workers": 8, "clients": 6, "mu": 6750.87, "rho": 0.42}])
    table = mm_tables.beside(
        mm_tables.predict(ours.assign(servers=16, nq_act=1.0, w_act_ms=0.1, r_act_ms=1.0), "mm1"),
        seed.reindex(columns=[*mm_tables.KEYS, *mm_tables.COLUMNS]),
    )
    tex = open_models.mm_tabular(table)
    assert "8 & 6 & seed 004 & 6{,}751 & -- & 0.42 & " in tex
    assert " &  & ours & 1{,}800 & 400 & 0.22 & 0.78 & 0.22 & " in tex


def test_report_fits_mu_per_worker_count_in_the_study_time(
    write_experiment: Experiment, reference2018: dict, tmp_path: Path
) -> None:
    points, windows, queue = write_experiment
    fig = tmp_path / "mm.pdf"
    models = open_models.report(
        in_study_time(points),
        middleware_windows(windows, points),
        queue,
        reference2018["models"],
        str(fig),
    )
    assert fig.stat().st_size > 0
    # Study time: windows of 200/600 and 1800/1400 ops/s; λ per point, μ the best window.
    assert "8 & 6 & seed 004 & 6{,}751" in models.mm1
    assert " &  & ours & 1{,}800 & 400 & 0.22 & " in models.mm1
    assert " &  & ours & 1{,}800 & 1{,}600 & 0.89 & " in models.mm1
    # M/M/m: each of the 16 workers serves μ / 16.
    assert " &  & ours & 112 & 1{,}600 & 0.89 & " in models.mmm
    text = "".join(models.numbers)
    assert "\\newcommand{\\ModelMMPoints}{2}" in text
    assert "\\newcommand{\\ModelMMCommonPoints}{2}" in text  # both at the seed's counts
    assert "\\newcommand{\\ModelMuWindow}{1{,}800}" in text
    assert "\\newcommand{\\ModelMuRun}{1{,}600}" in text
    assert "\\newcommand{\\ModelMuRunBelowWindow}{11.1\\,\\%}" in text
    assert "\\newcommand{\\ModelMuStudy}{6{,}751}" in text


def test_middleware_windows_take_the_points_scale() -> None:
    windows = pd.DataFrame(
        {"point": ["a", "a", "a"], "side": ["middleware", "middleware", "client"],
         "type": ["get", "all", "get"], "count": [5, 5, 5], "throughput_ops": [100.0] * 3}
    )  # fmt: skip
    points = pd.DataFrame({"point": ["a"], "scale": [0.25]})
    w = middleware_windows(windows, points)
    assert w["throughput_ops"].tolist() == [400.0]
    assert with_scale(windows, points, "point")["scale"].eq(0.25).all()
