"""Stable windows, repetitions, the interactive law, bandwidth bounds and model parameters."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from analysis import aggregate, estimate, parse, validate
from analysis.models import queueing
from tests.analysis.test_parse import make_run


@pytest.fixture
def tables(tmp_path: Path) -> parse.RunTables:
    return parse.load_run(make_run(tmp_path))


def test_trim_cuts_warmup_and_cooldown(tables: parse.RunTables) -> None:
    trimmed = aggregate.trim(tables.windows, warmup_s=1, cooldown_s=1)
    mw = trimmed[trimmed["side"] == "middleware"]
    assert sorted(mw["window"].unique()) == [1, 2, 3]
    client = trimmed[trimmed["side"] == "client"]
    # The client ran 3.002 s: windows 0-3, the last one 2 ms long; cut 1 s at each end.
    assert sorted(client["window"].unique()) == [1]
    assert aggregate.trim(tables.windows, 0, 0).shape == tables.windows.shape
    with pytest.raises(ValueError, match=">= 0"):
        aggregate.trim(tables.windows, -1, 0)


def test_summaries_and_repetitions(tables: parse.RunTables) -> None:
    runs = aggregate.summarise_runs(parse.tidy(aggregate.trim(tables.windows, 1, 1)))
    mw_get = runs[(runs["side"] == "middleware") & (runs["type"] == "get")].iloc[0]
    assert mw_get["throughput_ops"] == pytest.approx(np.mean([1010, 1020, 1030]))
    assert mw_get["throughput_cv"] == pytest.approx(np.std([1010, 1020, 1030], ddof=1) / 1020)
    assert mw_get["response_us_mean"] == pytest.approx(800.0)
    # Three repetitions of one point.
    reps = pd.concat(
        [
            runs.assign(repetition=i, throughput_ops=runs["throughput_ops"] * f)
            for i, f in enumerate([0.9, 1.0, 1.1], 1)
        ]
    )
    points = aggregate.aggregate_points(reps)
    row = points[(points["side"] == "middleware") & (points["type"] == "get")].iloc[0]
    x = [1020 * f for f in (0.9, 1.0, 1.1)]
    lo, hi = stats.t.interval(0.95, 2, loc=np.mean(x), scale=stats.sem(x))
    assert row["repetitions"] == 3
    assert row["throughput_ops_mean"] == pytest.approx(1020)
    assert row["throughput_ops_std"] == pytest.approx(np.std(x, ddof=1))
    assert (row["throughput_ops_ci_low"], row["throughput_ops_ci_high"]) == pytest.approx((lo, hi))
    wide = aggregate.side_by_side(points)
    assert {"client_throughput_ops_mean", "middleware_throughput_ops_mean"} <= set(wide.columns)


def test_confidence_interval_needs_three_values() -> None:
    assert all(np.isnan(aggregate.confidence_interval([1.0, 2.0])))
    assert all(np.isnan(aggregate.confidence_interval([1.0, 2.0, float("nan")])))
    x = [1.0, 2.0, 4.0]
    lo, hi = stats.t.interval(aggregate.CI_LEVEL, 2, loc=np.mean(x), scale=stats.sem(x))
    assert aggregate.confidence_interval(x) == pytest.approx((lo, hi))
    with pytest.raises(ValueError, match="level"):
        aggregate.confidence_interval(x, level=95)


def test_points_of_two_repetitions_have_no_interval(tables: parse.RunTables) -> None:
    runs = aggregate.summarise_runs(parse.tidy(tables.windows))
    reps = pd.concat([runs.assign(repetition=i) for i in (1, 2)])
    points = aggregate.aggregate_points(reps)
    assert (points["repetitions"] == 2).all()
    assert points["throughput_ops_ci_low"].isna().all()
    assert points["throughput_ops_mean"].notna().all()


def test_interactive_law() -> None:
    # 192 clients, 10 000 ops/s, 18 ms response time: N/X = 19.2 ms, so Z = 1.2 ms fits.
    law = validate.interactive_law(192, 10_000.0, 0.018)
    assert law.predicted_response_time == pytest.approx(0.0192)
    assert law.fitted_think_time == pytest.approx(0.0012)
    assert law.predicted_throughput == pytest.approx(192 / 0.018)
    assert law.relative_error == pytest.approx((10_000 - 192 / 0.018) / 10_000)
    assert not law.holds(0.05) and law.holds(0.07)
    exact = validate.interactive_law(192, 10_000.0, 0.018, think_time=0.0012)
    assert exact.relative_error == pytest.approx(0, abs=1e-12)
    table = validate.interactive_law_table(
        pd.DataFrame({"clients_total": [6], "throughput_ops": [3000.0], "response_us_mean": [1900]})
    )
    assert table.loc[0, "fitted_think_us"] == pytest.approx(100.0)


def test_bandwidth_bounds_match_the_study() -> None:
    # Seed 004 Table 1: 4096-byte values, keys like memtier-10000: a GET reply is ~4.1 kB,
    # so one server's 100 Mbit/s upload carries ~3000 GETs/s (the study measured ~2940).
    sizes = validate.message_sizes(4096, len("memtier-10000"))
    assert sizes["get_request"] == 19 and sizes["set_reply"] == 8
    assert 4126 <= sizes["get_reply"] <= 4132 and 4126 <= sizes["set_request"] <= 4132
    caps = {"client": 200.0, "middleware": 800.0, "server": 100.0}
    reads = validate.bandwidth_bound(caps, {"client": 3, "middleware": 1}, sizes, 0.0)
    assert reads.binding == "server"
    assert reads.bound == pytest.approx(100e6 / 8 / sizes["get_reply"])
    assert 2940 < reads.bound < 3100
    writes = validate.bandwidth_bound(
        caps, {"client": 3, "middleware": 1}, sizes, 1.0, replication=3, servers=3
    )
    # Each write crosses the middleware's link three times (once per replica).
    assert writes.binding == "middleware"
    assert writes.bound == pytest.approx(800e6 / 8 / (8 + 3 * sizes["set_request"]))


def test_parameter_estimates_and_predictions(tables: parse.RunTables) -> None:
    mw = parse.tidy(tables.windows[tables.windows["side"] == "middleware"])
    lam = estimate.arrival_rate(mw)
    mu = estimate.service_rate_max_window(mw)
    assert lam == pytest.approx(np.mean([1500 + 10 * w for w in range(5)]))
    assert mu == pytest.approx(1540)
    per_worker = estimate.service_time_per_worker_us(mw)
    comp = estimate.component_service_times_us(mw)
    assert comp["queue"] == pytest.approx(100.0)
    assert per_worker == pytest.approx(comp["worker"] + comp["server"])
    table = estimate.mm1_vs_measured(lam, mu, {"mean_response_time": 1e-3})
    row = table.set_index("metric").loc["mean_response_time"]
    assert row["predicted"] == pytest.approx(queueing.mm1(lam, mu).mean_response_time)
    assert row["relative_error"] == pytest.approx(row["predicted"] / 1e-3 - 1)
    mmm = estimate.mmm_vs_measured(lam, 1e6 / per_worker, 8, {})
    assert set(mmm["model"]) == {"M/M/8"} and mmm["measured"].isna().all()


def test_trim_to_clients_keeps_one_interval_for_both_sides() -> None:
    import pandas as pd

    from analysis.aggregate import trim_to_clients

    start = 1_000_000
    rows = []
    # The client's windows start 300 ms after the middleware's first window.
    for i in range(6):
        rows.append(("r", "client", i, start + 300 + 1000 * i, start + 1300 + 1000 * i))
        rows.append(("r", "middleware", i, start + 1000 * i, start + 1000 + 1000 * i))
    windows = pd.DataFrame(rows, columns=["run", "side", "window", "start_ms", "end_ms"])
    kept = trim_to_clients(windows, warmup_s=1, cooldown_s=1)
    # Stable interval: [start+1300, start+5300]; the middleware's windows inside it cover
    # [start+2000, start+5000], and the client's whose middle lies there: 2, 3 and 4.
    assert kept[kept.side == "client"]["window"].tolist() == [2, 3, 4]
    assert kept[kept.side == "middleware"]["window"].tolist() == [2, 3, 4]
    assert (kept["start_ms"] >= start + 1300).all() and (kept["end_ms"] <= start + 5300).all()


def test_per_source_totals_add_sources_over_their_own_windows() -> None:
    import pandas as pd

    from analysis.aggregate import per_source_totals

    rows = []
    # Two generators whose window indices do not line up: a runs in windows 1-2, b in 2-3.
    for source, windows, rate in (("a", (1, 2), 100.0), ("b", (2, 3), 300.0)):
        for w in windows:
            rows.append(("r", "client", source, w, "get", 1, rate, rate, 1000.0))
    tidy = pd.DataFrame(
        rows,
        columns=["run", "side", "source", "window", "type", "keys", "count",
                 "throughput_ops", "response_us_mean"],
    )  # fmt: skip
    totals = per_source_totals(tidy).set_index("type")
    # Summing by window index would give 100, 400 and 300 ops/s; per source it is 400.
    assert totals.loc["get", "throughput_ops"] == 400.0
    assert totals.loc["all", "throughput_ops"] == 400.0
    assert totals.loc["get", "response_us_mean"] == 1000.0
    assert totals.loc["get", "throughput_cv"] == 0.0


def test_points_whose_runs_are_all_excluded_stay_out_of_tables() -> None:
    # The validation excluded the only run of p=2 (unstable after its reruns) and one of two
    # runs of p=3; p=1 kept its run. Another family's exclusions do not count here.
    validation = pd.DataFrame(
        {
            "family": ["f", "f", "f", "f", "g"],
            "run": ["f/p=1/rep1", "f/p=2/rep1", "f/p=3/rep1", "f/p=3/rep2", "g/p=1/rep1"],
            "excluded": [False, True, True, False, True],
        }
    )
    points = pd.DataFrame(
        {
            "point": ["p=1", "p=1", "p=2", "p=3", "p=4"],
            "side": ["client", "middleware", "client", "client", "client"],
        }
    )
    kept = validate.usable_points(points, validation, "f")
    # p=3 keeps its stable run's statistics; p=4 is not in the validation and stays.
    assert kept["point"].tolist() == ["p=1", "p=1", "p=3", "p=4"]
    # Family g kept no run at all (steps too short for the check): its points all stay.
    assert len(validate.usable_points(points, validation, "g")) == len(points)
    validation.loc[4, "excluded"] = False
    validation.loc[5] = ["g", "g/p=2/rep1", True]
    assert validate.usable_points(points, validation, "g")["point"].tolist() == [
        "p=1",
        "p=1",
        "p=3",
        "p=4",
    ]
