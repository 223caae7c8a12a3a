"""Where the measurement time went (analysis/protocol.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from analysis import protocol
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


def attempt(results: Path, run: str, n: int, seconds: float, status: str = "ok") -> None:
    d = results / "failures" / run / f"attempt-{n}"
    d.mkdir(parents=True)
    doc = {"status": status, "started_at": "2026-11-28T06:00:00+00:00",
           "finished_at": f"2026-11-28T06:00:{seconds:02.0f}+00:00",
           "point": {"duration_s": 24.0}}  # fmt: skip
    (d / "run.json").write_text(json.dumps(doc))


def test_a_run_measured_on_its_own_counts_its_earlier_attempts_and_their_time(tmp_path):
    r = tmp_path / "results"
    # Measured again twice (unstable), the third attempt stands.
    again = manifest(r, "solo/x=1/rep1", {"clients": 8.0})
    probed = {"point": {"duration_s": 24.0}, "cpu": {"machine_speed": {"piece_us_median": 731.0}}}
    again.write_text(json.dumps(json.loads(again.read_text()) | probed))
    attempt(r, "solo/x=1/rep1", 1, 40.0)
    attempt(r, "solo/x=1/rep1", 2, 42.0)
    benchmark(r / "benchmarks" / "runs" / "solo" / "x=1" / "rep1.tsv", 45.0)
    # Failed twice: the second attempt stands, and a copy of it is kept with the first.
    failed = manifest(r, "solo/x=2/rep1", {"clients": 8.0})
    data = json.loads(failed.read_text()) | {"status": "failed"}
    failed.write_text(json.dumps(data))
    attempt(r, "solo/x=2/rep1", 1, 30.0, "failed")
    attempt(r, "solo/x=2/rep1", 2, 31.0, "failed")
    (r / "failures" / "solo" / "x=2" / "rep1" / "interrupted-1").mkdir()  # not an attempt
    benchmark(r / "benchmarks" / "runs" / "solo" / "x=2" / "rep1.tsv", 33.0)
    runs = run_times(r, [again, failed]).set_index("run")
    assert runs["attempts"].to_dict() == {"solo/x=1/rep1": 3, "solo/x=2/rep1": 2}
    assert runs["wall_s"].to_dict() == {"solo/x=1/rep1": 127.0, "solo/x=2/rep1": 63.0}
    assert runs.loc["solo/x=1/rep1", "attempt_s"] == 3 * 24.0  # three attempts of 24 s
    solo = family_times(runs.reset_index()).set_index("family").loc["solo"]
    assert solo["reruns"] == 3
    assert solo["speed_us"] == 731.0  # the probed run's; the other has no probe


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


def test_a_profiles_time_is_predicted_from_the_overhead_and_steps_of_measured_series() -> None:
    # Three measured series of 2, 4 and 6 points: 10 s per series, 2 s per point, 5 s steps.
    rows = []
    for name, n in (("a", 2), ("b", 4), ("c", 6)):
        wall = (10 + 2 * n + 5 * n) / n
        rows += [
            {"family": "f", "run": f"{name}{i}", "series": name, "wall_s": wall,
             "step_s": 5.0, "attempt_s": 5.0}
            for i in range(n)
        ]  # fmt: skip
    # One point of family f needed a second attempt, 1.5 times as long: +7.5 s over 60 s.
    rows[0]["attempt_s"] = 12.5
    rows[0]["wall_s"] += 7.5
    runs = pd.DataFrame(rows)
    plan = pd.DataFrame({"family": ["f"] * 10, "series": ["s"] * 10, "duration_s": [6.0] * 10})
    p = protocol.predict(runs, plan)
    assert (p.points, p.series) == (10, 1)
    assert p.series_s == pytest.approx(10) and p.point_s == pytest.approx(2)
    # 10 + 2 x 10 + 60 s of steps, times the family's 67.5 / 60 attempt seconds per step second.
    assert p.hours * 3600 == pytest.approx(10 + 20 + 60 * 67.5 / 60)
    # Families measured nowhere take every family's ratio.
    other = plan.assign(family="g")
    assert protocol.predict(runs, other).hours == pytest.approx(p.hours)


def test_series_keys_survive_results_moved_elsewhere(tmp_path: Path) -> None:
    from analysis.protocol import series_key

    here = tmp_path / "results" / "quick"
    assert series_key(here.resolve() / "series" / "multiget" / "all" / "rep1", here) == (
        "multiget/all/rep1"
    )
    moved = Path("/elsewhere/results/quick/series/write_throughput/all/rep1")
    assert series_key(moved, here) == "write_throughput/all/rep1"
    with pytest.raises(ValueError, match="not a series folder"):
        series_key(Path("/elsewhere/runs/x"), here)
