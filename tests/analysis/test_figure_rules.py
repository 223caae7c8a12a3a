"""What every figure of the report keeps to: a worker count has one colour in all of them,
legends list counts in numeric order, and a figure of a seed's result shows the seed's
values, labelled with the seed."""

from __future__ import annotations

import math
from pathlib import Path

import matplotlib.colors as mcolors
import numpy as np
import pandas as pd
import pytest
import yaml
from scipy import stats

from analysis.aggregate import CI_LEVEL
from analysis.report import figures as fg
from analysis.studies.s2015 import baseline as baseline2015
from analysis.studies.s2016 import max_figures
from analysis.studies.s2016.queueing import MVACurve, mva_figure
from analysis.studies.s2016.tables import WORKERS
from analysis.studies.s2018 import baseline_maxima, mw_statistics
from analysis.studies.s2018 import seed as seed2018
from analysis.studies.s2018 import writes as writes2018

ROOT = Path(__file__).resolve().parents[2]
METRICS = ("throughput_ops", "response_us_mean", "queue_us_mean", "server_us_mean", "queue_len")


def reference(year: int) -> dict:
    return yaml.safe_load((ROOT / "workflows" / f"reference{year}.yaml").read_text())


def points(workers: list[int], **levels: object) -> pd.DataFrame:
    """A points table with both sides at 6 and 48 clients per worker count, every metric
    with a confidence interval; the worker count also as a "<n> WT" series."""
    rows = []
    for w in workers:
        for n in (6, 48):
            for side in ("client", "middleware"):
                row: dict[str, object] = {
                    "point": f"{w}-{n}",
                    "side": side,
                    "clients_total": n,
                    "clients": n,
                    WORKERS: w,
                    "workers": w,
                    "series": f"{w} WT",
                    **levels,
                }
                for i, m in enumerate(METRICS):
                    value = 100.0 * w + n + i
                    row |= {f"{m}_mean": value, f"{m}_ci_low": value - 1, f"{m}_ci_high": value + 1}
                rows.append(row)
    return pd.DataFrame(rows)


def lines_by_label(fig: fg.plt.Figure) -> dict[str, str]:
    """The colour of each labelled line of a figure's axes (a plain line, or the data line
    of a line with error bars), by its label."""
    found = {
        str(ln.get_label()): mcolors.to_hex(ln.get_color())
        for ax in fig.axes
        for ln in ax.get_lines()
        if not str(ln.get_label()).startswith("_")
    }
    for ax in fig.axes:
        for c in ax.containers:
            if c.get_label() and not c.get_label().startswith("_") and c.lines[0] is not None:
                found[c.get_label()] = mcolors.to_hex(c.lines[0].get_color())
    return found


def legend_texts(fig: fg.plt.Figure) -> list[str]:
    """The legends' entries as a reader reads them: row by row (Matplotlib fills a legend's
    columns one after the other, as np.array_split cuts its entries)."""
    legends = [lg for lg in (*fig.legends, *(ax.get_legend() for ax in fig.axes)) if lg]
    out = []
    for lg in legends:
        columns = np.array_split([t.get_text() for t in lg.get_texts()], lg._ncols)
        rows = max((len(c) for c in columns), default=0)
        out += [str(c[r]) for r in range(rows) for c in columns if r < len(c)]
    return out


def counts_in(labels: list[str], suffix: str) -> list[float]:
    """The worker counts of the labels that end in `suffix`, in legend order."""
    return [fg.leading_number(t.removeprefix("T=")) for t in labels if t.endswith(suffix)]


def test_each_worker_count_has_its_own_colour_whatever_its_label() -> None:
    counts = [1, 2, 4, 8, 16, 24, 32, 64, 128]
    assert len({fg.worker_colour(n) for n in counts}) == len(counts)
    assert fg.worker_colour("32 WT") == fg.worker_colour(32) == fg.worker_colour(32.0)
    assert fg.worker_colour(32) != fg.worker_colour(64)
    # A count outside the table still has a colour of its own, fixed by the count alone.
    assert fg.worker_colour(48) == fg.worker_colour("48 WT") != fg.worker_colour(40)


def test_levels_and_legends_sort_counts_as_numbers() -> None:
    assert fg.levels_sorted(["64 WT", "16 WT", "8 WT", "32 WT"]) == [
        "8 WT",
        "16 WT",
        "32 WT",
        "64 WT",
    ]
    labels = ["16 WT, client", "32 WT, client", "64 WT, client", "8 WT, client", "seed 004",
              "16 WT, middleware", "8 WT, middleware"]  # fmt: skip
    _, ordered = fg.numeric_order(list(range(len(labels))), labels)
    assert ordered == ["8 WT, client", "16 WT, client", "32 WT, client", "64 WT, client",
                       "seed 004", "8 WT, middleware", "16 WT, middleware"]  # fmt: skip


def test_32_workers_have_one_colour_in_the_2018_and_2016_figures(
    saved: dict[str, fg.plt.Figure],
) -> None:
    pts = points([8, 16, 32, 64], level_workload="write-only", level_setup="one_middleware")
    writes2018.writes_figure(pts, seed2018.writes_figure_points(reference(2018)), "w18.pdf")
    mw_statistics.middleware_statistics(pts[pts["side"] == "middleware"], "stats18.pdf")
    max_figures.throughput_figure(pts, "max16.pdf", reference(2016)["max_throughput"])
    curve = MVACurve(32, [6, 48], [1.0, 2.0], [1.0, 2.0], pts[pts["side"] == "client"])
    mva_figure([curve], "mva16.pdf")
    want = fg.worker_colour(32)
    w18, stats18 = lines_by_label(saved["w18.pdf"]), lines_by_label(saved["stats18.pdf"])
    max16, mva16 = lines_by_label(saved["max16.pdf"]), lines_by_label(saved["mva16.pdf"])
    assert w18["32 WT, client"] == w18["32 WT, middleware"] == want
    assert w18["seed 004 max., 32 WT, client"] == want  # the seed's maximum at 32 too
    assert stats18["32 WT"] == want
    assert max16["T=32, client"] == max16["seed 000, T=32, peak (220 clients)"] == want
    assert mva16["$T=32$, measured"] == mva16["$T=32$, MVA"] == want
    assert w18["64 WT, client"] == max16["T=64, client"] != want


def test_legends_list_worker_counts_in_numeric_order(saved: dict[str, fg.plt.Figure]) -> None:
    pts = points([8, 16, 32, 64], level_workload="read-only", level_setup="one_middleware")
    mw = pts.assign(**{"middleware.workers": pts["workers"]})
    direct = pts[pts["side"] == "client"].assign(level_setup="one_server")
    baseline_maxima.figures(direct, mw, reference(2018), "d.pdf", ["one.pdf", "two.pdf"])
    writes2018.writes_figure(pts, seed2018.writes_figure_points(reference(2018)), "w18.pdf")
    max_figures.throughput_figure(pts, "max16.pdf", reference(2016)["max_throughput"])
    for path, suffix in (("one.pdf", "WT, client"), ("w18.pdf", "WT, middleware"),
                         ("max16.pdf", ", client")):  # fmt: skip
        counts = counts_in(legend_texts(saved[path]), suffix)
        assert len(counts) >= 4 and counts == sorted(counts), (path, counts)


def test_figures_of_seed_results_show_the_seeds_values(saved: dict[str, fg.plt.Figure]) -> None:
    pts = points([8, 24, 32, 64], level_workload="read-only", level_setup="one_middleware")
    mx = reference(2016)["max_throughput"]
    pct = pts[pts["side"] == "middleware"].assign(
        p50_mean=1.0, p50_ci_low=0.9, p50_ci_high=1.1, p90_mean=2.0, p90_ci_low=1.9,
        p90_ci_high=2.1,
    )  # fmt: skip
    max_figures.percentile_figure(pct, "pct16.pdf", mx)
    seeds = seed2018.baseline_queue_points(reference(2018))
    mw_statistics.middleware_statistics(pts[pts["side"] == "middleware"], "stats18.pdf", seeds)
    rows = pts[pts["side"] == "client"].assign(size="small")
    baseline2015.figure(rows, reference(2015), {}, "base15.pdf")
    pct16 = [ln for ax in saved["pct16.pdf"].axes for ln in ax.get_lines()
             if ln.get_label().startswith("seed 000")]  # fmt: skip
    # One seed marker in each panel: the median and the 90th percentile at 260 clients.
    assert [ln.get_ydata()[0] for ln in pct16] == [mx["response_ms_p50"], mx["response_ms_p90"]]
    assert all(ln.get_linestyle() == "None" for ln in pct16)
    stats = lines_by_label(saved["stats18.pdf"])
    assert stats["seed 004 (Table 5), 64 WT"] == fg.worker_colour(64)
    assert any(t.startswith("seed 003") for t in legend_texts(saved["base15.pdf"]))
    # Without the seed's values the figure has no seed series: the test above can fail.
    mw_statistics.middleware_statistics(pts[pts["side"] == "middleware"], "bare.pdf")
    assert not any(t.startswith("seed") for t in lines_by_label(saved["bare.pdf"]))


def test_headline_points_carry_their_intervals(saved: dict[str, fg.plt.Figure]) -> None:
    pts = points([8, 32], level_workload="read-only", level_setup="one_middleware")
    max_figures.throughput_figure(pts, "max16.pdf", reference(2016)["max_throughput"])
    (ax,) = saved["max16.pdf"].axes
    bars = [c for c in ax.containers if c.get_label() == "T=32, client"]
    assert bars and bars[0].has_yerr
    segments = bars[0].lines[2][0].get_segments()
    assert [s[1][1] - s[0][1] for s in segments] == pytest.approx([2.0, 2.0])
    assert not math.isnan(segments[0][0][1])


def test_dodged_lines_at_equal_values_stay_apart() -> None:
    pts = points([8], level_workload="read-only", level_setup="one_middleware")
    # Both sides with the same throughput: without a dodge one line lies on the other.
    pts[["throughput_ops_mean", "throughput_ops_ci_low", "throughput_ops_ci_high"]] = 1000.0
    for dodge, apart in ((0.0, False), (0.5, True)):
        fig, axes = fg.figure()
        ax = axes[0][0]
        fg.error_lines(ax, pts, "clients_total", "throughput_ops", "series", dodge=dodge)
        xs = [tuple(c.lines[0].get_xdata()) for c in ax.containers]
        assert len(xs) == 2 and (xs[0] != xs[1]) is apart
        fg.plt.close(fig)


def test_counts_inside_labels_sort_as_numbers_and_legends_read_row_by_row() -> None:
    assert fg.levels_sorted(["T=8", "T=32", "T=16", "T=24"]) == ["T=8", "T=16", "T=24", "T=32"]
    assert fg.levels_sorted(["S=10, full", "S=5, full", "S=5, none"]) == [
        "S=5, full",
        "S=5, none",
        "S=10, full",
    ]
    # Matplotlib fills columns first: in 4 columns of 2 rows the rows read 8 16 24 32.
    entries = ["8 MVA", "16 MVA", "24 MVA", "32 MVA", "8 m", "16 m", "24 m", "32 m"]
    laid = fg.by_rows(entries, 4)
    rows = [[laid[c * 2 + r] for c in range(4)] for r in range(2)]
    assert rows == [entries[:4], entries[4:]]
    assert fg.by_rows(list("abcde"), 3) == ["a", "d", "b", "e", "c"]


def test_mva_legend_rows_list_pool_sizes_in_numeric_order(
    saved: dict[str, fg.plt.Figure],
) -> None:
    pts = points([8, 16, 24, 32], level_workload="read-only", level_setup="one_middleware")
    client = pts[pts["side"] == "client"]
    curves = [
        MVACurve(w, [6, 48], [1.0, 2.0], [1.0, 2.0], client[client["workers"] == w])
        for w in (8, 24, 16, 32)
    ]
    mva_figure(curves, "mva16.pdf")
    (legend,) = saved["mva16.pdf"].legends
    texts = [t.get_text() for t in legend.get_texts()]
    ncols = legend._ncols
    nrows = len(texts) // ncols
    first_row = [texts[c * nrows] for c in range(ncols)]
    assert [fg.leading_number(t.removeprefix("$T=")) for t in first_row] == [8, 16, 24, 32]


def test_the_chosen_point_has_an_interval_from_two_repetitions(
    saved: dict[str, fg.plt.Figure],
) -> None:
    pts = points([24], level_workload="read-only", level_setup="one_middleware")
    pts = pts.assign(repetitions=3, throughput_ops_std=10.0)
    chosen = pts["point"] == "24-48"
    pts.loc[chosen, ["throughput_ops_ci_low", "throughput_ops_ci_high"]] = math.nan
    pts.loc[chosen, "repetitions"] = 2
    max_figures.throughput_figure(pts, "max16.pdf", reference(2016)["max_throughput"], "24-48")
    (ax,) = saved["max16.pdf"].axes
    extra = [c for c in ax.containers if not c.get_label() or c.get_label().startswith("_")]
    half = stats.t.ppf(0.5 + CI_LEVEL / 2, 1) * 10.0 / math.sqrt(2)
    spans = [s[1][1] - s[0][1] for c in extra for s in c.lines[2][0].get_segments()]
    assert spans == pytest.approx([2 * half, 2 * half])  # client and middleware
