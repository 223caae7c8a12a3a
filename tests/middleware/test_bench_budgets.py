"""scripts/bench_budgets.py: JMH's results (a real -prof gc JSON, recorded under a CPU cap, so
its times are slow) beside the budgets, and its exit codes: 0 within, 1 over, 2 missing."""

from __future__ import annotations

from pathlib import Path

import pytest

from ..pipeline.scripts import REPO, load_file

RESULTS = Path(__file__).resolve().parent / "fixtures" / "jmh-gc.json"


bb = load_file(REPO / "scripts" / "bench_budgets.py", "bench_budgets")


def budgets(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "budgets.yaml"
    path.write_text(text)
    return path


def check(tmp_path: Path, text: str) -> int:
    return bb.main(["--budgets", str(budgets(tmp_path, text)), "--results", str(RESULTS)])


def test_within_budget(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = check(
        tmp_path,
        # 88.06 B: the 0.06 are a background thread's bytes spread over the operations.
        "ParserBenchmark.decodeGet: {step: decode, ns: 20000, bytes: 88}\n"
        "RoutingBenchmark.replicas: {step: route, ns: 1000, bytes: 0.5}\n",
    )
    out = capsys.readouterr().out
    assert code == 0
    # One row per parameter set, with the allocation JMH measured (88 B for one GET).
    assert out.count("replicas") == 2 and "servers=7" in out
    assert "88.1" in out and "OVER" not in out


def test_over_a_budget_in_time_or_bytes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert check(tmp_path, "ParserBenchmark.decodeGet: {step: decode, ns: 20000, bytes: 0}\n") == 1
    assert "OVER" in capsys.readouterr().out
    assert check(tmp_path, "RoutingBenchmark.replicas: {step: route, ns: 400, bytes: 1}\n") == 1


def test_a_budgeted_benchmark_without_a_result(tmp_path: Path) -> None:
    text = "StatsBenchmark.recordGetTurn: {step: record, ns: 500, bytes: 0}\n"
    assert check(tmp_path, text) == 2


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("decodeGet: {step: decode, ns: 1, bytes: 0}\n", "is not Class.method"),
        ("ParserBenchmark.decodeGet: {step: decode, ns: 1}\n", "exactly step, ns and bytes"),
        ("ParserBenchmark.decodeGet: {step: d, ns: fast, bytes: 0}\n", "are numbers"),
        ("[]\n", "expected a mapping"),
    ],
)
def test_a_bad_budgets_file_is_named(tmp_path: Path, text: str, message: str) -> None:
    with pytest.raises(SystemExit, match=message):
        check(tmp_path, text)


def test_a_file_that_is_not_jmh_json(tmp_path: Path) -> None:
    bad = tmp_path / "jmh.json"
    bad.write_text("{}")
    path = budgets(tmp_path, "ParserBenchmark.decodeGet: {step: decode, ns: 1, bytes: 0}\n")
    with pytest.raises(SystemExit, match="not a JMH JSON result file"):
        bb.main(["--budgets", str(path), "--results", str(bad)])
