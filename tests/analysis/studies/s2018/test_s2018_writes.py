"""The write-throughput experiment (analysis.studies.s2018.writes) on small hand-made points
beside the reference file's seeds 002 and 004."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pandas as pd
import pytest

from analysis.scale_model import in_study_time
from analysis.studies.s2018 import writes

SETTINGS = {"level_setup": "full_system", "level_workload": "write-only"}


@pytest.fixture
def raw(make_points: Callable[..., pd.DataFrame]) -> pd.DataFrame:
    """8 workers: 6 clients (light), 48 (the maximum), 96; 64 workers: 48 clients only."""
    return make_points(
        [
            ("a", 6, 8, (3000, 2000), (3010, 1500, 100, 1200)),
            ("b", 48, 8, (6000, 8000), (6050, 7000, 4000, 2000)),
            ("c", 96, 8, (5900, 16000), (5950, 15000, 12000, 2100)),
            ("d", 48, 64, (7000, 7000), (7100, 6500, 1000, 4000)),
        ],
        **SETTINGS,
    )


@pytest.fixture
def queue() -> tuple[pd.DataFrame, pd.DataFrame]:
    """Two middlewares' windows of point b's run (and an unstable window 9), and the
    trimmed windows table that keeps windows 0 and 1."""
    rows = []
    for source, lengths in (("mw1", (2.0, 4.0, 100.0)), ("mw2", (6.0, 8.0, 100.0))):
        for window, length in zip((0, 1, 9), lengths, strict=True):
            rows.append(
                {"run": "rb", "point": "b", "side": "middleware", "source": source,
                 "window": window, "queue_length_mean": length, "workers_busy_mean": 7.0}
            )  # fmt: skip
    windows = pd.DataFrame(
        {"run": ["rb"] * 3, "side": ["middleware", "middleware", "client"], "window": [0, 1, 9]}
    )
    return pd.DataFrame(rows), windows


def test_queue_per_point_averages_the_stable_windows_of_every_middleware(
    queue: tuple[pd.DataFrame, pd.DataFrame],
) -> None:
    qlen, busy = writes.queue_per_point(*queue)
    assert qlen.to_dict() == {"b": 5.0}
    assert busy.to_dict() == {"b": 7.0}


def test_max_table_takes_each_worker_counts_maximum_with_the_interactive_law(
    raw: pd.DataFrame,
) -> None:
    pts = in_study_time(raw).assign(workers=raw["middleware.workers"])
    raw_x = raw[raw["side"] == "client"].set_index("point")["throughput_ops_mean"]
    ref = {8: {"mw_x": 5000.0, "queue_len": 3.0}}
    tex, numbers = writes.max_table(pts, raw_x, pd.Series({"b": 5.0}), pd.Series({"b": 7.0}), ref)
    # X_IL = N / (R_mw + Z) = 48 / 7.5 ms: Z = 2000 - 1500 µs at the lightest load of 8 WT.
    row = "8 & 48 & 6{,}050 & 6{,}400 & 6{,}000 & 6{,}000 & 4.00 & 5.0 & 2.00 & 5{,}000 & 3.0"
    assert row in tex
    # 64 workers: one point, its own lightest load; no queue length, no seed values.
    assert "64 & 48 & 7{,}100 & 6{,}857 & 7{,}000 & 7{,}000 & 1.00 & -- & 4.00 & -- & --" in tex
    text = "".join(numbers)
    assert "\\newcommand{\\WritesEightClients}{48}" in text
    assert "\\newcommand{\\WritesEightBusy}{7.0}" in text
    assert "\\newcommand{\\WritesSixFourBusy}{--}" in text


def test_maximum_macros_name_the_overall_best_point(raw: pd.DataFrame) -> None:
    client = raw[raw["side"] == "client"].assign(workers=lambda t: t["middleware.workers"])
    raw_x = client.set_index("point")["throughput_ops_mean"] / 2
    text = "".join(writes.maximum_macros(client, raw_x))
    assert "\\newcommand{\\WritesMaxX}{7{,}000}" in text
    assert "\\newcommand{\\WritesMaxXRaw}{3{,}500}" in text
    assert "\\newcommand{\\WritesMaxWorkers}{64}" in text
    empty = "".join(writes.maximum_macros(client.iloc[0:0], raw_x))
    assert "\\newcommand{\\WritesMaxX}{--}" in empty and "MaxClients" not in empty


def test_report_tables_and_macros_beside_both_seeds(
    raw: pd.DataFrame,
    queue: tuple[pd.DataFrame, pd.DataFrame],
    reference2018: dict,
    tmp_path: Path,
) -> None:
    fig = tmp_path / "writes.pdf"
    section = writes.report(raw, *queue, reference2018, str(fig))
    assert fig.stat().st_size > 0
    assert section._fields == ("table", "tab_seeds", "tab_seeds_law", "numbers")
    # Each worker count of either seed has rows; ours where we measured.
    assert "8 & N & 48 & " in section.tab_seeds
    assert "64 & N & 48 & 144 & " in section.tab_seeds
    assert "full system & write-only & 4 & " in section.tab_seeds_law
    n = section.numbers
    assert "\\newcommand{\\WritesWorkerLevels}{8, 64}" in n
    assert "\\newcommand{\\SeedsFullEightQueueMsOurs}{4.0}" in n
    expected = f"{reference2018['writes'][64]['client_x']:,.0f}".replace(",", "{,}")
    assert f"\\newcommand{{\\WritesStudyMaxX}}{{{expected}}}" in n
    assert n.startswith("\\newcommand{\\WritesMaxStudySource}")
