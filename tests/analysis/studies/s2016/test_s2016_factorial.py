"""The 2016 factorial design on hand-made runs: the data, the effects table, the numbers,
and the incomplete design that is not analysed."""

from __future__ import annotations

import itertools
from pathlib import Path

import pandas as pd

from analysis.studies.s2016 import factorial

LEVELS = {
    "level_servers": ("3", "7"),
    "level_replication": ("none", "full"),
    "level_writes": ("1", "10"),
}


def raw_runs(repetitions: int = 2, servers: tuple[str, ...] = ("3", "7")) -> pd.DataFrame:
    """Raw throughput 1000 + 300·S + 50·Rep − 100·w (±5 by repetition, which cancels in the
    effects), at s = 0.5; a middleware row and a failed run that must be left out."""
    rows, order = [], 0
    levels = {**LEVELS, "level_servers": servers}
    for combo in itertools.product(*levels.values()):
        xs, xr, xw = (
            1 if v == hi[-1] else -1 for v, hi in zip(combo, LEVELS.values(), strict=True)
        )
        for rep in range(repetitions):
            order += 1
            x = 1000 + 300 * xs + 50 * xr - 100 * xw + (5 if rep else -5)
            rows.append(
                {
                    **dict(zip(levels, combo, strict=True)),
                    "side": "client",
                    "type": "all",
                    "status": "ok",
                    "throughput_ops": float(x),
                    "response_us_mean": 20_000.0 + 2000 * xs,
                    "started_at": order,
                    "scale": 0.5,
                    "middleware.workers": 8,
                    "cpu_util_middleware": 0.5,
                    "cpu_util_server": 0.2,
                }
            )
    extra = {**rows[0], "throughput_ops": 1e9}
    rows += [{**extra, "side": "middleware"}, {**extra, "status": "failed"}]
    return pd.DataFrame(rows)


def test_the_data_keep_the_ok_client_runs_with_the_factors_named() -> None:
    data = factorial.design_data(raw_runs())
    assert len(data) == 16
    assert {"S", "Rep", "w", "response_ms"} <= set(data.columns)
    assert data["response_ms"].max() == 11.0  # 22 ms raw, times s = 0.5
    assert data["throughput_ops"].max() == 2 * (1000 + 300 + 50 + 100 + 5)


def test_the_report_on_a_replicated_design(ref: dict, tmp_path: Path) -> None:
    block = ref["models"]["factorial"]
    report = factorial.report(raw_runs(), block, str(tmp_path / "diag.pdf"))
    n = report.numbers
    assert (n["SixteenFactTopTerm"], n["SixteenFactReplications"]) == ("S", "2")
    assert n["SixteenFactLevels"] == (
        r"Factors at $-1$/$+1$: $S$ = 3/7 servers, Rep = none/full replication, $w$ = 1/10\,\%"
        " writes."
    )
    assert n["SixteenFactWritesEffect"] == "-200"  # −100 raw, doubled in the study's time
    error = n["SixteenFactErrorShare"]
    assert n["SixteenFactSentence"].endswith(f"the experimental error explains {error}.")
    assert n["SixteenFactErrorSentence"].startswith("The experimental error explains")
    assert n["SixteenSeedFactTable"] == block["table"]
    lines = report.table.splitlines()
    assert lines[2].startswith(r"Term & $q$ ($X$, ops/s) & CI 95\,\% & Var.")
    assert next(ln for ln in lines if ln.startswith("S & ")).startswith("S & 600* & [")
    assert "S & " in report.seed_table
    assert (tmp_path / "diag.pdf").stat().st_size > 0


def test_one_repetition_drops_the_interval_columns(ref: dict, tmp_path: Path) -> None:
    report = factorial.report(raw_runs(1), ref["models"]["factorial"], str(tmp_path / "d.pdf"))
    lines = report.table.splitlines()
    assert lines[2] == r"Term & $q$ ($X$, ops/s) & Var. & $q$ ($R$, ms) & Var. \\"
    assert r"error &  & n/a &  & n/a \\" in lines
    # Term, effect and share on X, then on R: no interval cell left.
    cells = next(ln for ln in lines if ln.startswith("S & ")).split(" & ")
    assert len(cells) == 5 and cells[1] == "600" and not any("[" in c for c in cells)
    n = report.numbers
    assert n["SixteenFactLevels"].endswith(
        "With one repetition the effects have no confidence intervals."
    )
    assert n["SixteenFactErrorSentence"].startswith("With one repetition our design has no error")


def test_an_incomplete_design_is_not_analysed(ref: dict, saved: dict) -> None:
    report = factorial.report(raw_runs(servers=("3",)), ref["models"]["factorial"], "d.pdf")
    assert report.table == "\\emph{not analysed: not enough levels or repetitions}\n"
    n = report.numbers
    assert n["SixteenFactSentence"].startswith("The design is incomplete in this run (")
    assert n["SixteenFactCompareSentence"] == "Our design is incomplete in this run."
    assert (n["SixteenFactReplications"], n["SixteenFactErrorSentence"]) == ("--", "")
    assert list(n)[:4] == [
        "SixteenFactAlpha",
        "SixteenFactReplications",
        "SixteenFactLevels",
        "SixteenFactSentence",
    ]
    # The seed's design is still set out beside ours.
    assert "S & -- & -- &" in report.seed_table
    text = saved["d.pdf"].axes[0].texts[0].get_text()
    assert text == "not enough levels or repetitions"
