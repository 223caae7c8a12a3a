"""The closed network's tables (analysis.studies.s2018.mva_tables) from the network fitted to
the small baselines of conftest.py, beside seeds 002 and 004."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from analysis.models import mva
from analysis.scale_model import in_study_time, with_scale
from analysis.studies.s2018 import mva_middleware as mw
from analysis.studies.s2018 import mva_tables

Baselines = tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame, pd.DataFrame]


@pytest.fixture
def fitted(baselines: Baselines, base_windows: pd.DataFrame) -> dict:
    direct, points = baselines[:2]
    windows = in_study_time(with_scale(base_windows, points, "point"))
    return mw.fit(in_study_time(points), windows[windows["type"] != "all"], in_study_time(direct))


@pytest.fixture
def raw_x(baselines: Baselines) -> pd.Series:
    return baselines[1].set_index(["point", "side", "type"])["throughput_ops_mean"]


def test_component_rows_head_each_client_count_once() -> None:
    side = pd.DataFrame(
        [
            {"seed_clients": 24, "clients": 48, "component": c, "U": 0.5, "U_seed": 0.25,
             "R": 1.0, "R_seed": math.nan, "Q": 2.0, "Q_seed": 3.0}
            for c in ("network", "workers")
        ]
    )  # fmt: skip
    rows = mva_tables.component_rows(side, "read-only")
    assert rows == [
        ["read-only", "48 (24)", "network", "0.50", "0.25", "1.00", "--", "2.00", "3.00"],
        ["", "", "workers", "0.50", "0.25", "1.00", "--", "2.00", "3.00"],
    ]


def test_tables_compare_the_model_with_each_measured_point(
    fitted: dict, raw_x: pd.Series, reference2018: dict
) -> None:
    t = mva_tables.tables(fitted, raw_x, reference2018)
    f = fitted[("one_middleware", "read-only")]
    res = mva.solve(f.network, 48)
    # Measured at 48 clients with 32 workers: 3000 ops/s raw, 6000 in the study's time.
    x_mva = mva_tables.fg.num(res.throughput)
    assert f"one middleware & read-only & 48 & {x_mva} & 6{{,}}000 & 3{{,}}000" in t.mva
    # Service times (µs, study time) and capacities: 1 / 10 µs, 32 / 150 µs, 1 / 250 µs.
    params = "one middleware & read-only & 32 & 100.0 & 10.0 & 150.0 & 250.0"
    assert f"{params} & 100{{,}}000 & 213{{,}}333 & 4{{,}}000 & memcached" in t.util
    assert list(t.data.columns) == mva_tables.DATA_COLUMNS and len(t.data) == 8
    top = t.data.set_index(["setup", "workload", "clients"]).loc[
        ("one_middleware", "read-only", 48)
    ]
    assert top["x_measured"] == 6000 and top["x_measured_raw"] == 3000
    assert top["x_model"] == pytest.approx(res.throughput) and top["scale"] == 0.5
    text = "".join(t.numbers)
    # Seed 004's client counts 6, 24, 192 matched to ours on a log scale, each used once.
    assert "\\newcommand{\\ModelCompClientsSix}{6}" in text
    assert "\\newcommand{\\ModelCompClientsTwoFour}{48}" in text
    assert "\\newcommand{\\ModelCompClientsOneNineTwo}{--}" in text
    assert f"\\newcommand{{\\ModelOneMiddlewareReadOnlyBottleneck}}{{{mw.bottleneck(res)}}}" in text
    assert "\\newcommand{\\ModelOneMiddlewareBottleneckPhrase}{\\texttt{" in text
    assert "\\newcommand{\\ModelOneMiddlewareWriteOnlyStudyBottleneck}{net-thread}" in text
    assert text.endswith("\\newcommand{\\ModelMvaCases}{4}\n")
    # Table 14 has no row for the clients (Z = 0: they hold no job).
    assert " & network & 0.40 & 0.69 & " in t.comp_one and " & clients & " not in t.comp_one


def test_tables_without_a_network_keep_their_macros(raw_x: pd.Series, reference2018: dict) -> None:
    t = mva_tables.tables({}, raw_x, reference2018)
    text = "".join(t.numbers)
    assert "\\newcommand{\\ModelTwoMiddlewaresWriteOnlyBottleneck}{n/a (no points)}" in text
    assert "\\newcommand{\\ModelTwoMiddlewaresWriteOnlyX}{--}" in text
    assert "\\newcommand{\\ModelTwoMiddlewaresWriteOnlyError}{--}" in text
    assert t.data.empty and "no data" in t.mva


def test_seeds_beside_takes_the_largest_client_count(reference2018: dict) -> None:
    data = [
        {"setup": "one_middleware", "workload": "write-only", "clients": n, "x_model": x,
         "x_measured": 1000.0, "bottleneck": "workers"}
        for n, x in ((6, 500.0), (48, 1100.0))
    ]  # fmt: skip
    tex, numbers = mva_tables.seeds_beside(reference2018, data)
    assert "one middleware & write-only & 48 & 10.0\\,\\% & workers & " in tex
    text = "".join(numbers)
    assert "\\newcommand{\\ModelOneMiddlewareWriteOnlyError}{10.0\\,\\%}" in text
    assert "\\newcommand{\\ModelOneMiddlewareReadOnlyError}{--}" in text
