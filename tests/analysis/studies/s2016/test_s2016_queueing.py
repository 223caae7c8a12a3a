"""The section's queueing report: which tables each model is given, in which time base, and
how their numbers and predictions are gathered; the MVA figure."""

from __future__ import annotations

import pandas as pd
import pytest

from analysis.studies.s2016 import queueing as q
from tests.analysis.studies.s2016.conftest import legend_texts, max_tables


def test_the_mva_figure_draws_model_and_measurement_per_pool_size(saved: dict) -> None:
    measured = pd.DataFrame(
        {
            "clients_total": [10, 20],
            "throughput_ops_mean": [100.0, 150.0],
            "throughput_ops_ci_low": [90.0, 140.0],
            "throughput_ops_ci_high": [110.0, 160.0],
            "response_us_mean_mean": [2000.0, 4000.0],
            "response_us_mean_ci_low": [2000.0, 4000.0],
            "response_us_mean_ci_high": [2000.0, 4000.0],
        }
    )
    curve = q.MVACurve(8, [10, 20], [110.0, 160.0], [1.5, 3.5], measured)
    q.mva_figure([curve], "mva.pdf")
    fig = saved["mva.pdf"]
    assert legend_texts(fig) == ["$T=8$, MVA", "$T=8$, measured"]
    response = fig.axes[1]
    assert response.containers[0].lines[0].get_ydata().tolist() == [2.0, 4.0]  # ms
    assert response.get_ylim()[0] == 0


def test_the_report_gives_each_model_its_tables_and_gathers_their_parts(
    monkeypatch: pytest.MonkeyPatch, saved: dict
) -> None:
    given: dict[str, object] = {}

    def part(name: str) -> q.Part:
        return q.Part(name, {f"N{name}": name}, {f"M{name}": name})

    def open_models(d: q.Frames, seed: dict) -> q.Part:
        given["open"], given["mm1"] = d, seed
        return part("open")

    def mva_models(d: q.Frames) -> tuple[list, q.Part, dict]:
        given["mva"] = d
        return [], part("mva"), {24: "lightest"}

    def mva_seed(d: q.Frames, seed: dict, lightest: dict) -> q.Part:
        given["lightest"] = lightest
        return part("seed")

    monkeypatch.setattr(q, "open_models", open_models)
    monkeypatch.setattr(q, "mmm_per_servers", lambda d: given.setdefault("repl", d))
    monkeypatch.setattr(q, "mmm_table", lambda ours, seed: part("mmm"))
    monkeypatch.setattr(q, "mva_models", mva_models)
    monkeypatch.setattr(q, "mva_seed", mva_seed)
    top = max_tables()
    top["queue"] = pd.DataFrame(
        {
            "run": top["runs"]["run"],
            "point": top["pools"]["point"],
            "window": 1,
            "queue_length_mean": 1.0,
        }
    )
    repl = {t: top[t] for t in q.REPLICATION_TABLES}
    seeds = {"mm1": "mm1", "mmm": "mmm", "mva": "mva"}
    report = q.report({t: top[t] for t in q.MAX_TABLES}, repl, seeds, "mva.pdf")
    assert set(given["open"]) == set(q.OPEN_TABLES) and given["mm1"] == "mm1"
    assert set(given["mva"]) == set(q.MVA_TABLES)
    # The read-only family's timed load: clients' requests and the middleware's GETs only,
    # in the study's time (s = 0.5: throughput doubled).
    points = given["open"]["points"]
    assert set(points["type"]) == {"all"}
    assert points["throughput_ops_mean"].max() == 6200.0
    assert given["repl"]["points"]["time_base"].eq("study").all()
    assert "mva.pdf" in saved
    assert [report.open.tabular, report.mmm.tabular, report.mva.tabular] == ["open", "mmm", "mva"]
    assert list(report.numbers) == ["Nopen", "Nmmm", "Nmva", "Nseed"]
    # The MVA's entries are its predictions at each pool size's lightest load, with their
    # validity; the seed's MVA is judged by that lightest load.
    assert list(report.models) == ["Mopen", "Mmmm", "Mmva", "Mseed"]
    assert given["lightest"] == {24: "lightest"}


def test_the_mva_figures_axis_labels_stay_on_the_figure(saved: dict) -> None:
    # Four pool sizes: the legend takes two rows of the figure's height from the axes.
    columns = {
        f"{metric}_{stat}": [1.0, 2.0]
        for metric in ("throughput_ops", "response_us_mean")
        for stat in ("mean", "ci_low", "ci_high")
    }
    measured = pd.DataFrame(columns | {"clients_total": [10, 400]})
    curves = [q.MVACurve(t, [10, 400], [1e3, 2e4], [1.0, 400.0], measured) for t in (8, 16, 24, 32)]
    q.mva_figure(curves, "mva.pdf")
    fig = saved["mva.pdf"]
    renderer = fig.canvas.get_renderer()
    fig.draw(renderer)
    page = fig.bbox
    for ax in fig.axes:
        for label in (ax.xaxis.label, ax.yaxis.label):
            box = label.get_window_extent(renderer)
            assert page.x0 <= box.x0 and box.x1 <= page.x1, label.get_text()
            assert page.y0 <= box.y0 and box.y1 <= page.y1, label.get_text()
