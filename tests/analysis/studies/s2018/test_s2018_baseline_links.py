"""The baselines beside their links (analysis.studies.s2018.baseline_links) on the small
baselines of conftest.py: capped links of 10 (client), 40 (middleware) and 5 Mbit/s
(server) as run, measured at 9.6, 38 and 4.8, at s = 0.5."""

from __future__ import annotations

import pandas as pd
import pytest

from analysis import validate
from analysis.report import figures as fg
from analysis.studies.s2018 import baseline_links as links

Baselines = tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame, pd.DataFrame]


def test_bound_case_says_whether_a_link_holds_the_maximum() -> None:
    bound = validate.BandwidthBound({"server": 1000.0}, 1000.0, "server")
    held = pd.Series({"throughput_ops_mean": 1000.0 * validate.NEAR_BOUND})
    assert links._bound_case(held, bound) == "held"
    below = pd.Series({"throughput_ops_mean": 1000.0 * validate.NEAR_BOUND - 1})
    assert links._bound_case(below, bound) == "below"


def test_bandwidth_bound_of_each_maximum_in_the_study_time(baselines: Baselines) -> None:
    direct, mw = baselines[:2]
    text = "".join(links.bandwidth_bound(direct, mw))
    read = direct[
        (direct["level_setup"] == "one_server") & (direct["level_workload"] == "read-only")
    ]
    best = read.loc[read["throughput_ops_mean"].idxmax()]
    bound = validate.run_bandwidth_bound(best)
    assert bound is not None and bound.binding == "server"
    assert f"\\newcommand{{\\BaseBoundOneServerRead}}{{{fg.num(bound.bound / 0.5)}}}" in text
    share = fg.num(2000 / bound.bound, 2)
    assert f"\\newcommand{{\\BaseBoundOneServerReadShare}}{{{share}}}" in text
    assert "\\newcommand{\\BaseBoundOneServerReadRole}{the server's}" in text
    # 2000 ops/s reach the server's bound: the link holds the maximum.
    assert 2000 / bound.bound >= validate.NEAR_BOUND
    assert "\\newcommand{\\BaseBoundOneServerReadCase}{held}" in text
    assert "\\newcommand{\\BaseBoundCase}{capped}" in text


def test_link_bounds_table_rescales_the_measured_capacities(
    baselines: Baselines, reference2018: dict
) -> None:
    direct, mw = baselines[:2]
    tex, numbers = links.link_bounds_table(direct, mw, reference2018)
    # Per role: the cap, the measured capacity as run and / s, the seed's upload.
    assert "server & 5.00 & 4.80 & 9.6 & 101 & SET reply & 8 & 8 & " in tex
    assert " &  &  &  &  & GET reply & 4130 & 4132 & " in tex
    text = "".join(numbers)
    assert "\\newcommand{\\LinkScale}{0.50}" in text
    assert "\\newcommand{\\LinkCapServerStudy}{9.6}" in text
    # The largest deviation from the seed's capacity: the middleware's 76 of 802 Mbit/s.
    assert f"\\newcommand{{\\LinkCapMaxDev}}{{{fg.pct(1 - 76 / 802)}}}" in text
    server_get = 9.6e6 / 8 / 4130
    assert float(
        text.split("\\LinkBoundServerGet}{")[1].split("}")[0].replace("{,}", "")
    ) == pytest.approx(server_get, abs=0.5)
