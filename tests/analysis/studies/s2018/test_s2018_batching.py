"""Batching beside one request per worker turn (analysis.studies.s2018.batching) on small
hand-made points."""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path

import matplotlib.pyplot as plt
import pandas as pd
import pytest

from analysis.studies.s2018 import batching


@pytest.fixture
def raw(make_points: Callable[..., pd.DataFrame]) -> pd.DataFrame:
    """Read-only at 8 and 16 clients with batches 1 and 4; write-only at 16 clients, batch 1
    only. Measured at s = 0.5: the study's throughput is twice, its times half of these."""
    specs = {
        ("r1-8", "read-only", 1, 8): ((1000, 800), (1000, 700, 100, 300)),
        ("r4-8", "read-only", 4, 8): ((1500, 600), (1500, 500, 80, 200)),
        ("r1-16", "read-only", 1, 16): ((1200, 1400), (1200, 1300, 600, 400)),
        ("r4-16", "read-only", 4, 16): ((1800, 900), (1800, 800, 200, 300)),
        ("w1-16", "write-only", 1, 16): ((900, 1800), (900, 1700, 900, 500)),
    }
    frames = [
        make_points(
            [(point, clients, 8, client, mw, 0.5)],
            **{"level_workload": wl, "middleware.max_batch": batch},
        )
        for (point, wl, batch, clients), (client, mw) in specs.items()
    ]
    return pd.concat(frames, ignore_index=True)


def test_at_most_clients_keeps_the_largest_client_count() -> None:
    d = pd.DataFrame({"clients": [8, 16, 16], "batch": [1, 1, 4]})
    assert batching.at_most_clients(d)["batch"].tolist() == [1, 4]
    assert batching.at_most_clients(d.iloc[0:0]).empty


def test_at_top_load_rows_hold_both_throughputs_and_the_middleware_times(
    raw: pd.DataFrame,
) -> None:
    pts = raw.assign(batch=raw["middleware.max_batch"], clients=raw["clients_total"])
    client = pts[pts["side"] == "client"]
    mw = pts[pts["side"] == "middleware"].set_index("point")
    raw_x = raw.set_index(["point", "side"])["throughput_ops_mean"] / 2
    rows, summary = batching.at_top_load(client, mw, raw_x, ["read-only", "write-only"])
    assert [r[:3] for r in rows] == [
        ["read-only", "1", "16"],
        ["read-only", "4", "16"],
        ["write-only", "1", "16"],
    ]
    assert rows[1][3:] == ["1{,}800", "900", "200.0", "300.0", "300.0", "800.0"]
    assert summary[("read-only", 4)]["x"] == 1800
    assert summary[("write-only", 1)]["worker"] == pytest.approx(300)


def test_speedup_macros_compare_the_largest_batch_with_one() -> None:
    summary = {
        ("read-only", 1): {"x": 1000.0, "x_raw": 500.0, "queue": 10.0},
        ("read-only", 4): {"x": 1500.0, "x_raw": 750.0, "queue": 5.0},
    }
    text = "".join(batching.speedup_macros(summary, 4))
    assert "\\newcommand{\\BatchTop}{4}" in text
    assert "\\newcommand{\\BatchReadOnlySpeedup}{1.50}" in text
    assert "\\newcommand{\\BatchReadOnlyTopXRaw}{750}" in text
    # No batch-1 point of the writes: no ratio.
    assert "\\newcommand{\\BatchWriteOnlySpeedup}{--}" in text


def test_batch_bars_label_each_bar_and_leave_missing_ones_blank() -> None:
    d = pd.DataFrame(
        {
            "clients": [8, 16, 16],
            "batch": [1, 1, 4],
            "throughput_ops_mean": [1000.0, 1200.0, 1800.0],
            "throughput_ops_ci_low": [math.nan] * 3,
            "throughput_ops_ci_high": [math.nan] * 3,
        }
    )
    fig, ax = plt.subplots()
    labels = batching.batch_bars(ax, d, [1, 4])
    plt.close(fig)
    assert labels == ["1,000", "1,200", "", "1,800"]
    assert ax.get_ylim() == pytest.approx((0, 1800 * 1.3))


def test_report_rescales_to_the_study_time_and_keeps_the_raw_throughput(
    raw: pd.DataFrame, tmp_path: Path
) -> None:
    fig = tmp_path / "batching.pdf"
    section = batching.report(raw, str(fig))
    assert fig.stat().st_size > 0
    assert section._fields == ("table", "numbers")
    # Study time: X / 0.5, times * 0.5; the raw X beside.
    assert "read-only & 4 & 16 & 3{,}600 & 1{,}800 & 100.0 & 150.0 & 150.0 & 400.0" in (
        section.table
    )
    assert "\\newcommand{\\BatchClientCounts}{8, 16}" in section.numbers
    assert "\\newcommand{\\BatchReadOnlySpeedup}{1.50}" in section.numbers
    assert "\\newcommand{\\BatchWriteOnlyOneX}{1{,}800}" in section.numbers
