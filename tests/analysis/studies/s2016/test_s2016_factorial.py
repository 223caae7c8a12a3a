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
    # Factors at -1/+1: S = 3/7 servers, Rep = none/full replication, w = 1/10 % writes.
    assert [n[f"SixteenFact{end}{name}"] for name in ("Servers", "Replication", "Writes")
            for end in ("Low", "High")] == ["3", "7", "none", "full", "1", "10"]  # fmt: skip
    assert (n["SixteenFactCase"], n["SixteenFactIntervalsCase"]) == ("replicated", "given")
    assert n["SixteenFactWritesEffect"] == "-200"  # −100 raw, doubled in the study's time
    assert n["SixteenFactWritesCase"] == "significant"
    assert n["SixteenFactErrorShare"].endswith(r"\,\%")
    # Servers explain most of ours, writes most of the seed's; the middleware's CPU (0.5 at
    # both server counts) does not grow with the servers.
    assert (n["SixteenFactCompareCase"], n["SixteenFactCpuCase"]) == ("different", "other")
    assert (n["SixteenFactCpuLow"], n["SixteenFactServerCpuHigh"]) == (r"50\,\%", r"20\,\%")
    # S·(T+1) read and write threads: 3·9 and 7·9.
    assert (n["SixteenFactThreadsCase"], n["SixteenFactThreadsLow"]) == ("known", "27")
    assert n["SixteenFactThreadsHigh"] == "63"
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
    # One repetition: no error term and no confidence intervals.
    assert (n["SixteenFactCase"], n["SixteenFactIntervalsCase"]) == ("single", "none")
    assert (n["SixteenFactWritesCase"], n["SixteenFactErrorShare"]) == ("untested", "n/a")


def test_more_middleware_cpu_with_more_servers_is_named(ref: dict, tmp_path: Path) -> None:
    runs = raw_runs(2)
    runs["cpu_util_middleware"] = runs["level_servers"].map({"3": 0.5, "7": 0.9})
    n = factorial.report(runs, ref["models"]["factorial"], str(tmp_path / "d.pdf")).numbers
    assert (n["SixteenFactCpuCase"], n["SixteenFactCpuHigh"]) == ("more", r"90\,\%")
    unknown = raw_runs(2).assign(cpu_util_middleware=float("nan"))
    n = factorial.report(unknown, ref["models"]["factorial"], str(tmp_path / "d.pdf")).numbers
    assert n["SixteenFactCpuCase"] == "unknown"


def test_an_incomplete_design_is_not_analysed(ref: dict, saved: dict) -> None:
    report = factorial.report(raw_runs(servers=("3",)), ref["models"]["factorial"], "d.pdf")
    # The section says why; the table is only a comment and the figure is blank.
    assert report.table.startswith("%") and report.table.count("\n") == 1
    n = report.numbers
    assert (n["SixteenFactCase"], n["SixteenFactReplications"]) == ("incomplete", "--")
    assert n["SixteenFactProblem"] == "factor 'S' must have exactly two values, found ['3']"
    assert n["SixteenFactLowServers"] == "--"
    assert "SixteenFactCompareCase" not in n
    # The seed's design is still set out beside ours.
    assert "S & -- & -- &" in report.seed_table
    assert len(saved["d.pdf"].axes[0].texts) == 0
