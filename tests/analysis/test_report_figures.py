"""The report's figure helpers (analysis.report.figures) and the seed-004 values the 2018
figures draw beside ours (analysis.studies.s2018.seed)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import yaml

from analysis.report import figures as fg
from analysis.studies.s2018 import seed as seed2018

ROOT = Path(__file__).resolve().parents[2]
REFERENCE = yaml.safe_load((ROOT / "workflows" / "reference2018.yaml").read_text())


def test_shared_ylim_holds_the_data_of_every_axis() -> None:
    fig, axes = fg.figure(ncols=2)
    axes[0][0].plot([1, 2], [13000, 16000])
    axes[0][1].plot([1, 2], [12300, 14500])
    low, high = fg.shared_ylim(list(axes[0]))
    for ax in axes[0]:
        assert ax.get_ylim() == (low, high)
    assert low < 12300 and high > 16000
    fg.plt.close(fig)


def test_shared_ylim_without_data_keeps_the_limits() -> None:
    fig, axes = fg.figure()
    before = axes[0][0].get_ylim()
    assert fg.shared_ylim([axes[0][0]]) == before
    fg.plt.close(fig)


def test_seed_points_are_unconnected_markers_and_skip_missing_values() -> None:
    fig, axes = fg.figure()
    ax = axes[0][0]
    fg.seed_points(ax, [192], [math.nan], "nothing")
    assert not ax.lines
    fg.seed_points(ax, [192, 288], [10.0, 11.0], "seed", side="middleware")
    (line,) = ax.lines
    assert line.get_linestyle() == "None" and line.get_marker() == "D"
    assert line.get_label() == "seed"
    fg.plt.close(fig)


def test_baseline_points_place_each_maximum_at_its_client_count() -> None:
    t = seed2018.baseline_figure_points(REFERENCE).set_index(["setup", "workload", "side"])
    one = t.loc[("one_server", "read-only", "client")]
    assert one["clients"] == 6 and one["throughput"] == 2937.75
    assert math.isnan(one["response_ms"]) and math.isnan(one["workers"])
    assert t.loc[("one_server", "write-only", "client"), "clients"] == 192
    assert t.loc[("two_servers", "write-only", "client"), "clients"] == 8
    mw = t.loc[("one_middleware", "write-only", "middleware")]
    assert (mw["clients"], mw["workers"]) == (192, 64)
    assert (mw["throughput"], mw["response_ms"]) == (11546.60, 8.07)
    # Four direct rows (client side only) and eight with middlewares (both sides).
    assert len(t) == 12


def test_writes_points_follow_table_7() -> None:
    t = seed2018.writes_figure_points(REFERENCE)
    assert t["workers"].tolist() == [8, 16, 32, 64]
    top = t.iloc[-1]
    assert (top["clients"], top["mw_x"], top["queue_ms"]) == (288, 11469.24, 10.73)
    assert np.isfinite(t[["client_x", "server_ms"]].to_numpy()).all()
