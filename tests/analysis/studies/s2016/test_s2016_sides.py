"""Both sides' response times at the chosen pool size: their percentiles and means, the
figure, and the gap between the sides set against the round trip."""

from __future__ import annotations

import pandas as pd
import pytest

from analysis.studies.s2016 import sides
from analysis.studies.s2016.study_time import by_points
from analysis.studies.s2016.tables import read_only_points
from tests.analysis.studies.s2016.conftest import legend_texts, max_tables, point_name


def test_side_statistics_keep_the_ok_runs() -> None:
    t = max_tables()
    ok = {"max_throughput_2016/workers=8,clients=20/rep1"}
    out = sides.side_statistics(t["histograms"], t["windows"], ok).set_index("side")
    assert out["point"].tolist() == [point_name(8, 20)] * 2
    # Linear inside the bucket that holds the median: halfway through 5000 to 6000 µs.
    assert out.loc["client", "p50_mean"] == 5500.0
    assert out.loc["middleware", "repetitions"] == 1
    assert sides.side_statistics(t["histograms"], t["windows"], set()).empty


def test_at_pool_size_keeps_its_points_and_the_round_trip_in_study_time() -> None:
    t = max_tables()
    raw = read_only_points(t["points"])
    points = by_points(raw, raw)
    hist, windows = by_points(t["histograms"], raw), by_points(t["windows"], raw)
    ok = set(t["runs"]["run"])
    pct, means = sides.at_pool_size(points, hist, windows, ok, 8)
    assert set(pct["clients_total"]) == {20, 200}
    assert set(means["middleware.workers"]) == {8}
    # Twice the one-way delay (1 ms, set per run already divided by s = 0.5), times s.
    assert means["round_trip_ms"].tolist() == [1.0] * len(means)
    assert means.loc[means["side"] == "client", "mean_mean"].tolist() == [2500.0, 2500.0]


def means(client_us: float, middleware_us: float | None, rtt: float) -> pd.DataFrame:
    rows = [{"point": "p", "side": "client", "clients_total": 20, "mean_mean": client_us}]
    if middleware_us is not None:
        rows.append(
            {"point": "p", "side": "middleware", "clients_total": 20, "mean_mean": middleware_us}
        )
    return pd.DataFrame(rows).assign(round_trip_ms=rtt)


PCT = pd.DataFrame(
    {
        "point": ["p", "p"],
        "side": ["client", "middleware"],
        "p50_mean": [2000.0, 900.0],
        "p90_mean": [4000.0, 1500.0],
    }
)
CHOSEN = pd.Series({"point": "p", "workers": 8})


def test_the_round_trip_explains_part_of_the_gap_and_the_rest_is_named() -> None:
    n = sides.sides_numbers(PCT, means(2500.0, 1000.0, 1.0), CHOSEN)
    assert (n["SixteenSidesGap"], n["SixteenSidesRoundTrip"]) == ("1.500", "1.000")
    assert n["SixteenSidesCase"] == "outside"
    assert (n["SixteenSidesRoundTripOfGap"], n["SixteenSidesRest"]) == (r"67\,\%", "0.500")
    assert n["SixteenSidesDelayCase"] == "holds"
    assert n["SixteenSidesClientMedian"] == "2.000"
    assert n["SixteenSidesMiddlewareNinety"] == "1.500"


def test_a_gap_below_the_round_trip_is_reported_as_a_delay_to_check() -> None:
    n = sides.sides_numbers(PCT, means(2500.0, 1000.0, 2.0), CHOSEN)
    assert (n["SixteenSidesCase"], n["SixteenSidesShortfall"]) == ("short", "0.500")
    # At 1 of 1 client counts the clients' mean exceeds the middleware's by less.
    assert n["SixteenSidesDelayCase"] == "fails"
    assert (n["SixteenSidesBelow"], n["SixteenSidesClientCounts"]) == ("1", "1")


def test_without_the_middleware_there_is_no_gap() -> None:
    n = sides.sides_numbers(pd.DataFrame(), means(2500.0, None, 1.0), CHOSEN)
    assert n["SixteenSidesCase"] == "untested"
    assert n["SixteenSidesGap"] == "--" and n["SixteenSidesClientMedian"] == "--"


def test_the_figure_draws_percentiles_beside_means_and_the_round_trip(saved: dict) -> None:
    t = max_tables()
    raw = read_only_points(t["points"])
    pct, m = sides.at_pool_size(
        by_points(raw, raw),
        by_points(t["histograms"], raw),
        by_points(t["windows"], raw),
        set(t["runs"]["run"]),
        8,
    )
    sides.sides_figure(pct, m, "sides.pdf")
    fig = saved["sides.pdf"]
    labels = legend_texts(fig)
    assert {"median, client", "90th pct., middleware", "mean, client"} <= set(labels)
    line = [ln for ln in fig.axes[1].lines if ln.get_label() == "mean, middleware + round trip"]
    # The middleware's mean (1 ms in the study's time) plus the round trip (1 ms).
    assert line[0].get_ydata().tolist() == pytest.approx([2.0, 2.0])
