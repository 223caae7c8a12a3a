"""The `mwlab model` and `mwlab factorial` commands with the exact names and keys tools rely on."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from analysis.models import mva, queueing
from tests.analysis.test_factorial import JAIN

ROOT = Path(__file__).resolve().parents[2]


def mwlab(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mwlab", *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=False,
        timeout=60,
    )


def test_model_mm1_json() -> None:
    proc = mwlab("model", "mm1", "--arrival-rate", "125", "--service-rate", "500", "--json")
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    expected = queueing.mm1(125, 500)
    for key in (
        "utilization",
        "prob_queueing",
        "mean_jobs_in_system",
        "std_jobs_in_system",
        "mean_jobs_in_queue",
        "std_jobs_in_queue",
        "mean_response_time",
        "std_response_time",
        "mean_waiting_time",
        "std_waiting_time",
        "mean_busy_period",
        "std_busy_period",
        "mean_jobs_per_busy_period",
        "std_jobs_per_busy_period",
    ):
        assert out[key] == pytest.approx(getattr(expected, key)), key
    assert set(out["response_time_quantiles"]) >= {"0.5", "0.9", "0.95", "0.99"}
    assert out["response_time_quantiles"]["0.9"] == pytest.approx(2.3026 / 375, rel=1e-4)


def test_model_mmm_json() -> None:
    proc = mwlab(
        "model", "mmm", "--arrival-rate", "10", "--service-rate", "3", "--servers", "4", "--json"
    )
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    for key in (
        "utilization",
        "prob_queueing",
        "p0",
        "mean_jobs_in_system",
        "mean_jobs_in_queue",
        "mean_response_time",
        "mean_waiting_time",
    ):
        assert key in out
    assert out["prob_queueing"] == pytest.approx(0.6577216521967902, rel=1e-9)


def test_model_mva_json(tmp_path) -> None:
    spec = tmp_path / "net.yaml"
    spec.write_text(
        "stations:\n"
        "  - {name: cpu, kind: queue, service_time: 0.125, visits: 16}\n"
        "  - {name: disk_a, kind: queue, service_time: 0.3, visits: 10}\n"
        "  - {name: disk_b, kind: queue, service_time: 0.2, visits: 5}\n"
        "  - {name: pool, kind: queue, service_time: 0.5, servers: 4}\n"
        "  - {name: lan, kind: delay, service_time: 0.01}\n"
    )
    proc = mwlab(
        "model", "mva", "--network", str(spec), "--clients", "20", "--think-time", "4", "--json"
    )
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    expected = mva.solve(mva.Network.load(spec), 20, 4.0)
    assert out["throughput"] == pytest.approx(expected.throughput)
    assert out["response_time"] == pytest.approx(expected.response_time)
    assert set(out["stations"]) == {"cpu", "disk_a", "disk_b", "pool", "lan"}
    for name, st in out["stations"].items():
        for key in ("response_time", "queue_length", "utilization", "throughput"):
            assert st[key] == pytest.approx(getattr(expected.stations[name], key)), (name, key)
    assert out["stations"]["pool"]["utilization"] == pytest.approx(out["throughput"] * 0.5 / 4)


def test_model_errors_are_reported(tmp_path) -> None:
    proc = mwlab("model", "mm1", "--arrival-rate", "5", "--service-rate", "4", "--json")
    assert proc.returncode == 1
    assert "utilisation" in proc.stderr
    bad = tmp_path / "bad.yaml"
    bad.write_text("stations:\n  - {name: cpu, kind: queue}\n")
    proc = mwlab("model", "mva", "--network", str(bad), "--clients", "3")
    assert proc.returncode == 1
    assert str(bad) in proc.stderr and "service_time" in proc.stderr


def test_factorial_json_and_table(tmp_path) -> None:
    data = tmp_path / "jain.csv"
    JAIN.to_csv(data, index=False)
    proc = mwlab(
        "factorial",
        "--data",
        str(data),
        "--response",
        "perf",
        "--factors",
        "memory,cache",
        "--alpha",
        "0.10",  # Jain's printed intervals are at 90 %
        "--json",
    )
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert set(out["effects"]) == {"mean", "memory", "cache", "memory:cache"}
    assert set(out["variation"]) == {"memory", "cache", "memory:cache", "error"}
    assert out["effects"]["memory"] == pytest.approx(21.5)
    assert sum(out["variation"].values()) == pytest.approx(1.0)
    lo, hi = out["confidence_intervals"]["memory"]
    assert lo == pytest.approx(19.58, abs=0.011) and hi == pytest.approx(23.41, abs=0.011)

    proc = mwlab(
        "factorial",
        "--data",
        str(data),
        "--response",
        "perf",
        "--factors",
        "memory,cache",
        "--high",
        "cache=1",
        "--alpha",
        "0.05",
        "--plot",
        str(tmp_path / "d.png"),
    )
    assert proc.returncode == 0, proc.stderr
    assert "memory:cache" in proc.stdout and "-9.5" in proc.stdout
    assert (tmp_path / "d.png").stat().st_size > 0


def test_factorial_bad_input(tmp_path) -> None:
    data = tmp_path / "x.csv"
    JAIN.iloc[:-2].to_csv(data, index=False)
    proc = mwlab(
        "factorial", "--data", str(data), "--response", "perf", "--factors", "memory,cache"
    )
    assert proc.returncode == 1
    assert str(data) in proc.stderr and "unequal replications" in proc.stderr


@pytest.mark.parametrize(
    "cmd", [["model"], ["model", "mm1"], ["model", "mmm"], ["model", "mva"], ["factorial"]]
)
def test_help(cmd: list[str]) -> None:
    proc = mwlab(*cmd, "--help")
    assert proc.returncode == 0 and "Usage" in proc.stdout


def _findings_json(path: Path, verdicts: dict[str, str]) -> Path:
    rows = [
        {"id": k, "verdict": v, "estimate": 0.1, "ci_low": -0.1, "ci_high": 0.3,
         "repetitions": 1, "needed": 9}
        for k, v in verdicts.items()
    ]  # fmt: skip
    path.write_text(json.dumps({"bottlenecks": [], "findings": rows}))
    return path


def test_verdicts_of_two_builds_flip_only_through_inconclusive(tmp_path: Path) -> None:
    a = _findings_json(tmp_path / "a.json", {"x": "reproduced", "y": "inconclusive"})
    b = _findings_json(tmp_path / "b.json", {"x": "inconclusive", "y": "contradicted"})
    proc = mwlab("verdicts", str(a), str(b), "--json")
    assert proc.returncode == 0, proc.stderr
    rows = {r["id"]: r for r in json.loads(proc.stdout)}
    assert rows["x"]["flipped"] and not rows["x"]["clash"]
    clash = _findings_json(tmp_path / "c.json", {"x": "contradicted", "y": "inconclusive"})
    proc = mwlab("verdicts", str(a), str(clash))
    assert proc.returncode == 1
    assert "reproduced in one build and contradicted in the other: x" in proc.stderr
    (tmp_path / "bad.json").write_text("{}")
    proc = mwlab("verdicts", str(a), str(tmp_path / "bad.json"))
    assert proc.returncode == 1 and "findings" in proc.stderr
