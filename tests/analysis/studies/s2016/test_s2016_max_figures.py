"""The maximum-throughput family's figures: our series, the original's values beside them,
the percentiles and the breakdown of the middleware's response time."""

from __future__ import annotations

import pytest

from analysis.report import figures as fg
from analysis.studies.s2016 import max_figures
from analysis.studies.s2016.max_throughput import percentiles
from analysis.studies.s2016.study_time import by_points
from analysis.studies.s2016.tables import read_only_points
from tests.analysis.studies.s2016.conftest import legend_texts, max_tables


def test_the_originals_values_take_the_colour_of_their_pool_size(ref: dict) -> None:
    fig, axes = fg.figure()
    ax = axes[0][0]
    max_figures.original_marks(ax, ref["max_throughput"])
    lines = {ln.get_label(): ln for ln in ax.lines}
    assert lines["seed 000, T=8, plateau"].get_ydata()[0] == 8000
    # A peak is a line and a hollow marker at its clients, in the colour of T=24 everywhere.
    peak = lines["seed 000, T=24, peak (280 clients)"]
    assert peak.get_color() == fg.worker_colour(24)
    markers = [ln for ln in ax.lines if list(ln.get_xdata()) == [280]]
    assert markers and markers[0].get_markerfacecolor() == "none"
    # Sizes we did not run keep their own colour too.
    assert lines["seed 000, T=16, plateau"].get_color() == fg.worker_colour(16)
    fg.plt.close(fig)


def test_throughput_percentile_and_breakdown_figures(saved: dict, ref: dict) -> None:
    t = max_tables()
    raw = read_only_points(t["points"])
    points = by_points(raw, raw)
    max_figures.throughput_figure(points, "x.pdf", ref["max_throughput"])
    assert {"T=8, client", "T=24, middleware", "seed 000, T=32, peak (220 clients)"} <= set(
        legend_texts(saved["x.pdf"])
    )
    pct = percentiles(by_points(t["histograms"], raw), by_points(t["windows"], raw), points)
    max_figures.percentile_figure(pct, "p.pdf")
    left, right = saved["p.pdf"].axes
    assert (left.get_title(), right.get_title()) == ("median", "90th percentile")
    assert left.get_ylim() == right.get_ylim()
    max_figures.breakdown_figure(points[points["side"] == "middleware"], "b.pdf")
    assert legend_texts(saved["b.pdf"]) == list(max_figures.COMPONENTS.values())
    queue = saved["b.pdf"].axes[0].containers[1]  # queue: 400 µs raw, 0.2 ms in study time
    assert queue.lines[0].get_ydata().tolist() == pytest.approx([0.2] * 4)
