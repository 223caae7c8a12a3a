"""The 2^k r designs of the 2018 study (analysis.studies.s2018.factorial) on a small
hand-made design beside the study's Table 11."""

from __future__ import annotations

import itertools
from pathlib import Path

import pandas as pd
import pytest

from analysis.report import figures as fg
from analysis.studies.s2018 import factorial


def design_runs(workload: str = "write-only", scale: float = 1.0) -> pd.DataFrame:
    """Two repetitions of every combination: throughput 1000 + 400 A + 100 C ± 10 (the
    repetition's noise), response 10 - 2 A ms; one failed run and a middleware row beside."""
    rows = []
    levels = itertools.product((1, 3), (1, 2), (8, 32), (0, 1))
    for i, (servers, middlewares, workers, rep) in enumerate(levels):
        a, c = (1 if servers == 3 else -1), (1 if workers == 32 else -1)
        rows.append(
            {
                "run": f"r{i}",
                "side": "client",
                "type": "all",
                "status": "ok",
                "scale": scale,
                "level_workload": workload,
                "servers": servers,
                "middlewares": middlewares,
                "middleware.workers": workers,
                "repetition": rep,
                "started_at": float(i),
                "throughput_ops": 1000 + 400 * a + 100 * c + (10 if rep else -10),
                "response_us_mean": (10 - 2 * a) * 1e3,
            }
        )
    extra = [{**rows[0], "run": "failed", "status": "failed", "throughput_ops": 1.0},
             {**rows[0], "run": "mw", "side": "middleware"}]  # fmt: skip
    return pd.DataFrame(rows + extra)


def test_terms_map_to_the_studys_letters() -> None:
    assert factorial.letters("servers:workers") == "AC"
    assert factorial.study_term("servers:workers") == "A:C"
    assert factorial.study_term("error") == "error"
    assert factorial.describe("middlewares") == "the number of middlewares ($q_{B}$)"


def test_study_runs_keeps_completed_client_runs_in_the_study_time() -> None:
    runs = factorial.study_runs(design_runs(scale=0.5))
    assert len(runs) == 16 and set(runs["side"]) == {"client"}
    assert runs["throughput_ops"].min() == pytest.approx((1000 - 500 - 10) / 0.5)
    assert runs["response_ms"].max() == pytest.approx(12 * 0.5)
    assert set(runs["workers"]) == {8, 32}


def test_study_macros_name_the_studys_largest_share(reference2018: dict) -> None:
    text = "".join(factorial.study_macros(reference2018["factorial"]["write-only"], "Fact"))
    assert "\\newcommand{\\FactStudyTerm}{the number of workers per middleware ($q_{C}$)}" in text
    assert f"\\newcommand{{\\FactStudyShare}}{{{fg.pct(0.5593)}}}" in text
    assert "\\newcommand{\\FactStudyShareCase}{most}" in text  # 55.9 % is a majority


def test_effect_rows_mark_significant_effects_beside_the_study(reference2018: dict) -> None:
    d = factorial.study_runs(design_runs())
    results, error = factorial.analyse(d)
    assert error is None
    rows = factorial.effect_rows(results, reference2018["factorial"]["write-only"])
    by_label = {r[0]: r for r in rows}
    assert list(by_label) == ["$q_0$", "$q_{A}$", "$q_{B}$", "$q_{C}$", "$q_{AB}$",
                              "$q_{AC}$", "$q_{BC}$", "$q_{ABC}$", "error"]  # fmt: skip
    a = by_label["$q_{A}$"]
    assert a[1] == "400*" and a[4] == "-574"  # ours (significant) beside the study's
    assert by_label["$q_{B}$"][1] == "0"  # no effect: its interval holds zero
    assert by_label["$q_0$"][3] == ""  # the mean has no share
    assert by_label["error"][1:3] == ["", ""]


def test_workload_report_without_a_complete_design_shows_the_study_only(
    reference2018: dict, tmp_path: Path
) -> None:
    d = factorial.study_runs(design_runs())
    d = d[d["servers"] == 1].reset_index(drop=True)
    fig = tmp_path / "fact.pdf"
    ref = reference2018["factorial"]
    table, numbers = factorial.workload_report(
        d, ref["write-only"], ref["source"], "FactWriteOnly", str(fig)
    )
    text = "".join(numbers)
    assert fig.stat().st_size > 0
    assert "\\newcommand{\\FactWriteOnlyNoteCase}{incomplete}" in text
    assert "\\newcommand{\\FactWriteOnlyDesignError}{factor" in text
    assert "\\newcommand{\\FactWriteOnlyRuns}{8}" in text
    assert "\\newcommand{\\FactWriteOnlyRepetitions}{2 repetitions}" in text
    assert "\\newcommand{\\FactWriteOnlyDesignCase}{incomplete}" in text
    assert "$q_{A}$ & -- & -- & -- & -574" in table


def test_one_repetition_drops_the_intervals_and_the_error_term(
    reference2018: dict, tmp_path: Path
) -> None:
    runs = design_runs()
    runs = runs[runs["repetition"] == 0]
    # The response time now varies with the workers (C) alone, 20 % of the throughput's.
    workers = runs["middleware.workers"].map({8: -1, 32: 1})
    runs = runs.assign(response_us_mean=(10 + workers) * 1e3)
    d = factorial.study_runs(runs)
    ref = reference2018["factorial"]
    table, numbers = factorial.workload_report(
        d, ref["read-only"], ref["source"], "FactReadOnly", str(tmp_path / "fact.pdf")
    )
    text = "".join(numbers)
    assert "CI" not in table
    assert "\\newcommand{\\FactReadOnlyNoteCase}{nointervals}" in text
    assert "\\newcommand{\\FactReadOnlyDesignCase}{single}" in text
    assert "\\newcommand{\\FactReadOnlyTermCase}{different}" in text
    # 400^2 against 100^2: A explains 94 % of the throughput's variation.
    assert f"\\newcommand{{\\FactReadOnlyThroughputShare}}{{{fg.pct(16 / 17)}}}" in text
    term = "the number of workers per middleware ($q_{C}$)"
    assert f"\\newcommand{{\\FactReadOnlyResponseTerm}}{{{term}}}" in text


def test_report_writes_both_workloads(reference2018: dict, tmp_path: Path) -> None:
    runs = pd.concat([design_runs("read-only"), design_runs("write-only")], ignore_index=True)
    paths = [str(tmp_path / "read.pdf"), str(tmp_path / "write.pdf")]
    section = factorial.report(runs, reference2018["factorial"], *paths)
    assert section._fields == ("table_read", "table_write", "numbers")
    assert all(Path(p).stat().st_size > 0 for p in paths)
    assert "95\\,\\% CI" in section.table_read
    # Throughput 1000 + 400 A + 100 C: A explains most of it, and all of the response time.
    n = section.numbers
    assert "\\newcommand{\\FactReadOnlyDesignCase}{repeated}" in n
    assert "\\newcommand{\\FactReadOnlyThroughputTerm}{the number of servers ($q_{A}$)}" in n
    assert "\\newcommand{\\FactReadOnlyThroughputShareCase}{most}" in n
    assert "\\newcommand{\\FactReadOnlyTermCase}{same}" in n
    assert "\\newcommand{\\FactReadOnlyResponseShare}{100.0\\,\\%}" in n
    # Two repetitions: the intervals stay and the caption needs no note.
    assert "\\newcommand{\\FactWriteOnlyNoteCase}{none}" in n
    assert "\\newcommand{\\FactWriteOnlyDesignError}{--}" in n
