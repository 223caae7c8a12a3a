"""The baselines' maxima beside seeds 002 and 004 (analysis.studies.s2018.baseline_maxima) on
the small baselines of conftest.py (measured at s = 0.5)."""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd
import pytest

from analysis.scale_model import ScaleError, in_study_time
from analysis.studies.s2018 import baseline_maxima as bm

Baselines = tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame, pd.DataFrame]


def test_best_takes_the_client_row_of_highest_throughput() -> None:
    d = pd.DataFrame(
        {
            "side": ["client", "client", "middleware", "client"],
            "throughput_ops_mean": [10.0, 30.0, 99.0, math.nan],
            "point": ["a", "b", "b", "c"],
            "scale": [0.5, 0.5, 0.5, 0.5],
        }
    )
    assert bm.best(d)["point"] == "b"
    assert bm.best(d[d["side"] == "middleware"]) is None


def test_best_refuses_a_point_without_a_positive_scale() -> None:
    d = pd.DataFrame(
        {"side": ["client", "client"], "throughput_ops_mean": [10.0, 30.0], "point": ["a", "b"]}
    )
    with pytest.raises(ScaleError, match="no `scale` column"):
        bm.best(d)
    with pytest.raises(ScaleError, match="point b"):
        bm.best(d.assign(scale=[0.5, 0.0]))


def test_study_rescales_by_the_points_scale() -> None:
    row = pd.Series({"scale": 0.5, "throughput_ops_mean": 1000.0, "response_us_mean_mean": 4e3})
    assert bm.study(row, "throughput") == 2000
    assert bm.study(row, "response") == pytest.approx(2.0)
    # The stored study value wins; no point gives NaN.
    assert (
        bm.study(pd.concat([row, pd.Series({"throughput_study_mean": 1234.0})]), "throughput")
        == 1234
    )
    assert math.isnan(bm.study(None, "response"))


def test_direct_table_drops_the_empty_interval_column(
    baselines: Baselines, reference2018: dict
) -> None:
    direct = baselines[0]
    tex, numbers = bm.direct_table(direct, reference2018)
    assert "$\\pm$CI" not in tex
    # Raw X and R, then X / s and R * s, beside seed 004's and seed 002's maxima.
    one = "one server & read-only & 24 & 2{,}000 & 13.20 & 4{,}000 & 6.60 & 2{,}938 & 2{,}962"
    two = "two servers & write-only & 24 & 4{,}000 & 6.00 & 8{,}000 & 3.00 & 5{,}965"
    assert one in tex and f"{two} & 5{{,}}802/6{{,}}012" in tex
    text = "".join(numbers)
    assert "\\newcommand{\\BaseDirectOneServerReadOnlyX}{4{,}000}" in text
    assert "\\newcommand{\\BaseDirectOneServerReadOnlyXRaw}{2{,}000}" in text
    assert "\\newcommand{\\BaseDirectTwoServersWriteOnlyXSeedTwo}{5{,}802/6{,}012}" in text
    assert text.endswith("{no CI: fewer than three repetitions}\n")


def test_middleware_table_at_each_setups_maximum(baselines: Baselines, reference2018: dict) -> None:
    mw = baselines[1]
    tex, numbers = bm.middleware_table(mw, reference2018)
    # 32 workers, 48 clients: X 3000 raw; the middleware's R 15.8 ms and queue 6.32 ms raw.
    row = "one middleware & read-only & 48/32 & 3{,}000 & 6{,}000 & 6{,}000 & 8.00 & 7.90 & 3.16"
    assert f"{row} & 2{{,}}937" in tex
    text = "".join(numbers)
    assert "\\newcommand{\\BaseMwTwoMiddlewaresWriteOnlyX}{12{,}000}" in text
    assert "\\newcommand{\\BaseMwTwoMiddlewaresWriteOnlyXRaw}{6{,}000}" in text
    empty, none = bm.middleware_table(mw.iloc[0:0], reference2018)
    assert none == [] and "one middleware & read-only & -- & -- & --" in empty


def test_seeds_tables_set_ours_beside_both_seeds(baselines: Baselines, reference2018: dict) -> None:
    seeds_mw, seeds_law, numbers = bm.seeds_tables(in_study_time(baselines[1]), reference2018)
    assert "one middleware & read-only & N & 48 & " in seeds_mw
    assert " &  & X cl. [ops/s] & 6{,}000 & " in seeds_mw
    assert "two middlewares & write-only & 4 & 0.00 & 0.00 & 0.0\\,\\%" in seeds_law
    text = "".join(numbers)
    assert "\\newcommand{\\SeedsOneMiddlewareReadOnlyClientXOurs}{6{,}000}" in text
    assert "\\newcommand{\\SeedsOneMiddlewareWriteOnlyClientXSeedTwo}{12{,}144}" in text
    # R_client - N / X_mw is zero where the law holds exactly.
    assert "\\newcommand{\\SeedsLawTwoMiddlewaresReadOnlyOursMax}{0.0}" in text


def test_figures_draw_each_setup(baselines: Baselines, reference2018: dict, tmp_path: Path) -> None:
    paths = [tmp_path / f"{name}.pdf" for name in ("direct", "mw1", "mw2")]
    direct, mw = (in_study_time(t) for t in baselines[:2])
    bm.figures(direct, mw, reference2018, str(paths[0]), [str(p) for p in paths[1:]])
    assert all(p.stat().st_size > 0 for p in paths)
