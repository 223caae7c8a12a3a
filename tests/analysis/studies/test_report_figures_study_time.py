"""The 2018 and 2016 report figures a reader compares: seed 004's values beside ours in the
study's time, bars where a profile measured one client count, and shared axes that hold
every panel's data."""

from __future__ import annotations

import math
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest
import yaml

from analysis.report import figures as fg
from analysis.scale_model import in_study_time
from analysis.studies.s2016 import writes as writes2016
from analysis.studies.s2018 import baseline_maxima, batching

ROOT = Path(__file__).resolve().parents[3]
REFERENCE = yaml.safe_load((ROOT / "workflows" / "reference2018.yaml").read_text())


@pytest.fixture
def saved(monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, fg.plt.Figure]]:
    """The figures the scripts save, by path, kept open for inspection."""
    figures: dict[str, fg.plt.Figure] = {}
    monkeypatch.setattr(fg, "save", lambda fig, path: figures.__setitem__(str(path), fig))
    yield figures
    fg.plt.close("all")


def point(metric_means: dict[str, float], **levels: object) -> dict[str, object]:
    """One row of a points table: each metric's mean with no interval (one repetition)."""
    row: dict[str, object] = {"scale": 0.05, **levels}
    for metric, mean in metric_means.items():
        row |= {f"{metric}_mean": mean, f"{metric}_ci_low": math.nan, f"{metric}_ci_high": math.nan}
    return row


def drawn(ax: fg.plt.Axes) -> dict[str, list[float]]:
    """The y values of each series in an axis's legend (lines, and error-bar lines)."""
    values = {}
    for handle, label in zip(*ax.get_legend_handles_labels(), strict=True):
        line = handle.lines[0] if hasattr(handle, "lines") else handle
        values[label] = [float(y) for y in line.get_ydata()]
    return values


def test_baselines_are_drawn_in_the_study_time_beside_seed_004(saved: dict) -> None:
    direct = pd.DataFrame(
        [
            point(
                {"throughput_ops": 146.0, "response_us_mean": 41000.0},
                level_setup=setup,
                level_workload=wl,
                side="client",
                clients_total=6,
            )
            for setup in ("one_server", "two_servers")
            for wl in ("read-only", "write-only")
        ]
    )
    mw = pd.DataFrame(
        [
            point(
                {"throughput_ops": 146.0, "response_us_mean": 65000.0},
                level_setup=setup,
                level_workload=wl,
                side=side,
                clients_total=192,
                **{"middleware.workers": 32},
            )
            for setup in ("one_middleware", "two_middlewares")
            for wl in ("read-only", "write-only")
            for side in ("client", "middleware")
        ]
    )
    baseline_maxima.figures(in_study_time(direct), in_study_time(mw), REFERENCE, "direct",
                            ["one", "two"])  # fmt: skip
    x_axis = drawn(saved["direct"].axes[0])
    assert x_axis["one server, client"] == pytest.approx([146.0 / 0.05])
    assert x_axis["seed 004 max., one server"] == [2937.75]
    r_axis = drawn(saved["one"].axes[1])
    assert r_axis["seed 004, 64 WT, client"] == [65.32]
    assert r_axis["32 WT, client"] == pytest.approx([65000.0 * 0.05 / 1e3])


def test_batching_with_one_client_count_is_one_labelled_bar_per_batch(saved: dict) -> None:
    d = pd.DataFrame(
        [
            point({"throughput_ops": x}, clients=192, batch=b)
            for b, x in ((1, 8813.0), (16, 17299.0))
        ]
    )
    _, axes = fg.figure()
    labels = batching.batch_bars(axes[0][0], d, [1, 16])
    assert labels == ["8,813", "17,299"]
    assert len(axes[0][0].patches) == 2
    assert axes[0][0].get_ylim()[1] > 17299


def test_2016_writes_gets_panel_holds_its_data(saved: dict) -> None:
    rows = [
        point(
            {"throughput_ops": x},
            type=kind,
            side="client",
            servers=3,
            level_replication="none",
            level_writes=w,
        )
        for kind, values in (
            ("all", (14800, 13100, 16000)),
            ("get", (14800, 12400, 14400)),
            ("set", (0, 30, 80)),
        )
        for w, x in zip(("1", "5", "10"), values, strict=True)
    ]
    writes2016.figure(pd.DataFrame(rows), "writes")
    fig = saved["writes"]
    all_ax, _, get_ax = fig.axes[:3]
    assert all_ax.get_ylim() == get_ax.get_ylim()
    low, high = get_ax.get_ylim()
    assert low < 12400 and high > 16000
    # The legend is the figure's, below the panels.
    assert fig.legends and not any(ax.get_legend() for ax in fig.axes)
