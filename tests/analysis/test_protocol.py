"""Where the measurement time went (analysis/protocol.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from analysis.protocol import family_times, run_times, stage_breakdown


def manifest(results: Path, run: str, stage_s: dict, series: str | None = None, attempts=1):
    d = results / "runs" / run
    d.mkdir(parents=True)
    data = {"status": "ok", "duration_s": 5.0, "stage_s": stage_s}
    if series is not None:
        data["series"] = {
            "dir": str((results / "series" / series).resolve()),
            "attempts": [{"launch": f"L{i}"} for i in range(attempts)],
        }
    (d / "run.json").write_text(json.dumps(data))
    return d / "run.json"


def benchmark(path: Path, seconds: float) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"s\th:m:s\n{seconds}\t0:00:00\n")


def test_a_series_job_is_shared_by_its_points_and_an_isolated_run_keeps_its_own(tmp_path):
    r = tmp_path / "results"
    ms = [
        manifest(r, "fam/vc=1/rep1", {"clients": 5.0, "teardown": 1.0}, "fam/all/rep1"),
        manifest(r, "fam/vc=8/rep1", {"clients": 5.0, "teardown": 1.0}, "fam/all/rep1", 3),
        manifest(r, "solo/x=1/rep1", {"clients": 8.0, "teardown": 4.0}),
    ]
    benchmark(r / "benchmarks" / "series" / "fam" / "all" / "rep1.tsv", 14.0)
    benchmark(r / "benchmarks" / "runs" / "solo" / "x=1" / "rep1.tsv", 15.0)
    runs = run_times(r, ms)
    assert runs.set_index("run")["wall_s"].to_dict() == {
        "fam/vc=1/rep1": 7.0,
        "fam/vc=8/rep1": 7.0,
        "solo/x=1/rep1": 15.0,
    }
    fam = family_times(runs).set_index("family")
    assert fam.loc["fam", "series"] == 1 and fam.loc["solo", "series"] == 0
    assert fam.loc["fam", "reruns"] == 2  # three attempts of one point
    assert fam.loc["fam", "wall_s_per_run"] == pytest.approx(7.0)
    stages = stage_breakdown(runs)
    assert list(stages.index) == ["clients", "teardown"]  # run order
    assert stages["clients"] == pytest.approx(6.0)


def test_a_job_without_a_benchmark_has_no_wall_time(tmp_path):
    r = tmp_path / "results"
    runs = run_times(r, [manifest(r, "solo/x=1/rep1", {"clients": 1.0})])
    assert runs["wall_s"].isna().all()
    assert family_times(runs)["wall_min"].isna().all()


def test_a_series_own_clock_counts_rather_than_its_jobs_wait(tmp_path):
    r = tmp_path / "results"
    ms = [manifest(r, f"fam/vc={v}/rep1", {"clients": 5.0}, "fam/all/rep1") for v in (1, 8)]
    benchmark(r / "benchmarks" / "series" / "fam" / "all" / "rep1.tsv", 100.0)  # 80 s waited
    own = r / "series" / "fam" / "all" / "rep1" / "run.json"
    own.parent.mkdir(parents=True)
    own.write_text(json.dumps({"status": "ok", "duration_s": 20.0}))
    assert run_times(r, ms)["wall_s"].tolist() == [10.0, 10.0]
